package e2e_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/workspace"
)

// claudeAgents are the agents of a --workers 2 run.
var claudeAgents = []string{"lead", "reviewer", "worker_1", "worker_2"}

// The whole workflow with four real Claude Code sessions against the fake
// API: one plan rejection, one checkpoint fix, complete. Every injected
// message reaches the model exactly once, every turn ends through the Stop
// hook, every file comes from Claude's own Write tool, nothing is left
// running.
func TestClaudeHeadlessComplete(t *testing.T) {
	c := SetupClaudeOffline(t, fakeapi.DefaultScript())
	p := c.Start(t, "--headless", "--agent", "claude", "--workers", "2", "add a greeting service")
	dumpOnFailure(t, c, p)
	code := p.wait(t)
	took := time.Since(p.start)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	st := checkComplete(t, dir)
	if st.RevisionCount != 1 {
		t.Errorf("revision_count %d, want 1 (the first plan is rejected)", st.RevisionCount)
	}
	recs := events(dir)
	fixes := 0
	for _, r := range recs {
		if r.Type == "checkpoint_issues" {
			fixes++
		}
	}
	if fixes != 1 {
		t.Errorf("%d checkpoint_issues events, want 1", fixes)
	}
	injected := checkInjections(t, dir, recs, c.API)
	stops := checkHealth(t, recs, claudeAgents)
	nw := checkWrites(t, c, dir)
	consumed := triggersConsumedOnce(t, dir, recs)
	noLeftovers(t, c.Project)
	t.Logf("complete in %v: %d injections confirmed, %d turns ended by the Stop hook, %d Write calls, %d triggers consumed, %d API requests",
		took.Round(time.Millisecond), injected, stops, nw, consumed, len(c.API.Requests()))
	_ = workspace.PhaseComplete
	if k := os.Getenv("KEEP"); k != "" {
		exec.Command("cp", "-a", c.Home, k+"/home").Run()
		exec.Command("cp", "-a", c.Project, k+"/project").Run()
	}
}

// The fake API answers the Lead's first requests with 429 until Claude
// Code gives up (CLAUDE_CODE_MAX_RETRIES=1): its StopFailure hook makes the
// Lead rate_limited; after the limit clears the run continues to complete.
func TestClaudeRateLimited(t *testing.T) {
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	sc.Errors = []fakeapi.ErrorRule{{Agent: "lead", Status: 429, Count: 2, RetryAfter: time.Second}}
	c := SetupClaudeOffline(t, sc)
	c.Env = append(c.Env, "CLAUDE_CODE_MAX_RETRIES=1")
	p := c.Start(t, "--headless", "--agent", "claude", "--workers", "1", "add a greeting service")
	dumpOnFailure(t, c, p)
	limited := waitEvent(t, c, p, 90*time.Second, "the lead to be rate_limited", func(r workspace.EventRecord) bool {
		return r.Type == "agent_rate_limited" && r.Agent == "lead"
	})
	t.Logf("rate limited after %v: %s", limited.Time.Sub(p.start).Round(time.Millisecond), detail(limited, "detail"))
	code := p.wait(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}
