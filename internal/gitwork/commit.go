package gitwork

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ErrNoWorktree: the agent has no worktree (AddWorker was not called, or
// Finish removed it).
var ErrNoWorktree = errors.New("gitwork: worker has no worktree")

// conflictsFile, in a worktree's administrative directory, lists the files
// PrepareFix left with conflict markers, so a commit can refuse them.
const conflictsFile = "hivemind-conflicts"

// CommitSubtask commits everything changed in the worker's worktree
// (modified, new and deleted files; never the CopyGlobs files) on its
// branch, with the message "[<agent_id>] <subtask_id>: <summary>". Nothing
// changed: no commit, "" and no error. While a conflict fix prepared by
// PrepareFix is in progress it concludes the merge, and refuses with
// ErrUnresolved if a conflicted file still holds conflict markers.
func (r *Repo) CommitSubtask(agentID, subtaskID, summary string) (string, error) {
	if !vocab.ValidID(agentID) {
		return "", fmt.Errorf("%w: agent id %q", ErrBadID, agentID)
	}
	msg := fmt.Sprintf("[%s] %s: %s", agentID, subtaskID, oneLine(summary))
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.commitAll(agentID, msg)
}

// oneLine flattens a summary into one commit subject line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "done"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

func (r *Repo) hasWorktree(agentID string) bool {
	_, err := os.Stat(filepath.Join(r.WorktreeDir(agentID), ".git"))
	return err == nil
}

// commitAll is CommitSubtask with the lock held and the message built.
func (r *Repo) commitAll(agentID, msg string) (string, error) {
	dir := r.WorktreeDir(agentID)
	if !r.hasWorktree(agentID) {
		return "", fmt.Errorf("%w: %s", ErrNoWorktree, agentID)
	}
	merging, err := r.merging(dir)
	if err != nil {
		return "", err
	}
	if merging {
		if left, err := r.unresolved(dir); err != nil {
			return "", err
		} else if len(left) > 0 {
			return "", fmt.Errorf("%w in %s: %s", ErrUnresolved, agentID, strings.Join(left, ", "))
		}
	}
	args := []string{"add", "-A", "--", "."}
	excl, err := r.copyList()
	if err != nil {
		return "", err
	}
	for _, p := range excl {
		args = append(args, ":(top,exclude,literal)"+r.prefix+p)
	}
	if _, err := r.git(dir, args...); err != nil {
		return "", wrap("add", err)
	}
	if _, err := r.git(dir, "diff", "--cached", "--quiet"); err == nil && !merging {
		return "", nil // nothing to commit
	} else if err != nil && exitCode(err) != 1 {
		return "", wrap("diff --cached", err)
	}
	env := append(append([]string{}, r.identity...), "GIT_AUTHOR_NAME="+agentID+" (hivemind)")
	if _, err := gitCmd(bgCtx(), dir, env, "commit", "-q", "--no-verify", "--allow-empty", "-m", msg); err != nil {
		return "", wrap("commit", err)
	}
	if d, err := adminDir(dir); err == nil {
		_ = os.Remove(filepath.Join(d, conflictsFile))
	}
	return r.gitTrim(dir, "rev-parse", "HEAD")
}

// merging reports whether a merge is in progress in a worktree.
func (r *Repo) merging(dir string) (bool, error) {
	_, err := r.git(dir, "rev-parse", "-q", "--verify", "MERGE_HEAD")
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, wrap("rev-parse MERGE_HEAD", err)
}

// unresolved lists the conflicted files of a worktree that still contain
// conflict markers.
func (r *Repo) unresolved(dir string) ([]string, error) {
	files := map[string]bool{}
	out, err := r.git(dir, "diff", "--name-only", "-z", "--diff-filter=U")
	if err != nil {
		return nil, wrap("diff unmerged", err)
	}
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files[f] = true
		}
	}
	if d, err := adminDir(dir); err == nil {
		if b, err := os.ReadFile(filepath.Join(d, conflictsFile)); err == nil {
			for _, f := range strings.Split(string(b), "\n") {
				if f != "" {
					files[f] = true
				}
			}
		}
	}
	var left []string
	for _, f := range slices.Sorted(maps.Keys(files)) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			continue // deleted: a resolution like any other
		}
		if hasMarkers(b) {
			left = append(left, f)
		}
	}
	return left, nil
}

// hasMarkers reports whether b holds a complete conflict block: a line
// starting "<<<<<<< ", a "=======" line and a line starting ">>>>>>> ".
func hasMarkers(b []byte) bool {
	state := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, "<<<<<<< "):
			state = 1
		case state == 1 && line == "=======":
			state = 2
		case state == 2 && strings.HasPrefix(line, ">>>>>>> "):
			return true
		}
	}
	return false
}

// PrepareFix sets up a conflict fix in a worker's worktree after
// MergeCheckpoint reported a conflict for that worker: it commits any
// pending changes, then merges the checkpoint's cleanly merged result
// (the task branch plus every worker that merged cleanly) into the worker's
// branch, leaving the same conflict markers MergeCheckpoint reported in the
// worker's files. It returns the conflicted files (repository-relative).
// The worker edits them; CommitSubtask then concludes the merge, and the
// next MergeCheckpoint merges cleanly. Calling it again while the fix is in
// progress returns the same files and changes nothing.
func (r *Repo) PrepareFix(agentID string) ([]string, error) {
	if !vocab.ValidID(agentID) {
		return nil, fmt.Errorf("%w: agent id %q", ErrBadID, agentID)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	dir := r.WorktreeDir(agentID)
	if !r.hasWorktree(agentID) {
		return nil, fmt.Errorf("%w: %s", ErrNoWorktree, agentID)
	}
	merging, err := r.merging(dir)
	if err != nil {
		return nil, err
	}
	if merging {
		return r.preparedConflicts(dir)
	}
	integ, err := r.rev(r.integrationRef())
	if err != nil {
		return nil, err
	}
	if integ == "" {
		return nil, fmt.Errorf("gitwork: no conflicting checkpoint merge to fix for task %s", r.taskID)
	}
	if _, err := r.commitAll(agentID, fmt.Sprintf("[%s] work in progress before resolving a merge conflict", agentID)); err != nil {
		return nil, err
	}
	_, err = r.git(dir, "merge", "--no-ff", "-m",
		fmt.Sprintf("[hivemind] %s: merge the checkpoint's other work to resolve conflicts", agentID), r.integrationRef())
	if err == nil {
		return nil, nil // merged cleanly: nothing left to resolve
	}
	if exitCode(err) != 1 {
		return nil, wrap("merge", err)
	}
	files, uerr := r.unmergedFiles(dir)
	if uerr != nil {
		return nil, uerr
	}
	if len(files) == 0 {
		return nil, wrap("merge", err) // failed for another reason
	}
	if d, err := adminDir(dir); err == nil {
		if werr := os.WriteFile(filepath.Join(d, conflictsFile), []byte(strings.Join(files, "\n")+"\n"), 0o644); werr != nil {
			return nil, wrap("record conflicts", werr)
		}
	}
	return files, nil
}

// preparedConflicts is the conflict list of a fix already in progress.
func (r *Repo) preparedConflicts(dir string) ([]string, error) {
	d, err := adminDir(dir)
	if err == nil {
		if b, err := os.ReadFile(filepath.Join(d, conflictsFile)); err == nil {
			var files []string
			for _, f := range strings.Split(string(b), "\n") {
				if f != "" {
					files = append(files, f)
				}
			}
			return files, nil
		}
	}
	return r.unmergedFiles(dir)
}

// unmergedFiles lists the files with unresolved conflicts in the index.
func (r *Repo) unmergedFiles(dir string) ([]string, error) {
	out, err := r.git(dir, "diff", "--name-only", "-z", "--diff-filter=U")
	if err != nil {
		return nil, wrap("diff unmerged", err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
