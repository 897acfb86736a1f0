package flow

import "testing"

// A pending agent whose turn failed on a rate limit gets its work again
// once the limit clears; an agent without work does not.
func TestRateLimitClearedResendsPendingWork(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(InjectionResult{Agent: "worker_1", Seq: sc.s.Agents["worker_1"].LastSeq, Delivered: true})
	sc.do(AgentHealth{Agent: "worker_1", Health: "busy"})
	eff := sc.do(AgentHealth{Agent: "worker_1", Health: "rate_limited", Detail: "rate_limit"})
	if !hasEvent(eff, "agent_rate_limited") || len(injectedTo(eff)) != 0 {
		t.Fatalf("rate limited: %s", describe(eff))
	}
	seq := sc.s.Agents["worker_1"].LastSeq
	eff = sc.do(AgentHealth{Agent: "worker_1", Health: "idle", Detail: "rate-limit cooldown over"})
	if !hasEvent(eff, "agent_rate_limit_cleared") || len(injectedTo(eff)) != 1 ||
		assignmentFor(t, eff, "worker_1").Subtask.ID != "st_1" || sc.s.Agents["worker_1"].LastSeq <= seq {
		t.Fatalf("limit cleared: %s", describe(eff))
	}
	// An ordinary idle after busy re-sends nothing.
	sc.do(AgentHealth{Agent: "worker_1", Health: "busy"})
	if eff := sc.do(AgentHealth{Agent: "worker_1", Health: "idle"}); len(injectedTo(eff)) != 0 {
		t.Fatalf("plain idle: %s", describe(eff))
	}
	// Not pending: nothing to resend.
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.do(AgentHealth{Agent: "worker_2", Health: "rate_limited"})
	if eff := sc.do(AgentHealth{Agent: "worker_2", Health: "idle"}); len(injectedTo(eff)) != 0 {
		t.Fatalf("idle agent without work: %s", describe(eff))
	}
}
