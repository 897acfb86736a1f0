package flow

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ---- keys ----

func (st *stepper) key(e KeyPressed) {
	s := st.s
	ignore := func(reason string) {
		st.emit(vocab.RecordKeyIgnored, "", map[string]any{"key": e.Action, "state": string(s.Phase), "reason": reason})
	}
	switch e.Action {
	case KeyPause:
		if !running(s.Phase) {
			ignore("nothing to pause")
			return
		}
		st.pause()
	case KeyResume:
		if s.Phase != vocab.PhasePaused {
			ignore("not paused")
			return
		}
		st.unpause()
	case KeyCancel:
		switch {
		case s.TaskID == "" || s.Phase == vocab.PhaseIdle || s.Phase == vocab.PhaseCancelled:
			ignore("nothing to cancel")
		case s.Phase == vocab.PhaseComplete:
			st.stopAll()
			st.emit(vocab.RecordAgentsStopped, "", nil)
		default:
			st.cancel()
		}
	case KeyRetry:
		if s.Phase != vocab.PhaseNeedsHuman && s.Phase != vocab.PhaseError {
			ignore("retry only applies to needs_human and error")
			return
		}
		st.retry()
	case KeyPauseAgent, KeyResumeAgent, KeyToggleAgent:
		ag, ok := s.Agents[e.Agent]
		if e.Action == KeyToggleAgent {
			e.Action = map[bool]string{false: KeyPauseAgent, true: KeyResumeAgent}[ag.Paused]
		}
		switch {
		case !ok:
			ignore("no agent " + string(e.Agent))
		case !running(s.Phase) && s.Phase != vocab.PhasePaused && s.Phase != vocab.PhaseNeedsHuman:
			ignore("nothing to pause")
		case ag.Paused == (e.Action == KeyPauseAgent):
			ignore("already " + map[bool]string{true: "paused", false: "not paused"}[ag.Paused])
		case e.Action == KeyPauseAgent:
			st.pauseAgent(e.Agent)
		default:
			st.resumeAgent(e.Agent)
		}
	case KeyAbandon:
		if s.Phase != vocab.PhaseNeedsHuman && s.Phase != vocab.PhaseError {
			ignore("abandon only applies to needs_human and error")
			return
		}
		st.stopAll()
		st.cancelAllTimers()
		st.emit(vocab.RecordAbandoned, "", map[string]any{"state": string(s.Phase)})
		st.enter(vocab.PhaseIdle)
		// The task is over (vocab.State.Over): it ended now, though
		// idle is not a final phase of the run.
		s.FinishedAt = st.at
	default:
		ignore("unknown key action")
	}
}

// pause freezes the machine: the remaining time of every timer is kept and
// the runner's timers cancelled; events that arrive are deferred.
func (st *stepper) pause() {
	s := st.s
	for _, id := range slices.Sorted(maps.Keys(s.Timers)) {
		t := s.Timers[id]
		if st.frozen(id) {
			continue // an agent's own pause froze it already
		}
		t.Left = max(t.Deadline.Sub(st.at), 0)
		t.Deadline = time.Time{}
		s.Timers[id] = t
		st.do(CancelTimer{ID: id})
	}
	st.enter(vocab.PhasePaused)
	st.emit(vocab.RecordPaused, "", map[string]any{"previous_state": string(s.PreviousPhase)})
	st.notify("info", "Paused")
}

// holdDelivery tells the agent layer to stop (hold) or go on typing the
// messages it holds: for every agent with the team pause, and never for
// an agent paused on its own (resumeAgent ends that).
func (st *stepper) holdDelivery(hold bool) {
	for _, id := range allAgents(st.s) {
		if hold || !st.s.Agents[id].Paused {
			st.do(HoldDelivery{Agent: id, Hold: hold})
		}
	}
}

// agentTimer reports whether timer id runs for agent's work (a timeout,
// stall or re-send): a pause of that agent freezes it.
func agentTimer(id string, agent vocab.AgentID) bool {
	return id == timeoutTimer(agent) || id == stallTimer(agent) || id == resendTimer(agent)
}

// pauseAgent holds one agent: nothing is typed into it (what it was sent
// and has not received waits in the agent layer; new messages in Held)
// and its work's timers stand still, until resumeAgent.
func (st *stepper) pauseAgent(id vocab.AgentID) {
	s := st.s
	ag := s.Agents[id]
	ag.Paused = true
	s.Agents[id] = ag
	for _, tid := range slices.Sorted(maps.Keys(s.Timers)) {
		if t := s.Timers[tid]; agentTimer(tid, id) && !t.Deadline.IsZero() {
			t.Left = max(t.Deadline.Sub(st.at), 0)
			t.Deadline = time.Time{}
			s.Timers[tid] = t
			st.do(CancelTimer{ID: tid})
		}
	}
	st.do(HoldDelivery{Agent: id, Hold: true})
	st.emit(vocab.RecordAgentPaused, id, map[string]any{"queued": ag.Queued})
	st.notify("info", "Paused "+string(id))
}

// resumeAgent ends an agent's own pause: its timers run again and what
// waited for it is sent, in order (unless the team is paused).
func (st *stepper) resumeAgent(id vocab.AgentID) {
	s := st.s
	ag := s.Agents[id]
	ag.Paused = false
	s.Agents[id] = ag
	st.emit(vocab.RecordAgentResumed, id, nil)
	st.notify("info", "Resumed "+string(id))
	if s.Phase == vocab.PhasePaused {
		return // the team pause still holds it; unpause re-arms its timers
	}
	st.rearm(func(tid string) bool { return agentTimer(tid, id) })
	st.do(HoldDelivery{Agent: id, Hold: false})
	st.sendHeld()
	st.scheduleWork()
}

// rearm starts again the frozen timers that pick selects, with the time
// they had left.
func (st *stepper) rearm(pick func(id string) bool) {
	s := st.s
	for _, id := range slices.Sorted(maps.Keys(s.Timers)) {
		t := s.Timers[id]
		if !pick(id) || !t.Deadline.IsZero() {
			continue
		}
		left := t.Left
		t.Left = 0
		s.Timers[id] = t
		st.schedule(id, left)
	}
}

// frozen reports whether timer id stands still for an agent's own pause.
func (st *stepper) frozen(id string) bool {
	for _, agent := range allAgents(st.s) {
		if st.s.Agents[agent].Paused && agentTimer(id, agent) {
			return true
		}
	}
	return false
}

// unpause returns to the phase before the pause, re-arms the timers with
// their remaining time, re-sends work of agents restarted meanwhile and
// handles the deferred events in order.
func (st *stepper) unpause() {
	s := st.s
	back := s.PreviousPhase
	if !running(back) {
		back = vocab.PhasePlanning // a state file edited by hand; planning is always safe
	}
	st.enter(back)
	st.rearm(func(id string) bool { return !st.frozen(id) })
	st.emit(vocab.RecordResumedFromPause, "", map[string]any{"state": string(s.Phase), "deferred": len(s.Deferred)})
	st.notify("info", "Resumed")
	st.sendHeld() // after the timers: a held assignment's timeout starts now
	resend := s.Resend
	s.Resend = nil
	for _, id := range resend {
		st.resend(id)
	}
	deferred := s.Deferred
	s.Deferred = nil
	for _, raw := range deferred {
		ev, err := UnmarshalEvent(raw)
		if err != nil {
			st.emit(vocab.RecordDeferredEventDropped, "", map[string]any{"error": err.Error()})
			continue
		}
		st.handle(ev)
	}
	st.scheduleWork()
	st.remindPlanGate()
}

func (st *stepper) stopAll() {
	for _, id := range allAgents(st.s) {
		st.do(StopAgent{Agent: id})
	}
}

func (st *stepper) cancel() {
	s := st.s
	st.cancelAllTimers()
	st.stopAll()
	s.Deferred = nil
	s.Resend = nil
	s.Held = nil
	st.enter(vocab.PhaseCancelled)
	st.emit(vocab.RecordCancelled, "", nil)
	st.notify("info", "Task cancelled")
}

// stateNotSaved stops new work when state.json cannot be written: the
// step's outside effects were dropped by the runner, so the run waits in
// needs_human, saying why, until a retry (which writes the state first).
func (st *stepper) stateNotSaved(e StateNotSaved) {
	s := st.s
	if s.TaskID == "" || (s.Phase == vocab.PhaseNeedsHuman && s.Escalation == "state_write") {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(s.Timers)) {
		st.cancelTimer(id)
	}
	st.needsHuman("state_write", fmt.Sprintf("state.json could not be written (%s); no new work is assigned until it can be. "+
		"Free disk space or fix the permissions, then retry (R in the TUI, or hivemind --resume --retry)", clip(e.Error, maxProblem)))
}

// retry gives a stuck run another go, according to what stopped it.
func (st *stepper) retry() {
	s := st.s
	kind := s.Escalation
	back := s.PreviousPhase
	s.Escalation, s.Reason, s.Error = "", "", ""
	st.emit(vocab.RecordRetry, "", map[string]any{"escalation": kind, "state": string(s.Phase)})
	switch {
	case (strings.HasPrefix(kind, "agent:") || strings.HasPrefix(kind, "stall:")) && s.Phase == vocab.PhaseNeedsHuman && running(back):
		// A failing agent is restarted; a stalled one is asked again.
		what, name, _ := strings.Cut(kind, ":")
		id := vocab.AgentID(name)
		ag := s.Agents[id]
		ag.Failures, ag.Stalls = 0, 0
		s.Agents[id] = ag
		st.enter(back)
		if what == "agent" && ag.Status != vocab.HealthStarting && ag.Status != vocab.HealthRestarting {
			st.restartNow(id)
		} else {
			// Asked again; an agent being started (a resume) is not
			// started twice: its start takes the work.
			st.resend(id)
		}
		st.scheduleWork()
	case strings.HasPrefix(kind, "fix:") && s.Phase == vocab.PhaseNeedsHuman && back == vocab.PhaseCheckpointFix:
		id := strings.TrimPrefix(kind, "fix:")
		f := s.Fixes[id]
		f.Attempts = 0
		s.Fixes[id] = f
		st.enter(back)
		st.resend(f.Worker)
	case strings.HasPrefix(kind, "subtask:") && s.Phase == vocab.PhaseNeedsHuman && running(back):
		id := strings.TrimPrefix(kind, "subtask:")
		sub := s.Subtasks[id]
		sub.Attempts = 0
		s.Subtasks[id] = sub
		st.enter(back)
		if w := sub.Worker; w != "" && s.Agents[w].Pending && s.Agents[w].Subtask == id {
			st.resend(w)
		} else if sub.Status != vocab.SubtaskDone {
			sub.Status = vocab.SubtaskPending
			sub.Worker = ""
			s.Subtasks[id] = sub
		}
		st.scheduleWork()
	case kind == "checkpoint_revisions" && s.Phase == vocab.PhaseNeedsHuman:
		s.FixRounds = 0
		st.reviewCheckpoint()
	case kind == "state_write" && s.Phase == vocab.PhaseNeedsHuman && running(back):
		// What the unsaved steps would have sent was dropped: send every
		// unfinished assignment again (after this state is written).
		st.enter(back)
		for _, id := range allAgents(s) {
			st.resend(id)
		}
		st.resumeMerge() // a merge requested by an unsaved step
		st.scheduleWork()
	case kind == "budget" && s.Phase == vocab.PhaseNeedsHuman && running(back):
		st.retryBudget(back)
	case (kind == "git_merge" || kind == "merge_conflicts") && s.Phase == vocab.PhaseNeedsHuman:
		st.retryMerge()
	default:
		// Back to planning: a fresh plan, with all feedback so far.
		s.RevisionCount = 0
		s.InvalidPlans = 0
		for _, id := range allAgents(s) {
			ag := s.Agents[id]
			ag.Failures = 0
			s.Agents[id] = ag
			if ag.Pending && id != vocab.AgentLead {
				st.finishWork(id)
			}
		}
		for id, sub := range s.Subtasks {
			if sub.Status == vocab.SubtaskInProgress {
				sub.Status = vocab.SubtaskPending
				sub.Worker = ""
				s.Subtasks[id] = sub
			}
		}
		s.Fixes = nil
		st.enter(vocab.PhasePlanning)
		st.leadPlan()
	}
}
