package gitwork

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Diff is a worker's changes: its worktree as it is now (committed or not,
// new files included, CopyGlobs files excluded) against the point where
// its branch last took in the task branch, i.e. what the worker has that
// the task branch does not have yet. Without a worktree (after Finish) it
// is the worker branch's own commits. Diff changes nothing and takes no
// lock, so the TUI may call it at any time.
func (r *Repo) Diff(agentID string) (string, error) {
	return r.workerDiff(agentID, "--no-color", "--no-ext-diff")
}

// ChangedFiles counts the files Diff(agentID) would show (for the TUI pane
// title). It costs a few git calls (milliseconds on a small repository):
// call it off the UI goroutine, after commits or on a slow tick.
func (r *Repo) ChangedFiles(agentID string) (int, error) {
	out, err := r.workerDiff(agentID, "--name-only", "-z")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			n++
		}
	}
	return n, nil
}

// TaskDiff is the task's result so far: git diff <base>...hivemind/<task_id>.
func (r *Repo) TaskDiff() (string, error) {
	base, err := r.rev(r.baseRef())
	if err != nil {
		return "", err
	}
	if base == "" {
		return "", ErrNotStarted
	}
	out, err := r.git(r.top, "diff", "--no-color", "--no-ext-diff", base+"...refs/heads/"+r.TaskBranch())
	return out, wrap("task diff", err)
}

func (r *Repo) workerDiff(agentID string, args ...string) (string, error) {
	if !vocab.ValidID(agentID) {
		return "", fmt.Errorf("%w: agent id %q", ErrBadID, agentID)
	}
	branch := "refs/heads/" + r.WorkerBranch(agentID)
	task := "refs/heads/" + r.TaskBranch()
	if !r.hasWorktree(agentID) {
		tip, err := r.rev(branch)
		if err != nil {
			return "", err
		}
		if tip == "" {
			return "", fmt.Errorf("%w: %s", ErrNoWorktree, agentID)
		}
		base, err := r.gitTrim(r.top, "merge-base", task, tip)
		if err != nil {
			return "", wrap("merge-base", err)
		}
		out, err := r.git(r.top, append(append([]string{"diff"}, args...), base, tip)...)
		return out, wrap("diff", err)
	}
	dir := r.WorktreeDir(agentID)
	base, err := r.gitTrim(dir, "merge-base", task, "HEAD")
	if err != nil {
		return "", wrap("merge-base", err)
	}
	// Stage everything into a private copy of the worktree's index, so new
	// files show up without touching the worker's real index.
	idx, err := r.gitTrim(dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", wrap("index path", err)
	}
	tmp, err := os.CreateTemp("", "hivemind-index-*")
	if err != nil {
		return "", wrap("temp index", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	src, err := os.Open(idx)
	if err == nil {
		_, err = io.Copy(tmp, src)
		_ = src.Close() // read-only
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// No usable index: start from an empty one (git treats a missing
		// index file as empty; a zero-byte one as corrupt).
		if rerr := os.Remove(tmpName); rerr != nil {
			return "", wrap("temp index", rerr)
		}
	}
	env := append(append([]string{}, r.identity...), "GIT_INDEX_FILE="+tmpName)
	addArgs := []string{"add", "-A", "--", "."}
	excl, err := r.copyList()
	if err != nil {
		return "", err
	}
	for _, p := range excl {
		addArgs = append(addArgs, ":(top,exclude,literal)"+r.prefix+p)
	}
	if _, err := gitCmd(bgCtx(), dir, env, addArgs...); err != nil {
		return "", wrap("add (private index)", err)
	}
	out, err := gitCmd(bgCtx(), dir, env, append(append([]string{"diff", "--cached"}, args...), base)...)
	return out, wrap("diff", err)
}
