package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Machine is the pure workflow state machine with its limits and timings.
type Machine struct{ Cfg Config }

// Step returns the state after event e and the effects the runner must
// carry out, in order. It never changes s (it works on a deep copy), reads
// no clock (time comes from the event) and does no I/O.
//
// Effect order: when the state changed, WriteState comes first (write-ahead:
// state.json records a consumed trigger and the assignments about to be sent
// before any file is moved or any line typed, so a crash in between is
// repaired on restart instead of losing a trigger), then AppendEvent records,
// then the other effects in the order they happened (ArchiveTrigger,
// Spawn/Restart/StopAgent, WriteAssignment before its Inject, timers), and
// NotifyUser last.
func (m Machine) Step(s State, e Event) (State, []Effect) {
	n := s.Clone()
	st := &stepper{cfg: m.Cfg, s: &n, at: e.Time()}
	st.handle(e)
	// Whatever the event, held work whose account is free again is not
	// left waiting (release and retries send it first, in order).
	st.sendHeld()
	st.dropSuperseded()
	st.startsFirst()
	var out []Effect
	changed := !sameState(s, n)
	if changed {
		if !st.at.IsZero() {
			n.Timestamp = st.at
		}
		out = append(out, WriteState{State: n})
	}
	out = append(out, st.events...)
	out = append(out, st.actions...)
	out = append(out, st.notes...)
	if !changed {
		return s, out
	}
	return n, out
}

// sameState compares two states as state.json would store them.
func sameState(a, b State) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// stepper holds one Step's working copy and collected effects.
type stepper struct {
	cfg     Config
	s       *State
	at      time.Time
	events  []Effect // AppendEvent
	actions []Effect
	notes   []Effect // NotifyUser
	// started are the agents this step starts (SpawnAgent, RestartAgent):
	// each at most once, whatever rules ask for it.
	started map[vocab.AgentID]bool
	// sent are the agents this step sent work (new or again): a re-send
	// rule does not send it once more.
	sent map[vocab.AgentID]bool
}

// start emits e (agent id's SpawnAgent or RestartAgent) unless this step
// starts the agent already, and reports whether it did.
func (st *stepper) start(id vocab.AgentID, e Effect) bool {
	if st.started[id] {
		return false
	}
	if st.started == nil {
		st.started = map[vocab.AgentID]bool{}
	}
	st.started[id] = true
	st.do(e)
	return true
}

func (st *stepper) emit(typ vocab.RecordType, agent vocab.AgentID, details map[string]any) {
	st.events = append(st.events, AppendEvent{Type: typ, Agent: agent, Details: details})
}

func (st *stepper) do(e Effect) { st.actions = append(st.actions, e) }

func (st *stepper) notify(level, msg string) {
	st.notes = append(st.notes, NotifyUser{Level: level, Message: msg})
}

// dropSuperseded removes the notices this step would send to an agent it
// also sends newer work: the notice tells nothing the work does not (a
// held "checkpoint reached" released with the next subtask).
func (st *stepper) dropSuperseded() {
	work := map[vocab.AgentID]int{} // newest work sent, by agent
	for _, e := range st.actions {
		if in, ok := e.(Inject); ok && !in.Notice {
			work[in.Agent] = max(work[in.Agent], in.Seq)
		}
	}
	st.actions = slices.DeleteFunc(st.actions, func(e Effect) bool {
		in, ok := e.(Inject)
		if !ok || !in.Notice || work[in.Agent] < in.Seq {
			return false
		}
		ag := st.s.Agents[in.Agent]
		ag.Queued = max(ag.Queued-1, 0)
		st.s.Agents[in.Agent] = ag
		st.emit(vocab.RecordNoticeDropped, in.Agent, map[string]any{"seq": in.Seq, "why": fmt.Sprintf("superseded by #%d", work[in.Agent])})
		return true
	})
}

// startsFirst moves each agent start (SpawnAgent, RestartAgent) before
// the messages this step sends that agent: they are for the new process
// (the agent layer holds them until it runs), never for the old one that
// the restart stops, which would lose them.
func (st *stepper) startsFirst() {
	for i, e := range st.actions {
		var id vocab.AgentID
		switch e := e.(type) {
		case SpawnAgent:
			id = e.Agent
		case RestartAgent:
			id = e.Agent
		default:
			continue
		}
		first := slices.IndexFunc(st.actions[:i], func(x Effect) bool {
			switch x := x.(type) {
			case Inject:
				return x.Agent == id
			case WriteAssignment:
				return x.Assignment.Agent == id
			default: // other effects are not for the agent's process
				return false
			}
		})
		if first >= 0 {
			copy(st.actions[first+1:i+1], st.actions[first:i])
			st.actions[first] = e
		}
	}
}

// ---- phases ----

// running reports whether the workflow is under way in phase p: triggers
// and agent failures are acted on.
func running(p vocab.Phase) bool { return p.Running() }

// final reports whether p ends the run (FinishedAt is set, timers dropped).
func final(p vocab.Phase) bool {
	return p == vocab.PhaseComplete || p == vocab.PhaseCancelled || p == vocab.PhaseError || p == vocab.PhaseNeedsHuman
}

// activeAgents returns the ● (write) and ○ (read-only) agents of phase p,
// from the spec's table.
func activeAgents(s *State, p vocab.Phase) (active, readOnly []vocab.AgentID) {
	has := func(id vocab.AgentID) bool { _, ok := s.Agents[id]; return ok }
	one := func(id vocab.AgentID) []vocab.AgentID {
		if has(id) {
			return []vocab.AgentID{id}
		}
		return nil
	}
	switch p {
	case vocab.PhaseProjectSelected, vocab.PhasePlanning, vocab.PhasePlanRevision, vocab.PhaseFrictionResolution:
		return one(vocab.AgentLead), nil
	case vocab.PhasePlanReview, vocab.PhaseCheckpointReview:
		return one(vocab.AgentReviewer), nil
	case vocab.PhaseExecuting:
		return workerIDs(s), nil
	case vocab.PhaseCheckpoint:
		return nil, workerIDs(s)
	case vocab.PhaseCheckpointFix:
		active = one(vocab.AgentLead)
		var ws []vocab.AgentID
		for _, f := range s.Fixes {
			if f.Worker != vocab.AgentLead && has(f.Worker) {
				ws = append(ws, f.Worker)
			}
		}
		vocab.SortAgents(ws)
		return append(active, dedupe(ws)...), nil
	case vocab.PhaseFrictionLogged, vocab.PhaseFrictionSync:
		return nil, allAgents(s)
	case vocab.PhaseIdle, vocab.PhasePlanApproval, vocab.PhaseComplete, vocab.PhaseError,
		vocab.PhasePaused, vocab.PhaseNeedsHuman, vocab.PhaseCancelled:
		// No agent's turn: the human decides, or the run is held or over.
	}
	return nil, nil
}

// enter moves the machine to phase p (recording the previous phase, the
// active agents and a state_changed event).
func (st *stepper) enter(p vocab.Phase) {
	s := st.s
	from := s.Phase
	if from == p {
		return
	}
	s.PreviousPhase = from
	s.Phase = p
	s.ActiveAgents, s.ReadOnlyAgents = activeAgents(s, p)
	if s.ActiveAgents == nil {
		s.ActiveAgents = []vocab.AgentID{}
	}
	st.emit(vocab.RecordStateChanged, "", map[string]any{"from": string(from), "to": string(p)})
	switch {
	case running(p) && !running(from):
		s.Clock.Start(st.at)
	case !running(p) && running(from):
		s.Clock.Stop(st.at)
	}
	if (p == vocab.PhasePaused) != (from == vocab.PhasePaused) {
		// The agent layer holds every queue while the team is paused.
		st.holdDelivery(p == vocab.PhasePaused)
	}
	if running(p) && final(from) {
		// Back under way after a retry: held work goes first, then work
		// the end took back before it was typed.
		st.armHolds()
		st.sendHeld()
		for _, id := range allAgents(s) {
			if ag := s.Agents[id]; ag.Pending && ag.Delivered < ag.LastSeq {
				st.resend(id)
			}
		}
	}
	if final(p) {
		s.FinishedAt = st.at
		st.cancelAllTimers()
		st.withdrawAll()
	}
	if !final(p) {
		s.FinishedAt = time.Time{}
	}
}

// withdrawAll takes back every message not typed yet: the run stopped
// (the runner ends what is in flight as cancelled). Work is sent again if
// a retry takes the run back under way (enter); once the task is over,
// what waited in Held is dropped too.
func (st *stepper) withdrawAll() {
	s := st.s
	for _, id := range allAgents(s) {
		if ag := s.Agents[id]; ag.Queued > 0 {
			st.do(Withdraw{Agent: id, Before: s.Seq + 1, Why: "the task reached " + string(s.Phase)})
			ag.Queued = 0
			s.Agents[id] = ag
		}
	}
	if s.Phase != vocab.PhaseComplete && s.Phase != vocab.PhaseCancelled {
		return
	}
	for _, a := range s.Held {
		st.emit(vocab.RecordHeldDispatchDropped, a.Agent, map[string]any{"seq": a.Seq, "why": "the task reached " + string(s.Phase)})
	}
	s.Held = nil
}

// ---- timers ----

func timeoutTimer(agent vocab.AgentID) string { return "timeout:" + string(agent) }
func restartTimer(agent vocab.AgentID) string { return "restart:" + string(agent) }

func (st *stepper) schedule(id string, d time.Duration) {
	if st.s.Timers == nil {
		st.s.Timers = map[string]vocab.Timer{}
	}
	st.s.Timers[id] = vocab.Timer{ID: id, Deadline: st.at.Add(d)}
	st.do(ScheduleTimer{ID: id, After: d})
}

func (st *stepper) cancelTimer(id string) {
	if _, ok := st.s.Timers[id]; !ok {
		return
	}
	delete(st.s.Timers, id)
	st.do(CancelTimer{ID: id})
}

func (st *stepper) cancelAllTimers() {
	for _, id := range slices.Sorted(maps.Keys(st.s.Timers)) {
		st.cancelTimer(id)
	}
}

// finishWork records that an agent finished its current work.
func (st *stepper) finishWork(agent vocab.AgentID) {
	ag, ok := st.s.Agents[agent]
	if !ok {
		return
	}
	ag.Pending = false
	ag.Subtask = ""
	ag.Failures = 0
	ag.Stalls = 0
	if ag.Queued > 0 {
		// What is still queued for it is about work that is done.
		st.do(Withdraw{Agent: agent, Before: st.s.Seq + 1, Why: "its work is done"})
	}
	st.s.Agents[agent] = ag
	st.cancelTimer(timeoutTimer(agent))
	st.cancelTimer(resendTimer(agent))
	st.cancelTimer(stallTimer(agent))
}

// ---- escalation ----

func (st *stepper) needsHuman(kind, reason string) {
	st.s.Escalation = kind
	st.s.Reason = reason
	st.enter(vocab.PhaseNeedsHuman)
	st.emit(vocab.RecordNeedsHuman, "", map[string]any{"escalation": kind, "reason": reason})
	st.notify("error", "Needs a human: "+firstLine(reason))
}

func (st *stepper) fail(kind, reason string) {
	st.s.Escalation = kind
	st.s.Reason = reason
	st.s.Error = reason
	st.enter(vocab.PhaseError)
	st.emit(vocab.RecordError, "", map[string]any{"escalation": kind, "reason": reason})
	st.notify("error", "Error: "+firstLine(reason))
}

// roundsSummary renders one line per review round of kind.
func (st *stepper) roundsSummary(kind string, cp int) string {
	var b strings.Builder
	for _, r := range st.s.Rounds {
		if r.Kind != kind || (kind == "checkpoint" && r.Checkpoint != cp) {
			continue
		}
		fmt.Fprintf(&b, "\n- round %d: %s — %s [%s]", r.Number, r.Verdict, r.Summary, r.Archived)
	}
	return b.String()
}

// summarize returns the gist of a review file: its first lines of text,
// headings stripped, at most 200 characters.
func summarize(content []byte) string {
	var parts []string
	n := 0
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#>*- "))
		if line == "" {
			continue
		}
		parts = append(parts, line)
		n += len(line)
		if n > 200 {
			break
		}
	}
	s := strings.Join(parts, " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	if s == "" {
		s = "(empty)"
	}
	return s
}

// ---- dispatch ----

// handle runs e's gate, then its handler.
func (st *stepper) handle(e Event) {
	if gateOf(e) == gateTask {
		if st.s.TaskID == "" {
			st.noTask(e)
			return
		}
		if st.deferIfPaused(e) {
			return
		}
	}
	switch e := e.(type) {
	case TaskSubmitted:
		st.taskSubmitted(e)
	case ProjectSelected:
		st.projectSelected(e)
	case Resumed:
		st.resumed(e)
	case TriggerCompleted:
		st.trigger(e)
	case SubtaskDone:
		st.subtaskDone(e)
	case AgentHealth:
		st.health(e)
	case InjectionResult:
		st.injection(e)
	case TimerFired:
		st.timerFired(e)
	case KeyPressed:
		st.key(e)
	case StateNotSaved:
		st.stateNotSaved(e)
	case KnowledgeSubmitted:
		st.knowledgeSubmitted(e)
	case CheckpointMerged:
		st.checkpointMerged(e)
	case AgentUsage:
		st.agentUsage(e)
	}
}

// noTask reports a gated event dropped for want of a task. A trigger or
// inbox file stays on disk for the next run; other events need no word.
func (st *stepper) noTask(e Event) {
	switch e := e.(type) {
	case TriggerCompleted:
		st.emit(vocab.RecordTriggerIgnored, e.Agent, map[string]any{"path": cleanPath(e.Path), "state": string(st.s.Phase), "reason": "no task"})
	case KnowledgeSubmitted:
		p := cleanPath(e.Path)
		author, _ := noteAuthor(p, e.Agent)
		st.emit(vocab.RecordContextIgnored, author, map[string]any{"path": p, "reason": "no task (the note stays in its outbox)"})
	default: // nothing was left behind
	}
}

// cleanPath is a trigger path as agents may write it, made canonical
// (slashes, no "./", no "..").
func cleanPath(p string) string {
	return strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "./")
}

// defer keeps e for handling on resume. Returns true when paused.
func (st *stepper) deferIfPaused(e Event) bool {
	if st.s.Phase != vocab.PhasePaused {
		return false
	}
	raw, err := MarshalEvent(e)
	if err != nil {
		return true
	}
	st.s.Deferred = append(st.s.Deferred, raw)
	st.emit(vocab.RecordEventDeferred, "", map[string]any{"event": kindName(e)})
	return true
}

func (st *stepper) taskSubmitted(e TaskSubmitted) {
	s := st.s
	switch s.Phase {
	case "", vocab.PhaseIdle, vocab.PhaseProjectSelected, vocab.PhaseComplete, vocab.PhaseCancelled:
	default:
		st.emit(vocab.RecordTaskIgnored, "", map[string]any{"task": e.Task.ID, "reason": "a task is already running (" + string(s.Phase) + ")"})
		return
	}
	project := e.Task.Project
	if project == "" {
		project = s.Project
	}
	from := s.Phase
	if from == "" {
		from = vocab.PhaseIdle
	}
	*s = State{
		TaskID:       e.Task.ID,
		Phase:        from,
		Project:      project,
		TaskDir:      e.TaskDir,
		StartedAt:    e.At,
		Subtasks:     map[string]vocab.SubtaskState{},
		Agents:       map[vocab.AgentID]vocab.AgentState{},
		PlanApproval: e.Task.PlanApproval,
	}
	workers := e.Task.Workers
	if workers <= 0 {
		workers = st.cfg.Workers
	}
	s.Agents[vocab.AgentLead] = vocab.AgentState{Role: vocab.RoleLead, Status: vocab.HealthStarting}
	s.Agents[vocab.AgentReviewer] = vocab.AgentState{Role: vocab.RoleReviewer, Status: vocab.HealthStarting}
	for i := 1; i <= workers; i++ {
		s.Agents[vocab.WorkerID(i)] = vocab.AgentState{Role: vocab.RoleWorker, Status: vocab.HealthStarting}
	}
	st.emit(vocab.RecordTaskSubmitted, "", map[string]any{"task": e.Task.ID, "project": project, "workers": workers})
	st.taskConstraints(e.Task)
	for _, id := range allAgents(s) {
		st.start(id, SpawnAgent{Agent: id, Role: s.Agents[id].Role})
		st.emit(vocab.RecordAgentSpawned, id, map[string]any{"role": string(s.Agents[id].Role)})
	}
	st.enter(vocab.PhasePlanning)
	st.leadPlan()
}

func (st *stepper) projectSelected(e ProjectSelected) {
	s := st.s
	if s.Phase != "" && s.Phase != vocab.PhaseIdle && s.Phase != vocab.PhaseProjectSelected {
		st.emit(vocab.RecordProjectIgnored, "", map[string]any{"project": e.Project, "reason": "a task is running (" + string(s.Phase) + ")"})
		return
	}
	s.Project = e.Project
	if s.Phase == "" {
		s.Phase = vocab.PhaseIdle
	}
	st.enter(vocab.PhaseProjectSelected)
	st.emit(vocab.RecordProjectSelected, "", map[string]any{"project": e.Project})
}

// resumed re-spawns the agents (keeping their sessions), re-arms timers,
// takes what is already complete on disk (e.OnDisk) and then re-sends the
// assignments still unfinished, after the runner restarted.
func (st *stepper) resumed(e Resumed) {
	s := st.s
	if s.TaskID == "" {
		st.takeOnDisk(e.OnDisk)
		return
	}
	details := map[string]any{"state": string(s.Phase)}
	if len(e.OnDisk) > 0 {
		details["on_disk"] = len(e.OnDisk)
	}
	st.resumeClock(details)
	st.emit(vocab.RecordResumed, "", details)
	switch s.Phase {
	case vocab.PhaseIdle, vocab.PhaseComplete, vocab.PhaseCancelled:
		st.takeOnDisk(e.OnDisk)
		return
	default: // a run to resume: its team is started again
	}
	for _, id := range allAgents(s) {
		ag := s.Agents[id]
		ag.Status = vocab.HealthStarting
		ag.Queued = 0 // the previous run's agent layer is gone, and its queue with it
		s.Agents[id] = ag
		st.start(id, SpawnAgent{Agent: id, Role: ag.Role, Resume: true})
		if ag.Paused || s.Phase == vocab.PhasePaused {
			st.do(HoldDelivery{Agent: id, Hold: true})
		}
	}
	// Every agent is being started, so pending restarts are moot; timeouts
	// are re-armed when the work is re-sent.
	for _, id := range slices.Sorted(maps.Keys(s.Timers)) {
		if kind, _, _ := strings.Cut(id, ":"); kind == "restart" || kind == "timeout" || kind == "resend" || kind == "stall" {
			delete(s.Timers, id)
		}
	}
	if s.Phase == vocab.PhasePaused {
		st.dropStaleDeferred()
		var pending []vocab.AgentID
		for _, id := range allAgents(s) {
			if s.Agents[id].Pending {
				pending = append(pending, id)
			}
		}
		s.Resend = dedupe(append(s.Resend, pending...))
		st.takeOnDisk(e.OnDisk) // deferred until the pause ends
		st.resumeMerge()
		return
	}
	for _, id := range slices.Sorted(maps.Keys(s.Timers)) {
		if t := s.Timers[id]; !st.frozen(id) {
			st.schedule(id, max(t.Deadline.Sub(st.at), 0))
		}
	}
	// Answers already on disk first: an agent whose trigger file or done
	// marker is there is not asked again, and work they lead to is sent
	// once, fresh.
	sent := map[vocab.AgentID]int{}
	for _, id := range allAgents(s) {
		sent[id] = s.Assignments[id].Seq
	}
	st.takeOnDisk(e.OnDisk)
	if e.Retry {
		st.key(KeyPressed{Action: KeyRetry, When: When{At: e.At}})
	}
	if !running(s.Phase) {
		return
	}
	for _, id := range allAgents(s) {
		if s.Agents[id].Pending && s.Assignments[id].Seq == sent[id] {
			st.resend(id)
		}
	}
	st.resumeMerge()
	st.scheduleWork()
	st.remindPlanGate()
}

// resumeClock starts the elapsed clock of a run that resumes the task.
// The previous run's interval, if it left one open (it was killed), ends
// at its last state write: the time after it is not known to have run
// (vocab.RunClock); details say what was left out. A state from before
// the clock was kept starts from the time it showed.
func (st *stepper) resumeClock(details map[string]any) {
	s := st.s
	c := &s.Clock
	if c.Ran == 0 && c.Since.IsZero() {
		c.Ran = s.Elapsed(st.at, false)
	}
	if !c.Since.IsZero() {
		c.Stop(s.Timestamp)
		details["not_counted"] = max(st.at.Sub(s.Timestamp), 0).Round(time.Millisecond).String()
	}
	if running(s.Phase) {
		c.Start(st.at)
	}
	details["elapsed"] = c.Ran.Round(time.Millisecond).String()
}

// dropStaleDeferred drops the deferred events about the previous run's
// agent processes (their exits, hangs, deliveries): every agent is started
// anew, and a stale exit replayed at the resume would restart a fresh one.
func (st *stepper) dropStaleDeferred() {
	s := st.s
	dropped := 0
	s.Deferred = slices.DeleteFunc(s.Deferred, func(raw json.RawMessage) bool {
		ev, err := UnmarshalEvent(raw)
		if err != nil {
			return false // reported when it is replayed
		}
		switch ev.(type) {
		case AgentHealth, InjectionResult:
			dropped++
			return true
		default: // the task's own inputs (triggers, keys …) are kept
			return false
		}
	})
	if dropped > 0 {
		st.emit(vocab.RecordDeferredEventsDropped, "", map[string]any{"count": dropped, "why": "about agent processes of the previous run"})
	}
}

// takeOnDisk handles the trigger files and done markers a restarted runner
// found complete on disk, in order, like events from the watcher.
func (st *stepper) takeOnDisk(evs []Event) {
	for _, ev := range evs {
		switch ev.(type) {
		case TriggerCompleted, SubtaskDone:
			st.handle(ev)
		default: // the runner puts nothing else there
		}
	}
}
