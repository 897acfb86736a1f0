package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Worktree integration (issue 9), end to end with the sim agents on real
// git repositories.

// wtGit runs git in dir with a fixed identity and returns its trimmed
// output.
func wtGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// wtRepo makes a repository on branch main with one commit (README.md,
// keep.txt); dirty leaves keep.txt modified and an untracked file.
func wtRepo(t *testing.T, dirty bool) string {
	t.Helper()
	dir := t.TempDir()
	wtGit(t, dir, "init", "-q", "-b", "main")
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# demo\n")
	write("keep.txt", "committed\n")
	wtGit(t, dir, "add", ".")
	wtGit(t, dir, "commit", "-q", "-m", "initial commit")
	if dirty {
		write("keep.txt", "committed\nmy uncommitted edit\n")
		write("scratch.txt", "untracked\n")
	}
	return dir
}

// wtRun runs a headless sim task in project (extra sim flags in simArgs)
// and returns its exit code and output.
func wtRun(t *testing.T, project, simArgs string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	home := t.TempDir()
	cmd, out := hivemindPaced(t, ctx, home, 2*time.Millisecond, append([]string{"--headless", "--agent", "sim", "--workers", "2",
		"--project", project}, args...)...)
	cmd.Env = append(cmd.Env, "HIVEMIND_SIM_ARGS=--pace 2ms "+simArgs)
	start := time.Now()
	code := exitCode(t, cmd)
	t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
	return code, out.String()
}

func readRecords(t *testing.T, dir string) []vocab.EventRecord {
	t.Helper()
	recs, _, err := workspace.ReadEvents(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func countType(recs []vocab.EventRecord, typ vocab.RecordType) int {
	n := 0
	for _, r := range recs {
		if r.Type == typ {
			n++
		}
	}
	return n
}

var subtaskCommitRE = regexp.MustCompile(`^\[worker_\d+\] (st_\d+): `)

// A git project: a task branch, a worktree per worker, a commit per
// subtask, merges at checkpoints (with a conflict the workers resolve) and
// a check; the user's branch, working tree and index are never touched;
// at the end the worktrees are gone and the branches stay.
func TestWorktreeSimComplete(t *testing.T) {
	parallel(t)
	project := wtRepo(t, true)
	head := wtGit(t, project, "rev-parse", "HEAD")
	diffBefore := wtGit(t, project, "diff")
	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgFile, []byte("check = \"test -f README.md && echo check-ran\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// --shared-notes: every worker also appends to NOTES.md, so the
	// checkpoint merges conflict and the conflict fixes run for real.
	// --merge: refused, the user's tree is dirty.
	code, out := wtRun(t, project, "--shared-notes", "--config", cfgFile, "--merge", "add a greeting feature")
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out)
	}
	dir := taskDir(t, project)
	st := checkComplete(t, dir)
	id := filepath.Base(dir)
	branch := "hivemind/" + id
	recs := readRecords(t, dir)

	// One commit per subtask, named after worker and subtask.
	base := wtGit(t, project, "rev-parse", "refs/hivemind/base/"+id)
	if base != head {
		t.Errorf("task branch base %s, want HEAD %s", base, head)
	}
	subjects := strings.Split(wtGit(t, project, "log", "--format=%s", base+".."+branch), "\n")
	seen := map[string]int{}
	for _, s := range subjects {
		if m := subtaskCommitRE.FindStringSubmatch(s); m != nil {
			seen[m[1]]++
		}
	}
	for sub, ss := range st.Subtasks {
		if seen[sub] != 1 {
			t.Errorf("subtask %s (by %s) has %d commits on %s, want 1; log:\n%s", sub, ss.Worker, seen[sub], branch, strings.Join(subjects, "\n"))
		}
		if ss.Worker != "" && !strings.Contains(strings.Join(subjects, "\n"), "["+string(ss.Worker)+"] "+sub+": ") {
			t.Errorf("no commit [%s] %s: …", ss.Worker, sub)
		}
	}

	// The merged result is on the task branch, conflicts resolved.
	for _, sub := range st.Plan.Subtasks {
		for _, f := range sub.Files {
			_, p, _ := strings.Cut(f, " ")
			wtGit(t, project, "cat-file", "-e", branch+":"+p)
			if _, err := os.Stat(filepath.Join(project, p)); err == nil && p != "README.md" {
				t.Errorf("%s written into the user's checkout", p)
			}
		}
	}
	notes := wtGit(t, project, "show", branch+":NOTES.md")
	if strings.Contains(notes, "<<<<<<<") || strings.Contains(notes, ">>>>>>>") {
		t.Errorf("conflict markers on the task branch:\n%s", notes)
	}
	for sub := range st.Subtasks {
		if !strings.Contains(notes, " did "+sub+":") {
			t.Errorf("NOTES.md lacks %s:\n%s", sub, notes)
		}
	}
	if countType(recs, "merge_conflict") == 0 || countType(recs, "checkpoint_merged") < st.TotalCheckpoints {
		t.Errorf("merge_conflict %d, checkpoint_merged %d", countType(recs, "merge_conflict"), countType(recs, "checkpoint_merged"))
	}
	if !regexp.MustCompile(`(?m)^\[worker_\d+\] merge-cp1-a1-worker_\d+: `).MatchString(strings.Join(subjects, "\n")) {
		t.Errorf("no conflict resolution commit:\n%s", strings.Join(subjects, "\n"))
	}
	hunks, _ := filepath.Glob(filepath.Join(dir, "reviews", "checkpoint_1_v*-a1-conflict-worker_*.md"))
	if len(hunks) != 1 {
		t.Errorf("conflict hunk files %v", hunks)
	}
	check, err := os.ReadFile(filepath.Join(dir, "reviews", "checkpoint_1_v1-check.txt"))
	if err != nil || !strings.Contains(string(check), "exit ok: true") || !strings.Contains(string(check), "check-ran") {
		t.Errorf("check output %q %v", check, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "reviews", "checkpoint_1_v1-diff.patch")); err != nil {
		t.Error(err)
	}

	// The user's branch, working tree and index are as they were.
	if got := wtGit(t, project, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved: %s → %s", head, got)
	}
	if got := wtGit(t, project, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("current branch %s", got)
	}
	if got := wtGit(t, project, "diff"); got != diffBefore {
		t.Errorf("working tree diff changed:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(project, "scratch.txt")); string(b) != "untracked\n" {
		t.Errorf("untracked file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(project, "NOTES.md")); err == nil {
		t.Error("NOTES.md written into the user's checkout")
	}
	if !strings.Contains(out, "uncommitted changes") {
		t.Errorf("--merge on a dirty tree: no warning in output:\n%s", out)
	}

	// Worktrees removed, branches kept, and the user is told where to look.
	if wts := wtGit(t, project, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if _, err := os.Stat(filepath.Join(project, ".hivemind", "worktrees")); err == nil {
		t.Error(".hivemind/worktrees left behind")
	}
	for _, w := range []string{"worker_1", "worker_2"} {
		wtGit(t, project, "rev-parse", "--verify", "refs/heads/"+branch+"-"+w)
	}
	if !strings.Contains(out, "git diff main..."+branch) || !strings.Contains(out, "git log "+branch) {
		t.Errorf("output does not say how to inspect the result:\n%s", out)
	}
	if countType(recs, "git_task_branch") != 1 || countType(recs, "task_branch_ready") != 1 || countType(recs, "git_disabled") != 0 {
		t.Errorf("git records: task_branch %d ready %d disabled %d", countType(recs, "git_task_branch"),
			countType(recs, "task_branch_ready"), countType(recs, "git_disabled"))
	}
	if n := wtGit(t, project, "status", "--porcelain", "--untracked-files=all"); strings.Contains(n, ".hivemind") {
		t.Errorf("the workspace shows in git status:\n%s", n)
	}
	noLeftovers(t, project)

	// hivemind diff: the task's result, and a worker's branch after the end.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd, dout := hivemind(t, ctx, home, "diff", "--project", project)
	if c := exitCode(t, cmd); c != 0 || !strings.Contains(dout.String(), "+++ b/NOTES.md") {
		t.Errorf("hivemind diff: exit %d\n%s", c, dout.String())
	}
	// After the end worker_1's branch is merged: its own diff is empty,
	// and that is said, with where the work is.
	cmd, wout := hivemind(t, ctx, home, "diff", "worker_1", "--project", project)
	if c := exitCode(t, cmd); c != 0 || !strings.Contains(wout.String(), "worker_1's worktree is gone (task") ||
		!strings.Contains(wout.String(), "its work is in "+branch) {
		t.Errorf("hivemind diff worker_1: exit %d\n%s", c, wout.String())
	}
}

// The full-screen UI on a git project: once it exits after the task is
// complete, the task branch and how to look at it and merge it are on the
// terminal, as in headless mode (the UI's notice line is gone by then).
func TestWorktreeTUIPrintsBranch(t *testing.T) {
	parallel(t)
	project := wtRepo(t, false)
	r := startTUI(t, tuiOptions{simArgs: "--pace 2ms", project: project,
		args: []string{"--agent", "sim", "--workers", "2", "add a greeting feature"}})
	r.waitText(2*tuiWait, "COMPLETE")
	branch := "hivemind/" + filepath.Base(r.taskDir())
	if code := r.quit(); code != 0 {
		t.Errorf("exit status %d after a complete task, want 0", code)
	}
	// With the scrollback: tmux's "Pane is dead" line may scroll the
	// first line out of view.
	s, err := r.tmuxCmd("capture-pane", "-p", "-S", "-", "-t", r.session)
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, s)
	}
	for _, want := range []string{"Task branch " + branch, "git log " + branch, "git diff main..." + branch, "git merge " + branch} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal after the UI lacks %q:\n%s", want, s)
		}
	}
	noLeftovers(t, project)
}

// --merge with a clean working tree merges the task branch into the
// user's branch.
func TestWorktreeMergeFlag(t *testing.T) {
	parallel(t)
	project := wtRepo(t, false)
	head := wtGit(t, project, "rev-parse", "HEAD")
	code, out := wtRun(t, project, "", "--merge", "add a greeting feature")
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out)
	}
	dir := taskDir(t, project)
	checkComplete(t, dir)
	branch := "hivemind/" + filepath.Base(dir)
	if got := wtGit(t, project, "rev-parse", "HEAD"); got == head {
		t.Fatalf("HEAD did not move; output:\n%s", out)
	}
	wtGit(t, project, "merge-base", "--is-ancestor", branch, "HEAD")
	if got := wtGit(t, project, "symbolic-ref", "--short", "HEAD"); got != "main" {
		t.Errorf("current branch %s", got)
	}
	if s := wtGit(t, project, "status", "--porcelain"); s != "" {
		t.Errorf("working tree not clean after the merge:\n%s", s)
	}
	if !strings.Contains(out, "Merged into main") {
		t.Errorf("output does not report the merge:\n%s", out)
	}
	noLeftovers(t, project)
}

// Not a git repository: the workers share the project directory, and the
// event log says so once.
func TestWorktreeNotARepo(t *testing.T) {
	parallel(t)
	project := t.TempDir()
	code, out := wtRun(t, project, "", "add a greeting feature")
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out)
	}
	dir := taskDir(t, project)
	st := checkComplete(t, dir)
	recs := readRecords(t, dir)
	if n := countType(recs, "git_disabled"); n != 1 {
		t.Errorf("git_disabled %d times, want once", n)
	}
	for _, typ := range []vocab.RecordType{"merge_requested", "checkpoint_merged", "subtask_committed", "task_branch_ready"} {
		if n := countType(recs, typ); n != 0 {
			t.Errorf("%s %d times without git", typ, n)
		}
	}
	// The work is in the project directory itself.
	for _, sub := range st.Plan.Subtasks {
		for _, f := range sub.Files {
			_, p, _ := strings.Cut(f, " ")
			if _, err := os.Stat(filepath.Join(project, p)); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".hivemind", "worktrees")); err == nil {
		t.Error("worktrees made without git")
	}
	noLeftovers(t, project)
}

// wtKillWhileExecuting starts a paced run in project and SIGKILLs it once
// it executes with the workers' worktrees in place; it returns the task dir.
func wtKillWhileExecuting(t *testing.T, project string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, t.TempDir(), 30*time.Millisecond, "--headless", "--agent", "sim", "--workers", "2",
		"--project", project, "add a greeting feature")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var dir string
	waitFor(t, runDeadline, "executing with worktrees", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("hivemind exited early: %v\n%s", err, out.String())
		default:
		}
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*", "state.json"))
		if len(m) != 1 {
			return false
		}
		b, err := os.ReadFile(m[0])
		if err != nil || !strings.Contains(string(b), `"state": "executing"`) {
			return false
		}
		for _, w := range []string{"worker_1", "worker_2"} {
			if _, err := os.Stat(filepath.Join(project, ".hivemind", "worktrees", w, ".git")); err != nil {
				return false
			}
		}
		dir = filepath.Dir(m[0])
		return true
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	noLeftovers(t, project)
	return dir
}

// A crashed run: --resume keeps its worktrees and finishes with one commit
// per subtask; a new task instead prunes them (their work is kept on the
// worker branches).
func TestWorktreeCrash(t *testing.T) {
	parallel(t)
	t.Run("resume", func(t *testing.T) {
		project := wtRepo(t, true)
		dir := wtKillWhileExecuting(t, project)
		ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
		defer cancel()
		cmd, out := hivemind(t, ctx, t.TempDir(), "--headless", "--resume", "--agent", "sim", "--workers", "2", "--project", project)
		if code := exitCode(t, cmd); code != 0 {
			t.Fatalf("resume exit %d; output:\n%s", code, out.String())
		}
		st := checkComplete(t, dir)
		branch := "hivemind/" + filepath.Base(dir)
		log := wtGit(t, project, "log", "--format=%s", "refs/hivemind/base/"+filepath.Base(dir)+".."+branch)
		for sub := range st.Subtasks {
			if n := len(regexp.MustCompile(`(?m)^\[worker_\d+\] `+sub+`: `).FindAllString(log, -1)); n != 1 {
				t.Errorf("%s: %d commits, want 1:\n%s", sub, n, log)
			}
		}
		if n := countType(readRecords(t, dir), "worktrees_pruned"); n != 0 {
			t.Errorf("resume pruned its own worktrees (%d records)", n)
		}
		if wts := wtGit(t, project, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
			t.Errorf("worktrees left:\n%s", wts)
		}
		noLeftovers(t, project)
	})
	t.Run("new task prunes", func(t *testing.T) {
		project := wtRepo(t, false)
		old := wtKillWhileExecuting(t, project)
		oldID := filepath.Base(old)
		code, out := wtRun(t, project, "", "another task")
		if code != 0 {
			t.Fatalf("exit %d; output:\n%s", code, out)
		}
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*"))
		var dir string
		for _, d := range m {
			if filepath.Base(d) != oldID {
				dir = d
			}
		}
		checkComplete(t, dir)
		recs := readRecords(t, dir)
		if countType(recs, "worktrees_pruned") != 1 {
			t.Errorf("no worktrees_pruned record; output:\n%s", out)
		}
		for _, w := range []string{"worker_1", "worker_2"} {
			wtGit(t, project, "rev-parse", "--verify", "refs/heads/hivemind/"+oldID+"-"+w)
		}
		if wts := wtGit(t, project, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
			t.Errorf("worktrees left:\n%s", wts)
		}
		noLeftovers(t, project)
	})
}

// A task cancelled before it built anything leaves no worktree and no
// branch behind, and says which branches it removed; hivemind diff then
// says the task changed nothing.
func TestWorktreeCancelLeavesNothing(t *testing.T) {
	parallel(t)
	project, home := wtRepo(t, false), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, home, 30*time.Millisecond, "--headless", "--agent", "sim",
		"--project", project, "build a tiny calculator")
	// The lead plans; no worker has been given anything yet.
	interruptWhen(t, cmd, out, "the lead to be busy", func(o string) bool {
		return strings.Contains(o, "lead") && strings.Contains(o, "busy")
	})
	if st := readState(t, taskDir(t, project)); st.Phase != vocab.PhaseCancelled {
		t.Fatalf("state %s after SIGINT, want cancelled:\n%s", st.Phase, out.String())
	}
	if b := wtGit(t, project, "branch", "--list", "hivemind/*"); b != "" {
		t.Errorf("branches left by a task that built nothing:\n%s\n%s", b, out.String())
	}
	if wts := wtGit(t, project, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if !strings.Contains(out.String(), "Removed the branches that held nothing beyond the task's start: hivemind/") ||
		strings.Contains(out.String(), "git merge") {
		t.Errorf("the output does not say what was removed, or offers a merge:\n%s", out.String())
	}
	dcmd, dout := hivemind(t, ctx, home, "diff", "--project", project)
	if c := exitCode(t, dcmd); c == 0 || !strings.Contains(dout.String(), "changed nothing before it ended") {
		t.Errorf("hivemind diff after the cancel: exit %d\n%s", c, dout.String())
	}
	noLeftovers(t, project)
}

// Abandoning a task that waits for the user (A in the full-screen UI) on
// a git project: on quit its worktrees and its empty branches are removed
// and that is said on the terminal; hivemind status then says the user
// ended it, and what it had waited on.
func TestWorktreeAbandonCleansUp(t *testing.T) {
	parallel(t)
	project := wtRepo(t, false)
	r := startTUI(t, tuiOptions{simArgs: "--pace 2ms --reject-plans 99", project: project,
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitText(2*tuiWait, "NEEDS HUMAN")
	r.keys("A")
	r.waitScreen(tuiWait, "the abandon question", func(s tuiScreen) bool { return strings.Contains(s.footer(), "Abandon the task?") })
	r.keys("y")
	r.waitText(tuiWait, "ABANDONED")
	if code := r.quit(); code != exitCancelled {
		t.Errorf("exit status %d after quitting an abandoned task, want %d as for a cancelled one", code, exitCancelled)
	}
	if b := wtGit(t, project, "branch", "--list", "hivemind/*"); b != "" {
		t.Errorf("branches left by an abandoned task that built nothing:\n%s", b)
	}
	if wts := wtGit(t, project, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if s := r.joined(); !s.contains("Removed the branches that held nothing beyond the task's start: hivemind/") {
		t.Errorf("the terminal does not say which branches were removed:\n%s", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, out := hivemind(t, ctx, t.TempDir(), "status", "--project", project)
	if c := exitCode(t, cmd); c != 0 || !strings.Contains(out.String(), "state     abandoned (from needs_human)\n") ||
		!strings.Contains(out.String(), "ended     on request, while it waited for you in needs_human; it had stopped because: The plan was sent back") {
		t.Errorf("hivemind status after abandon: exit %d\n%s", c, out.String())
	}
	noLeftovers(t, project)
}
