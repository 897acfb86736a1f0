package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// servedUsage is what the fake API answered an agent with: input and
// output tokens of its turns (main: requests offering the tools) and of
// its side calls (title generation and the like).
type servedUsage struct{ in, out, sideIn, sideOut int64 }

func servedByAgent(api *fakeapi.Server) map[string]servedUsage {
	m := map[string]servedUsage{}
	for _, r := range api.Requests() {
		if r.Agent == "" || r.Status != 200 || r.InputTokens+r.OutputTokens == 0 {
			continue
		}
		s := m[r.Agent]
		if r.HasTools {
			s.in, s.out = s.in+int64(r.InputTokens), s.out+int64(r.OutputTokens)
		} else {
			s.sideIn, s.sideOut = s.sideIn+int64(r.InputTokens), s.sideOut+int64(r.OutputTokens)
		}
		m[r.Agent] = s
	}
	return m
}

// usageExact runs a team (--agent team, one worker) to complete — the
// plan rejected once, the checkpoint fixed once, so each CLI's Lead
// revises, Reviewer rejects and worker fixes (TestCodexTeamComplete and
// TestGeminiTeamComplete, whole teams of one CLI, are make test-long's) —
// and checks that the usage `hivemind status --json` reports for every
// agent is what the fake API served it — the Reviewer, stopped right
// after its approval (the last trigger), included. Side calls no CLI
// records are logged beside it.
func usageExact(t *testing.T, team string, clis ...string) {
	c := SetupTeamOffline(t, fakeapi.DefaultScript(), clis...)
	p := c.Start(t, "--headless", "--agent", team, "--workers", "1", "add a greeting service")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	cmd := exec.Command(bin, "status", "--json", "--project", c.Project)
	cmd.Env = c.Env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status --json: %v", err)
	}
	var st vocab.State
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	served := servedByAgent(c.API)
	for _, id := range []string{"lead", "reviewer", "worker_1"} {
		u, s := st.Agents[vocab.AgentID(id)].Usage, served[id]
		in := u.Input + u.CacheRead + u.CacheWrite
		switch {
		case in == s.in && u.Output == s.out:
		case in == s.in+s.sideIn && u.Output == s.out+s.sideOut:
			t.Logf("%s: its side calls (%d/%d) are recorded too", id, s.sideIn, s.sideOut)
		default:
			t.Errorf("%s: status --json usage %d in / %d out; the fake served %d / %d (side calls %d / %d more)",
				id, in, u.Output, s.in, s.out, s.sideIn, s.sideOut)
		}
		t.Logf("%s (%s): usage %d in / %d out, served %d / %d, side calls not recorded %d / %d",
			id, u.Model, in, u.Output, s.in, s.out, s.sideIn, s.sideOut)
	}
	noLeftovers(t, c.Project)
}

// Claude Lead and worker, Codex Reviewer: the Reviewer's last turn, cut
// short by the stop at complete, counts (6000/1404/336 was read where
// 8000/1872/448 was served before usage was read after the stop).
func TestUsageExactClaudeCodex(t *testing.T) {
	parallel(t)
	usageExact(t, "lead=claude,reviewer=codex,worker=claude", "claude", "codex")
}

// Codex Lead and worker, Claude Reviewer.
func TestUsageExactCodexClaude(t *testing.T) {
	parallel(t)
	usageExact(t, "lead=codex,reviewer=claude,worker=codex", "claude", "codex")
}

// Claude Code retrying a 429 itself (its default 10 attempts, a
// retry-after of 4 s, no hook until the turn ends) shows as rate_limited
// within 5 s of the first 429 and holds its account — and is not taken
// for hung though the retries outlast hang_seconds; once a retry goes
// through the turn goes on, nothing is sent twice, and the task completes.
func TestClaudeRetriedRateLimitShows(t *testing.T) {
	parallel(t)
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	sc.Errors = []fakeapi.ErrorRule{{Agent: "lead", Turn: "[HIVEMIND]", Status: 429, Count: 6, RetryAfter: 4 * time.Second}}
	c := SetupClaudeOffline(t, sc)
	ws := filepath.Join(c.Project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	const hang = 10 // seconds: far less than 6 retries 4 s apart
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte("hang_seconds = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Start(t, "--headless", "--agent", "claude", "--workers", "1", "add a greeting service")
	limited := waitEvent(t, c, p, 3*time.Minute, "the lead rate_limited", func(r vocab.EventRecord) bool {
		return r.Type == "agent_rate_limited" && r.Agent == "lead"
	})
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	recs := readEventLog(dir)
	var first429 time.Time
	var errs int
	for _, r := range c.API.Requests() {
		if r.Agent == "lead" && r.Status == 429 {
			if errs == 0 {
				first429 = r.At
			}
			errs++
		}
	}
	if errs < 3 {
		t.Fatalf("the fake answered the lead %d 429s, want several", errs)
	}
	if d := limited.Time.Sub(first429); d > 5*time.Second || d < 0 {
		t.Errorf("rate_limited %v after the first 429, want within 5 s", d)
	}
	if !strings.Contains(recDetail(limited, "detail"), "Retrying in") {
		t.Errorf("rate_limited detail %q does not quote the retry line", recDetail(limited, "detail"))
	}
	if !hasRecord(recs, "dispatch_held", "lead") {
		t.Error("the lead's account was not held while it retried")
	}
	// From its first ready on: a Claude that prints nothing for 5 s while it
	// starts on a busy machine is warned about, rightly (hang_seconds 10).
	ready := false
	for _, r := range recs {
		if r.Agent != "lead" {
			continue
		}
		ready = ready || r.Type == vocab.InputPrefix+"agent_health" && recDetail(r, "health") == string(vocab.HealthReady)
		if ready && slices.Contains([]vocab.RecordType{"agent_hung", "agent_hang_warning", "agent_restart_scheduled", "agent_restarted"}, r.Type) {
			t.Errorf("the retrying lead was taken for hung: %s %v", r.Type, r.Details)
		}
	}
	lead := strings.Join(healthLog(recs)["lead"], " → ")
	if !strings.Contains(lead, "rate_limited (") || !strings.Contains(lead, "busy (the CLI's retry went through") {
		t.Errorf("lead health does not go rate_limited → busy: %s", lead)
	}
	checkInjections(t, dir, recs, c.API)
	noLeftovers(t, c.Project)
	t.Logf("%d 429s (retry-after 4 s, hang_seconds %d); rate_limited %v after the first (%s); lead: %s", errs, hang,
		limited.Time.Sub(first429).Round(time.Millisecond), recDetail(limited, "detail"), lead)
}

// Gemini Lead and Reviewer, Claude worker.
func TestUsageExactGemini(t *testing.T) {
	parallel(t)
	usageExact(t, "lead=gemini,reviewer=gemini,worker=claude", "claude", "gemini")
}
