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
	"github.com/hivemind-dev/hivemind/vocab"
)

// A tiny budget_usd stops the run at needs_human once Claude Code's
// recorded usage (its transcript, read at the Stop hook, priced from the
// shipped table: the fake answers as "fake-claude") reaches it, with the
// figures; `--resume --retry --budget` with a raised budget continues the
// same task to complete.
func TestClaudeBudgetStopsAndRetryContinues(t *testing.T) {
	parallel(t)
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
	if st.Phase != vocab.PhaseNeedsHuman || st.Escalation != "budget" {
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
		vocab.FormatUSD(lead.CostUSD), assigned, lead.Tokens(), vocab.FormatUSD(spent))
}

func hasRecord(recs []vocab.EventRecord, typ vocab.RecordType, agent string) bool {
	for _, r := range recs {
		if r.Type == typ && (agent == "" || string(r.Agent) == agent) {
			return true
		}
	}
	return false
}

// holdCycle is what the governor recorded of one rate limit: when the
// account was held and released, and the dispatches that waited (queued)
// and were sent after the release (sent), as "agent#seq", notices marked.
type holdCycle struct {
	from, to     time.Time
	queued, sent []string
	recs         []vocab.EventRecord
}

// checkHoldCycle checks the governor's records of a rate limit on agent:
// dispatch_held when its turn failed on the limit, dispatch_resumed when
// it cleared; meanwhile nothing sent to an agent of the held account
// (inAccount), and what waited is what is sent first after the release,
// in the order it was made (an agent's newer work replaces its queued
// work).
func checkHoldCycle(t *testing.T, recs []vocab.EventRecord, agent string, inAccount func(string) bool) holdCycle {
	t.Helper()
	c := holdCycle{recs: recs}
	name := func(r vocab.EventRecord) string {
		if recDetail(r, "read_only") == "true" {
			return fmt.Sprintf("%s#%s(notice)", r.Agent, recDetail(r, "seq"))
		}
		return fmt.Sprintf("%s#%s", r.Agent, recDetail(r, "seq"))
	}
	for _, r := range recs {
		switch {
		case r.Type == "dispatch_held" && string(r.Agent) == agent && c.from.IsZero():
			c.from = r.Time
		case c.from.IsZero() || !c.to.IsZero() && len(c.sent) == len(c.queued):
		case r.Type == "dispatch_resumed" && c.to.IsZero():
			c.to = r.Time
			if !strings.Contains(recDetail(r, "why"), "rate limit cleared") {
				t.Errorf("dispatch resumed for another reason: %s", recDetail(r, "why"))
			}
		case r.Type == "dispatch_queued" && c.to.IsZero():
			if recDetail(r, "read_only") == "false" {
				c.queued = slices.DeleteFunc(c.queued, func(q string) bool {
					return strings.HasPrefix(q, string(r.Agent)+"#") && !strings.HasSuffix(q, "(notice)")
				})
			}
			c.queued = append(c.queued, name(r))
		case (r.Type == "assignment_sent" || r.Type == "subtask_assigned") && c.to.IsZero() && inAccount(string(r.Agent)):
			t.Errorf("dispatched while held: %s %s %v", r.Type, r.Agent, r.Details)
		case r.Type == "assignment_sent" && !c.to.IsZero():
			c.sent = append(c.sent, name(r))
		}
	}
	if c.from.IsZero() || c.to.IsZero() {
		t.Fatalf("no dispatch_held → dispatch_resumed for %s", agent)
	}
	if fmt.Sprint(c.sent) != fmt.Sprint(c.queued) {
		t.Errorf("held %v, sent after the limit cleared %v (want the same, in order)", c.queued, c.sent)
	}
	return c
}

func anyAgent(string) bool { return true }

// A rate limit that pauses and resumes dispatch, with real Claude Code:
// two workers and the Lead and Reviewer share one account (Claude). At
// checkpoint 1 the Reviewer asks for fixes from the Lead and worker_1;
// the fake answers the Lead's fix turn with 429s; Claude Code gives up,
// its StopFailure hook marks the Lead rate_limited and the account held.
// The Lead's fix, lost with that turn, waits (dispatch_queued, status says
// why) and is sent once, only after the limit clears, and the task
// completes.
func TestClaudeRateLimitHoldsDispatch(t *testing.T) {
	parallel(t)
	hc, c := rateLimitHoldsDispatch(t, "claude", []string{"lead"}, "claude", anyAgent, "claude")
	checkInjections(t, taskDirOf(c.Project), hc.recs, c.API)
	if !slices.ContainsFunc(hc.queued, func(s string) bool { return strings.HasPrefix(s, "lead#") }) {
		t.Errorf("the Lead's fix was not among the held dispatches: %v", hc.queued)
	}
}

// The same with Codex workers and a Claude Lead and Reviewer, the limit
// on the fix turn of the worker the Reviewer names: Codex's session file
// records the failed turn (no hook fires), the Codex account is held and
// that worker's fix waits for it — and the Lead, on the Claude account,
// finishes its fix meanwhile (the fake holds the Lead's answer until the
// hold is recorded).
func TestCodexRateLimitHoldsOnlyItsAccount(t *testing.T) {
	parallel(t)
	worker := func(a string) bool { return strings.HasPrefix(a, "worker_") }
	hc, _ := rateLimitHoldsDispatch(t, "codex", []string{"worker_1", "worker_2"}, "lead=claude,reviewer=claude,worker=codex", worker, "claude", "codex")
	if len(hc.queued) == 0 || slices.ContainsFunc(hc.queued, func(s string) bool { return !worker(strings.Split(s, "#")[0]) }) {
		t.Errorf("held %v, want only the Codex workers' dispatches", hc.queued)
	}
	leadFix := false
	for _, r := range hc.recs {
		if r.Type == "fix_done" && r.Agent == "lead" && r.Time.After(hc.from) && r.Time.Before(hc.to) {
			leadFix = true
		}
	}
	if !leadFix {
		t.Error("the Claude Lead's fix was not done while the Codex account was held")
	}
}

// rateLimitHoldsDispatch runs the scenario of TestClaudeRateLimitHoldsDispatch
// with --agent team (the CLIs clis): the fix turns of the limited agents
// (whichever the Reviewer asks for a fix), whose account is account
// (inAccount tells its agents), meet a rate limit; it returns the hold's
// records and the finished run. The other fixes' answers wait until the
// hold is recorded, so their turns go on during it.
func rateLimitHoldsDispatch(t *testing.T, account string, limited []string, team string, inAccount func(string) bool, clis ...string) (holdCycle, *ClaudeOffline) {
	var project atomic.Value // the fake's wait reads it from its handlers
	isHeld := func(r vocab.EventRecord) bool {
		return r.Type == "dispatch_held" && slices.Contains(limited, string(r.Agent))
	}
	holdRecorded := func() bool {
		p, _ := project.Load().(string)
		dir := taskDirOf(p)
		return dir != "" && slices.ContainsFunc(readEventLog(dir), isHeld)
	}
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 1
	const fix = "Fix the checkpoint 1"
	for _, a := range []string{"lead", "worker_1", "worker_2"} {
		if slices.Contains(limited, a) {
			sc.Errors = append(sc.Errors, fakeapi.ErrorRule{Agent: a, Turn: fix, Status: 429, For: 5 * time.Second, RetryAfter: time.Second})
		} else {
			sc.Waits = append(sc.Waits, fakeapi.WaitRule{Agent: a, Turn: fix, Until: holdRecorded, For: 2 * time.Minute})
		}
	}
	c := SetupTeamOffline(t, sc, clis...)
	project.Store(c.Project)
	c.Env = append(c.Env, "CLAUDE_CODE_MAX_RETRIES=1")
	// The limit lasts 20 s (the limited agent's cooldown): many times the
	// other fix's turn (2 s with stress-ng on 2 cores), which ends during
	// the hold.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("rate_limit_cooldown_seconds = 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Start(t, "--headless", "--config", cfg, "--agent", team, "--workers", "2", "add a greeting service")
	held := waitEvent(t, c, p, 4*time.Minute, "the account held", isHeld)
	agent := string(held.Agent)
	// While held, `hivemind status` says which account waits and why
	// (state.json may follow the hold's record by a moment on a busy
	// machine: asked again within the hold's 20 s).
	var out []byte
	var err error
	var into time.Duration
	shows := func() bool {
		st := exec.Command(bin, "status", "--project", c.Project)
		st.Env = c.Env
		out, err = st.CombinedOutput()
		into = time.Since(held.Time)
		return err == nil && strings.Contains(string(out), "held      new work for account "+account) && strings.Contains(string(out), agent+" rate limited (")
	}
	if !pollUntil(10*time.Second, shows) {
		t.Errorf("status while held (%v, %v into the hold):\n%s", err, into.Round(time.Millisecond), out)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	recs := readEventLog(dir)
	// Held from the limit until it cleared; what was dispatched meanwhile
	// (the lost fix, sent again) waited and went out after, in the order
	// it was made.
	hc := checkHoldCycle(t, recs, agent, inAccount)
	if h := strings.Join(healthLog(recs)[agent], " → "); !strings.Contains(h, "rate_limited (") {
		t.Errorf("%s never rate_limited: %s", agent, h)
	}
	noLeftovers(t, c.Project)
	t.Logf("%s: %s held %v (limit at +%v, status read %v into the hold): %v sent after it cleared", team, agent,
		hc.to.Sub(hc.from).Round(time.Millisecond), hc.from.Sub(p.start).Round(time.Millisecond),
		into.Round(time.Millisecond), hc.queued)
	return hc, c
}
