package e2e_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/vocab"
)

// hostileWorker runs a whole task with the real cli as worker_1 (the
// other agents are sims: the property is worker_1's), whose model, at the
// start of its first subtask, has its shell run a command that tries to
// write state.json, worker_2's done marker for st_2 and the Reviewer's
// checkpoint-approved.md (script.HostileShell). Each
// write must fail in the agent, refused by the kernel (the shell says
// "Permission denied": EACCES from the Landlock write scope). The
// engine records nothing from it (no refusal, no subtask_done or approval
// by worker_1, no restored state), and the task completes with every
// subtask done by its own worker.
func hostileWorker(t *testing.T, cli string) {
	if !sandbox.Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues, sc.Scenario.HostileShell = 0, 0, true
	c := SetupTeamOffline(t, sc, cli)
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", onlyAs(cli, "worker_1"), "--workers", "2", "add a greeting service")
	code := p.wait(t)
	out := p.out.String()
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "write scopes: on (Landlock ABI") {
		t.Errorf("the run did not say its write scopes are on:\n%s", out)
	}
	dir := taskDirOf(c.Project)
	st := checkComplete(t, dir)
	targets := script.HostileTargets(dir)

	// The command's call and what the CLI's shell tool answered.
	label := filepath.Join(dir, vocab.OutboxesDir, "worker_1", "hostile")
	var callID string
	for _, r := range c.API.Requests() {
		if r.Agent == "worker_1" && r.ToolPath == label && r.ToolID != "" {
			callID = r.ToolID
			break
		}
	}
	if callID == "" {
		t.Fatalf("the fake API never answered worker_1 with the hostile command")
	}
	var result *fakeapi.ToolResult
	for _, r := range c.API.Requests() {
		if r.Agent != "worker_1" {
			continue
		}
		for i, res := range r.Results {
			if res.ID == callID || strings.Contains(res.Text, script.HostileRefused) || strings.Contains(res.Text, script.HostileWrote) {
				result = &r.Results[i]
			}
		}
		if result != nil {
			break
		}
	}
	if result == nil {
		t.Fatalf("no tool result for worker_1's hostile command (call %s)", callID)
	}
	// Measured: every CLI's shell runs the command (none of their own
	// checks nor Hivemind's hook stops it) and the kernel refuses each
	// write: the shell reports EACCES ("Permission denied").
	if strings.Contains(result.Text, script.HostileWrote) {
		t.Errorf("a hostile write succeeded:\n%s", result.Text)
	}
	for _, f := range targets {
		if lineWith(result.Text, script.HostileRefused+f) == "" || lineWith(result.Text, f+": Permission denied") == "" {
			t.Errorf("%s: not refused with EACCES in:\n%s", f, result.Text)
		}
	}

	// Nothing the engine recorded came from it.
	hostile := []byte(`"agent_id": "worker_2", "output_file": "agents/worker_2/outputs/st_2.md", "completed_at": "2026-01-01T00:00:00Z"`)
	for _, f := range targets {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, hostile) {
			t.Errorf("%s holds the hostile content", f)
		}
	}
	for _, r := range readEventLog(dir) {
		switch {
		case r.Type == "trigger_refused" || r.Type == "state_restored" || r.Type == "state_rebuilt":
			t.Errorf("the engine saw the attempt: %s %s %v", r.Type, r.Agent, r.Details)
		case (r.Type == "subtask_done" || r.Type == "checkpoint_approved") && r.Agent == "worker_1" && r.Details["subtask"] != nil &&
			r.Details["subtask"] != "" && st.Subtasks[r.Details["subtask"].(string)].Worker != "worker_1":
			t.Errorf("recorded from worker_1: %s %v", r.Type, r.Details)
		case r.Type == "checkpoint_approved" && r.Agent != "reviewer":
			t.Errorf("an approval by %s", r.Agent)
		}
	}
	// Every subtask's work: done by its own worker, its output in that
	// worker's outbox.
	for id, s := range st.Subtasks {
		if _, err := os.Stat(filepath.Join(dir, vocab.OutboxesDir, string(s.Worker), "outputs", id+".md")); err != nil {
			t.Errorf("subtask %s (%s): %v", id, s.Worker, err)
		}
	}
	noLeftovers(t, c.Project)
	t.Logf("%s worker: 3 hostile writes refused by the kernel (EACCES); task complete in %v; the shell said:\n%s",
		cli, time.Since(p.start).Round(time.Millisecond), clip(result.Text, 1200))
}

// lineWith is the first line of s containing sub ("" if none).
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestClaudeHostileWorkerShell: Claude Code's Bash tool.
func TestClaudeHostileWorkerShell(t *testing.T) {
	parallel(t)
	hostileWorker(t, "claude")
}

// TestCodexHostileWorkerShell: Codex's command tool.
func TestCodexHostileWorkerShell(t *testing.T) {
	parallel(t)
	hostileWorker(t, "codex")
}

// TestGeminiHostileWorkerShell: Gemini CLI's run_shell_command.
func TestGeminiHostileWorkerShell(t *testing.T) {
	parallel(t)
	hostileWorker(t, "gemini")
}
