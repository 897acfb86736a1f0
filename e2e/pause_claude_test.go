package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Pause is a promise, with real Claude Code: a message handed to the agent
// layer before `p` (queued behind the Lead's turn, which the fake API
// holds) is not typed while paused, even once the Lead's turn ends and it
// sits idle at its prompt; `hivemind status` says a message waits; after
// `r` the run goes on. Before, it was typed and confirmed while the header
// said paused (issue 27).
func TestClaudeTUIPauseHoldsQueuedMessages(t *testing.T) {
	parallel(t)
	requireTmux(t)
	c, gate, r := startClaudeTUI(t, fakeapi.DefaultScript(), "lead", "[HIVEMIND] Plan the task")
	seen := newClaudeScreens()
	seen.waitPromptBoxes(r)
	gate.waitHeld(t, r, claudeTUIWait, "the lead's planning request")
	dir := r.taskDir()
	delivered := func(from int, agent vocab.AgentID) int {
		return findRecord(readEventLog(dir), from, func(e vocab.EventRecord) bool {
			d, _ := e.Details["delivered"].(bool)
			return e.Type == vocab.InputPrefix+"injection_result" && e.Agent == agent && d
		})
	}
	seen.watch(r, claudeTUIWait, "the lead's planning message confirmed", func(tuiScreen) bool { return delivered(0, "lead") >= 0 })

	// A plan.md with problems while the Lead is mid-turn: the engine
	// answers with a message for the Lead, queued behind its turn.
	// (in the Lead's outbox, where the engine takes its plan from).
	if err := os.WriteFile(filepath.Join(dir, vocab.OutboxRel(vocab.AgentLead), "plan.md"), []byte("# Plan\n\nno json block yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seen.watch(r, claudeTUIWait, "the Lead's fix message sent (queued behind its turn)", func(tuiScreen) bool {
		return findRecord(readEventLog(dir), 0, func(e vocab.EventRecord) bool {
			return e.Type == "assignment_sent" && e.Agent == "lead" && strings.HasPrefix(recDetail(e, "what"), "plan.md has")
		}) >= 0
	})
	r.keys("p")
	seen.watch(r, claudeTUIWait, "the paused header", func(s tuiScreen) bool { return s.phase() == string(vocab.PhasePaused) })
	paused := recordIndex(readEventLog(dir), 0, "paused")
	if paused < 0 {
		t.Fatal("no paused record")
	}

	// The Lead's turn ends: it is idle at its prompt, with a message
	// queued for it, and nothing is typed.
	gate.open()
	seen.watch(r, claudeTUIWait, "the lead idle after its turn, while paused", func(tuiScreen) bool {
		return findRecord(readEventLog(dir), paused, func(e vocab.EventRecord) bool {
			return e.Type == vocab.InputPrefix+"agent_health" && e.Agent == "lead" && recDetail(e, "health") == "idle"
		}) >= 0
	})
	st := exec.Command(bin, "status", "--project", c.Project)
	st.Env = c.Env
	if out, err := st.CombinedOutput(); err != nil || !strings.Contains(string(out), "waiting   ") {
		t.Errorf("status while paused with a message queued (%v):\n%s", err, out)
	}
	// An idle Claude takes a queued message within a second or two: give
	// it far longer, then check nothing reached any agent.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, id := range claudeAgents {
			if i := delivered(paused, vocab.AgentID(id)); i >= 0 {
				t.Fatalf("a message to %s was confirmed typed while paused (record %d)", id, i)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}

	r.keys("r")
	seen.watch(r, claudeTUIWait, "resumed, and a message confirmed typed after it", func(tuiScreen) bool {
		recs := readEventLog(dir)
		resumed := recordIndex(recs, paused, "resumed_from_pause")
		if resumed < 0 {
			return false
		}
		for _, id := range claudeAgents {
			if delivered(resumed, vocab.AgentID(id)) >= 0 {
				return true
			}
		}
		return false
	})
	r.keys("c")
	r.keys("y")
	if code := r.quit(); code != exitCancelled {
		t.Errorf("exit status %d after cancel, want %d", code, exitCancelled)
		recs := readEventLog(dir)
		for _, e := range recs[max(0, recordIndex(recs, paused, "resumed_from_pause")):] {
			t.Logf("  %s %s %s %v", e.Time.Format("15:04:05.000"), e.Type, e.Agent, e.Details)
		}
	}
	noLeftovers(t, c.Project)
}
