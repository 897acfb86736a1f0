package e2e_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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

// A rate limit that pauses and resumes dispatch, with real Claude Code:
// two workers and the Lead and Reviewer share one account (Claude). At
// checkpoint 1 the fake answers worker_1's notice turn with 429s; Claude
// Code gives up, its StopFailure hook marks worker_1 rate_limited and the
// account held. The Reviewer's checkpoint review (sent before) is answered
// only once the hold is recorded, so the fixes it asks for are dispatched
// while the account is limited: they wait (dispatch_queued, status says
// why), are sent, in order, only after the limit clears, and the task
// completes.
func TestClaudeRateLimitHoldsDispatch(t *testing.T) {
	t.Parallel()
	var project atomic.Value // the fake's wait reads it from its handlers
	holdRecorded := func() bool {
		p, _ := project.Load().(string)
		dir := taskDirOf(p)
		return dir != "" && hasRecord(readEventLog(dir), "dispatch_held", "worker_1")
	}
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 1
	sc.Errors = []fakeapi.ErrorRule{{Agent: "worker_1", Turn: "Checkpoint 1 (", Status: 429, For: 5 * time.Second, RetryAfter: time.Second}}
	sc.Waits = []fakeapi.WaitRule{{Agent: "reviewer", Turn: "Review checkpoint 1", Until: holdRecorded, For: 2 * time.Minute}}
	c := SetupClaudeOffline(t, sc)
	project.Store(c.Project)
	c.Env = append(c.Env, "CLAUDE_CODE_MAX_RETRIES=1")
	// The limit lasts 40 s (worker_1's cooldown): longer than the
	// Reviewer's turn on a loaded machine, so its fixes meet the hold.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("rate_limit_cooldown_seconds = 40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Start(t, "--headless", "--config", cfg, "--agent", "claude", "--workers", "2", "add a greeting service")
	queued := waitEvent(t, c, p, 4*time.Minute, "a dispatch queued while held", func(r workspace.EventRecord) bool {
		return r.Type == "dispatch_queued"
	})
	// While held, `hivemind status` says which account waits and why.
	st := exec.Command(bin, "status", "--project", c.Project)
	st.Env = c.Env
	out, err := st.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "held      new work for account claude") || !strings.Contains(string(out), "worker_1 rate limited (") {
		t.Errorf("status while held (%v):\n%s", err, out)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	recs := readEventLog(dir)
	// Held from worker_1's limit until it cleared; what was dispatched
	// meanwhile waited and went out after, in the order it was made.
	var heldAt, resumedAt time.Time
	var waiting, sentAfter []string
	for _, r := range recs {
		switch {
		case r.Type == "dispatch_held" && r.Agent == "worker_1" && heldAt.IsZero():
			heldAt = r.Time
		case r.Type == "dispatch_resumed" && !heldAt.IsZero() && resumedAt.IsZero():
			resumedAt = r.Time
			if !strings.Contains(recDetail(r, "why"), "rate limit cleared") {
				t.Errorf("resumed for another reason: %s", recDetail(r, "why"))
			}
		case heldAt.IsZero() || !resumedAt.IsZero() && len(sentAfter) == len(waiting):
		case r.Type == "dispatch_queued":
			if recDetail(r, "read_only") == "false" { // an agent's newer work replaces its queued work
				waiting = slices.DeleteFunc(waiting, func(s string) bool { return strings.HasPrefix(s, r.Agent+"#") && !strings.HasSuffix(s, "(notice)") })
			}
			w := fmt.Sprintf("%s#%s", r.Agent, recDetail(r, "seq"))
			if recDetail(r, "read_only") == "true" {
				w += "(notice)"
			}
			waiting = append(waiting, w)
		case r.Type == "assignment_sent" && resumedAt.IsZero():
			t.Errorf("sent while held: %s %v", r.Agent, r.Details)
		case r.Type == "assignment_sent":
			w := fmt.Sprintf("%s#%s", r.Agent, recDetail(r, "seq"))
			if recDetail(r, "read_only") == "true" {
				w += "(notice)"
			}
			sentAfter = append(sentAfter, w)
		}
	}
	if heldAt.IsZero() || resumedAt.IsZero() {
		t.Fatalf("no dispatch_held → dispatch_resumed for worker_1")
	}
	if len(waiting) == 0 || fmt.Sprint(sentAfter) != fmt.Sprint(waiting) {
		t.Errorf("held %v, sent after the limit cleared %v (want the same, in order)", waiting, sentAfter)
	}
	if !slices.ContainsFunc(waiting, func(s string) bool { return strings.HasPrefix(s, "lead#") }) {
		t.Errorf("the Lead's fix was not among the held dispatches: %v", waiting)
	}
	if w1 := strings.Join(healthLog(recs)["worker_1"], " → "); !strings.Contains(w1, "rate_limited (") {
		t.Errorf("worker_1 never rate_limited: %s", w1)
	}
	checkInjections(t, dir, recs, c.API)
	noLeftovers(t, c.Project)
	t.Logf("held %v (limit at +%v, first dispatch queued at +%v, waited %v): %v sent after it cleared",
		resumedAt.Sub(heldAt).Round(time.Millisecond), heldAt.Sub(p.start).Round(time.Millisecond),
		queued.Time.Sub(p.start).Round(time.Millisecond), resumedAt.Sub(queued.Time).Round(time.Millisecond), waiting)
}
