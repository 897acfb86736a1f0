package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The disk fills up at the worker's subtask commit: the subtask is not
// done (the run ends in needs_human naming the failed commit, not
// "complete" with an empty merge); space is freed; --retry commits the
// work and the task completes with every file on the task branch. The
// full disk is a stale lock on the worker's branch ref, which makes git
// fail the commit the same way, deterministically.
func TestChaosDiskFullAtCommitThenRetry(t *testing.T) {
	parallel(t)
	project, home := chaosProject(t, "max_retries = 1\n")
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", project, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The worker says it runs (its worktree and branch exist), then waits
	// for the gate before it works; the others start working at once.
	gate := filepath.Join(t.TempDir(), "gate")
	script := filepath.Join(t.TempDir(), "gated.sh")
	if err := os.WriteFile(script, []byte(`#!/bin/sh
if [ "$HIVEMIND_ROLE" = worker ]; then
	echo > "$HIVEMIND_TASK_DIR/agents/$HIVEMIND_AGENT_ID/running" 2>/dev/null || { mkdir -p "$HIVEMIND_TASK_DIR/agents/$HIVEMIND_AGENT_ID" && echo > "$HIVEMIND_TASK_DIR/agents/$HIVEMIND_AGENT_ID/running"; }
	while [ ! -e "`+gate+`" ]; do sleep 0.05; done
fi
exec "`+self+`"
`), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sh "+script, "--project", project, "chaos: write two files")
	cmd.Env = append(cmd.Env, chaosModeEnv+"=behave")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The worker runs in its worktree: its branch exists; lock it, then
	// let the worker work.
	var lock string
	if !pollUntil(60*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*", "agents", "worker_1", "running"))
		return len(m) == 1
	}) {
		t.Fatalf("the worker never ran:\n%s", out.String())
	}
	m, _ := filepath.Glob(filepath.Join(project, ".git", "refs", "heads", "hivemind", "*-worker_1"))
	if len(m) != 1 {
		t.Fatalf("worker branch refs: %q", m)
	}
	lock = m[0] + ".lock"
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("exit %d with the worker's commits failing, want 3 (needs_human):\n%s", code, out.String())
	}
	dir := taskDir(t, project)
	if st := readState(t, dir); !strings.Contains(st.Reason+st.Error, "could not commit") {
		t.Errorf("needs_human reason %q does not name the failed commit", st.Reason)
	}
	if !strings.Contains(out.String(), "git_commit_failed") {
		t.Errorf("no git_commit_failed line:\n%s", out.String())
	}
	if err := os.Remove(lock); err != nil { // space is back
		t.Fatal(err)
	}
	code, dir, sout, _ := chaosExec(t, project, home, "behave", "--retry")
	chaosComplete(t, code, dir, sout)
	ls, err := exec.Command("git", "-C", project, "ls-tree", "-r", "--name-only", "hivemind/"+filepath.Base(dir)).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if !strings.Contains(string(ls), f+"\n") {
			t.Errorf("the task branch lacks %s:\n%s\n%s", f, ls, sout)
		}
	}
	if strings.Contains(sout, "Not on the task branch") {
		t.Errorf("work left on a side branch:\n%s", sout)
	}
}
