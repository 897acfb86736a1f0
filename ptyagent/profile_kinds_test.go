package ptyagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// A Spec whose kind nobody registered is refused: it never runs with
// another kind's rules.
func TestUnknownKindRefused(t *testing.T) {
	_, err := Start(Spec{ID: "lead", Argv: []string{"true"}, Kind: "opencodex"})
	if err == nil || !strings.Contains(err.Error(), `unknown profile kind "opencodex"`) {
		t.Fatalf("Start with an unknown kind: %v", err)
	}
	for _, k := range []ProfileKind{ProfileClaude, ProfileCodex, ProfileGemini, ProfileSim, ProfileCustom} {
		if b, ok := KindBehavior(k); !ok || b.Submit.Confirm == "" || b.Ready.Mode == "" {
			t.Errorf("kind %s: %+v registered %v", k, b, ok)
		}
	}
}

// spinningTurn starts a Claude-like helper whose turn never ends while it
// redraws a spinner (a model call that never answers), with hang timeout
// ht, and injects one message; env adds helper settings.
func spinningTurn(t *testing.T, rec *recorder, ht time.Duration, env ...string) *Session {
	t.Helper()
	spec := helperSpec("h", "claude", append([]string{"HM_NO_STOP=1", "HM_SPIN=1"}, env...)...)
	spec.Kind = ProfileClaude
	spec.HangTimeout = ht
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"h": spec})
	if err := m.Start("h", "worker", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("h")
	waitFor(t, 10*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
	if err := m.Inject("h", 1, "work forever"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "busy", func() bool { return indexOf(rec.healths("h"), vocab.HealthBusy) >= 0 })
	return s
}

// A CLI whose progress is its hooks is warned, then hung, while it only
// redraws a spinner: output alone is not progress. (With output counted
// as life, as for CLIs without hooks, it would never hang.)
func TestSpinnerIsNotProgress(t *testing.T) {
	var rec recorder
	s := spinningTurn(t, &rec, 1500*time.Millisecond)
	waitFor(t, 15*time.Second, "busy → hang_warning → hung while spinning", func() bool {
		hs := rec.healths("h")
		b := indexOf(hs, vocab.HealthBusy)
		return b >= 0 && len(hs) >= b+3 && hs[b+1] == vocab.HealthHangWarning && hs[b+2] == vocab.HealthHung
	})
	if d := s.HealthDetail(); !strings.Contains(d, "no turn progress") {
		t.Errorf("hung detail %q", d)
	}
	// A hook is progress: busy again.
	s.HandleHook(HookMessage{Agent: "h", Event: HookPreToolUse, Payload: json.RawMessage(`{"tool_name":"Read"}`)})
	waitFor(t, 5*time.Second, "busy again", func() bool { return s.Health() == vocab.HealthBusy })
}

// A session file that keeps growing is progress: the turn is not hung
// however long it runs.
func TestSessionFileGrowthIsProgress(t *testing.T) {
	var rec recorder
	tp := filepath.Join(t.TempDir(), "session.jsonl")
	s := spinningTurn(t, &rec, 1500*time.Millisecond, "HM_TRANSCRIPT="+tp, "HM_GROW=1")
	deadline := time.Now().Add(5 * time.Second) // > 3 hang timeouts
	for time.Now().Before(deadline) {
		if h := s.Health(); h == vocab.HealthHung {
			t.Fatalf("hung while its session file grows: %s", s.HealthDetail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fi, err := os.Stat(tp); err != nil || fi.Size() == 0 {
		t.Fatalf("the helper did not grow its session file: %v", err)
	}
}
