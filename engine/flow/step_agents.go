package flow

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ---- agents ----

func (st *stepper) health(e AgentHealth) {
	s := st.s
	ag, ok := s.Agents[e.Agent]
	if !ok {
		return
	}
	h := e.Health
	prev := ag.Status
	if e.PID != 0 {
		ag.PID = e.PID
	}
	if ag.Status == vocab.HealthRestarting && h == vocab.HealthExited && e.PID != 0 {
		// The runner stopping the agent's old process for our own
		// restart (a start that failed has no process: PID 0).
		s.Agents[e.Agent] = ag
		return
	}
	if h == vocab.HealthExited && e.Stopped {
		// Hivemind stopped it as the run ends (the user quit), or could
		// not start it for that reason: not a failure. Nothing is
		// restarted or counted; the next run starts it again.
		ag.Status = h
		s.Agents[e.Agent] = ag
		return
	}
	if h != vocab.HealthHangWarning {
		ag.Status = h
	}
	switch {
	case h == vocab.HealthRateLimited && prev != vocab.HealthRateLimited:
		// The turn that hit the limit worked on the last message the
		// agent received: only that work is sent again when it clears.
		ag.LimitSeq = ag.Delivered
	case h == vocab.HealthReady || h == vocab.HealthIdle || h == vocab.HealthBusy:
		ag.EarlyExits = 0 // its prompt appeared
	case h == vocab.HealthExited && (prev == vocab.HealthStarting || prev == vocab.HealthRestarting):
		ag.EarlyExits++
	}
	s.Agents[e.Agent] = ag
	// Last: a turn lost to the limit is re-sent below while the hold still
	// stands, so the release sends it once, in order with the held work.
	defer st.governHealth(prev, e)
	switch h {
	case vocab.HealthExited, vocab.HealthHung:
		if st.deferIfPaused(e) {
			return
		}
	default: // only a failure waits for the pause to end
	}
	if prev == vocab.HealthRateLimited && (h == vocab.HealthIdle || h == vocab.HealthReady) && ag.Pending &&
		ag.LimitSeq == s.Assignments[e.Agent].Seq {
		// A turn that failed on a rate limit (Claude Code gave up and
		// reported StopFailure) produced nothing: once the limit has
		// cleared, send the pending work again (on resume when paused).
		// Only when that turn was this work's: work sent since (a
		// hold's release) is on its way already, once.
		switch {
		case st.workHeld(e.Agent):
			// Never sent: it waits for the hold, whose release sends it.
		case s.Phase == vocab.PhasePaused:
			s.Resend = dedupe(append(s.Resend, e.Agent))
		case running(s.Phase):
			// Bounded like every retry: a limit that keeps coming back
			// ends in needs_human, not an endless run of paid turns.
			ag.Failures++
			s.Agents[e.Agent] = ag
			st.emit(vocab.RecordAgentRateLimitCleared, e.Agent, map[string]any{"resend": true, "attempt": ag.Failures})
			if !st.retryWork(st.cfg.resendPolicy(), e.Agent, "agent:"+string(e.Agent),
				fmt.Sprintf("Agent %s's turn failed on a rate limit %d times in a row", e.Agent, ag.Failures), ag.Failures) {
				return
			}
		}
	}
	if !running(s.Phase) {
		return
	}
	switch h {
	case vocab.HealthIdle, vocab.HealthReady:
		st.watchStall(e.Agent)
	case vocab.HealthBusy:
		st.cancelTimer(stallTimer(e.Agent))
	default: // a stall is an idle agent with work pending
	}
	switch h {
	case vocab.HealthExited:
		st.emit(vocab.RecordAgentExited, e.Agent, map[string]any{"exit_code": e.ExitCode, "detail": e.Detail})
		why := fmt.Sprintf("exited (code %d)", e.ExitCode)
		// The agent layer's detail may quote what the agent said last.
		if more := strings.TrimLeft(strings.TrimPrefix(e.Detail, fmt.Sprintf("exit code %d", e.ExitCode)), "; "); more != "" {
			why += ": " + more
		}
		if st.cannotRestart(e, ag, why) {
			return
		}
		// An agent that died before its prompt ever appeared is tried
		// again at once: a second early exit ends it (cannotRestart).
		st.failAgent(e.Agent, why, ag.EarlyExits == 1)
	case vocab.HealthHung:
		if ag.Pending {
			st.emit(vocab.RecordAgentHung, e.Agent, map[string]any{"detail": e.Detail})
			st.failAgent(e.Agent, "hung", true)
		}
	case vocab.HealthHangWarning:
		if ag.Pending {
			st.emit(vocab.RecordAgentHangWarning, e.Agent, map[string]any{"detail": e.Detail})
			st.notify("warn", fmt.Sprintf("%s has shown no sign of life for a while", e.Agent))
		}
	case vocab.HealthWaitingPermission:
		st.emit(vocab.RecordAgentWaitingPermission, e.Agent, map[string]any{"detail": e.Detail})
		st.notify("warn", fmt.Sprintf("%s is waiting for a permission answer", e.Agent))
	case vocab.HealthRateLimited:
		st.emit(vocab.RecordAgentRateLimited, e.Agent, map[string]any{"detail": e.Detail})
	case vocab.HealthStarting, vocab.HealthReady, vocab.HealthBusy, vocab.HealthIdle, vocab.HealthRestarting:
		// Nothing to report: the agent is well (or being restarted).
	}
}

// exitCauses are the exit codes whose cause a restart cannot fix (the
// shell's conventions), with the fix to tell the user.
var exitCauses = map[int]string{
	126: "its program is not executable (exit code 126); fix: make it executable (chmod +x) or name the right file in --agent or [profiles]",
	127: "its program was not found (exit code 127); fix: install it, put it on PATH, or name the right command in --agent or [profiles]",
}

// loginWords are what the CLIs print when they exit for want of a login.
var loginWords = []string{"Please run /login", "Not logged in", "Invalid API key"}

// cannotRestart sends the run to needs_human at once, and reports
// whether it did, when an exit is one a restart cannot fix: a diagnosed
// cause (e.Cause: a host down, a missing program, a CLI not logged in),
// an exit code that means one, or a second exit in a row before the
// agent's first prompt appeared.
func (st *stepper) cannotRestart(e AgentHealth, ag vocab.AgentState, why string) bool {
	cause := e.Cause
	if cause == "" {
		cause = exitCauses[e.ExitCode]
	}
	for _, w := range loginWords {
		if cause == "" && strings.Contains(e.Detail, w) {
			cause = "its CLI is not logged in (it said " + strconv.Quote(w) + "); fix: log in (run the CLI once by hand and log in, or set its API key)"
		}
	}
	switch {
	case cause != "":
		st.emit(vocab.RecordAgentCannotStart, e.Agent, map[string]any{"cause": cause, "exit_code": e.ExitCode})
		st.needsHuman("agent:"+string(e.Agent), fmt.Sprintf("Agent %s cannot run: %s. A restart cannot fix this (last: %s); "+
			"fix it, then retry (R in the TUI, or hivemind --resume --retry)", e.Agent, cause, why))
	case ag.EarlyExits >= 2:
		st.emit(vocab.RecordAgentCannotStart, e.Agent, map[string]any{"early_exits": ag.EarlyExits, "exit_code": e.ExitCode})
		st.needsHuman("agent:"+string(e.Agent), fmt.Sprintf("Agent %s exited before its prompt appeared, %d times in a row (last: %s). "+
			earlyExitFix, e.Agent, ag.EarlyExits, why))
	default:
		return false
	}
	return true
}

// earlyExitFix is what to do about an agent that exits before its prompt.
const earlyExitFix = "Fix: run its command by hand in a terminal to see why it stops (a custom --agent command must start an interactive program " +
	"that waits for input, not exit); then retry (R in the TUI, or hivemind --resume --retry)"

// failAgent handles a crash, hang or timeout: restart after the backoff
// (or now), past max_retries consecutive failures → needs_human.
func (st *stepper) failAgent(id vocab.AgentID, why string, immediate bool) {
	s := st.s
	if _, pending := s.Timers[restartTimer(id)]; pending {
		return
	}
	ag := s.Agents[id]
	ag.Failures++
	s.Agents[id] = ag
	d, ok := st.cfg.restartPolicy().Retry(ag.Failures)
	if !ok {
		if ag.EarlyExits > 0 {
			// Its messages failed as it died before its prompt: the
			// exits are the cause, and they want the same fix.
			st.needsHuman("agent:"+string(id), fmt.Sprintf("Agent %s exited before its prompt appeared (%d failures in a row, last: %s). "+
				earlyExitFix, id, ag.Failures, why))
			return
		}
		st.needsHuman("agent:"+string(id), fmt.Sprintf("Agent %s failed %d times in a row (last: %s); max_retries=%d", id, ag.Failures, why, st.cfg.MaxRetries))
		return
	}
	st.cancelTimer(timeoutTimer(id))
	if immediate || d <= 0 {
		st.restartNow(id)
		return
	}
	st.schedule(restartTimer(id), d)
	st.emit(vocab.RecordAgentRestartScheduled, id, map[string]any{"after": d.String(), "reason": why, "attempt": ag.Failures})
}

func stallTimer(agent vocab.AgentID) string { return "stall:" + string(agent) }

// watchStall arms the agent's stall timer when it sits idle with work it
// has received (the assignment was delivered) and not finished.
func (st *stepper) watchStall(id vocab.AgentID) {
	s := st.s
	ag := s.Agents[id]
	if !running(s.Phase) || !ag.Pending || ag.Delivered < ag.LastSeq || !ag.Status.Injectable() {
		return
	}
	if _, armed := s.Timers[stallTimer(id)]; armed {
		return
	}
	st.schedule(stallTimer(id), st.cfg.StallTimeout)
}

// stalled handles an agent idle for stall_seconds without producing what
// its assignment asks: one reminder that says what is missing, then
// needs_human with the reason.
func (st *stepper) stalled(id vocab.AgentID) {
	s := st.s
	ag, ok := s.Agents[id]
	if !ok || !ag.Pending || !ag.Status.Injectable() {
		return
	}
	ag.Stalls++
	s.Agents[id] = ag
	a := s.Assignments[id]
	want := "one of the files in its writes: " + clip(strings.Join(a.Writes, ", "), maxProblem)
	if a.DoneMarker != "" {
		want = "its done marker " + a.DoneMarker
	}
	reason := fmt.Sprintf("%s went idle for %s without writing %s (assignment %d: %s)",
		id, st.cfg.StallTimeout, want, a.Seq, firstLine(a.Instruction))
	st.emit(vocab.RecordAgentStalled, id, map[string]any{"after": st.cfg.StallTimeout.String(), "stalls": ag.Stalls, "seq": a.Seq})
	p := RetryPolicy{Attempts: 1, Limit: "a stalled agent gets one reminder, whatever max_retries says"}
	if _, again := p.Retry(ag.Stalls); again {
		a.Rejected = fmt.Sprintf("You went idle without writing %s. Do the assignment now and write it.", want)
		s.Assignments[id] = a
	}
	st.retryWork(p, id, "stall:"+string(id), reason, ag.Stalls)
}

// restartNow restarts the agent (session kept) and re-sends its work.
func (st *stepper) restartNow(id vocab.AgentID) {
	s := st.s
	ag, ok := s.Agents[id]
	if !ok {
		return
	}
	st.cancelTimer(restartTimer(id))
	st.cancelTimer(timeoutTimer(id))
	if st.start(id, RestartAgent{Agent: id, Role: ag.Role}) {
		ag.Restarts++
		ag.Status = vocab.HealthRestarting
		s.Agents[id] = ag
		st.emit(vocab.RecordAgentRestarted, id, map[string]any{"restarts": ag.Restarts})
	} // else this step starts it already (a resume): one start, one re-send
	st.resend(id)
	// A worker back from its backoff takes work again.
	st.scheduleWork()
}

func (st *stepper) injection(e InjectionResult) {
	s := st.s
	ag, ok := s.Agents[e.Agent]
	if ok && ag.Queued > 0 {
		ag.Queued-- // one result per message handed to the agent layer
		s.Agents[e.Agent] = ag
	}
	if ok && e.Cancelled {
		st.emit(vocab.RecordInjectionCancelled, e.Agent, map[string]any{"seq": e.Seq, "detail": e.Detail})
		return
	}
	if ok && e.Delivered && e.Seq > ag.Delivered {
		ag.Delivered = e.Seq
		s.Agents[e.Agent] = ag
		// An agent that was idle when the message arrived and never gets
		// busy (it ignores its input) is stalled too.
		st.watchStall(e.Agent)
		return
	}
	if !ok || e.Delivered || e.Seq != ag.LastSeq || !ag.Pending || !running(s.Phase) {
		return
	}
	if st.deferIfPaused(e) {
		return
	}
	st.emit(vocab.RecordInjectionFailed, e.Agent, map[string]any{"seq": e.Seq, "detail": e.Detail})
	st.failAgent(e.Agent, "message not delivered: "+e.Detail, false)
}

func (st *stepper) timerFired(e TimerFired) {
	s := st.s
	if _, ok := s.Timers[e.ID]; !ok || s.Phase == vocab.PhasePaused || st.frozen(e.ID) {
		return // stale, or frozen by a pause (re-armed on resume)
	}
	delete(s.Timers, e.ID)
	kind, name, _ := strings.Cut(e.ID, ":")
	agent := vocab.AgentID(name)
	st.emit(vocab.RecordTimerFired, agent, map[string]any{"timer": e.ID})
	if !running(s.Phase) {
		return
	}
	switch kind {
	case "restart":
		st.restartNow(agent)
	case "timeout":
		if s.Agents[agent].Pending {
			st.emit(vocab.RecordAgentTimeout, agent, map[string]any{"after": st.cfg.AgentTimeout.String()})
			st.failAgent(agent, "timed out after "+st.cfg.AgentTimeout.String(), true)
		}
	case "resend":
		st.resend(agent)
	case "stall":
		st.stalled(agent)
	case "hold":
		st.holdExpired(name) // the timer names the account
	}
}
