package flow

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Token budgets, table-driven: the team's and a role's, unset, under,
// reached (with no price known: tokens need none), a role's budget not
// counting other roles, and two budgets reached at once.
func TestBudgetTokens(t *testing.T) {
	type step struct {
		agent vocab.AgentID
		u     vocab.Usage
	}
	withCache := vocab.Usage{Model: "llama", Input: 100, Output: 100, CacheRead: 250, CacheWrite: 50} // 500 tokens
	cases := []struct {
		name       string
		team       int64
		roles      map[vocab.Role]int64
		usd        float64
		steps      []step
		wantPhase  vocab.Phase
		wantReason []string
	}{
		{"unset", 0, nil, 0, []step{{"lead", usage("llama", 1e9, 0, false)}},
			vocab.PhaseExecuting, nil},
		{"team under", 1000, nil, 0, []step{{"lead", usage("llama", 400, 0, false)}, {"worker_1", usage("llama", 599, 0, false)}},
			vocab.PhaseExecuting, nil},
		{"team reached unpriced", 1000, nil, 0, []step{{"lead", usage("llama", 400, 0, false)}, {"worker_1", usage("llama", 600, 0, false)}},
			vocab.PhaseNeedsHuman, []string{"The team's 1000 tokens reached the budget of 1000 tokens (budget_tokens).",
				"- worker_1: $? (600 tokens, llama)", "budget_tokens in config.toml"}},
		{"every kind counts", 1000, nil, 0, []step{{"worker_2", withCache}, {"worker_1", withCache}},
			vocab.PhaseNeedsHuman, []string{"The team's 1000 tokens reached"}},
		{"role reached", 0, map[vocab.Role]int64{vocab.RoleWorker: 500}, 0,
			[]step{{"lead", usage("llama", 5000, 0, false)}, {"worker_1", usage("llama", 300, 0, false)}, {"worker_2", usage("llama", 200, 0, false)}},
			vocab.PhaseNeedsHuman, []string{"The worker's 500 tokens reached the budget of 500 tokens (roles.worker.budget_tokens)."}},
		{"other roles not counted", 0, map[vocab.Role]int64{vocab.RoleLead: 500}, 0,
			[]step{{"worker_1", usage("llama", 5000, 0, false)}, {"reviewer", usage("llama", 5000, 0, false)}},
			vocab.PhaseExecuting, nil},
		{"usd and tokens", 100, nil, 1, []step{{"lead", usage("fake-claude", 100, 1, true)}},
			vocab.PhaseNeedsHuman, []string{"Estimated spend $1.00 reached the budget of $1.00 (budget_usd).\nThe team's 100 tokens reached"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.BudgetTokens, cfg.RoleBudgetTokens, cfg.BudgetUSD = c.team, c.roles, c.usd
			sc := governorScenario(t, cfg)
			var eff []Effect
			for _, s := range c.steps {
				eff = sc.do(AgentUsage{Agent: s.agent, Usage: s.u})
			}
			sc.expect(c.wantPhase)
			if len(injectedTo(eff)) != 0 {
				t.Errorf("dispatched: %s", describe(eff))
			}
			for _, r := range c.wantReason {
				if !strings.Contains(sc.s.Reason, r) {
					t.Errorf("reason lacks %q:\n%s", r, sc.s.Reason)
				}
			}
			if c.wantPhase == vocab.PhaseNeedsHuman && (sc.s.Escalation != "budget" || !hasEvent(eff, "needs_human")) {
				t.Errorf("escalation %q, %s", sc.s.Escalation, describe(eff))
			}
		})
	}
}

// Retry after a token budget stopped the run: with the same budget it
// stays and says so; with the budget raised (a role's here) it continues
// and the waiting subtask is dispatched.
func TestBudgetTokensRetry(t *testing.T) {
	cfg := defaultConfig()
	cfg.RoleBudgetTokens = map[vocab.Role]int64{vocab.RoleWorker: 1000}
	sc := governorScenario(t, cfg)
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true}) // st_3 → worker_2
	sc.do(AgentUsage{Agent: "worker_1", Usage: usage("llama", 1200, 0, false)})
	sc.expect(vocab.PhaseNeedsHuman)
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseNeedsHuman)
	if !strings.Contains(sc.s.Reason, "The worker's 1200 tokens is still at or over the budget of 1000 tokens") || len(injectedTo(eff)) != 0 {
		t.Fatalf("same budget: %q %s", sc.s.Reason, describe(eff))
	}
	cfg.RoleBudgetTokens = map[vocab.Role]int64{vocab.RoleWorker: 5000}
	sc.m = Machine{Cfg: cfg}
	sc.do(KeyPressed{Action: KeyRetry})
	if sc.s.Phase != vocab.PhaseExecuting && sc.s.Phase != vocab.PhaseCheckpointReview {
		t.Fatalf("raised budget: %s (%s)", sc.s.Phase, describe(sc.eff))
	}
}

// A model without a price is said once per model, with the fix, budget or
// not; budget_usd's notice says the spend is not counted.
func TestUnpricedNoticeOncePerModel(t *testing.T) {
	for _, usd := range []float64{0, 1} {
		cfg := defaultConfig()
		cfg.BudgetUSD = usd
		sc := governorScenario(t, cfg)
		var said []string
		for _, s := range []struct {
			agent vocab.AgentID
			model string
		}{{"worker_1", "llama"}, {"worker_2", "llama"}, {"lead", "claude-x"}, {"worker_1", "llama"}} {
			u := usage(s.model, int64(100+len(said)*7+len(s.agent)), 0, false)
			u.Output = sc.s.Agents[s.agent].Usage.Output + 1 // a change every time
			for _, n := range effectsOf[NotifyUser](sc.do(AgentUsage{Agent: s.agent, Usage: u})) {
				said = append(said, n.Message)
			}
		}
		if len(said) != 2 || !strings.Contains(said[0], `worker_1's model "llama" has no price`) ||
			!strings.Contains(said[0], `add [pricing."llama"] to config.toml, or cap tokens with budget_tokens`) ||
			!strings.Contains(said[1], `"claude-x"`) || strings.Contains(said[0], "budget_usd") != (usd > 0) {
			t.Errorf("budget %v: notices %q", usd, said)
		}
	}
}
