package gitwork

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dirty is what the user's checkout holds that its HEAD does not: a task
// starts from a commit, so these would silently be left out of it.
type Dirty struct {
	// Files are the changed, staged, deleted and untracked paths
	// (repository-relative; the workspace excluded).
	Files []string
	// Operation is the git operation in progress ("rebase", "merge",
	// "cherry-pick", "revert", "bisect"), or "".
	Operation string
}

// Clean reports whether there is nothing to say.
func (d Dirty) Clean() bool { return len(d.Files) == 0 && d.Operation == "" }

// String says it in one line: "a rebase is in progress; 3 uncommitted
// changes (a.go, b.go, c.go)".
func (d Dirty) String() string {
	var parts []string
	if d.Operation != "" {
		parts = append(parts, "a "+d.Operation+" is in progress")
	}
	if n := len(d.Files); n > 0 {
		shown := d.Files[:min(n, 5)]
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(", … %d more", n-len(shown))
		}
		parts = append(parts, fmt.Sprintf("%d uncommitted change(s) (%s%s)", n, strings.Join(shown, ", "), more))
	}
	return strings.Join(parts, "; ")
}

// operations are the marks a git operation in progress leaves in the git
// directory, in the order they are reported.
var operations = []struct{ mark, name string }{
	{"rebase-merge", "rebase"}, {"rebase-apply", "rebase"}, {"MERGE_HEAD", "merge"},
	{"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"}, {"BISECT_LOG", "bisect"},
}

// CheckDirty reports the user's checkout's uncommitted edits and any git
// operation in progress. It changes nothing (no index refresh).
func (r *Repo) CheckDirty() (Dirty, error) {
	var d Dirty
	if head, err := r.rev("HEAD"); err != nil || head == "" {
		return d, err // no commit yet: there is no task branch to start (git stays off)
	}
	gitDir, err := r.gitTrim(r.top, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return d, wrap("rev-parse --git-dir", err)
	}
	for _, op := range operations {
		if _, err := os.Lstat(filepath.Join(gitDir, op.mark)); err == nil {
			d.Operation = op.name
			break
		}
	}
	out, err := r.git(r.top, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--", "."}, r.notWorkspace()...)...)
	if err != nil {
		return d, wrap("status", err)
	}
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		d.Files = append(d.Files, e[3:])
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the source path of a rename or copy follows
		}
	}
	return d, nil
}

// notWorkspace is the pathspec that leaves the workspace out, when it is
// inside the repository.
func (r *Repo) notWorkspace() []string {
	rel, err := filepath.Rel(r.top, r.workspace)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	return []string{":(top,exclude,literal)" + filepath.ToSlash(rel)}
}

// SnapshotWorkTree commits the checkout's working tree as it is (tracked
// changes, deletions and untracked files not ignored; the workspace left
// out) on top of HEAD, through a private index: the user's index, working
// tree and branch are untouched. It returns the commit, for StartTask.
func (r *Repo) SnapshotWorkTree(msg string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.rev("HEAD")
	if err != nil || head == "" {
		return "", fmt.Errorf("gitwork: snapshot: no HEAD commit (%v)", err)
	}
	idx, err := os.CreateTemp("", "hivemind-snapshot-index-")
	if err != nil {
		return "", fmt.Errorf("gitwork: snapshot: %w", err)
	}
	_ = idx.Close()
	_ = os.Remove(idx.Name()) // git makes it; an empty file is not an index
	defer os.Remove(idx.Name())
	env := append(append([]string{}, r.identity...), "GIT_INDEX_FILE="+idx.Name())
	steps := [][]string{{"read-tree", head}, {"add", "-A", "--", "."}}
	if ws := r.notWorkspace(); len(ws) > 0 {
		// Taken out after the add: naming an ignored workspace in the
		// add's pathspec is an error.
		rel := strings.TrimPrefix(ws[0], ":(top,exclude,literal)")
		steps = append(steps, []string{"rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ":(top,literal)" + rel})
	}
	for _, s := range steps {
		if _, err := gitCmd(bgCtx(), r.top, env, s...); err != nil {
			return "", wrap("snapshot "+s[0], err)
		}
	}
	tree, err := gitCmd(bgCtx(), r.top, env, "write-tree")
	if err != nil {
		return "", wrap("snapshot write-tree", err)
	}
	sha, err := gitCmd(bgCtx(), r.top, env, "commit-tree", strings.TrimSpace(tree), "-p", head, "-m", msg)
	if err != nil {
		return "", wrap("snapshot commit-tree", err)
	}
	return strings.TrimSpace(sha), nil
}
