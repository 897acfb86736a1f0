package flow

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// An agent that keeps dying is escalated with its own last words, not
// only its exit code.
func TestAgentExitQuotesLastWords(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.ready()
	detail := "exit code 1; last output: Segmentation fault in libfoo"
	for i := 0; i <= sc.m.Cfg.MaxRetries; i++ {
		eff := sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1, Detail: detail})
		if i < sc.m.Cfg.MaxRetries {
			if got := restartReason(eff); got != "exited (code 1): last output: Segmentation fault in libfoo" {
				t.Fatalf("crash %d: restart reason %q", i+1, got)
			}
			sc.do(TimerFired{ID: "restart:worker_1"})
			sc.do(AgentHealth{Agent: "worker_1", Health: "ready"})
		}
	}
	sc.expect(vocab.PhaseNeedsHuman)
	if want := "(last: exited (code 1): last output: Segmentation fault in libfoo)"; !strings.Contains(sc.s.Reason, want) {
		t.Errorf("reason %q, want it to contain %q", sc.s.Reason, want)
	}
	// A bare exit code stays as it was.
	sc2 := newScenario(t)
	sc2.toExecuting()
	sc2.ready()
	if got := restartReason(sc2.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 2, Detail: "exit code 2"})); got != "exited (code 2)" {
		t.Errorf("plain exit: restart reason %q", got)
	}
}

// restartReason is the reason of the agent_restart_scheduled event.
func restartReason(eff []Effect) string {
	for _, e := range effectsOf[AppendEvent](eff) {
		if e.Type == "agent_restart_scheduled" {
			r, _ := e.Details["reason"].(string)
			return r
		}
	}
	return ""
}
