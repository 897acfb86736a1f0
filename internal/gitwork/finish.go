package gitwork

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Summary tells the user where the task's result is and how to look at it.
type Summary struct {
	TaskBranch string // hivemind/<task_id>
	Base       string // the commit the task started from
	// Into is the user's current branch ("" when HEAD is detached): where
	// a merge goes.
	Into    string
	Commits int // commits on the task branch since Base
	Files   int // files changed since Base
	// Merged: Finish(true) merged the task branch into Into; MergeCommit is
	// the resulting HEAD.
	Merged      bool
	MergeCommit string
	// Removed are the worktree directories removed; Saved the commits
	// made of work left uncommitted in them ("worker_1 <sha>").
	Removed []string
	Saved   []string
	// Unmerged are the task's worker branches holding commits the task
	// branch does not have — work that is only on a side branch, saved
	// there or never merged: "<branch> (<n> commits)".
	Unmerged []string
	// Commands inspect (and, unless merged, merge) the result.
	Commands []string
}

// String is the summary as lines for the terminal.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task branch %s: %d commit(s), %d file(s) changed since %s.\n", s.TaskBranch, s.Commits, s.Files, short(s.Base))
	if s.Merged {
		fmt.Fprintf(&b, "Merged into %s (%s).\n", orDetached(s.Into), short(s.MergeCommit))
	}
	for _, c := range s.Commands {
		b.WriteString("  " + c + "\n")
	}
	for _, u := range s.Unmerged {
		fmt.Fprintf(&b, "Not on the task branch: %s (git log %s..%s).\n", u, s.TaskBranch, strings.Fields(u)[0])
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func orDetached(b string) string {
	if b == "" {
		return "detached HEAD"
	}
	return b
}

// Finish ends the task's use of git: work left uncommitted in worker
// worktrees is committed on their branches, every worktree of the task is
// removed (branches are kept), and, with merge, the task branch is merged
// into the user's current branch — only if its working tree and index have
// no changes (ErrDirtyTree otherwise; untracked files are allowed, git
// refuses by itself to overwrite one). It may be called again.
func (r *Repo) Finish(merge bool) (Summary, error) {
	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{TaskBranch: r.TaskBranch()}
	task, err := r.rev("refs/heads/" + r.TaskBranch())
	if err != nil {
		return s, err
	}
	if task == "" {
		return s, ErrNotStarted
	}
	wts, err := r.taskWorktrees()
	if err != nil {
		return s, err
	}
	for _, agent := range slices.Sorted(maps.Keys(wts)) {
		dir := wts[agent]
		if m, _ := r.merging(dir); m {
			if left, err := r.unresolved(dir); err != nil || len(left) > 0 {
				// A conflict fix left half done: drop the merge, keep the
				// worker's own commits.
				if _, err := r.git(dir, "merge", "--abort"); err != nil {
					return s, wrap("merge --abort in "+agent, err)
				}
			}
		}
		sha, err := r.commitAll(agent, fmt.Sprintf("[%s] uncommitted work saved when the task ended", agent))
		if err != nil {
			return s, err
		}
		if sha != "" {
			s.Saved = append(s.Saved, agent+" "+sha)
		}
		if err := r.removeWorktree(dir); err != nil {
			return s, err
		}
		s.Removed = append(s.Removed, dir)
	}
	if list, err := listWorktrees(r.top, r.identity); err == nil {
		if _, ok := findWorktree(list, r.scratchDir()); ok {
			if err := r.removeWorktree(r.scratchDir()); err != nil {
				return s, err
			}
			s.Removed = append(s.Removed, r.scratchDir())
		}
	}
	if _, err := r.git(r.top, "worktree", "prune"); err != nil {
		return s, wrap("worktree prune", err)
	}
	_ = os.Remove(r.worktreesDir()) // only if empty
	if err := r.deleteRefs("refs/hivemind/checkpoints/"+r.taskID+"/", r.integrationRef()); err != nil {
		return s, err
	}
	if err := r.summarize(&s, task); err != nil {
		return s, err
	}
	if s.Unmerged, err = r.unmerged(task); err != nil {
		return s, err
	}
	if merge && s.Commits > 0 {
		if err := r.mergeIntoCurrent(&s); err != nil {
			return s, err
		}
	}
	r.commands(&s)
	return s, nil
}

// unmerged lists the task's worker branches holding commits the task
// branch (at task) does not have: "<branch> (<n> commits)".
func (r *Repo) unmerged(task string) ([]string, error) {
	out, err := r.git(r.top, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+r.TaskBranch()+"-*")
	if err != nil {
		return nil, wrap("for-each-ref", err)
	}
	var list []string
	for _, b := range strings.Fields(out) {
		n, err := r.gitTrim(r.top, "rev-list", "--count", task+".."+b)
		if err != nil {
			return nil, wrap("rev-list", err)
		}
		if n != "0" {
			list = append(list, fmt.Sprintf("%s (%s commits)", b, n))
		}
	}
	return list, nil
}

// deleteRefs deletes the refs below prefix and the named refs.
func (r *Repo) deleteRefs(prefix string, refs ...string) error {
	out, err := r.git(r.top, "for-each-ref", "--format=%(refname)", prefix)
	if err != nil {
		return wrap("for-each-ref", err)
	}
	refs = append(refs, strings.Fields(out)...)
	for _, ref := range refs {
		if _, err := r.git(r.top, "update-ref", "-d", ref); err != nil {
			return wrap("delete "+ref, err)
		}
	}
	return nil
}

func (r *Repo) summarize(s *Summary, task string) error {
	base, err := r.rev(r.baseRef())
	if err != nil {
		return err
	}
	if base == "" {
		base = task
	}
	s.Base = base
	s.Into, _ = r.gitTrim(r.top, "symbolic-ref", "-q", "--short", "HEAD")
	n, err := r.gitTrim(r.top, "rev-list", "--count", base+".."+task)
	if err != nil {
		return wrap("rev-list", err)
	}
	s.Commits, _ = strconv.Atoi(n)
	files, err := r.git(r.top, "diff", "--name-only", "-z", base, task)
	if err != nil {
		return wrap("diff --name-only", err)
	}
	for _, f := range strings.Split(files, "\x00") {
		if f != "" {
			s.Files++
		}
	}
	return nil
}

func (r *Repo) commands(s *Summary) {
	b := r.TaskBranch()
	from := s.Into
	if from == "" || s.Merged {
		from = short(s.Base)
	}
	s.Commands = []string{
		"git log " + b,
		"git diff " + from + "..." + b,
	}
	if !s.Merged && s.Commits > 0 {
		s.Commands = append(s.Commands, "git merge "+b)
	}
}

// mergeIntoCurrent merges the task branch into the user's checkout.
func (r *Repo) mergeIntoCurrent(s *Summary) error {
	st, err := r.git(r.top, "status", "--porcelain=v1", "-z", "--untracked-files=no")
	if err != nil {
		return wrap("status", err)
	}
	var dirty []string
	for _, e := range strings.Split(st, "\x00") {
		if len(e) > 3 {
			dirty = append(dirty, e[3:])
		}
	}
	if len(dirty) > 0 {
		more := ""
		if len(dirty) > 5 {
			more = fmt.Sprintf(" and %d more", len(dirty)-5)
			dirty = dirty[:5]
		}
		return fmt.Errorf("%w (%s%s): not merging %s into %s; commit or stash your changes, then run: git merge %s",
			ErrDirtyTree, strings.Join(dirty, ", "), more, r.TaskBranch(), orDetached(s.Into), r.TaskBranch())
	}
	_, err = r.git(r.top, "merge", "--no-ff", "-m", fmt.Sprintf("Merge %s (hivemind task %s)", r.TaskBranch(), r.taskID), r.TaskBranch())
	if err != nil {
		if m, _ := r.merging(r.top); m {
			_, _ = r.git(r.top, "merge", "--abort")
		}
		return fmt.Errorf("gitwork: merging %s into %s failed, nothing changed; merge it yourself: git merge %s: %w",
			r.TaskBranch(), orDetached(s.Into), r.TaskBranch(), err)
	}
	s.Merged = true
	s.MergeCommit, err = r.gitTrim(r.top, "rev-parse", "HEAD")
	return wrap("rev-parse", err)
}

// PruneStale removes worktrees that crashed runs left under
// <workspaceRoot>/worktrees ("" means <project>/.hivemind): every worktree
// there whose task is not live (live(taskID) false), and every directory
// there that git does not know as a worktree. Uncommitted work in a
// removed worker worktree is first committed on its branch (CopyGlobs
// files excluded; opts as for Open). Branches are kept. It returns the
// removed directories.
func PruneStale(project, workspaceRoot string, live func(taskID string) bool, opts Options) ([]string, error) {
	proj, err := resolve(project)
	if err != nil {
		return nil, fmt.Errorf("gitwork: project: %w", err)
	}
	top, _, _, err := repoInfo(proj)
	if err != nil {
		return nil, err
	}
	if workspaceRoot == "" {
		workspaceRoot = filepath.Join(proj, ".hivemind")
	}
	ws, err := resolve(workspaceRoot)
	if err != nil {
		return nil, fmt.Errorf("gitwork: workspace: %w", err)
	}
	wtDir := filepath.Join(ws, "worktrees")
	if _, err := gitCmd(bgCtx(), top, nil, "worktree", "prune"); err != nil {
		return nil, wrap("worktree prune", err)
	}
	list, err := listWorktrees(top, nil)
	if err != nil {
		return nil, err
	}
	var removed []string
	known := map[string]bool{}
	for _, w := range list {
		if !samePath(filepath.Dir(w.Path), wtDir) {
			continue
		}
		known[filepath.Base(w.Path)] = true
		task := ownerTask(w.Path)
		if task == "" {
			task = taskFromBranch(w.Branch)
		}
		if task != "" && live != nil && live(task) {
			continue
		}
		if err := saveStale(proj, ws, task, w, opts); err != nil {
			return removed, err
		}
		if _, err := gitCmd(bgCtx(), top, nil, "worktree", "remove", "--force", "--force", w.Path); err != nil {
			if rmErr := os.RemoveAll(w.Path); rmErr != nil {
				return removed, wrap("remove "+w.Path, err)
			}
		}
		removed = append(removed, w.Path)
	}
	entries, err := os.ReadDir(wtDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return removed, wrap("read worktrees dir", err)
	}
	for _, e := range entries {
		if known[e.Name()] {
			continue
		}
		p := filepath.Join(wtDir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return removed, wrap("remove "+p, err)
		}
		removed = append(removed, p)
	}
	if _, err := gitCmd(bgCtx(), top, nil, "worktree", "prune"); err != nil {
		return removed, wrap("worktree prune", err)
	}
	return removed, nil
}

// taskFromBranch guesses the task of a worktree without a marker from its
// branch, refs/heads/hivemind/<task_id>-<agent_id> (agent ids have no "-").
func taskFromBranch(branch string) string {
	rest, ok := strings.CutPrefix(branch, "refs/heads/hivemind/")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		return rest[:i]
	}
	return rest
}

// saveStale commits the uncommitted work of a crashed worker worktree.
func saveStale(project, ws, task string, w worktreeInfo, opts Options) error {
	if task == "" || !strings.HasPrefix(w.Branch, "refs/heads/hivemind/"+task+"-") {
		return nil // the scratch worktree or an unknown one: nothing to keep
	}
	r, err := Open(project, ws, task, opts)
	if err != nil {
		return err
	}
	agent := filepath.Base(w.Path)
	if r.WorkerBranch(agent) != strings.TrimPrefix(w.Branch, "refs/heads/") {
		return nil
	}
	if m, _ := r.merging(w.Path); m {
		if _, err := r.git(w.Path, "merge", "--abort"); err != nil {
			return wrap("merge --abort", err)
		}
	}
	_, err = r.commitAll(agent, fmt.Sprintf("[%s] uncommitted work saved from a crashed run", agent))
	return err
}

// PruneEmpty deletes the task's branches that hold nothing beyond the
// commit the task started from (the task branch, and every worker branch
// hivemind/<task_id>-<agent>): what a cancelled or abandoned task that
// built nothing leaves. Call it after Finish (no worktree uses them then).
// It returns the branches it removed and those it kept (they hold work),
// sorted; the task branch is kept whenever a worker branch is, so the
// work keeps its place to merge into.
func (r *Repo) PruneEmpty() (removed, kept []string, err error) {
	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	base, err := r.rev(r.baseRef())
	if err != nil || base == "" {
		return nil, nil, err
	}
	out, err := r.git(r.top, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+r.TaskBranch()+"-*")
	if err != nil {
		return nil, nil, wrap("for-each-ref", err)
	}
	branches := strings.Fields(out)
	slices.Sort(branches)
	empty := func(b string) (bool, error) {
		n, err := r.gitTrim(r.top, "rev-list", "--count", base+"..refs/heads/"+b)
		if err != nil {
			return false, wrap("rev-list "+b, err)
		}
		return n == "0", nil
	}
	for _, b := range branches {
		e, err := empty(b)
		if err != nil {
			return removed, kept, err
		}
		if !e {
			kept = append(kept, b)
			continue
		}
		if _, err := r.git(r.top, "update-ref", "-d", "refs/heads/"+b); err != nil {
			return removed, kept, wrap("delete "+b, err)
		}
		removed = append(removed, b)
	}
	task := r.TaskBranch()
	if tip, err := r.rev("refs/heads/" + task); err != nil || tip == "" {
		return removed, kept, err
	}
	e, err := empty(task)
	if err != nil {
		return removed, kept, err
	}
	if !e || len(kept) > 0 {
		return removed, append([]string{task}, kept...), nil
	}
	if _, err := r.git(r.top, "update-ref", "-d", "refs/heads/"+task); err != nil {
		return removed, kept, wrap("delete "+task, err)
	}
	return append([]string{task}, removed...), kept, nil
}

// HasBranch reports whether the branch (hivemind/<task_id>…) exists.
func (r *Repo) HasBranch(name string) bool {
	tip, err := r.rev("refs/heads/" + name)
	return err == nil && tip != ""
}
