package gitwork

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// markerFile, in a worktree's administrative directory
// (.git/worktrees/<name>/), names the task the worktree belongs to, so
// PruneStale can tell a live task's worktrees from a crashed run's.
const markerFile = "hivemind-task"

// worktreeInfo is one entry of `git worktree list --porcelain`.
type worktreeInfo struct {
	Path     string
	Head     string
	Branch   string // refs/heads/…, "" when detached
	Prunable bool
}

func listWorktrees(top string, env []string) ([]worktreeInfo, error) {
	out, err := gitCmd(bgCtx(), top, env, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, wrap("worktree list", err)
	}
	var list []worktreeInfo
	var cur *worktreeInfo
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "worktree":
			list = append(list, worktreeInfo{Path: v})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = v
			}
		case "branch":
			if cur != nil {
				cur.Branch = v
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	return list, nil
}

// findWorktree returns the registered worktree at dir, if any.
func findWorktree(list []worktreeInfo, dir string) (worktreeInfo, bool) {
	for _, w := range list {
		if samePath(w.Path, dir) {
			return w, true
		}
	}
	return worktreeInfo{}, false
}

func samePath(a, b string) bool {
	ra, err1 := resolve(a)
	rb, err2 := resolve(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// adminDir is a worktree's private git directory (.git/worktrees/<name>),
// read from the .git file at its root.
func adminDir(worktree string) (string, error) {
	b, err := os.ReadFile(filepath.Join(worktree, ".git"))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	d, ok := strings.CutPrefix(s, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("gitwork: %s/.git is not a worktree link", worktree)
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(worktree, d)
	}
	return d, nil
}

// ownerTask is the task id recorded for a worktree ("" if unknown).
func ownerTask(worktree string) string {
	d, err := adminDir(worktree)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(d, markerFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r *Repo) markWorktree(worktree string) error {
	d, err := adminDir(worktree)
	if err != nil {
		return wrap("mark worktree", err)
	}
	return wrap("mark worktree", os.WriteFile(filepath.Join(d, markerFile), []byte(r.taskID+"\n"), 0o644))
}

// AddWorker makes sure the worker has its worktree under
// <workspace>/worktrees/<agent_id>, on branch hivemind/<task_id>-<agent_id>
// (created from the task branch the first time), with the CopyGlobs files
// copied in. It returns the directory the worker's agent should run in (the
// project directory inside the worktree). Calling it again (resume) keeps
// the existing worktree and its changes.
func (r *Repo) AddWorker(agentID string) (string, error) {
	if !vocab.ValidID(agentID) {
		return "", fmt.Errorf("%w: agent id %q", ErrBadID, agentID)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	task, err := r.rev("refs/heads/" + r.TaskBranch())
	if err != nil {
		return "", err
	}
	if task == "" {
		return "", ErrNotStarted
	}
	dir := r.WorktreeDir(agentID)
	branch := r.WorkerBranch(agentID)
	list, err := listWorktrees(r.top, r.identity)
	if err != nil {
		return "", err
	}
	if w, ok := findWorktree(list, dir); ok && !w.Prunable {
		if w.Branch == "refs/heads/"+branch {
			if err := r.markWorktree(dir); err != nil {
				return "", err
			}
			return r.WorkerDir(agentID), r.copyFiles(dir)
		}
		if owner := ownerTask(dir); owner != "" && owner != r.taskID {
			return "", fmt.Errorf("%w: %s (task %s)", ErrWorktreeTaken, dir, owner)
		}
		if _, err := r.git(r.top, "worktree", "remove", "--force", dir); err != nil {
			return "", wrap("remove foreign worktree", err)
		}
	} else if _, err := os.Lstat(dir); err == nil {
		// A directory git does not know (a crashed run's leftover).
		if err := os.RemoveAll(dir); err != nil {
			return "", wrap("remove stale worktree dir", err)
		}
	}
	if _, err := r.git(r.top, "worktree", "prune"); err != nil {
		return "", wrap("worktree prune", err)
	}
	if err := os.MkdirAll(r.worktreesDir(), 0o755); err != nil {
		return "", wrap("worktrees dir", err)
	}
	exists, err := r.rev("refs/heads/" + branch)
	if err != nil {
		return "", err
	}
	if exists != "" {
		_, err = r.git(r.top, "worktree", "add", dir, branch)
	} else {
		_, err = r.git(r.top, "worktree", "add", "-b", branch, dir, r.TaskBranch())
	}
	if err != nil {
		return "", wrap("worktree add", err)
	}
	if err := r.markWorktree(dir); err != nil {
		return "", err
	}
	return r.WorkerDir(agentID), r.copyFiles(dir)
}

// copyList is the project-relative paths (slash form) matching CopyGlobs
// that git does not track: what a worktree needs but does not get.
func (r *Repo) copyList() ([]string, error) {
	var cands []string
	seen := map[string]bool{}
	for _, g := range r.opts.CopyGlobs {
		matches, err := filepath.Glob(filepath.Join(r.project, g))
		if err != nil {
			return nil, fmt.Errorf("gitwork: copy glob %q: %w", g, err)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(r.project, m)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				continue
			}
			rel = filepath.ToSlash(rel)
			first, _, _ := strings.Cut(rel, "/")
			if first == ".git" || seen[rel] || r.inWorkspace(m) {
				continue
			}
			seen[rel] = true
			cands = append(cands, rel)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	args := append([]string{"ls-files", "-z", "--"}, literal(cands)...)
	out, err := r.git(r.project, args...)
	if err != nil {
		return nil, wrap("ls-files", err)
	}
	tracked := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			tracked[strings.TrimPrefix(p, r.prefix)] = true
		}
	}
	var list []string
	for _, c := range cands {
		if !tracked[c] {
			list = append(list, c)
		}
	}
	return list, nil
}

// literal turns paths into literal pathspecs (no glob magic).
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

func (r *Repo) inWorkspace(p string) bool {
	rel, err := filepath.Rel(r.workspace, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// copyFiles copies the copy list into a worktree, leaving files that are
// already there alone (the worker may have changed them).
func (r *Repo) copyFiles(worktree string) error {
	list, err := r.copyList()
	if err != nil {
		return err
	}
	dst := r.projectIn(worktree)
	for _, rel := range list {
		if err := copyTree(filepath.Join(r.project, filepath.FromSlash(rel)), filepath.Join(dst, filepath.FromSlash(rel))); err != nil {
			return wrap("copy "+rel, err)
		}
	}
	return nil
}

// copyTree copies a file, symlink or directory, keeping modes, without
// overwriting anything that exists.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if _, err := os.Lstat(target); err == nil {
			return nil // keep what is there; a directory is merged into
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices: nothing sensible to copy
	})
}

func copyFile(src, dst string, mode fs.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

// removeWorktree unregisters and deletes a worktree (forcefully: callers
// commit what must be kept first).
func (r *Repo) removeWorktree(dir string) error {
	if _, err := r.git(r.top, "worktree", "remove", "--force", "--force", dir); err != nil {
		if _, statErr := os.Lstat(dir); !errors.Is(statErr, os.ErrNotExist) {
			if rmErr := os.RemoveAll(dir); rmErr != nil {
				return wrap("remove worktree", err)
			}
		}
	}
	return nil
}

// WorkerGitDirs are the parts of the repository's .git a worker's own git
// commands write through its worktree: the worktree's admin directory
// (index, HEAD, logs) and the object store (`git add`). Refs are not
// among them: the engine commits a worker's work (CommitSubtask), and a
// worker's own `git commit` cannot move any branch. Nil when the worker
// has no worktree.
func (r *Repo) WorkerGitDirs(agentID string) []string {
	admin, err := adminDir(r.WorktreeDir(agentID))
	if err != nil {
		return nil
	}
	common := filepath.Dir(filepath.Dir(admin)) // <git dir>/worktrees/<name>
	return []string{admin, filepath.Join(common, "objects")}
}
