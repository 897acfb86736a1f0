package gitwork

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNotARepoFallsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if IsRepo(dir) {
		t.Fatal("IsRepo(empty dir) = true")
	}
	if _, err := Open(dir, "", "t1", Options{}); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open: err = %v, want ErrNotRepo", err)
	}
	if _, err := PruneStale(dir, "", nil, Options{}); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("PruneStale: err = %v, want ErrNotRepo", err)
	}
	// A repository without commits has nothing to branch from.
	sh(t, dir, "init", "-q", "-b", "main")
	if !IsRepo(dir) {
		t.Fatal("IsRepo(after git init) = false")
	}
	r, err := Open(dir, "", "t1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartTask(""); !errors.Is(err, ErrNoCommits) {
		t.Fatalf("StartTask on unborn HEAD: err = %v, want ErrNoCommits", err)
	}
	if _, err := Open(dir, "", "../x", Options{}); !errors.Is(err, ErrBadID) {
		t.Fatalf("Open with a bad task id: err = %v, want ErrBadID", err)
	}
}

func TestTwoWorkersDifferentFilesMergeCleanly(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{Check: "test -f c.txt && echo check-ran-here && pwd"}, "worker_1", "worker_2")
	for _, w := range []string{"worker_1", "worker_2"} {
		if want := filepath.Join(p, ".hivemind", "worktrees", w); dirs[w] != want {
			t.Fatalf("worker dir = %s, want %s", dirs[w], want)
		}
		if b := sh(t, dirs[w], "rev-parse", "--abbrev-ref", "HEAD"); b != "hivemind/t1-"+w {
			t.Fatalf("%s is on branch %s", w, b)
		}
	}
	write(t, filepath.Join(dirs["worker_1"], "a.txt"), lines(map[int]string{2: "worker one"}))
	write(t, filepath.Join(dirs["worker_2"], "c.txt"), "new from two\n")
	if err := os.Remove(filepath.Join(dirs["worker_2"], "b.txt")); err != nil {
		t.Fatal(err)
	}
	if n, err := r.ChangedFiles("worker_2"); err != nil || n != 2 {
		t.Fatalf("ChangedFiles(worker_2) before commit = %d, %v; want 2 (new + deleted)", n, err)
	}
	d, err := r.Diff("worker_2")
	if err != nil || !strings.Contains(d, "+new from two") || !strings.Contains(d, "deleted file mode") {
		t.Fatalf("Diff(worker_2) before commit = %q, %v", d, err)
	}
	sha1 := commit(t, r, "worker_1", "st_1", "change line two\nof a.txt")
	commit(t, r, "worker_2", "st_2", "add c, drop b")
	if sha1 == "" {
		t.Fatal("CommitSubtask returned no sha for a change")
	}
	if msg := sh(t, p, "log", "-1", "--format=%s|%an", "hivemind/t1-worker_1"); msg != "[worker_1] st_1: change line two of a.txt|worker_1 (hivemind)" {
		t.Fatalf("commit subject|author = %q", msg)
	}
	if sha, err := r.CommitSubtask("worker_1", "st_3", "nothing"); err != nil || sha != "" {
		t.Fatalf("CommitSubtask with no change = %q, %v; want no commit", sha, err)
	}
	before := sh(t, p, "rev-parse", "hivemind/t1")

	res, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Merged || len(res.Conflicts) != 0 {
		t.Fatalf("Merged = %v, conflicts = %+v", res.Merged, res.Conflicts)
	}
	if res.Before != before || res.After != sh(t, p, "rev-parse", "hivemind/t1") || res.After == before {
		t.Fatalf("before/after = %s/%s; task branch %s was %s", res.Before, res.After, sh(t, p, "rev-parse", "hivemind/t1"), before)
	}
	for _, want := range []string{"+worker one", "+new from two", "-b", "a.txt", "c.txt"} {
		if !strings.Contains(res.Diff, want) {
			t.Errorf("checkpoint diff lacks %q:\n%s", want, res.Diff)
		}
	}
	if !strings.Contains(res.Stat, "3 files changed") {
		t.Errorf("stat = %q", res.Stat)
	}
	if !res.Checked || !res.CheckOK || !strings.Contains(res.CheckOutput, "check-ran-here") ||
		!strings.Contains(res.CheckOutput, filepath.Join(".hivemind", "worktrees", ".merge")) {
		t.Fatalf("check: ran=%v ok=%v output=%q", res.Checked, res.CheckOK, res.CheckOutput)
	}
	// Workers now see each other's work, with nothing left to merge.
	if got := read(t, filepath.Join(dirs["worker_1"], "c.txt")); got != "new from two\n" {
		t.Fatalf("worker_1 does not see worker_2's file: %q", got)
	}
	if exists(filepath.Join(dirs["worker_1"], "b.txt")) {
		t.Fatal("worker_1 still has b.txt deleted by worker_2")
	}
	if got := read(t, filepath.Join(dirs["worker_2"], "a.txt")); !strings.Contains(got, "worker one") {
		t.Fatal("worker_2 does not see worker_1's change")
	}
	for _, w := range []string{"worker_1", "worker_2"} {
		if n, err := r.ChangedFiles(w); err != nil || n != 0 {
			t.Fatalf("ChangedFiles(%s) after checkpoint = %d, %v", w, n, err)
		}
	}
	td, err := r.TaskDiff()
	if err != nil || !strings.Contains(td, "+worker one") || !strings.Contains(td, "+new from two") {
		t.Fatalf("TaskDiff = %q, %v", td, err)
	}
	// History names who did what.
	log := sh(t, p, "log", "--format=%s", "hivemind/t1")
	for _, want := range []string{"[hivemind] checkpoint 1: merge worker_1", "[hivemind] checkpoint 1: merge worker_2", "[worker_2] st_2: add c, drop b"} {
		if !strings.Contains(log, want) {
			t.Errorf("task log lacks %q:\n%s", want, log)
		}
	}
	if got := read(t, filepath.Join(r.MergedDir(), "c.txt")); got != "new from two\n" {
		t.Fatalf("MergedDir lacks the merged result: %q", got)
	}
	// A review fix round on the same checkpoint: Diff still covers the whole
	// checkpoint, RoundDiff only the fix.
	write(t, filepath.Join(dirs["worker_1"], "a.txt"), lines(map[int]string{2: "worker one, fixed"}))
	commit(t, r, "worker_1", "fix_1_1_worker_1", "fix")
	fix, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2"})
	if err != nil || !fix.Merged || fix.Start != before || fix.Before != res.After {
		t.Fatalf("fix round: %+v, %v", fix, err)
	}
	if !strings.Contains(fix.Diff, "+worker one, fixed") || !strings.Contains(fix.Diff, "+new from two") ||
		!strings.Contains(fix.RoundDiff, "-worker one") || strings.Contains(fix.RoundDiff, "new from two") {
		t.Fatalf("fix round diffs:\nDiff:\n%s\nRoundDiff:\n%s", fix.Diff, fix.RoundDiff)
	}
	// The same call again (a restart mid-checkpoint) merges nothing new but
	// still reports the whole checkpoint.
	again, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2"})
	if err != nil || !again.Merged || again.Diff != fix.Diff || again.RoundDiff != "" || again.After != fix.After {
		t.Fatalf("repeated merge: %+v, %v", again, err)
	}
	res = fix
	// A second checkpoint with nothing new is a no-op merge.
	res2, err := r.MergeCheckpoint(2, []string{"worker_1", "worker_2"})
	if err != nil || !res2.Merged || res2.After != res.After || res2.Diff != "" {
		t.Fatalf("empty checkpoint: %+v, %v", res2, err)
	}
}

func TestFailingCheckIsReported(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{Check: "echo boom >&2; exit 3"}, "worker_1")
	write(t, filepath.Join(dirs["worker_1"], "x.txt"), "x\n")
	commit(t, r, "worker_1", "st_1", "x")
	res, err := r.MergeCheckpoint(1, []string{"worker_1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Merged || !res.Checked || res.CheckOK || !strings.Contains(res.CheckOutput, "boom") || !strings.Contains(res.CheckOutput, "status 3") {
		t.Fatalf("merged=%v checked=%v ok=%v output=%q", res.Merged, res.Checked, res.CheckOK, res.CheckOutput)
	}
}

func TestCheckTimeoutKillsTheCommand(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{Check: "sleep 60 & sleep 60; echo never", CheckTimeout: 300 * time.Millisecond}, "worker_1")
	write(t, filepath.Join(dirs["worker_1"], "x.txt"), "x\n")
	commit(t, r, "worker_1", "st_1", "x")
	start := time.Now()
	res, err := r.MergeCheckpoint(1, []string{"worker_1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckOK || !strings.Contains(res.CheckOutput, "timed out") {
		t.Fatalf("ok=%v output=%q", res.CheckOK, res.CheckOutput)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("timed-out check took %s", d)
	}
	// Cancellation through the context works the same way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.opts.CheckTimeout = time.Minute
	if _, err := r.MergeCheckpointContext(ctx, 2, []string{"worker_1"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled check: err = %v", err)
	}
}

func TestConflictThenFix(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2", "worker_3")
	write(t, filepath.Join(dirs["worker_1"], "a.txt"), lines(map[int]string{5: "five by worker one"}))
	write(t, filepath.Join(dirs["worker_2"], "a.txt"), lines(map[int]string{5: "five by worker two"}))
	write(t, filepath.Join(dirs["worker_3"], "z.txt"), "unrelated\n")
	commit(t, r, "worker_1", "st_1", "one")
	commit(t, r, "worker_2", "st_2", "two")
	commit(t, r, "worker_3", "st_3", "three")
	before := sh(t, p, "rev-parse", "hivemind/t1")

	res, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2", "worker_3"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Merged {
		t.Fatal("conflicting checkpoint reported as merged")
	}
	if got := sh(t, p, "rev-parse", "hivemind/t1"); got != before || res.After != before {
		t.Fatalf("task branch moved on conflict: %s → %s", before, got)
	}
	if len(res.Conflicts) != 1 {
		t.Fatalf("conflicts = %+v", res.Conflicts)
	}
	c := res.Conflicts[0]
	if c.Worker != "worker_2" || strings.Join(c.With, ",") != "worker_1" || strings.Join(c.Files, ",") != "a.txt" {
		t.Fatalf("conflict = worker %s with %v files %v", c.Worker, c.With, c.Files)
	}
	for _, want := range []string{"=== a.txt (both modified) ===", "<<<<<<< HEAD", "five by worker one", "||||||| ", "line 5", "=======",
		"five by worker two", ">>>>>>> hivemind/t1-worker_2", "line 2", "line 8"} {
		if !strings.Contains(c.Hunks, want) {
			t.Errorf("hunks lack %q:\n%s", want, c.Hunks)
		}
	}
	if strings.Contains(c.Hunks, "line 1\n") || strings.Contains(c.Hunks, "line 9") {
		t.Errorf("hunks show more than 3 lines of context:\n%s", c.Hunks)
	}
	if m, _ := r.merging(r.scratchDir()); m {
		t.Fatal("scratch worktree left mid-merge")
	}
	// Workers were not updated: nothing merged.
	if exists(filepath.Join(dirs["worker_1"], "z.txt")) {
		t.Fatal("worker_1 got worker_3's file although the checkpoint did not merge")
	}

	// The fix: the conflict goes into worker_2's worktree.
	files, err := r.PrepareFix("worker_2")
	if err != nil || strings.Join(files, ",") != "a.txt" {
		t.Fatalf("PrepareFix = %v, %v", files, err)
	}
	again, err := r.PrepareFix("worker_2")
	if err != nil || strings.Join(again, ",") != "a.txt" {
		t.Fatalf("PrepareFix again = %v, %v", again, err)
	}
	inTree := read(t, filepath.Join(dirs["worker_2"], "a.txt"))
	if !strings.Contains(inTree, "<<<<<<<") || !strings.Contains(inTree, "five by worker one") {
		t.Fatalf("worker_2's a.txt has no conflict:\n%s", inTree)
	}
	if !exists(filepath.Join(dirs["worker_2"], "z.txt")) {
		t.Fatal("PrepareFix did not bring the clean part (worker_3's file) into worker_2")
	}
	if _, err := r.CommitSubtask("worker_2", "fix_1_1", "resolve"); !errors.Is(err, ErrUnresolved) {
		t.Fatalf("commit with markers: err = %v, want ErrUnresolved", err)
	}
	resolved := lines(map[int]string{5: "five by worker one and two"})
	write(t, filepath.Join(dirs["worker_2"], "a.txt"), resolved)
	if sha := commit(t, r, "worker_2", "fix_1_1", "resolve the conflict"); sha == "" {
		t.Fatal("resolution not committed")
	}
	if parents := strings.Fields(sh(t, dirs["worker_2"], "rev-list", "--parents", "-n1", "HEAD")); len(parents) != 3 {
		t.Fatalf("resolution commit is not a merge: %v", parents)
	}

	res, err = r.MergeCheckpoint(1, []string{"worker_1", "worker_2", "worker_3"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Merged || len(res.Conflicts) != 0 {
		t.Fatalf("after the fix: merged=%v conflicts=%+v", res.Merged, res.Conflicts)
	}
	if got := sh(t, p, "show", "hivemind/t1:a.txt"); got+"\n" != resolved {
		t.Fatalf("task branch a.txt = %q", got)
	}
	for _, w := range []string{"worker_1", "worker_2", "worker_3"} {
		if got := read(t, filepath.Join(dirs[w], "a.txt")); got != resolved {
			t.Fatalf("%s's a.txt after the fix merge = %q", w, got)
		}
		if !exists(filepath.Join(dirs[w], "z.txt")) {
			t.Fatalf("%s lacks z.txt", w)
		}
	}
	if exists(filepath.Join(p, "z.txt")) || read(t, filepath.Join(p, "a.txt")) != lines(nil) {
		t.Fatal("the user's checkout changed")
	}
}

func TestDirtyUserTreeUntouchedAndEnvCopied(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	// A dirty checkout: modified, staged, untracked, ignored, and .env files.
	write(t, filepath.Join(p, "a.txt"), lines(map[int]string{1: "user's unsaved edit"}))
	write(t, filepath.Join(p, "staged.txt"), "staged by the user\n")
	sh(t, p, "add", "staged.txt")
	write(t, filepath.Join(p, "b.txt"), "b\nstaged then modified\n")
	sh(t, p, "add", "b.txt")
	write(t, filepath.Join(p, "b.txt"), "b\nstaged then modified\nand modified again\n")
	write(t, filepath.Join(p, "untracked.txt"), "untracked\n")
	write(t, filepath.Join(p, "debug.log"), "ignored\n")
	write(t, filepath.Join(p, ".env"), "SECRET=1\n")
	write(t, filepath.Join(p, ".env.local"), "LOCAL=1\n")
	snap := snapshot(t, p)

	r, dirs := startTask(t, p, Options{Check: "cat .env"}, "worker_1", "worker_2")
	if err := r.StartTask(""); err != nil { // idempotent
		t.Fatal(err)
	}
	if d, err := r.AddWorker("worker_1"); err != nil || d != dirs["worker_1"] { // idempotent
		t.Fatalf("AddWorker again = %s, %v", d, err)
	}
	for _, w := range []string{"worker_1", "worker_2"} {
		if got := read(t, filepath.Join(dirs[w], ".env")); got != "SECRET=1\n" {
			t.Fatalf("%s .env = %q", w, got)
		}
		if !exists(filepath.Join(dirs[w], ".env.local")) {
			t.Fatalf("%s lacks .env.local", w)
		}
		// The task starts from HEAD, not from the user's uncommitted state.
		if got := read(t, filepath.Join(dirs[w], "a.txt")); got != lines(nil) {
			t.Fatalf("%s a.txt = %q", w, got)
		}
		if exists(filepath.Join(dirs[w], "untracked.txt")) || exists(filepath.Join(dirs[w], "staged.txt")) {
			t.Fatalf("%s got the user's uncommitted files", w)
		}
	}
	write(t, filepath.Join(dirs["worker_1"], ".env"), "SECRET=changed-by-worker\n")
	write(t, filepath.Join(dirs["worker_1"], "w1.txt"), "one\n")
	write(t, filepath.Join(dirs["worker_2"], "a.txt"), lines(map[int]string{3: "three"}))
	commit(t, r, "worker_1", "st_1", "w1")
	commit(t, r, "worker_2", "st_2", "w2")
	if n, err := r.ChangedFiles("worker_1"); err != nil || n != 1 {
		t.Fatalf("ChangedFiles(worker_1) = %d, %v; want 1 (.env never counts)", n, err)
	}
	res, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2"})
	if err != nil || !res.Merged || !res.CheckOK || res.CheckOutput != "SECRET=1\n" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	for _, ref := range []string{"hivemind/t1", "hivemind/t1-worker_1", "hivemind/t1-worker_2"} {
		if tree := sh(t, p, "ls-tree", "-r", "--name-only", ref); strings.Contains(tree, ".env") || strings.Contains(tree, ".hivemind") {
			t.Fatalf("%s tracks .env or .hivemind:\n%s", ref, tree)
		}
	}
	if _, err := r.Finish(true); !errors.Is(err, ErrDirtyTree) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("Finish(true) on a dirty tree: err = %v, want ErrDirtyTree naming a.txt", err)
	}
	sum, err := r.Finish(false)
	if err != nil || sum.Merged {
		t.Fatalf("Finish(false) = %+v, %v", sum, err)
	}
	diffSnapshots(t, snap, snapshot(t, p))
	if !strings.Contains(read(t, filepath.Join(p, ".git", "info", "exclude")), "/.hivemind/") {
		t.Fatal(".hivemind/ not excluded")
	}
}

func TestFinishWithAndWithoutMerge(t *testing.T) {
	t.Parallel()
	for _, merge := range []bool{false, true} {
		p := newProject(t)
		r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2")
		write(t, filepath.Join(dirs["worker_1"], "one.txt"), "1\n")
		commit(t, r, "worker_1", "st_1", "one")
		if res, err := r.MergeCheckpoint(1, []string{"worker_1", "worker_2"}); err != nil || !res.Merged {
			t.Fatalf("merge: %+v %v", res, err)
		}
		// Left uncommitted when the run ends: saved on the worker branch.
		write(t, filepath.Join(dirs["worker_2"], "late.txt"), "late\n")
		userHead := sh(t, p, "rev-parse", "HEAD")

		sum, err := r.Finish(merge)
		if err != nil {
			t.Fatalf("Finish(%v): %v", merge, err)
		}
		if exists(filepath.Join(p, ".hivemind", "worktrees")) {
			t.Fatal("worktrees directory left behind")
		}
		if wl := sh(t, p, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
			t.Fatalf("worktrees left:\n%s", wl)
		}
		for _, b := range []string{"hivemind/t1", "hivemind/t1-worker_1", "hivemind/t1-worker_2"} {
			sh(t, p, "rev-parse", "--verify", b)
		}
		if len(sum.Saved) != 1 || !strings.HasPrefix(sum.Saved[0], "worker_2 ") {
			t.Fatalf("saved = %v", sum.Saved)
		}
		if got := sh(t, p, "show", "hivemind/t1-worker_2:late.txt"); got != "late" {
			t.Fatalf("late work not saved: %q", got)
		}
		if sum.Commits < 2 || sum.Files != 1 || sum.Base != userHead || sum.Into != "main" {
			t.Fatalf("summary = %+v", sum)
		}
		text := sum.String()
		if !strings.Contains(text, "git log hivemind/t1") {
			t.Fatalf("summary text:\n%s", text)
		}
		if merge {
			if !sum.Merged || sh(t, p, "rev-parse", "HEAD") != sum.MergeCommit || read(t, filepath.Join(p, "one.txt")) != "1\n" {
				t.Fatalf("not merged into main: %+v", sum)
			}
			if sh(t, p, "status", "--porcelain") != "" {
				t.Fatal("merge left the tree dirty")
			}
		} else {
			if sum.Merged || sh(t, p, "rev-parse", "HEAD") != userHead || exists(filepath.Join(p, "one.txt")) {
				t.Fatal("Finish(false) changed the user's branch")
			}
			if !strings.Contains(text, "git diff main...hivemind/t1") || !strings.Contains(text, "git merge hivemind/t1") {
				t.Fatalf("summary text:\n%s", text)
			}
		}
		// Again: nothing left to do, no error.
		if _, err := r.Finish(false); err != nil {
			t.Fatalf("second Finish: %v", err)
		}
		if d, err := r.Diff("worker_1"); err != nil || d != "" {
			t.Fatalf("Diff without a worktree = %q, %v", d, err)
		}
	}
}

func TestPruneStaleAfterCrash(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	write(t, filepath.Join(p, ".env"), "SECRET=1\n")
	r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2")
	write(t, filepath.Join(dirs["worker_1"], "unsaved.txt"), "crash victim\n")
	write(t, filepath.Join(dirs["worker_1"], ".env"), "SECRET=2\n") // copied, so never committed
	if _, err := r.MergeCheckpoint(1, nil); err != nil {            // leaves the scratch worktree
		t.Fatal(err)
	}
	junk := filepath.Join(p, ".hivemind", "worktrees", "worker_9")
	write(t, filepath.Join(junk, "leftover"), "x")
	// The process "crashes" here: no Finish.

	removed, err := PruneStale(p, "", func(id string) bool { return id == "t1" }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != junk {
		t.Fatalf("with t1 live, removed = %v; want only the unknown directory", removed)
	}
	if !exists(dirs["worker_1"]) || !exists(r.scratchDir()) {
		t.Fatal("a live task's worktree was removed")
	}

	removed, err = PruneStale(p, "", func(string) bool { return false }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Fatalf("removed = %v; want worker_1, worker_2, .merge", removed)
	}
	if entries, _ := os.ReadDir(filepath.Join(p, ".hivemind", "worktrees")); len(entries) != 0 {
		t.Fatalf("left in worktrees/: %v", entries)
	}
	if wl := sh(t, p, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Fatalf("git still lists worktrees:\n%s", wl)
	}
	if got := sh(t, p, "show", "hivemind/t1-worker_1:unsaved.txt"); got != "crash victim" {
		t.Fatalf("uncommitted work lost: %q", got)
	}
	if tree := sh(t, p, "ls-tree", "-r", "--name-only", "hivemind/t1-worker_1"); strings.Contains(tree, ".env") {
		t.Fatal(".env committed while saving a crashed worktree")
	}
	// Resuming the task brings the worktree back on the same branch.
	r2, err := Open(p, "", "t1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.StartTask(""); err != nil {
		t.Fatal(err)
	}
	d, err := r2.AddWorker("worker_1")
	if err != nil || read(t, filepath.Join(d, "unsaved.txt")) != "crash victim\n" {
		t.Fatalf("resume AddWorker = %s, %v", d, err)
	}
}

func TestProjectInSubdirectory(t *testing.T) {
	t.Parallel()
	top := newProject(t)
	p := filepath.Join(top, "svc")
	write(t, filepath.Join(p, "main.txt"), "main\n")
	sh(t, top, "add", "-A")
	sh(t, top, "commit", "-q", "-m", "svc")
	write(t, filepath.Join(p, ".env"), "SUB=1\n")
	r, dirs := startTask(t, p, Options{Check: "cat .env && ls"}, "worker_1")
	if want := filepath.Join(p, ".hivemind", "worktrees", "worker_1", "svc"); dirs["worker_1"] != want {
		t.Fatalf("worker dir = %s, want %s", dirs["worker_1"], want)
	}
	if read(t, filepath.Join(dirs["worker_1"], ".env")) != "SUB=1\n" {
		t.Fatal(".env not copied into the subdirectory")
	}
	write(t, filepath.Join(dirs["worker_1"], "new.txt"), "n\n")
	commit(t, r, "worker_1", "st_1", "n")
	res, err := r.MergeCheckpoint(1, []string{"worker_1"})
	if err != nil || !res.Merged || !strings.Contains(res.CheckOutput, "SUB=1") || !strings.Contains(res.CheckOutput, "new.txt") {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if tree := sh(t, top, "ls-tree", "-r", "--name-only", "hivemind/t1"); !strings.Contains(tree, "svc/new.txt") || strings.Contains(tree, ".env") || strings.Contains(tree, ".hivemind") {
		t.Fatalf("task tree:\n%s", tree)
	}
	if st := sh(t, top, "status", "--porcelain"); st != "?? svc/.env" {
		t.Fatalf("user status not clean: %q", st)
	}
}

// TestConcurrentReadsDuringWork runs the TUI's reads (ChangedFiles, Diff)
// while the runner commits and merges, for the race detector.
func TestConcurrentReadsDuringWork(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 25; i++ { // bounded: two cores are shared with the other tests
			select {
			case <-stop:
				return
			default:
			}
			// Errors are possible while a worktree is being updated; the
			// point is that nothing races or deadlocks.
			_, _ = r.ChangedFiles("worker_1")
			_, _ = r.Diff("worker_2")
		}
	}()
	for i := 0; i < 3; i++ {
		write(t, filepath.Join(dirs["worker_1"], "one.txt"), strings.Repeat("x", i+1))
		write(t, filepath.Join(dirs["worker_2"], "two.txt"), strings.Repeat("y", i+1))
		commit(t, r, "worker_1", "st_1", "one")
		commit(t, r, "worker_2", "st_2", "two")
		if res, err := r.MergeCheckpoint(i+1, []string{"worker_1", "worker_2"}); err != nil || !res.Merged {
			t.Fatalf("merge %d: %+v, %v", i+1, res, err)
		}
	}
	close(stop)
	<-done
	if got := sh(t, p, "show", "hivemind/t1:one.txt"); got != "xxx" {
		t.Fatalf("task branch one.txt = %q", got)
	}
}

// A task that ends having built nothing leaves no branches: PruneEmpty
// removes every branch with nothing beyond the base and keeps, by name,
// those with work (and the task branch with them).
func TestPruneEmpty(t *testing.T) {
	t.Run("nothing built", func(t *testing.T) {
		p := newProject(t)
		r, _ := startTask(t, p, Options{}, "worker_1", "worker_2")
		if _, err := r.Finish(false); err != nil {
			t.Fatal(err)
		}
		removed, kept, err := r.PruneEmpty()
		want := []string{"hivemind/t1", "hivemind/t1-worker_1", "hivemind/t1-worker_2"}
		if err != nil || !slices.Equal(removed, want) || len(kept) != 0 {
			t.Fatalf("removed %v kept %v err %v; want removed %v", removed, kept, err, want)
		}
		if b := sh(t, p, "branch", "--list", "hivemind/*"); b != "" {
			t.Errorf("branches left:\n%s", b)
		}
	})
	t.Run("one worker did work", func(t *testing.T) {
		p := newProject(t)
		r, dirs := startTask(t, p, Options{}, "worker_1", "worker_2")
		write(t, filepath.Join(dirs["worker_2"], "new.txt"), "x\n")
		if _, err := r.Finish(false); err != nil { // commits worker_2's work on its branch
			t.Fatal(err)
		}
		removed, kept, err := r.PruneEmpty()
		if err != nil || !slices.Equal(removed, []string{"hivemind/t1-worker_1"}) ||
			!slices.Equal(kept, []string{"hivemind/t1", "hivemind/t1-worker_2"}) {
			t.Fatalf("removed %v kept %v err %v", removed, kept, err)
		}
		if !r.HasBranch("hivemind/t1-worker_2") || r.HasBranch("hivemind/t1-worker_1") {
			t.Error("HasBranch disagrees with what PruneEmpty did")
		}
	})
}
