package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// hangSeconds is the hang_seconds of the hung-model-call tests: the wait
// starts at the Lead's confirmed message, when its model call is held
// forever, so no margin for a slow machine is needed in it (the limit
// below has one).
const hangSeconds = 10

// modelCallNeverAnswers runs cli as the Lead (the other agents are sims)
// with the fake API holding the Lead's first model call forever (the CLI
// redraws its spinner and nothing else): the Lead is warned, then reported
// hung within hang_seconds + 10 s of its message being confirmed.
func modelCallNeverAnswers(t *testing.T, cli string) {
	sc := fakeapi.DefaultScript()
	sc.Waits = append(sc.Waits, fakeapi.WaitRule{Agent: "lead", Until: func() bool { return false }, For: time.Hour})
	c := SetupTeamOffline(t, sc, cli)
	ws := filepath.Join(c.Project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte(fmt.Sprintf("hang_seconds = %d\n", hangSeconds)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", onlyAs(cli, "lead"), "--workers", "1", "add a greeting service")
	isLead := func(r vocab.EventRecord, typ vocab.RecordType) bool {
		return r.Type == typ && r.Agent == "lead"
	}
	delivered := waitEvent(t, c, p, 3*time.Minute, "the lead's first message confirmed", func(r vocab.EventRecord) bool {
		return isLead(r, "input.injection_result") && r.Details["delivered"] == true
	})
	// (A slow start may itself have been warned: the turn is what counts.)
	warned := waitEvent(t, c, p, 2*time.Minute, "agent_hang_warning for the lead's turn", func(r vocab.EventRecord) bool {
		return isLead(r, "agent_hang_warning") && r.Time.After(delivered.Time)
	})
	hung := waitEvent(t, c, p, 2*time.Minute, "agent_hung for the lead", func(r vocab.EventRecord) bool {
		return isLead(r, "agent_hung") && r.Time.After(delivered.Time)
	})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	took := hung.Time.Sub(delivered.Time)
	if limit := (hangSeconds + 10) * time.Second; took > limit {
		t.Errorf("hung reported %v after the message was confirmed, want ≤ %v", took, limit)
	}
	if !warned.Time.Before(hung.Time) {
		t.Errorf("no warning before hung")
	}
	t.Logf("%s: warned after %v, hung after %v (%s)", cli, warned.Time.Sub(delivered.Time).Round(time.Second),
		took.Round(time.Second), recDetail(hung, "detail"))
}

func TestClaudeModelCallNeverAnswers(t *testing.T) {
	parallel(t)
	modelCallNeverAnswers(t, "claude")
}

func TestCodexModelCallNeverAnswers(t *testing.T) {
	parallel(t)
	modelCallNeverAnswers(t, "codex")
}

func TestGeminiModelCallNeverAnswers(t *testing.T) {
	parallel(t)
	modelCallNeverAnswers(t, "gemini")
}
