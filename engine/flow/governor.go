package flow

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// This file is the governor: what the run spends (AgentUsage, the budget)
// and the rate limits of the accounts it spends from (holds). Its signals
// are what the agent layer reads of the CLIs: usage from their session
// files, limits as AgentHealth rate_limited (a failure hook or session
// file, or a CLI's own retry line while it retries a 429 itself; its
// return to busy clears the limit).

// defaultAccount is the account of agents Config.Accounts does not list.
const defaultAccount = "default"

// account is the account agent spends from.
func (c Config) account(agent vocab.AgentID) string {
	if a := c.Accounts[agent]; a != "" {
		return a
	}
	return defaultAccount
}

// holdPolicy spaces the checks of a held account when no signal clears it:
// the restart backoff, at least one check, so a hold always ends.
func (c Config) holdPolicy() RetryPolicy {
	return RetryPolicy{Attempts: max(c.MaxRetries, 1), Backoff: c.Backoff}
}

func holdTimer(account string) string { return "hold:" + account }

// held reports whether new work for agent waits for its account's limit.
func (st *stepper) held(agent vocab.AgentID) bool {
	_, ok := st.s.Holds[st.cfg.account(agent)]
	return ok
}

// agentUsage records what an agent consumed and stops new work once the
// budget is reached. A cost that cannot be known (the model has no price)
// is not counted as zero silently: it is reported once per agent, and the
// budget's figures name it.
func (st *stepper) agentUsage(e AgentUsage) {
	s := st.s
	ag, ok := s.Agents[e.Agent]
	if !ok {
		return
	}
	if e.Files != nil && !slices.Equal(ag.UsageFiles, e.Files) {
		ag.UsageFiles = slices.Clone(e.Files)
		s.Agents[e.Agent] = ag
	}
	if ag.Usage == e.Usage {
		return
	}
	wasUnknown := !ag.Usage.CostKnown && ag.Usage.Tokens() > 0
	ag.Usage = e.Usage
	s.Agents[e.Agent] = ag
	u := e.Usage
	d := map[string]any{"model": u.Model, "tokens": u.Tokens(), "input_tokens": u.Input, "output_tokens": u.Output,
		"cache_read_tokens": u.CacheRead, "cache_write_tokens": u.CacheWrite, "cost_usd": "unknown"}
	if u.CostKnown {
		d["cost_usd"] = u.CostUSD
	}
	st.emit(vocab.RecordAgentUsage, e.Agent, d)
	if !u.CostKnown && u.Tokens() > 0 && !wasUnknown {
		st.emit(vocab.RecordCostUnknown, e.Agent, map[string]any{"model": u.Model,
			"why": "no price for this model in the pricing table; add [pricing.\"" + u.Model + "\"] to config.toml. Its spend is not counted against budget_usd"})
		st.unpricedNotice(e.Agent, u.Model)
	}
	st.checkBudget()
}

// rateLimited holds new dispatches to the agent's account: its turn ended
// on a rate limit, and every agent of the account would meet the same
// limit. The hold ends when the agent's limit clears (its health leaves
// rate_limited) or, failing that signal, after the hold policy's backoff.
func (st *stepper) rateLimited(agent vocab.AgentID, detail string) {
	s := st.s
	acc := st.cfg.account(agent)
	if _, ok := s.Holds[acc]; ok {
		return
	}
	d, _ := st.cfg.holdPolicy().Retry(1)
	if s.Holds == nil {
		s.Holds = map[string]vocab.Hold{}
	}
	s.Holds[acc] = vocab.Hold{Account: acc, Agent: agent, Reason: clip(detail, 200), Since: st.at, Until: st.at.Add(d), Attempt: 1}
	st.schedule(holdTimer(acc), d)
	st.emit(vocab.RecordDispatchHeld, agent, map[string]any{"account": acc, "reason": clip(detail, 200), "check_after": d.String()})
}

// governHealth holds or releases the agent's account as its health
// enters or leaves rate_limited.
func (st *stepper) governHealth(prev vocab.Health, e AgentHealth) {
	switch {
	case e.Health == vocab.HealthRateLimited:
		st.rateLimited(e.Agent, e.Detail)
	case prev == vocab.HealthRateLimited && e.Health != vocab.HealthHangWarning:
		st.limitCleared(e.Agent, "rate limit cleared ("+clip(e.Detail, 200)+")")
	}
}

// limitCleared ends the holds agent's limit set.
func (st *stepper) limitCleared(agent vocab.AgentID, why string) {
	for acc, h := range st.s.Holds {
		if h.Agent == agent {
			st.release(acc, why)
		}
	}
}

// holdExpired checks a hold whose backoff ran out: still limited, it is
// checked again after the next delay while the policy allows; then it ends,
// so a signal that never comes cannot stop the run for good (an agent that
// meets the limit again sets a new hold).
func (st *stepper) holdExpired(acc string) {
	s := st.s
	h, ok := s.Holds[acc]
	if !ok {
		return
	}
	if s.Agents[h.Agent].Status == vocab.HealthRateLimited {
		if d, ok := st.cfg.holdPolicy().Retry(h.Attempt + 1); ok {
			h.Attempt++
			h.Until = st.at.Add(d)
			s.Holds[acc] = h
			st.schedule(holdTimer(acc), d)
			st.emit(vocab.RecordDispatchStillHeld, h.Agent, map[string]any{"account": acc, "attempt": h.Attempt, "check_after": d.String()})
			return
		}
	}
	st.release(acc, fmt.Sprintf("no clear signal after %d check(s)", h.Attempt))
}

// release ends acc's hold and dispatches the work that waited: what was
// held first, in order, then what the scheduler assigns now.
func (st *stepper) release(acc, why string) {
	h := st.s.Holds[acc]
	delete(st.s.Holds, acc)
	st.cancelTimer(holdTimer(acc))
	st.emit(vocab.RecordDispatchResumed, h.Agent, map[string]any{"account": acc, "why": why, "held_for": st.at.Sub(h.Since).Round(time.Millisecond).String()})
	st.sendHeld()
	st.scheduleWork()
}

// maxHeldNotices bounds the read-only notices queued for one agent while
// its account is held; older ones are dropped first (they only inform).
const maxHeldNotices = 8

// waits reports whether nothing may be typed into agent now: the team or
// the agent is paused, or its account is held.
func (st *stepper) waits(agent vocab.AgentID) bool {
	return st.s.Phase == vocab.PhasePaused || st.s.Agents[agent].Paused || st.held(agent)
}

// waitReason says why agent's messages wait (waits is true).
func (st *stepper) waitReason(agent vocab.AgentID) string {
	switch {
	case st.s.Phase == vocab.PhasePaused:
		return "paused"
	case st.s.Agents[agent].Paused:
		return "agent paused"
	}
	return "rate limit"
}

// holdDispatch queues assignment a instead of sending it while its agent
// waits (a pause, its account's hold), and reports whether it did. An
// agent's newer writing assignment replaces what is queued for it (its
// older work and notices): only the current work is ever sent.
func (st *stepper) holdDispatch(a vocab.Assignment) bool {
	s := st.s
	if !st.waits(a.Agent) {
		return false
	}
	isNotice := func(q vocab.Assignment) bool { return q.Agent == a.Agent && q.ReadOnly }
	notices := 0
	for _, q := range s.Held {
		if isNotice(q) {
			notices++
		}
	}
	switch {
	case !a.ReadOnly:
		s.Held = slices.DeleteFunc(s.Held, func(q vocab.Assignment) bool {
			if q.Agent == a.Agent {
				st.emit(vocab.RecordHeldDispatchDropped, a.Agent, map[string]any{"seq": q.Seq, "why": fmt.Sprintf("superseded by #%d", a.Seq)})
			}
			return q.Agent == a.Agent
		})
	case notices >= maxHeldNotices:
		i := slices.IndexFunc(s.Held, isNotice)
		st.emit(vocab.RecordHeldDispatchDropped, a.Agent, map[string]any{"seq": s.Held[i].Seq, "why": fmt.Sprintf("more than %d notices held", maxHeldNotices)})
		s.Held = slices.Delete(s.Held, i, i+1)
	}
	s.Held = append(s.Held, a)
	st.emit(vocab.RecordDispatchQueued, a.Agent, map[string]any{"account": st.cfg.account(a.Agent), "seq": a.Seq, "what": firstLine(a.Instruction),
		"read_only": a.ReadOnly, "why": st.waitReason(a.Agent)})
	return true
}

// workHeld reports whether agent's current work waits in the queue.
func (st *stepper) workHeld(agent vocab.AgentID) bool {
	return slices.ContainsFunc(st.s.Held, func(a vocab.Assignment) bool { return a.Agent == agent && !a.ReadOnly })
}

// sendHeld sends the held assignments whose agent no longer waits (its
// account's hold ended, the pause is over), in the order they were made,
// while the run is under way (needs_human keeps them for the retry). A
// writing one that is no longer its agent's current work (finished or
// replaced meanwhile) is dropped, not sent (a notice is dropped when work
// for its agent follows: holdDispatch, dropSuperseded).
func (st *stepper) sendHeld() {
	s := st.s
	if len(s.Held) == 0 || !running(s.Phase) {
		return
	}
	queue := s.Held
	s.Held = nil
	for _, a := range queue {
		cur, ok := s.Assignments[a.Agent]
		switch {
		case st.waits(a.Agent):
			s.Held = append(s.Held, a)
		case !a.ReadOnly && (!ok || cur.Seq != a.Seq || !s.Agents[a.Agent].Pending):
			st.emit(vocab.RecordHeldDispatchDropped, a.Agent, map[string]any{"seq": a.Seq, "why": "no longer the agent's current work"})
		case a.Resent: // a re-send held: typed as one
			st.deliver(a, resentWhat(a), true)
			s.Resend = slices.DeleteFunc(s.Resend, func(id vocab.AgentID) bool { return id == a.Agent })
		default:
			what, _, _ := strings.Cut(a.Instruction, "\n")
			st.deliver(a, what, false)
			if !a.ReadOnly { // sent now: a re-send waiting for a resume would repeat it
				s.Resend = slices.DeleteFunc(s.Resend, func(id vocab.AgentID) bool { return id == a.Agent })
			}
		}
	}
}

// armHolds bounds again the holds whose check timer a final phase dropped,
// when a retry takes the run back under way.
func (st *stepper) armHolds() {
	for _, acc := range slices.Sorted(maps.Keys(st.s.Holds)) {
		if _, ok := st.s.Timers[holdTimer(acc)]; !ok {
			st.schedule(holdTimer(acc), max(st.s.Holds[acc].Until.Sub(st.at), 0))
		}
	}
}
