package flow

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// threePlan: checkpoint 1 has three independent subtasks, so with two
// workers st_3 waits for a free worker.
var threePlan = planMD(`{"summary": "build it",
 "checkpoints": [{"id": 1, "name": "core"}],
 "subtasks": [
  {"id": "st_1", "description": "write a", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]},
  {"id": "st_2", "description": "write b", "checkpoint": 1, "dependencies": [], "files": ["CREATE b.go"]},
  {"id": "st_3", "description": "write c", "checkpoint": 1, "dependencies": [], "files": ["CREATE c.go"]}
 ]}`)

func governorScenario(t *testing.T, cfg Config) *scenario {
	sc := newScenario(t)
	sc.m = Machine{Cfg: cfg}
	sc.submit(2)
	sc.do(TriggerCompleted{Path: "plan.md", Content: threePlan, Agent: "lead"})
	sc.trig("plan-approved.md", "LGTM")
	sc.expect(vocab.PhaseExecuting)
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthBusy})
	return sc
}

func assigned(eff []Effect) []string {
	var out []string
	for _, e := range effectsOf[AppendEvent](eff) {
		if e.Type == "subtask_assigned" {
			out = append(out, string(e.Agent)+":"+e.Details["subtask"].(string))
		}
	}
	return out
}

// limited → held → cleared → dispatched: while worker_1's account is rate
// limited, the subtask worker_2 would take next waits; when the limit
// clears it is dispatched (and worker_1's lost turn is sent again).
func TestGovernorHoldsDispatchWhileLimited(t *testing.T) {
	sc := governorScenario(t, defaultConfig())
	sc.do(InjectionResult{Agent: "worker_1", Seq: sc.s.Agents["worker_1"].LastSeq, Delivered: true}) // its turn hits the limit
	eff := sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthRateLimited, Detail: "429 rate_limit_error"})
	h, ok := sc.s.Holds[defaultAccount]
	if !hasEvent(eff, "dispatch_held") || !ok || h.Agent != "worker_1" || h.Attempt != 1 || h.Until != sc.now.Add(5*time.Second) {
		t.Fatalf("limited: %+v %s", sc.s.Holds, describe(eff))
	}
	if _, ok := sc.s.Timers[holdTimer(defaultAccount)]; !ok {
		t.Fatal("no timer bounds the hold")
	}
	// Another limited agent of the same account does not stack a hold.
	sc.do(AgentHealth{Agent: "worker_2", Health: vocab.HealthRateLimited})
	sc.do(AgentHealth{Agent: "worker_2", Health: vocab.HealthBusy})
	if len(sc.s.Holds) != 1 || sc.s.Holds[defaultAccount].Agent != "worker_1" {
		t.Fatalf("holds %+v", sc.s.Holds)
	}
	eff = sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	if a := assigned(eff); len(a) != 0 || len(injectedTo(eff)) != 0 || sc.s.Phase != vocab.PhaseExecuting {
		t.Fatalf("held: dispatched %v %s", a, describe(eff))
	}
	eff = sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthIdle, Detail: "rate-limit cooldown over"})
	if !hasEvent(eff, "dispatch_resumed") || len(sc.s.Holds) != 0 {
		t.Fatalf("cleared: %s", describe(eff))
	}
	if a := assigned(eff); len(a) != 1 || a[0] != "worker_2:st_3" || assignmentFor(t, eff, "worker_1").Subtask.ID != "st_1" {
		t.Fatalf("after clear: assigned %v, %s", a, describe(eff))
	}
	if _, ok := sc.s.Timers[holdTimer(defaultAccount)]; ok {
		t.Fatal("hold timer left armed")
	}
}

// Agents of another account are not held.
func TestGovernorHoldsOnlyTheLimitedAccount(t *testing.T) {
	cfg := defaultConfig()
	cfg.Accounts = map[vocab.AgentID]string{"worker_1": "claude", "worker_2": "codex"}
	sc := governorScenario(t, cfg)
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthRateLimited})
	if _, ok := sc.s.Holds["claude"]; !ok || len(sc.s.Holds) != 1 {
		t.Fatalf("holds %+v", sc.s.Holds)
	}
	eff := sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	if a := assigned(eff); len(a) != 1 || a[0] != "worker_2:st_3" {
		t.Fatalf("codex worker held: %v %s", a, describe(eff))
	}
}

// Without a clear signal the hold is checked on the restart backoff
// (5 s, 15 s, 45 s) while the agent still reports the limit, then ends.
func TestGovernorHoldBoundedWithoutSignal(t *testing.T) {
	sc := governorScenario(t, defaultConfig())
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthRateLimited})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	for attempt, d := range []time.Duration{15 * time.Second, 45 * time.Second} {
		eff := sc.do(TimerFired{ID: holdTimer(defaultAccount)})
		h := sc.s.Holds[defaultAccount]
		if !hasEvent(eff, "dispatch_still_held") || h.Attempt != attempt+2 || h.Until != sc.now.Add(d) || len(assigned(eff)) != 0 {
			t.Fatalf("check %d: %+v %s", attempt+1, h, describe(eff))
		}
	}
	eff := sc.do(TimerFired{ID: holdTimer(defaultAccount)})
	if !hasEvent(eff, "dispatch_resumed") || len(sc.s.Holds) != 0 || len(assigned(eff)) != 1 {
		t.Fatalf("bound: %s", describe(eff))
	}
	// A stale timer (the hold ended) does nothing.
	if eff := sc.do(TimerFired{ID: holdTimer(defaultAccount)}); hasEvent(eff, "dispatch_resumed") {
		t.Fatalf("stale: %s", describe(eff))
	}
}

// A hold whose agent's limit cleared before the check ends at once; one
// whose agent is no longer limited when the timer fires ends then.
func TestGovernorHoldEndsWhenAgentNoLongerLimited(t *testing.T) {
	sc := governorScenario(t, defaultConfig())
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthRateLimited})
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthHangWarning})
	if len(sc.s.Holds) != 1 {
		t.Fatal("a hang warning is not a clear signal")
	}
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthExited, ExitCode: 1})
	if len(sc.s.Holds) != 0 {
		t.Fatalf("exited agent still holds: %+v", sc.s.Holds)
	}
}

func usage(model string, tokens int64, usd float64, known bool) vocab.Usage {
	return vocab.Usage{Model: model, Input: tokens, CostUSD: usd, CostKnown: known}
}

// The budget, table-driven: unset, not reached, reached mid-build, and a
// cost that is not known (not counted, and said).
func TestGovernorBudget(t *testing.T) {
	type step struct {
		agent vocab.AgentID
		u     vocab.Usage
	}
	cases := []struct {
		name       string
		budget     float64
		steps      []step
		wantPhase  vocab.Phase
		wantEvents []string
		wantReason []string
	}{
		{"unset", 0, []step{{"lead", usage("fake-claude", 1e6, 99, true)}},
			vocab.PhaseExecuting, []string{"agent_usage"}, nil},
		{"under", 1, []step{{"lead", usage("fake-claude", 1000, 0.4, true)}, {"worker_1", usage("fake-claude", 1000, 0.5, true)}},
			vocab.PhaseExecuting, []string{"agent_usage"}, nil},
		{"reached mid-build", 1, []step{{"lead", usage("fake-claude", 1000, 0.4, true)}, {"worker_1", usage("fake-claude", 12300, 0.7, true)}},
			vocab.PhaseNeedsHuman, []string{"agent_usage", "needs_human"},
			[]string{"Estimated spend $1.10 reached the budget of $1.00", "- lead: $0.40 (1.0k tokens, fake-claude)",
				"- worker_1: $0.70 (12.3k tokens, fake-claude)", "--budget"}},
		{"unknown not counted", 1, []step{{"worker_2", usage("llama", 5000, 0, false)}, {"worker_1", usage("fake-claude", 100, 1, true)}},
			vocab.PhaseNeedsHuman, []string{"agent_usage", "needs_human"},
			[]string{"- worker_2: $? (5.0k tokens, llama)", "Not counted (no price for their model): worker_2."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.BudgetUSD = c.budget
			sc := governorScenario(t, cfg)
			var eff []Effect
			for _, s := range c.steps {
				eff = sc.do(AgentUsage{Agent: s.agent, Usage: s.u})
			}
			sc.expect(c.wantPhase)
			for _, ev := range c.wantEvents {
				if !hasEvent(eff, ev) {
					t.Errorf("no %s in %s", ev, describe(eff))
				}
			}
			if len(injectedTo(eff)) != 0 {
				t.Errorf("dispatched: %s", describe(eff))
			}
			for _, r := range c.wantReason {
				if !strings.Contains(sc.s.Reason, r) {
					t.Errorf("reason lacks %q:\n%s", r, sc.s.Reason)
				}
			}
			if c.wantPhase == vocab.PhaseNeedsHuman && sc.s.Escalation != "budget" {
				t.Errorf("escalation %q", sc.s.Escalation)
			}
		})
	}
}

// Usage is recorded once per change; a model without a price is said
// once per agent; an unknown agent's usage is ignored.
func TestGovernorUsageRecorded(t *testing.T) {
	sc := governorScenario(t, defaultConfig())
	u := usage("llama", 10, 0, false)
	eff := sc.do(AgentUsage{Agent: "worker_1", Usage: u})
	if !hasEvent(eff, "agent_usage") || !hasEvent(eff, "cost_unknown") || sc.s.Agents["worker_1"].Usage != u {
		t.Fatalf("first: %s", describe(eff))
	}
	if eff := sc.do(AgentUsage{Agent: "worker_1", Usage: u}); len(eff) != 0 {
		t.Fatalf("unchanged: %s", describe(eff))
	}
	u.Input = 20
	if eff := sc.do(AgentUsage{Agent: "worker_1", Usage: u}); !hasEvent(eff, "agent_usage") || hasEvent(eff, "cost_unknown") {
		t.Fatalf("second: %s", describe(eff))
	}
	if eff := sc.do(AgentUsage{Agent: "ghost", Usage: u}); len(eff) != 0 {
		t.Fatalf("unknown agent: %s", describe(eff))
	}
}

// Retry after the budget stopped the run: with the same budget it stays
// in needs_human and says so; with a raised budget the build continues
// and the waiting subtask is dispatched.
func TestGovernorBudgetRetry(t *testing.T) {
	cfg := defaultConfig()
	cfg.BudgetUSD = 1
	sc := governorScenario(t, cfg)
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true}) // st_3 → worker_2
	sc.do(AgentUsage{Agent: "lead", Usage: usage("fake-claude", 1000, 1.2, true)})
	sc.expect(vocab.PhaseNeedsHuman)
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true}) // a turn under way finishes
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseNeedsHuman)
	if !strings.Contains(sc.s.Reason, "$1.20 is still at or over the budget of $1.00") || len(injectedTo(eff)) != 0 {
		t.Fatalf("same budget: %q %s", sc.s.Reason, describe(eff))
	}
	cfg.BudgetUSD = 5
	sc.m = Machine{Cfg: cfg}
	sc.do(KeyPressed{Action: KeyRetry})
	if sc.s.Phase != vocab.PhaseExecuting && sc.s.Phase != vocab.PhaseCheckpointReview {
		t.Fatalf("raised budget: %s (%s)", sc.s.Phase, describe(sc.eff))
	}
}
