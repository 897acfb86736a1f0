package flow

import (
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// lastStartOrStop returns, per agent, whether the last start or stop
// among eff is a stop.
func lastStartOrStop(eff []Effect) map[vocab.AgentID]bool {
	stops := map[vocab.AgentID]bool{}
	for _, e := range eff {
		switch e := e.(type) {
		case StopAgent:
			stops[e.Agent] = true
		case SpawnAgent:
			stops[e.Agent] = false
		case RestartAgent:
			stops[e.Agent] = false
		}
	}
	return stops
}

// The transitions that end a task stop every agent at once (each Claude
// Code holds ~270 MB while it waits), not when the user quits; the exits
// that follow are not failures (no restart, no alarm), and a resume of a
// task that is over starts nobody. needs_human and error are not the end:
// the user may retry (the same agents go on) or work in a pane, so their
// agents are kept.
func TestTaskEndStopsAgents(t *testing.T) {
	ends := []struct {
		name string
		run  func(sc *scenario)
		want vocab.Phase
	}{
		{"checkpoint_review → complete", func(sc *scenario) { sc.toComplete() }, vocab.PhaseComplete},
		{"executing → cancelled", func(sc *scenario) {
			sc.toExecuting()
			sc.do(KeyPressed{Action: KeyCancel})
		}, vocab.PhaseCancelled},
		{"paused → cancelled", func(sc *scenario) {
			sc.toExecuting()
			sc.do(KeyPressed{Action: KeyPause})
			sc.expect(vocab.PhasePaused)
			sc.do(KeyPressed{Action: KeyCancel})
		}, vocab.PhaseCancelled},
		{"plan_approval → cancelled", func(sc *scenario) {
			sc.toPlanApproval()
			sc.do(KeyPressed{Action: KeyCancel})
		}, vocab.PhaseCancelled},
		{"executing → cancelled while a restart waits", func(sc *scenario) {
			sc.toExecuting()
			sc.ready()
			sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthExited, ExitCode: 1, PID: 4242})
			sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthExited, ExitCode: 1})
			if _, ok := sc.s.Timers[restartTimer("worker_1")]; !ok {
				sc.t.Fatalf("no restart waits: timers %v", sc.s.Timers)
			}
			sc.do(KeyPressed{Action: KeyCancel})
		}, vocab.PhaseCancelled},
		{"needs_human → idle (abandon)", func(sc *scenario) {
			sc.toNeedsHuman()
			sc.do(KeyPressed{Action: KeyAbandon})
		}, vocab.PhaseIdle},
		{"error → idle (abandon)", func(sc *scenario) {
			sc.toExecuting()
			sc.s.Phase = vocab.PhaseError
			sc.do(KeyPressed{Action: KeyAbandon})
		}, vocab.PhaseIdle},
	}
	for _, tc := range ends {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScenario(t)
			tc.run(sc)
			sc.expect(tc.want)
			if !sc.s.Over() {
				t.Fatalf("%s is not over", sc.s.Phase)
			}
			stops := lastStartOrStop(sc.eff)
			for _, id := range sc.s.AgentIDs() {
				if !stops[id] {
					t.Errorf("%s is not stopped as the task ends: %s", id, describe(sc.eff))
				}
			}
			// Each agent's exit (as the agent layer says it, and a CLI
			// that exits 0 on /exit) changes nothing but its health.
			for i, id := range sc.s.AgentIDs() {
				eff := sc.do(AgentHealth{Agent: id, Health: vocab.HealthExited, ExitCode: i % 2, PID: 5000 + i, Stopped: i%2 == 0})
				for _, e := range eff {
					switch e := e.(type) {
					case WriteState:
					case AppendEvent:
						if e.Type == vocab.RecordNeedsHuman || e.Type == vocab.RecordAgentExited {
							t.Errorf("%s's exit after the end: %s", id, describe(eff))
						}
					default:
						t.Errorf("%s's exit after the end: %s", id, describe(eff))
					}
				}
				if got := sc.s.Agents[id].Status; got != vocab.HealthExited {
					t.Errorf("%s: status %s after its exit, want exited", id, got)
				}
			}
			// Timers left from before fire into nothing; a resume starts nobody.
			for _, ev := range []Event{TimerFired{ID: restartTimer("worker_1")}, Resumed{}, Resumed{Retry: true}} {
				eff := sc.do(ev)
				if s := effectsOf[SpawnAgent](eff); len(s) > 0 || len(effectsOf[RestartAgent](eff)) > 0 {
					t.Errorf("%T after the end starts agents: %s", ev, describe(eff))
				}
			}
			sc.expect(tc.want)
		})
	}

	// Waiting on the user is not the end: the agents stay.
	for _, tc := range []struct {
		name string
		run  func(sc *scenario)
		want vocab.Phase
	}{
		{"plan_review → needs_human (too many rounds)", func(sc *scenario) { sc.toNeedsHuman() }, vocab.PhaseNeedsHuman},
		{"planning → plan_approval (the user decides)", func(sc *scenario) { sc.toPlanApproval() }, vocab.PhasePlanApproval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScenario(t)
			tc.run(sc)
			sc.expect(tc.want)
			if stops := effectsOf[StopAgent](sc.eff); len(stops) > 0 {
				t.Errorf("agents stopped while the task waits on the user: %s", describe(sc.eff))
			}
		})
	}
}
