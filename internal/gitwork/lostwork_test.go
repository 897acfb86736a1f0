package gitwork

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refLock makes every update of agent's branch fail the way a full disk
// fails a commit (its objects are written, the branch cannot move): a
// stale ref lock, which git refuses to overwrite. Removing it is freeing
// the space.
func refLock(t *testing.T, project, agent string) (lock string) {
	t.Helper()
	lock = filepath.Join(project, ".git", "refs", "heads", "hivemind", "t1-"+agent+".lock")
	write(t, lock, "")
	return lock
}

// A subtask commit that fails leaves the work in the worktree; a merge
// while the commit still fails merges nothing (an error, not an empty
// diff); once commits work again the merge commits the leftover work
// first, and the task branch has it.
func TestFailedCommitIsMergedLater(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{}, "worker_1")
	full := refLock(t, p, "worker_1")
	write(t, filepath.Join(dirs["worker_1"], "new.txt"), "the work\n")
	if _, err := r.CommitSubtask("worker_1", "st_1", "add new.txt"); err == nil || !strings.Contains(err.Error(), ".lock") {
		t.Fatalf("CommitSubtask on a full disk: %v, want the git error", err)
	}
	before := sh(t, p, "rev-parse", "hivemind/t1")
	if _, err := r.MergeCheckpoint(1, []string{"worker_1"}); err == nil || !strings.Contains(err.Error(), "left uncommitted") {
		t.Fatalf("merge while commits fail: %v, want an error naming the uncommitted work", err)
	}
	if after := sh(t, p, "rev-parse", "hivemind/t1"); after != before {
		t.Fatalf("the task branch moved (%s → %s) though the work could not be committed", before, after)
	}
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	res, err := r.MergeCheckpoint(1, []string{"worker_1"})
	if err != nil || !res.Merged {
		t.Fatalf("merge after space is back: %+v, %v", res, err)
	}
	if got := sh(t, p, "show", "hivemind/t1:new.txt"); got != "the work" {
		t.Fatalf("task branch new.txt = %q", got)
	}
}

// Work that only a worker branch holds is named by the summary.
func TestFinishNamesUnmergedBranches(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2")
	write(t, filepath.Join(dirs["worker_1"], "one.txt"), "1\n")
	commit(t, r, "worker_1", "st_1", "one")
	if _, err := r.MergeCheckpoint(1, []string{"worker_1"}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dirs["worker_2"], "two.txt"), "2\n") // never committed nor merged
	s, err := r.Finish(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Unmerged) != 1 || !strings.HasPrefix(s.Unmerged[0], "hivemind/t1-worker_2 (1 commits)") {
		t.Fatalf("Unmerged %q", s.Unmerged)
	}
	if !strings.Contains(s.String(), "Not on the task branch: hivemind/t1-worker_2") {
		t.Fatalf("summary:\n%s", s)
	}
}
