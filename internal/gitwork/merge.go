package gitwork

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Conflict is one worker branch that did not merge cleanly.
type Conflict struct {
	// Worker is the worker whose branch conflicted; PrepareFix(Worker)
	// puts the conflict into its worktree.
	Worker string
	// With are the workers merged cleanly in this checkpoint whose changes
	// touch the conflicting files (the other side of the conflict).
	With []string
	// Files are the conflicting files, repository-relative.
	Files []string
	// Hunks shows every conflict region with its markers and a few lines of
	// context, file by file ("ours" = the task branch with the clean merges,
	// "theirs" = the worker's branch).
	Hunks string
}

// MergeResult is the outcome of MergeCheckpoint.
type MergeResult struct {
	Checkpoint int
	// Merged: every worker branch merged cleanly and the task branch now
	// holds the result. False: nothing changed on the task branch, see
	// Conflicts.
	Merged bool
	// Start is the task branch's commit when this checkpoint was first
	// merged (recorded by the first call for the checkpoint, so a later call
	// after a fix round or a restart still covers the whole checkpoint).
	// Before and After are the task branch's commit before and after this
	// call (After == Before when there was nothing new or on conflict).
	Start, Before, After string
	// Diff is the combined diff of the whole checkpoint (Start → After),
	// Stat its --stat summary, and RoundDiff what this call added
	// (Before → After; equal to Diff on the first call).
	Diff, Stat, RoundDiff string
	// Conflicts lists the worker branches that did not merge.
	Conflicts []Conflict
	// Checked: the check command ran. CheckOK: it exited 0, or no check
	// ran. CheckOutput: its combined output (the tail,
	// at most 64 KiB).
	Checked     bool
	CheckOK     bool
	CheckOutput string
	// Warnings are problems that did not stop the merge (a worker with no
	// branch, a worktree that could not be brought up to date).
	Warnings []string
}

// MergeCheckpoint merges the branches of workers into the task branch in a
// scratch worktree (<workspace>/worktrees/.merge; the user's working tree
// is never touched). All clean: the task branch moves to the result, the
// check command runs on it, and every worker branch and worktree is
// fast-forwarded to it so workers see each other's work. Any conflict:
// the task branch stays where it was and Conflicts says which workers and
// files conflict, with the hunks. Only committed work is merged (commit
// with CommitSubtask first).
func (r *Repo) MergeCheckpoint(checkpoint int, workers []string) (MergeResult, error) {
	return r.MergeCheckpointContext(context.Background(), checkpoint, workers)
}

// MergeCheckpointContext is MergeCheckpoint whose check command is killed
// (whole process group) when ctx ends; the merge itself stands, and the
// error is ctx's.
func (r *Repo) MergeCheckpointContext(ctx context.Context, checkpoint int, workers []string) (MergeResult, error) {
	for _, w := range workers {
		if !vocab.ValidID(w) {
			return MergeResult{}, fmt.Errorf("%w: agent id %q", ErrBadID, w)
		}
	}
	// mergeMu keeps the scratch worktree ours through the check, which runs
	// without mu so commits in worker worktrees are not held up by it.
	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	r.mu.Lock()
	err := r.commitLeftovers(checkpoint, workers)
	var res MergeResult
	if err == nil {
		res, err = r.mergeLocked(checkpoint, workers)
	}
	r.mu.Unlock()
	res.CheckOK = true
	if err != nil || !res.Merged || r.opts.Check == "" {
		return res, err
	}
	res.Checked = true
	res.CheckOutput, res.CheckOK, err = r.runCheck(ctx, r.projectIn(r.scratchDir()))
	return res, err
}

// commitLeftovers commits what each worker's worktree still holds
// uncommitted before its branch is merged: work whose subtask commit
// failed (a full disk, a hook) is merged with its checkpoint, never left
// out of it. A commit that fails again fails the merge. Called with mu
// held.
func (r *Repo) commitLeftovers(cp int, workers []string) error {
	for _, w := range workers {
		if !r.hasWorktree(w) {
			continue // a remote worker: its commits are fetched
		}
		if _, err := r.commitAll(w, fmt.Sprintf("[%s] checkpoint %d: work left uncommitted", w, cp)); err != nil {
			return fmt.Errorf("commit the work %s left uncommitted: %w", w, err)
		}
	}
	return nil
}

func (r *Repo) mergeLocked(cp int, workers []string) (MergeResult, error) {
	res := MergeResult{Checkpoint: cp}
	before, err := r.rev("refs/heads/" + r.TaskBranch())
	if err != nil {
		return res, err
	}
	if before == "" {
		return res, ErrNotStarted
	}
	res.Before, res.After = before, before
	cpRef := r.checkpointRef(cp)
	if res.Start, err = r.rev(cpRef); err != nil {
		return res, err
	}
	if res.Start == "" {
		if _, err := r.git(r.top, "update-ref", cpRef, before); err != nil {
			return res, wrap("record checkpoint start", err)
		}
		res.Start = before
	}
	scratch, err := r.prepareScratch(before)
	if err != nil {
		return res, err
	}
	var clean, failed []string
	for _, w := range workers {
		wb := r.WorkerBranch(w)
		if sha, err := r.rev("refs/heads/" + wb); err != nil {
			return res, err
		} else if sha == "" {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s has no branch %s; nothing merged for it", w, wb))
			continue
		}
		ok, err := r.tryMerge(scratch, wb, fmt.Sprintf("[hivemind] checkpoint %d: merge %s", cp, w))
		if err != nil {
			return res, err
		}
		if ok {
			clean = append(clean, w)
			continue
		}
		failed = append(failed, w)
		if _, err := r.git(scratch, "merge", "--abort"); err != nil {
			return res, wrap("merge --abort", err)
		}
	}
	head, err := r.gitTrim(scratch, "rev-parse", "HEAD")
	if err != nil {
		return res, wrap("rev-parse", err)
	}
	if len(failed) > 0 {
		return r.reportConflicts(res, scratch, head, clean, failed)
	}
	if head != before {
		// Compare-and-swap: fails if someone moved the branch meanwhile.
		if _, err := r.git(r.top, "update-ref", "-m", fmt.Sprintf("hivemind: checkpoint %d", cp),
			"refs/heads/"+r.TaskBranch(), head, before); err != nil {
			return res, wrap("update task branch", err)
		}
	}
	if _, err := r.git(r.top, "update-ref", "-d", r.integrationRef()); err != nil {
		return res, wrap("delete integration ref", err)
	}
	res.Merged, res.After = true, head
	if res.Diff, err = r.git(r.top, "diff", "--no-color", "--no-ext-diff", res.Start, head); err != nil {
		return res, wrap("diff", err)
	}
	res.RoundDiff = res.Diff
	if before != res.Start {
		if res.RoundDiff, err = r.git(r.top, "diff", "--no-color", "--no-ext-diff", before, head); err != nil {
			return res, wrap("diff", err)
		}
	}
	if res.Stat, err = r.git(r.top, "diff", "--no-color", "--stat", res.Start, head); err != nil {
		return res, wrap("diff --stat", err)
	}
	res.Warnings = append(res.Warnings, r.refreshWorkers(head)...)
	if err := r.copyFiles(scratch); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	return res, nil
}

// tryMerge merges branch into the scratch worktree's HEAD: true if clean,
// false on a conflict (left in place for inspection).
func (r *Repo) tryMerge(scratch, branch, msg string) (bool, error) {
	_, err := r.git(scratch, "merge", "--no-ff", "-m", msg, branch)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		if files, uerr := r.unmergedFiles(scratch); uerr == nil && len(files) > 0 {
			return false, nil
		}
	}
	if m, _ := r.merging(scratch); m {
		_, _ = r.git(scratch, "merge", "--abort")
	}
	return false, wrap("merge "+branch, err)
}

// reportConflicts records the clean part of the checkpoint under the
// integration ref (what PrepareFix merges into a conflicting worker), then
// merges each failed worker into it again to collect the conflicts exactly
// as that worker will see them. The task branch is not moved.
func (r *Repo) reportConflicts(res MergeResult, scratch, head string, clean, failed []string) (MergeResult, error) {
	if _, err := r.git(r.top, "update-ref", r.integrationRef(), head); err != nil {
		return res, wrap("record integration ref", err)
	}
	touched := map[string]map[string]bool{} // clean worker → files changed this checkpoint
	for _, w := range clean {
		out, err := r.git(r.top, "diff", "--name-only", "-z", res.Before+"..."+"refs/heads/"+r.WorkerBranch(w))
		if err != nil {
			return res, wrap("diff --name-only", err)
		}
		touched[w] = map[string]bool{}
		for _, f := range strings.Split(out, "\x00") {
			if f != "" {
				touched[w][f] = true
			}
		}
	}
	for _, w := range failed {
		wb := r.WorkerBranch(w)
		ok, err := r.tryMerge(scratch, wb, "[hivemind] conflict probe")
		if err != nil {
			return res, err
		}
		if ok {
			// Conflicted only with another failed worker (merged earlier
			// in the first pass than now): report it against that work.
			if _, err := r.git(scratch, "reset", "-q", "--hard", head); err != nil {
				return res, wrap("reset scratch", err)
			}
			res.Conflicts = append(res.Conflicts, Conflict{Worker: w, With: without(failed, w),
				Hunks: "(conflicts only with other conflicting workers; it merges cleanly onto the rest)"})
			continue
		}
		c := Conflict{Worker: w}
		c.Files, err = r.unmergedFiles(scratch)
		if err != nil {
			return res, err
		}
		c.Hunks, err = r.hunks(scratch, c.Files, wb)
		if err != nil {
			return res, err
		}
		for _, o := range clean {
			for _, f := range c.Files {
				if touched[o][f] {
					c.With = append(c.With, o)
					break
				}
			}
		}
		res.Conflicts = append(res.Conflicts, c)
		if _, err := r.git(scratch, "merge", "--abort"); err != nil {
			return res, wrap("merge --abort", err)
		}
	}
	return res, nil
}

func without(xs []string, x string) []string {
	var out []string
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// conflictKinds names git's unmerged status codes.
var conflictKinds = map[string]string{
	"DD": "deleted by both", "AU": "added by us", "UD": "deleted by them",
	"UA": "added by them", "DU": "deleted by us", "AA": "added by both", "UU": "both modified",
}

// hunkContext is how many lines around a conflict region are shown.
const hunkContext = 3

// hunks renders the conflict regions of files in a worktree mid-merge.
func (r *Repo) hunks(dir string, files []string, theirs string) (string, error) {
	kinds := map[string]string{}
	out, err := r.git(dir, "status", "--porcelain=v1", "-z", "--untracked-files=no")
	if err != nil {
		return "", wrap("status", err)
	}
	for _, e := range strings.Split(out, "\x00") {
		if len(e) > 3 {
			if k, ok := conflictKinds[e[:2]]; ok {
				kinds[e[3:]] = k
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conflict markers: <<<<<<< HEAD = the task branch with this checkpoint's clean merges; ||||||| = the common ancestor; >>>>>>> %s = the worker's branch.\n", theirs)
	for _, f := range files {
		kind := kinds[f]
		if kind == "" {
			kind = "conflict"
		}
		fmt.Fprintf(&b, "\n=== %s (%s) ===\n", f, kind)
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			b.WriteString("(file not present in the merge result)\n")
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 {
			b.WriteString("(binary file: no text markers; choose one side)\n")
			continue
		}
		regions := markerRegions(data)
		if len(regions) == 0 {
			b.WriteString("(no text markers)\n")
			continue
		}
		lines := strings.SplitAfter(string(data), "\n")
		for _, reg := range regions {
			from, to := max(reg[0]-hunkContext, 0), min(reg[1]+hunkContext, len(lines)-1)
			fmt.Fprintf(&b, "@@ lines %d-%d @@\n", from+1, to+1)
			for i := from; i <= to; i++ {
				b.WriteString(lines[i])
				if !strings.HasSuffix(lines[i], "\n") {
					b.WriteString("\n")
				}
			}
		}
	}
	return b.String(), nil
}

// markerRegions returns [start, end] line indexes (0-based, inclusive) of
// each <<<<<<< … >>>>>>> block.
func markerRegions(data []byte) [][2]int {
	var regs [][2]int
	start := -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for i := 0; sc.Scan(); i++ {
		line := sc.Text()
		switch {
		case start < 0 && strings.HasPrefix(line, "<<<<<<< "):
			start = i
		case start >= 0 && strings.HasPrefix(line, ">>>>>>> "):
			regs = append(regs, [2]int{start, i})
			start = -1
		}
	}
	return regs
}

// prepareScratch makes the scratch worktree exist, detached at rev, with no
// merge in progress and no untracked leftovers (ignored files, such as
// build caches, are kept to speed up the check).
func (r *Repo) prepareScratch(rev string) (string, error) {
	dir := r.scratchDir()
	list, err := listWorktrees(r.top, r.identity)
	if err != nil {
		return "", err
	}
	if w, ok := findWorktree(list, dir); ok && !w.Prunable {
		if m, _ := r.merging(dir); m {
			if _, err := r.git(dir, "merge", "--abort"); err != nil {
				return "", wrap("scratch merge --abort", err)
			}
		}
		if _, err := r.git(dir, "checkout", "-q", "--detach", "--force", rev); err != nil {
			return "", wrap("scratch checkout", err)
		}
		if _, err := r.git(dir, "reset", "-q", "--hard", rev); err != nil {
			return "", wrap("scratch reset", err)
		}
		if _, err := r.git(dir, "clean", "-q", "-f", "-d"); err != nil {
			return "", wrap("scratch clean", err)
		}
	} else {
		if _, err := os.Lstat(dir); err == nil {
			if err := os.RemoveAll(dir); err != nil {
				return "", wrap("remove stale scratch", err)
			}
		}
		if _, err := r.git(r.top, "worktree", "prune"); err != nil {
			return "", wrap("worktree prune", err)
		}
		if err := os.MkdirAll(r.worktreesDir(), 0o755); err != nil {
			return "", wrap("worktrees dir", err)
		}
		if _, err := r.git(r.top, "worktree", "add", "--detach", dir, rev); err != nil {
			return "", wrap("scratch worktree add", err)
		}
	}
	if err := r.markWorktree(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// taskWorktrees are this task's worker worktrees: agent id → path.
func (r *Repo) taskWorktrees() (map[string]string, error) {
	list, err := listWorktrees(r.top, r.identity)
	if err != nil {
		return nil, err
	}
	prefix := "refs/heads/hivemind/" + r.taskID + "-"
	out := map[string]string{}
	for _, w := range list {
		agent, ok := strings.CutPrefix(w.Branch, prefix)
		if !ok || w.Prunable || !samePath(filepath.Dir(w.Path), r.worktreesDir()) {
			continue
		}
		out[agent] = w.Path
	}
	return out, nil
}

// refreshWorkers fast-forwards every worker worktree of the task to head.
// A worktree with uncommitted changes in the way, or with work that was not
// part of this merge, is left alone and reported.
func (r *Repo) refreshWorkers(head string) []string {
	wts, err := r.taskWorktrees()
	if err != nil {
		return []string{err.Error()}
	}
	var warns []string
	for _, agent := range slices.Sorted(maps.Keys(wts)) {
		if _, err := r.git(wts[agent], "merge", "-q", "--ff-only", head); err != nil {
			warns = append(warns, fmt.Sprintf("%s not brought up to date with the task branch: %v", agent, err))
		}
	}
	return warns
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	buf     []byte
	limit   int
	dropped bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.dropped {
		return "[… earlier output dropped …]\n" + string(t.buf)
	}
	return string(t.buf)
}

// runCheck runs the check command with sh -c in dir, in its own process
// group (killed as a whole on timeout or cancellation).
func (r *Repo) runCheck(ctx context.Context, dir string) (output string, ok bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, r.opts.CheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "sh", "-c", r.opts.Check)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "GIT_DIR" && k != "GIT_WORK_TREE" && k != "GIT_INDEX_FILE" {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out := &tailBuffer{limit: checkOutputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	switch {
	case runErr == nil:
		return out.String(), true, nil
	case ctx.Err() != nil:
		return out.String() + "\n[hivemind] check cancelled\n", false, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return out.String() + fmt.Sprintf("\n[hivemind] check timed out after %s\n", r.opts.CheckTimeout), false, nil
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return out.String() + fmt.Sprintf("\n[hivemind] check exited with status %d\n", ee.ExitCode()), false, nil
	}
	return out.String() + "\n[hivemind] check could not run: " + runErr.Error() + "\n", false, nil
}
