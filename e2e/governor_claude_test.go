package e2e_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/workspace"
)

// A tiny budget_usd stops the run at needs_human once Claude Code's
// recorded usage (its transcript, read at the Stop hook, priced from the
// shipped table: the fake answers as "fake-claude") reaches it, with the
// figures; `--resume --retry --budget` with a raised budget continues the
// same task to complete.
func TestClaudeBudgetStopsAndRetryContinues(t *testing.T) {
	t.Parallel()
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	sc.Model = "fake-claude"
	c := SetupClaudeOffline(t, sc)
	p := c.Start(t, "--headless", "--agent", "claude", "--workers", "1", "--budget", "0.01", "add a greeting service")
	if code := p.wait(t); code != 3 {
		t.Fatalf("exit %d, want 3 (needs_human)\n%s", code, p.out.String())
	}
	dir := taskDirOf(c.Project)
	st := readState(t, dir)
	if st.Phase != workspace.PhaseNeedsHuman || st.Escalation != "budget" {
		t.Fatalf("state %s (%s): %s", st.Phase, st.Escalation, st.Reason)
	}
	spent, unknown := st.Spend()
	if spent < 0.01 || len(unknown) != 0 || !strings.Contains(st.Reason, "reached the budget of $0.01") ||
		!strings.Contains(st.Reason, "- lead: $") || !strings.Contains(st.Reason, "--budget") {
		t.Errorf("spent %v (unknown %v), reason:\n%s", spent, unknown, st.Reason)
	}
	// The usage recorded is what the fake API reported for the Lead's
	// turns, priced at fake-claude's $3 / $15 per million tokens.
	lead := st.Agents["lead"].Usage
	var in, out int64
	for _, r := range c.API.Requests() {
		if r.Agent == "lead" && r.Kind == "messages" && r.Status == 200 && r.HasTools {
			in += int64(r.InputTokens)
			out += int64(r.OutputTokens)
		}
	}
	if lead.Model != "fake-claude" || lead.Input+lead.CacheRead+lead.CacheWrite != in || lead.Output != out {
		t.Errorf("lead usage %+v; the fake reported %d in, %d out", lead, in, out)
	}
	if want := (float64(in)*3 + float64(out)*15) / 1e6; !lead.CostKnown || math.Abs(lead.CostUSD-want) > 1e-9 {
		t.Errorf("lead cost %v, want %v", lead.CostUSD, want)
	}
	recs := readEventLog(dir)
	if !hasRecord(recs, "agent_usage", "lead") || !hasRecord(recs, "needs_human", "") {
		t.Error("no agent_usage or needs_human event")
	}
	assigned := 0
	for _, r := range recs {
		if r.Type == "subtask_assigned" {
			assigned++
		}
	}

	// A raised budget continues the task.
	p2 := c.Start(t, "--headless", "--resume", "--retry", "--budget", "100")
	if code := p2.wait(t); code != 0 {
		t.Fatalf("retry with a raised budget: exit %d\n%s", code, p2.out.String())
	}
	st = checkComplete(t, dir)
	spent, _ = st.Spend()
	noLeftovers(t, c.Project)
	t.Logf("stopped at %s with %d subtask(s) assigned (lead %d tok); complete after retry at %s",
		workspace.FormatUSD(lead.CostUSD), assigned, lead.Tokens(), workspace.FormatUSD(spent))
}

func hasRecord(recs []workspace.EventRecord, typ, agent string) bool {
	for _, r := range recs {
		if r.Type == typ && (agent == "" || r.Agent == agent) {
			return true
		}
	}
	return false
}

// checkHoldCycle checks the governor's records of a rate limit on agent:
// dispatch_held when its turn failed on the limit, dispatch_resumed when
// it cleared, and nothing assigned or typed into any agent in between.
func checkHoldCycle(t *testing.T, recs []workspace.EventRecord, agent string) (held time.Duration) {
	t.Helper()
	var from, to time.Time
	for _, r := range recs {
		switch {
		case r.Type == "dispatch_held" && r.Agent == agent && from.IsZero():
			from = r.Time
		case r.Type == "dispatch_resumed" && r.Agent == agent && !from.IsZero() && to.IsZero():
			to = r.Time
			if !strings.Contains(recDetail(r, "why"), "rate limit cleared") {
				t.Errorf("dispatch resumed for another reason: %s", recDetail(r, "why"))
			}
		case !from.IsZero() && to.IsZero() && (r.Type == "subtask_assigned" || r.Type == "injected" || r.Type == "assignment_written"):
			t.Errorf("dispatched while held: %s %s %v", r.Type, r.Agent, r.Details)
		}
	}
	if from.IsZero() || to.IsZero() {
		t.Fatalf("no dispatch_held → dispatch_resumed for %s", agent)
	}
	return to.Sub(from)
}
