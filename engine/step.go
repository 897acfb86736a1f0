package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

// Machine is the pure workflow state machine with its limits and timings.
type Machine struct{ Cfg Config }

// DefaultConfig returns the default limits and timings.
func DefaultConfig() Config {
	return Config{
		Workers:           2,
		QuietPeriod:       300 * time.Millisecond,
		MaxRevisionCycles: 3,
		MaxRetries:        3,
		Backoff:           []time.Duration{5 * time.Second, 15 * time.Second, 45 * time.Second},
		HangTimeout:       120 * time.Second,
		AgentTimeout:      30 * time.Minute,
		StallTimeout:      120 * time.Second,
	}
}

// withDefaults returns c with every zero value replaced by its default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.QuietPeriod <= 0 {
		c.QuietPeriod = d.QuietPeriod
	}
	if c.MaxRevisionCycles <= 0 {
		c.MaxRevisionCycles = d.MaxRevisionCycles
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0 // 0 is legal: no retries, the first failure escalates
	}
	if len(c.Backoff) == 0 {
		c.Backoff = d.Backoff
	}
	if c.HangTimeout <= 0 {
		c.HangTimeout = d.HangTimeout
	}
	if c.AgentTimeout <= 0 {
		c.AgentTimeout = d.AgentTimeout
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = d.StallTimeout
	}
	return c
}

// Step is Machine{DefaultConfig()}.Step.
func Step(s State, e Event) (State, []Effect) {
	return Machine{Cfg: DefaultConfig()}.Step(s, e)
}

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
	st := &stepper{cfg: m.Cfg.withDefaults(), s: &n, at: eventTime(e)}
	st.handle(e)
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

func eventTime(e Event) time.Time {
	switch e := e.(type) {
	case TaskSubmitted:
		return e.At
	case ProjectSelected:
		return e.At
	case Resumed:
		return e.At
	case TriggerCompleted:
		return e.At
	case SubtaskDone:
		return e.At
	case AgentHealth:
		return e.At
	case InjectionResult:
		return e.At
	case TimerFired:
		return e.At
	case KeyPressed:
		return e.At
	case StateNotSaved:
		return e.At
	case ContextSubmitted:
		return e.At
	case CheckpointMerged:
		return e.At
	}
	return time.Time{}
}

// stepper holds one Step's working copy and collected effects.
type stepper struct {
	cfg     Config
	s       *State
	at      time.Time
	events  []Effect // AppendEvent
	actions []Effect
	notes   []Effect // NotifyUser
}

func (st *stepper) emit(typ, agent string, details map[string]any) {
	st.events = append(st.events, AppendEvent{Type: typ, Agent: agent, Details: details})
}

func (st *stepper) do(e Effect) { st.actions = append(st.actions, e) }

func (st *stepper) notify(level, msg string) {
	st.notes = append(st.notes, NotifyUser{Level: level, Message: msg})
}

// ---- phases ----

// running reports whether the workflow is under way in phase p: triggers
// and agent failures are acted on.
func running(p workspace.Phase) bool {
	switch p {
	case workspace.PhasePlanning, workspace.PhasePlanReview, workspace.PhasePlanRevision, workspace.PhasePlanApproval,
		workspace.PhaseExecuting, workspace.PhaseCheckpoint, workspace.PhaseCheckpointReview,
		workspace.PhaseCheckpointFix, workspace.PhaseFrictionLogged, workspace.PhaseFrictionSync,
		workspace.PhaseFrictionResolution:
		return true
	}
	return false
}

// final reports whether p ends the run (FinishedAt is set, timers dropped).
func final(p workspace.Phase) bool {
	return p == workspace.PhaseComplete || p == workspace.PhaseCancelled || p == workspace.PhaseError || p == workspace.PhaseNeedsHuman
}

// activeAgents returns the ● (write) and ○ (read-only) agents of phase p,
// from the spec's table.
func activeAgents(s *State, p workspace.Phase) (active, readOnly []string) {
	has := func(id string) bool { _, ok := s.Agents[id]; return ok }
	one := func(id string) []string {
		if has(id) {
			return []string{id}
		}
		return nil
	}
	switch p {
	case workspace.PhaseProjectSelected, workspace.PhasePlanning, workspace.PhasePlanRevision, workspace.PhaseFrictionResolution:
		return one("lead"), nil
	case workspace.PhasePlanReview, workspace.PhaseCheckpointReview:
		return one("reviewer"), nil
	case workspace.PhaseExecuting:
		return workerIDs(s), nil
	case workspace.PhaseCheckpoint:
		return nil, workerIDs(s)
	case workspace.PhaseCheckpointFix:
		active = one("lead")
		var ws []string
		for _, f := range s.Fixes {
			if f.Worker != "lead" && has(f.Worker) {
				ws = append(ws, f.Worker)
			}
		}
		sortAgents(ws)
		return append(active, dedupe(ws)...), nil
	case workspace.PhaseFrictionLogged, workspace.PhaseFrictionSync:
		return nil, allAgents(s)
	}
	return nil, nil
}

// enter moves the machine to phase p (recording the previous phase, the
// active agents and a state_changed event).
func (st *stepper) enter(p workspace.Phase) {
	s := st.s
	from := s.State
	if from == p {
		return
	}
	s.PreviousState = from
	s.State = p
	s.ActiveAgents, s.ReadOnlyAgents = activeAgents(s, p)
	if s.ActiveAgents == nil {
		s.ActiveAgents = []string{}
	}
	st.emit("state_changed", "", map[string]any{"from": string(from), "to": string(p)})
	if final(p) {
		s.FinishedAt = st.at
		st.cancelAllTimers()
	} else {
		s.FinishedAt = time.Time{}
	}
}

// ---- timers ----

func timeoutTimer(agent string) string { return "timeout:" + agent }
func restartTimer(agent string) string { return "restart:" + agent }

func (st *stepper) schedule(id string, d time.Duration) {
	if st.s.Timers == nil {
		st.s.Timers = map[string]workspace.Timer{}
	}
	st.s.Timers[id] = workspace.Timer{ID: id, Deadline: st.at.Add(d)}
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
	for _, id := range sortedKeys(st.s.Timers) {
		st.cancelTimer(id)
	}
}

// finishWork records that an agent finished its current work.
func (st *stepper) finishWork(agent string) {
	ag, ok := st.s.Agents[agent]
	if !ok {
		return
	}
	ag.Pending = false
	ag.Subtask = ""
	ag.Failures = 0
	ag.Stalls = 0
	st.s.Agents[agent] = ag
	st.cancelTimer(timeoutTimer(agent))
	st.cancelTimer(resendTimer(agent))
	st.cancelTimer(stallTimer(agent))
}

// ---- escalation ----

func (st *stepper) needsHuman(kind, reason string) {
	st.s.Escalation = kind
	st.s.Reason = reason
	st.enter(workspace.PhaseNeedsHuman)
	st.emit("needs_human", "", map[string]any{"escalation": kind, "reason": reason})
	st.notify("error", "Needs a human: "+firstLine(reason))
}

func (st *stepper) fail(kind, reason string) {
	st.s.Escalation = kind
	st.s.Reason = reason
	st.s.Error = reason
	st.enter(workspace.PhaseError)
	st.emit("error", "", map[string]any{"escalation": kind, "reason": reason})
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

func (st *stepper) handle(e Event) {
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
	case ContextSubmitted:
		st.contextSubmitted(e)
	case CheckpointMerged:
		st.checkpointMerged(e)
	}
}

// defer keeps e for handling on resume. Returns true when paused.
func (st *stepper) deferIfPaused(e Event) bool {
	if st.s.State != workspace.PhasePaused {
		return false
	}
	raw, err := MarshalEvent(e)
	if err != nil {
		return true
	}
	st.s.Deferred = append(st.s.Deferred, raw)
	st.emit("event_deferred", "", map[string]any{"event": eventType(e)})
	return true
}

func (st *stepper) taskSubmitted(e TaskSubmitted) {
	s := st.s
	switch s.State {
	case "", workspace.PhaseIdle, workspace.PhaseProjectSelected, workspace.PhaseComplete, workspace.PhaseCancelled:
	default:
		st.emit("task_ignored", "", map[string]any{"task": e.Task.ID, "reason": "a task is already running (" + string(s.State) + ")"})
		return
	}
	project := e.Task.Project
	if project == "" {
		project = s.Project
	}
	from := s.State
	if from == "" {
		from = workspace.PhaseIdle
	}
	*s = State{
		TaskID:       e.Task.ID,
		State:        from,
		Project:      project,
		TaskDir:      e.TaskDir,
		StartedAt:    e.At,
		PlanApproval: e.Task.PlanApproval,
		Subtasks:     map[string]workspace.SubtaskState{},
		Agents:       map[string]workspace.AgentState{},
	}
	workers := e.Task.Workers
	if workers <= 0 {
		workers = st.cfg.Workers
	}
	s.Agents["lead"] = workspace.AgentState{Role: workspace.RoleLead, Status: "starting"}
	s.Agents["reviewer"] = workspace.AgentState{Role: workspace.RoleReviewer, Status: "starting"}
	for i := 1; i <= workers; i++ {
		s.Agents[fmt.Sprintf("worker_%d", i)] = workspace.AgentState{Role: workspace.RoleWorker, Status: "starting"}
	}
	st.emit("task_submitted", "", map[string]any{"task": e.Task.ID, "project": project, "workers": workers})
	st.taskConstraints(e.Task)
	for _, id := range allAgents(s) {
		st.do(SpawnAgent{Agent: id, Role: s.Agents[id].Role})
		st.emit("agent_spawned", id, map[string]any{"role": s.Agents[id].Role})
	}
	st.enter(workspace.PhasePlanning)
	st.leadPlan()
}

func (st *stepper) projectSelected(e ProjectSelected) {
	s := st.s
	if s.State != "" && s.State != workspace.PhaseIdle && s.State != workspace.PhaseProjectSelected {
		st.emit("project_ignored", "", map[string]any{"project": e.Project, "reason": "a task is running (" + string(s.State) + ")"})
		return
	}
	s.Project = e.Project
	if s.State == "" {
		s.State = workspace.PhaseIdle
	}
	st.enter(workspace.PhaseProjectSelected)
	st.emit("project_selected", "", map[string]any{"project": e.Project})
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
	details := map[string]any{"state": string(s.State)}
	if len(e.OnDisk) > 0 {
		details["on_disk"] = len(e.OnDisk)
	}
	st.emit("resumed", "", details)
	switch s.State {
	case workspace.PhaseIdle, workspace.PhaseComplete, workspace.PhaseCancelled:
		st.takeOnDisk(e.OnDisk)
		return
	}
	for _, id := range allAgents(s) {
		ag := s.Agents[id]
		ag.Status = "starting"
		s.Agents[id] = ag
		st.do(SpawnAgent{Agent: id, Role: ag.Role, Resume: true})
	}
	// Every agent is being started, so pending restarts are moot; timeouts
	// are re-armed when the work is re-sent.
	for _, id := range sortedKeys(s.Timers) {
		if kind, _, _ := strings.Cut(id, ":"); kind == "restart" || kind == "timeout" || kind == "resend" || kind == "stall" {
			delete(s.Timers, id)
		}
	}
	if s.State == workspace.PhasePaused {
		var pending []string
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
	for _, id := range sortedKeys(s.Timers) {
		t := s.Timers[id]
		st.schedule(id, max(t.Deadline.Sub(st.at), 0))
	}
	// Answers already on disk first: an agent whose trigger file or done
	// marker is there is not asked again, and work they lead to is sent
	// once, fresh.
	sent := map[string]int{}
	for _, id := range allAgents(s) {
		sent[id] = s.Assignments[id].Seq
	}
	st.takeOnDisk(e.OnDisk)
	if e.Retry {
		st.key(KeyPressed{Action: KeyRetry, At: e.At})
	}
	if !running(s.State) {
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

// takeOnDisk handles the trigger files and done markers a restarted runner
// found complete on disk, in order, like events from the watcher.
func (st *stepper) takeOnDisk(evs []Event) {
	for _, ev := range evs {
		switch ev.(type) {
		case TriggerCompleted, SubtaskDone:
			st.handle(ev)
		}
	}
}

// ---- keys ----

func (st *stepper) key(e KeyPressed) {
	s := st.s
	ignore := func(reason string) {
		st.emit("key_ignored", "", map[string]any{"key": e.Action, "state": string(s.State), "reason": reason})
	}
	switch e.Action {
	case KeyPause:
		if !running(s.State) {
			ignore("nothing to pause")
			return
		}
		st.pause()
	case KeyResume:
		if s.State != workspace.PhasePaused {
			ignore("not paused")
			return
		}
		st.unpause()
	case KeyCancel:
		switch {
		case s.TaskID == "" || s.State == workspace.PhaseIdle || s.State == workspace.PhaseCancelled:
			ignore("nothing to cancel")
		case s.State == workspace.PhaseComplete:
			st.stopAll()
			st.emit("agents_stopped", "", nil)
		default:
			st.cancel()
		}
	case KeyRetry:
		if s.State != workspace.PhaseNeedsHuman && s.State != workspace.PhaseError {
			ignore("retry only applies to needs_human and error")
			return
		}
		st.retry()
	case KeyAbandon:
		if s.State != workspace.PhaseNeedsHuman && s.State != workspace.PhaseError {
			ignore("abandon only applies to needs_human and error")
			return
		}
		st.stopAll()
		st.cancelAllTimers()
		st.emit("abandoned", "", map[string]any{"state": string(s.State)})
		st.enter(workspace.PhaseIdle)
		// The task is over (workspace.State.Over): it ended now, though
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
	for _, id := range sortedKeys(s.Timers) {
		t := s.Timers[id]
		t.Left = max(t.Deadline.Sub(st.at), 0)
		t.Deadline = time.Time{}
		s.Timers[id] = t
		st.do(CancelTimer{ID: id})
	}
	st.enter(workspace.PhasePaused)
	st.emit("paused", "", map[string]any{"previous_state": string(s.PreviousState)})
	st.notify("info", "Paused")
}

// unpause returns to the phase before the pause, re-arms the timers with
// their remaining time, re-sends work of agents restarted meanwhile and
// handles the deferred events in order.
func (st *stepper) unpause() {
	s := st.s
	back := s.PreviousState
	if !running(back) {
		back = workspace.PhasePlanning // a state file edited by hand; planning is always safe
	}
	st.enter(back)
	for _, id := range sortedKeys(s.Timers) {
		t := s.Timers[id]
		left := t.Left
		t.Left = 0
		s.Timers[id] = t
		st.schedule(id, left)
	}
	st.emit("resumed_from_pause", "", map[string]any{"state": string(s.State), "deferred": len(s.Deferred)})
	st.notify("info", "Resumed")
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
			st.emit("deferred_event_dropped", "", map[string]any{"error": err.Error()})
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
	st.enter(workspace.PhaseCancelled)
	st.emit("cancelled", "", nil)
	st.notify("info", "Task cancelled")
}

// stateNotSaved stops new work when state.json cannot be written: the
// step's outside effects were dropped by the runner, so the run waits in
// needs_human, saying why, until a retry (which writes the state first).
func (st *stepper) stateNotSaved(e StateNotSaved) {
	s := st.s
	if s.TaskID == "" || (s.State == workspace.PhaseNeedsHuman && s.Escalation == "state_write") {
		return
	}
	for _, id := range sortedKeys(s.Timers) {
		st.cancelTimer(id)
	}
	st.needsHuman("state_write", fmt.Sprintf("state.json could not be written (%s); no new work is assigned until it can be. "+
		"Free disk space or fix the permissions, then retry (R in the TUI, or hivemind --resume --retry)", clip(e.Error, maxProblem)))
}

// retry gives a stuck run another go, according to what stopped it.
func (st *stepper) retry() {
	s := st.s
	kind := s.Escalation
	back := s.PreviousState
	s.Escalation, s.Reason, s.Error = "", "", ""
	st.emit("retry", "", map[string]any{"escalation": kind, "state": string(s.State)})
	switch {
	case (strings.HasPrefix(kind, "agent:") || strings.HasPrefix(kind, "stall:")) && s.State == workspace.PhaseNeedsHuman && running(back):
		// A failing agent is restarted; a stalled one is asked again.
		what, id, _ := strings.Cut(kind, ":")
		ag := s.Agents[id]
		ag.Failures, ag.Stalls = 0, 0
		s.Agents[id] = ag
		st.enter(back)
		if what == "agent" {
			st.restartNow(id)
		} else {
			st.resend(id)
		}
		st.scheduleWork()
	case strings.HasPrefix(kind, "fix:") && s.State == workspace.PhaseNeedsHuman && back == workspace.PhaseCheckpointFix:
		id := strings.TrimPrefix(kind, "fix:")
		f := s.Fixes[id]
		f.Attempts = 0
		s.Fixes[id] = f
		st.enter(back)
		st.resend(f.Worker)
	case strings.HasPrefix(kind, "subtask:") && s.State == workspace.PhaseNeedsHuman && running(back):
		id := strings.TrimPrefix(kind, "subtask:")
		sub := s.Subtasks[id]
		sub.Attempts = 0
		s.Subtasks[id] = sub
		st.enter(back)
		if w := sub.Worker; w != "" && s.Agents[w].Pending && s.Agents[w].Subtask == id {
			st.resend(w)
		} else if sub.Status != workspace.SubtaskDone {
			sub.Status = workspace.SubtaskPending
			sub.Worker = ""
			s.Subtasks[id] = sub
		}
		st.scheduleWork()
	case kind == "checkpoint_revisions" && s.State == workspace.PhaseNeedsHuman:
		s.FixRounds = 0
		st.reviewCheckpoint()
	case kind == "state_write" && s.State == workspace.PhaseNeedsHuman && running(back):
		// What the unsaved steps would have sent was dropped: send every
		// unfinished assignment again (after this state is written).
		st.enter(back)
		for _, id := range allAgents(s) {
			st.resend(id)
		}
		st.resumeMerge() // a merge requested by an unsaved step
		st.scheduleWork()
	case (kind == "git_merge" || kind == "merge_conflicts") && s.State == workspace.PhaseNeedsHuman:
		st.retryMerge()
	default:
		// Back to planning: a fresh plan, with all feedback so far.
		s.RevisionCount = 0
		s.InvalidPlans = 0
		for _, id := range allAgents(s) {
			ag := s.Agents[id]
			ag.Failures = 0
			s.Agents[id] = ag
			if ag.Pending && id != "lead" {
				st.finishWork(id)
			}
		}
		for id, sub := range s.Subtasks {
			if sub.Status == workspace.SubtaskInProgress {
				sub.Status = workspace.SubtaskPending
				sub.Worker = ""
				s.Subtasks[id] = sub
			}
		}
		s.Fixes = nil
		st.enter(workspace.PhasePlanning)
		st.leadPlan()
	}
}

// ---- triggers ----

// Trigger kinds (by path relative to the task dir).
const (
	trigPlan               = "plan.md"
	trigPlanApproved       = "plan-approved.md"
	trigPlanFeedback       = "plan-feedback.md"
	trigCheckpoint         = "checkpoint.md"
	trigCheckpointApproved = "checkpoint-approved.md"
	trigCheckpointIssues   = "checkpoint-issues.md"
	trigFrictionResolution = "friction-resolution.md"
	trigFriction           = "friction/"
)

// TriggerNames are the trigger files at the task dir root; friction files
// are friction/<name>.md.
var TriggerNames = []string{trigPlan, trigPlanApproved, trigPlanFeedback, trigCheckpoint,
	trigCheckpointApproved, trigCheckpointIssues, trigFrictionResolution, PlanDecisionFile}

func classify(p string) string {
	for _, n := range TriggerNames {
		if p == n {
			return n
		}
	}
	if strings.HasPrefix(p, trigFriction) && strings.HasSuffix(p, ".md") && len(p) > len(trigFriction)+3 {
		return trigFriction
	}
	return ""
}

// TriggerKey identifies one instance of a trigger file: its path, content
// hash and modification time. A consumed key never fires again.
func TriggerKey(p string, content []byte, mod time.Time) string {
	sum := sha256.Sum256(content)
	k := p + "@" + hex.EncodeToString(sum[:8])
	if !mod.IsZero() {
		k += "@" + mod.UTC().Format(time.RFC3339Nano)
	}
	return k
}

func (st *stepper) trigger(e TriggerCompleted) {
	s := st.s
	p := strings.TrimPrefix(path.Clean(strings.ReplaceAll(e.Path, "\\", "/")), "./")
	if s.TaskID == "" {
		st.emit("trigger_ignored", e.Agent, map[string]any{"path": p, "state": string(s.State), "reason": "no task"})
		return
	}
	if st.deferIfPaused(e) {
		return
	}
	key := TriggerKey(p, e.Content, e.ModTime)
	if e.Inode != 0 {
		key += fmt.Sprintf("@i%d", e.Inode)
	}
	if s.Consumed[key] {
		to := s.Archives[key]
		st.emit("trigger_duplicate", e.Agent, map[string]any{"path": p, "archived": to})
		if to != "" {
			st.do(ArchiveTrigger{From: p, To: to})
		}
		return
	}
	kind := classify(p)
	ph := s.State
	if e.Problem != "" && kind != "" {
		st.rejectTrigger(p, key, kind, e)
		return
	}
	switch {
	case kind == "":
		st.emit("trigger_ignored", e.Agent, map[string]any{"path": p, "state": string(ph), "reason": "not a trigger file"})
	case kind == trigPlan && (ph == workspace.PhasePlanning || ph == workspace.PhasePlanRevision):
		st.planSubmitted(p, key, e.Content)
	case kind == trigPlanApproved && ph == workspace.PhasePlanReview:
		st.planApproved(p, key, e.Content)
	case kind == trigPlanFeedback && ph == workspace.PhasePlanReview:
		st.planFeedbackIn(p, key, e.Content)
	case kind == PlanDecisionFile && ph == workspace.PhasePlanApproval:
		st.planDecision(p, key, e.Content)
	case kind == trigCheckpoint && (ph == workspace.PhaseExecuting || ph == workspace.PhaseCheckpointFix):
		st.checkpointWritten(p, key)
	case kind == trigCheckpointApproved && ph == workspace.PhaseCheckpointReview:
		st.checkpointApproved(p, key, e.Content)
	case kind == trigCheckpointIssues && ph == workspace.PhaseCheckpointReview:
		st.checkpointIssues(p, key, e.Content)
	case kind == trigFrictionResolution && ph == workspace.PhaseFrictionResolution:
		st.frictionResolved(p, key)
	case kind == trigFriction && ph != workspace.PhaseIdle && ph != workspace.PhaseComplete && ph != workspace.PhaseCancelled:
		st.frictionLogged(p, key, e.Agent, e.Content)
	default:
		st.ignoreTrigger(p, key, e.Agent, fmt.Sprintf("%s means nothing in state %s", p, ph))
	}
}

// triggerWriter is the agent expected to write a trigger of kind ("" when
// any agent may).
func triggerWriter(kind string) string {
	switch kind {
	case trigPlan, trigFrictionResolution:
		return "lead"
	case trigPlanApproved, trigPlanFeedback, trigCheckpointApproved, trigCheckpointIssues:
		return "reviewer"
	}
	return ""
}

// rejectTrigger handles a trigger file that cannot be read (a symlink, a
// directory, too large: e.Problem). It is never archived (it may not be a
// file) but recorded as consumed, so this instance does not fire again;
// its writer is told what to fix. An unreadable plan.md counts as an
// invalid plan (bounded by max_revision_cycles); any other trigger's
// writer gets its work re-sent with the problem, under the retry policy.
func (st *stepper) rejectTrigger(p, key, kind string, e TriggerCompleted) {
	s := st.s
	if s.Consumed == nil {
		s.Consumed = map[string]bool{}
	}
	s.Consumed[key] = true
	problem := clip(e.Problem, maxProblem)
	st.emit("trigger_rejected", e.Agent, map[string]any{"path": p, "state": string(s.State), "problem": problem})
	writer := triggerWriter(kind)
	if kind == trigPlan && (s.State == workspace.PhasePlanning || s.State == workspace.PhasePlanRevision) {
		s.InvalidPlans++
		if s.InvalidPlans >= st.cfg.MaxRevisionCycles {
			st.needsHuman("plan_invalid", fmt.Sprintf("The Lead wrote %d invalid plans in a row (max_revision_cycles=%d). Last problem: %s",
				s.InvalidPlans, st.cfg.MaxRevisionCycles, problem))
			return
		}
		st.leadPlanInvalid("", []Problem{{Msg: problem}})
		return
	}
	ag, ok := s.Agents[writer]
	if !ok || !ag.Pending || !running(s.State) {
		st.notify("warn", firstLine(problem))
		return
	}
	a := s.Assignments[writer]
	a.Rejected = problem
	s.Assignments[writer] = a
	ag.Failures++
	s.Agents[writer] = ag
	st.retryWork(st.cfg.resendPolicy(), writer, "agent:"+writer, fmt.Sprintf("%s: %s", writer, problem), ag.Failures)
}

// consume records the trigger as handled and archives it to reviews/.
func (st *stepper) consume(p, key, to string) {
	s := st.s
	if s.Consumed == nil {
		s.Consumed = map[string]bool{}
	}
	if s.Archives == nil {
		s.Archives = map[string]string{}
	}
	s.Consumed[key] = true
	s.Archives[key] = to
	st.do(ArchiveTrigger{From: p, To: to})
}

// version increments and returns the archive counter of kind.
func (st *stepper) version(kind string) int {
	if st.s.Versions == nil {
		st.s.Versions = map[string]int{}
	}
	st.s.Versions[kind]++
	return st.s.Versions[kind]
}

// ignoreTrigger archives a trigger that means nothing now as
// reviews/ignored_v<n>-<path with / as _>, so it cannot fire later, at a
// wrong time, and stays readable.
func (st *stepper) ignoreTrigger(p, key, agent, reason string) {
	to := fmt.Sprintf("%s/ignored_v%d-%s", workspace.ReviewsDir, st.version("ignored"), strings.ReplaceAll(p, "/", "_"))
	st.consume(p, key, to)
	st.emit("trigger_ignored", agent, map[string]any{"path": p, "state": string(st.s.State), "reason": reason, "archived": to})
}

func (st *stepper) consumed(p, to, agent string) {
	st.emit("trigger_consumed", agent, map[string]any{"path": p, "state": string(st.s.State), "archived": to})
}

func (st *stepper) planSubmitted(p, key string, content []byte) {
	s := st.s
	plan, probs := ParsePlan(content, s.Project)
	if len(probs) > 0 {
		to := fmt.Sprintf("%s/plan_v%d-invalid.md", workspace.ReviewsDir, st.version("plan-invalid"))
		st.consume(p, key, to)
		msgs := make([]string, len(probs))
		for i, pr := range probs {
			msgs[i] = pr.String()
		}
		st.emit("plan_invalid", "lead", map[string]any{"archived": to, "problems": msgs})
		s.InvalidPlans++
		if s.InvalidPlans >= st.cfg.MaxRevisionCycles {
			st.needsHuman("plan_invalid", fmt.Sprintf("The Lead wrote %d invalid plans in a row (max_revision_cycles=%d). Last problems (%s):\n- %s",
				s.InvalidPlans, st.cfg.MaxRevisionCycles, to, strings.Join(msgs, "\n- ")))
			return
		}
		st.leadPlanInvalid(to, probs)
		return
	}
	v := st.version("plan")
	to := fmt.Sprintf("%s/plan_v%d.md", workspace.ReviewsDir, v)
	st.consume(p, key, to)
	st.consumed(p, to, "lead")
	s.InvalidPlans = 0
	s.Plan = &plan
	s.PlanFile = to
	s.ReviewSubject = fmt.Sprintf("plan_v%d", v)
	s.ResolutionFile = ""
	s.TotalCheckpoints = len(plan.Checkpoints)
	st.emit("plan_submitted", "lead", map[string]any{"version": v, "checkpoints": len(plan.Checkpoints), "subtasks": len(plan.Subtasks)})
	st.finishWork("lead")
	st.enter(workspace.PhasePlanReview)
	st.reviewerPlan()
}

func (st *stepper) reviewSubject() string {
	if st.s.ReviewSubject != "" {
		return st.s.ReviewSubject
	}
	return fmt.Sprintf("plan_v%d", st.s.Versions["plan"])
}

func (st *stepper) planRound(verdict, archived string, content []byte) {
	n := 1
	for _, r := range st.s.Rounds {
		if r.Kind == "plan" {
			n++
		}
	}
	st.s.Rounds = append(st.s.Rounds, workspace.Round{Kind: "plan", Number: n, Verdict: verdict, Archived: archived, Summary: summarize(content), At: st.at})
}

func (st *stepper) planApproved(p, key string, content []byte) {
	s := st.s
	to := fmt.Sprintf("%s/%s-approved.md", workspace.ReviewsDir, st.reviewSubject())
	st.consume(p, key, to)
	st.consumed(p, to, "reviewer")
	st.planRound("approved", to, content)
	st.emit("plan_approved", "reviewer", map[string]any{"subject": st.reviewSubject()})
	st.finishWork("reviewer")
	if st.gatePlan() {
		return
	}
	s.FrictionActive = nil
	s.ResolutionFile = ""
	s.ReviewSubject = ""
	st.startExecution()
}

// startExecution (re)starts building after a plan approval: subtasks keep
// their progress when their id is still in the plan.
func (st *stepper) startExecution() {
	s := st.s
	subs := map[string]workspace.SubtaskState{}
	for _, sub := range s.Plan.Subtasks {
		if old, ok := s.Subtasks[sub.ID]; ok && old.Status != workspace.SubtaskFailed {
			subs[sub.ID] = old
			continue
		}
		subs[sub.ID] = workspace.SubtaskState{Status: workspace.SubtaskPending}
	}
	s.Subtasks = subs
	st.advance()
}

// advance goes to the next checkpoint with work left, or completes.
func (st *stepper) advance() {
	s := st.s
	next := nextCheckpoint(s)
	if next == 0 {
		st.complete()
		return
	}
	if next != s.CurrentCheckpoint {
		s.FixRounds = 0
		s.CheckpointFile = ""
		s.IssuesFile = ""
		s.Fixes = nil
	}
	s.CurrentCheckpoint = next
	st.enter(workspace.PhaseExecuting)
	st.emit("checkpoint_started", "", map[string]any{"checkpoint": next, "name": st.checkpointName(next)})
	st.scheduleWork()
}

func (st *stepper) complete() {
	s := st.s
	st.enter(workspace.PhaseComplete)
	done := 0
	for _, sub := range s.Subtasks {
		if sub.Status == workspace.SubtaskDone {
			done++
		}
	}
	st.emit("task_complete", "", map[string]any{"subtasks": done, "revisions": s.RevisionCount, "friction": s.FrictionCount})
	st.notify("info", fmt.Sprintf("Task complete: %d subtasks, %d checkpoints, %d plan revision(s)", done, s.TotalCheckpoints, s.RevisionCount))
}

func (st *stepper) planFeedbackIn(p, key string, content []byte) {
	s := st.s
	to := fmt.Sprintf("%s/%s-feedback.md", workspace.ReviewsDir, st.reviewSubject())
	st.consume(p, key, to)
	st.consumed(p, to, "reviewer")
	st.planRound("feedback", to, content)
	s.RevisionCount++
	st.emit("plan_feedback", "reviewer", map[string]any{"subject": st.reviewSubject(), "revision": s.RevisionCount})
	st.finishWork("reviewer")
	if s.RevisionCount >= st.cfg.MaxRevisionCycles {
		st.needsHuman("plan_revisions", fmt.Sprintf("The plan was sent back %d times (max_revision_cycles=%d); the Lead and the Reviewer do not agree. Rounds:%s",
			s.RevisionCount, st.cfg.MaxRevisionCycles, st.roundsSummary("plan", 0)))
		return
	}
	st.enter(workspace.PhasePlanRevision)
	st.leadRevise("The reviewer", to)
}

func checkpointKey(cp int) string { return fmt.Sprintf("checkpoint_%d", cp) }

// checkpointWritten handles checkpoint.md in executing or checkpoint_fix.
func (st *stepper) checkpointWritten(p, key string) {
	s := st.s
	cp := s.CurrentCheckpoint
	to := fmt.Sprintf("%s/checkpoint_%d_v%d.md", workspace.ReviewsDir, cp, s.Versions[checkpointKey(cp)]+1)
	st.consume(p, key, to)
	st.consumed(p, to, "")
	s.CheckpointFile = to
	st.reachCheckpoint()
}

// reachCheckpoint: checkpoint (workers told, read-only) → checkpoint_review
// (automatic). Fixers still at work are released: the review supersedes.
func (st *stepper) reachCheckpoint() {
	s := st.s
	for _, id := range sortedKeys(s.Fixes) {
		f := s.Fixes[id]
		if f.Status != workspace.SubtaskDone {
			if ag, ok := s.Agents[f.Worker]; ok && ag.Pending {
				if a, ok := s.Assignments[f.Worker]; ok && a.DoneMarker != "" && strings.HasSuffix(a.DoneMarker, id+".done") {
					st.finishWork(f.Worker)
				}
			}
		}
	}
	st.enter(workspace.PhaseCheckpoint)
	cp := s.CurrentCheckpoint
	st.emit("checkpoint_reached", "", map[string]any{"checkpoint": cp})
	for _, w := range workerIDs(s) {
		if s.Agents[w].Pending {
			continue // still working on a subtask; do not interrupt it
		}
		reads := []string{s.PlanFile}
		if s.CheckpointFile != "" {
			reads = append(reads, s.CheckpointFile)
		}
		st.notice(w, fmt.Sprintf("Checkpoint %d (%s) reached; the Reviewer is reviewing it", cp, st.checkpointName(cp)),
			"Stand by: you will get fix work if the reviewer finds issues in your files, or your next subtask.", reads)
	}
	if st.cfg.Git {
		// Merge the workers' branches first; the review starts on
		// CheckpointMerged (merge.go).
		st.requestMerge()
		return
	}
	st.reviewCheckpoint()
}

// reviewCheckpoint starts a new review round of the current checkpoint.
func (st *stepper) reviewCheckpoint() {
	st.version(checkpointKey(st.s.CurrentCheckpoint))
	st.enter(workspace.PhaseCheckpointReview)
	st.reviewerCheckpoint()
}

func (st *stepper) checkpointRound(verdict, archived string, content []byte) {
	cp := st.s.CurrentCheckpoint
	st.s.Rounds = append(st.s.Rounds, workspace.Round{Kind: "checkpoint", Checkpoint: cp, Number: st.s.Versions[checkpointKey(cp)],
		Verdict: verdict, Archived: archived, Summary: summarize(content), At: st.at})
}

func (st *stepper) checkpointApproved(p, key string, content []byte) {
	s := st.s
	cp := s.CurrentCheckpoint
	to := fmt.Sprintf("%s/checkpoint_%d_v%d-approved.md", workspace.ReviewsDir, cp, s.Versions[checkpointKey(cp)])
	st.consume(p, key, to)
	st.consumed(p, to, "reviewer")
	st.checkpointRound("approved", to, content)
	st.emit("checkpoint_approved", "reviewer", map[string]any{"checkpoint": cp})
	st.finishWork("reviewer")
	s.FixRounds = 0
	s.Fixes = nil
	s.CheckpointFile = ""
	s.IssuesFile = ""
	if len(s.FrictionPending) > 0 {
		st.startFriction()
		return
	}
	st.advance()
}

func (st *stepper) checkpointIssues(p, key string, content []byte) {
	s := st.s
	cp := s.CurrentCheckpoint
	round := s.Versions[checkpointKey(cp)]
	to := fmt.Sprintf("%s/checkpoint_%d_v%d-issues.md", workspace.ReviewsDir, cp, round)
	st.consume(p, key, to)
	st.consumed(p, to, "reviewer")
	st.checkpointRound("issues", to, content)
	s.FixRounds++
	s.IssuesFile = to
	st.emit("checkpoint_issues", "reviewer", map[string]any{"checkpoint": cp, "round": round})
	st.finishWork("reviewer")
	if s.FixRounds >= st.cfg.MaxRevisionCycles {
		st.needsHuman("checkpoint_revisions", fmt.Sprintf("Checkpoint %d was sent back %d times (max_revision_cycles=%d). Rounds:%s",
			cp, s.FixRounds, st.cfg.MaxRevisionCycles, st.roundsSummary("checkpoint", cp)))
		return
	}
	ws, files := fixers(s, cp, content)
	s.Fixes = map[string]workspace.SubtaskState{}
	agents := []string{}
	if _, ok := s.Agents["lead"]; ok && !s.Agents["lead"].Pending {
		agents = append(agents, "lead")
	}
	agents = append(agents, ws...)
	for _, a := range agents {
		s.Fixes[fixID(cp, round, a)] = workspace.SubtaskState{Status: workspace.SubtaskInProgress, Worker: a, StartedAt: st.at}
	}
	st.enter(workspace.PhaseCheckpointFix)
	st.emit("fix_started", "", map[string]any{"checkpoint": cp, "round": round, "agents": agents})
	for _, a := range agents {
		st.fixAssignment(a, fixID(cp, round, a), files[a])
	}
	if len(agents) == 0 {
		// Nobody can fix now (everyone busy): review again when work ends.
		st.reviewCheckpoint()
	}
}

func (st *stepper) frictionLogged(p, key, agent string, content []byte) {
	s := st.s
	name := strings.TrimSuffix(strings.ReplaceAll(strings.TrimPrefix(p, trigFriction), "/", "_"), ".md")
	to := fmt.Sprintf("%s/friction_v%d-%s.md", workspace.ReviewsDir, st.version("friction"), name)
	st.consume(p, key, to)
	s.FrictionCount++
	s.Friction = append(s.Friction, to)
	s.FrictionPending = append(s.FrictionPending, to)
	st.emit("friction_recorded", agent, map[string]any{"path": p, "archived": to, "summary": summarize(content), "count": s.FrictionCount})
}

// startFriction runs friction_logged → friction_sync (everyone told; the
// Lead's notice is folded into its resolution assignment, so two messages do
// not race for assignments/lead.json) → friction_resolution.
func (st *stepper) startFriction() {
	s := st.s
	s.FrictionActive = s.FrictionPending
	s.FrictionPending = nil
	st.enter(workspace.PhaseFrictionLogged)
	st.emit("friction_flow_started", "", map[string]any{"files": s.FrictionActive})
	st.enter(workspace.PhaseFrictionSync)
	for _, id := range allAgents(s) {
		if id == "lead" || s.Agents[id].Pending {
			continue
		}
		st.notice(id, fmt.Sprintf("Friction was logged (%d file(s)); the Lead will propose fixes", len(s.FrictionActive)),
			"Read the friction files so you know the problems and avoid them.", s.FrictionActive)
	}
	st.enter(workspace.PhaseFrictionResolution)
	st.leadFrictionResolution()
}

func (st *stepper) frictionResolved(p, key string) {
	s := st.s
	v := st.version("friction-resolution")
	to := fmt.Sprintf("%s/friction-resolution_v%d.md", workspace.ReviewsDir, v)
	st.consume(p, key, to)
	st.consumed(p, to, "lead")
	s.ResolutionFile = to
	s.ReviewSubject = fmt.Sprintf("friction-resolution_v%d", v)
	st.finishWork("lead")
	st.enter(workspace.PhasePlanReview)
	st.reviewerPlan()
}

// ---- subtasks ----

func (st *stepper) subtaskDone(e SubtaskDone) {
	s := st.s
	if s.TaskID == "" {
		return
	}
	if st.deferIfPaused(e) {
		return
	}
	if f, ok := s.Fixes[e.Subtask]; ok {
		st.fixDone(e, f)
		return
	}
	sub, ok := s.Subtasks[e.Subtask]
	if !ok {
		st.emit("subtask_done_ignored", e.Agent, map[string]any{"subtask": e.Subtask, "reason": "unknown subtask"})
		for _, id := range allAgents(s) {
			if a := s.Agents[id]; a.Pending && a.Subtask == e.Subtask {
				st.finishWork(id)
			}
		}
		return
	}
	if sub.Status == workspace.SubtaskDone {
		return // seen before (e.g. a rescan after restart)
	}
	worker := sub.Worker
	if worker == "" {
		worker = e.Agent
	}
	if sub.Status != workspace.SubtaskInProgress || worker == "" {
		// A marker only counts for an assignment that is outstanding: one
		// written before its subtask was assigned (a later checkpoint's,
		// say) must not mark it done, or the work would never be done.
		// It is moved aside so it cannot count later either (after a
		// restart's rescan, once the subtask is assigned).
		to := fmt.Sprintf("%s/ignored_v%d-%s_%s.done", workspace.ReviewsDir, st.version("ignored"), workspace.OutputsDir, e.Subtask)
		st.do(ArchiveTrigger{From: workspace.OutputsDir + "/" + e.Subtask + ".done", To: to})
		st.emit("subtask_done_ignored", e.Agent, map[string]any{"subtask": e.Subtask,
			"reason":   fmt.Sprintf("subtask %s is %s, not assigned to anyone: its done marker counts only once it is assigned", e.Subtask, sub.Status),
			"problem":  clip(e.Problem, maxProblem),
			"archived": to})
		return
	}
	if !e.OK {
		problem := clip(e.Problem, maxProblem)
		sub.Attempts++
		s.Subtasks[e.Subtask] = sub
		st.emit("subtask_rejected", worker, map[string]any{"subtask": e.Subtask, "problem": problem, "attempts": sub.Attempts})
		reason := fmt.Sprintf("Subtask %s was completed invalidly by %s; last problem: %s", e.Subtask, worker, problem)
		p := st.cfg.resendPolicy()
		if _, ok := p.Retry(sub.Attempts); !ok {
			st.retryWork(p, worker, "subtask:"+e.Subtask, reason, sub.Attempts) // escalates
			return
		}
		if !running(s.State) || s.Plan == nil {
			return
		}
		for _, ps := range s.Plan.Subtasks {
			if ps.ID == e.Subtask {
				// The new assignment names the problem; it is sent now or
				// after the backoff.
				st.workerSubtask(worker, ps, problem, true)
				st.retryWork(p, worker, "subtask:"+e.Subtask, reason, sub.Attempts)
			}
		}
		return
	}
	sub.Status = workspace.SubtaskDone
	sub.Worker = worker
	sub.CompletedAt = st.at
	s.Subtasks[e.Subtask] = sub
	st.emit("subtask_done", worker, map[string]any{"subtask": e.Subtask})
	for _, id := range allAgents(s) {
		if a := s.Agents[id]; a.Subtask == e.Subtask {
			st.finishWork(id)
		}
	}
	st.scheduleWork()
}

func (st *stepper) fixDone(e SubtaskDone, f workspace.SubtaskState) {
	s := st.s
	if f.Status == workspace.SubtaskDone {
		return
	}
	if !e.OK && isMergeFix(e.Subtask) {
		st.mergeFixRejected(e, f)
		return
	}
	if !e.OK {
		problem := clip(e.Problem, maxProblem)
		f.Attempts++
		s.Fixes[e.Subtask] = f
		st.emit("fix_rejected", f.Worker, map[string]any{"fix": e.Subtask, "problem": problem, "attempts": f.Attempts})
		if s.State != workspace.PhaseCheckpointFix {
			return
		}
		if a, ok := s.Assignments[f.Worker]; ok && strings.HasSuffix(a.DoneMarker, e.Subtask+".done") {
			a.Rejected = problem
			s.Assignments[f.Worker] = a
		}
		st.retryWork(st.cfg.resendPolicy(), f.Worker, "fix:"+e.Subtask,
			fmt.Sprintf("Fix %s was completed invalidly by %s; last problem: %s", e.Subtask, f.Worker, problem), f.Attempts)
		return
	}
	f.Status = workspace.SubtaskDone
	f.CompletedAt = st.at
	s.Fixes[e.Subtask] = f
	st.emit("fix_done", f.Worker, map[string]any{"fix": e.Subtask})
	if a, ok := s.Assignments[f.Worker]; ok && strings.HasSuffix(a.DoneMarker, e.Subtask+".done") {
		st.finishWork(f.Worker)
	}
	if s.State != workspace.PhaseCheckpointFix {
		return
	}
	for _, x := range s.Fixes {
		if x.Status != workspace.SubtaskDone {
			return
		}
	}
	s.CheckpointFile = ""
	st.reachCheckpoint()
}

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
	if ag.Status == "restarting" && (h == "exited" || h == "crashed") {
		// The runner stopping the agent for our own restart.
		s.Agents[e.Agent] = ag
		return
	}
	if h != "hang_warning" {
		ag.Status = h
	}
	s.Agents[e.Agent] = ag
	switch h {
	case "exited", "crashed", "hung":
		if st.deferIfPaused(e) {
			return
		}
	}
	if prev == "rate_limited" && (h == "idle" || h == "ready") && ag.Pending {
		// A turn that failed on a rate limit (Claude Code gave up and
		// reported StopFailure) produced nothing: once the limit has
		// cleared, send the pending work again (on resume when paused).
		switch {
		case s.State == workspace.PhasePaused:
			s.Resend = dedupe(append(s.Resend, e.Agent))
		case running(s.State):
			// Bounded like every retry: a limit that keeps coming back
			// ends in needs_human, not an endless run of paid turns.
			ag.Failures++
			s.Agents[e.Agent] = ag
			st.emit("agent_rate_limit_cleared", e.Agent, map[string]any{"resend": true, "attempt": ag.Failures})
			if !st.retryWork(st.cfg.resendPolicy(), e.Agent, "agent:"+e.Agent,
				fmt.Sprintf("Agent %s's turn failed on a rate limit %d times in a row", e.Agent, ag.Failures), ag.Failures) {
				return
			}
		}
	}
	if !running(s.State) {
		return
	}
	switch h {
	case "idle", "ready":
		st.watchStall(e.Agent)
	case "busy":
		st.cancelTimer(stallTimer(e.Agent))
	}
	switch h {
	case "exited", "crashed":
		st.emit("agent_exited", e.Agent, map[string]any{"exit_code": e.ExitCode, "detail": e.Detail})
		why := fmt.Sprintf("exited (code %d)", e.ExitCode)
		// The agent layer's detail may quote what the agent said last.
		if more := strings.TrimLeft(strings.TrimPrefix(e.Detail, fmt.Sprintf("exit code %d", e.ExitCode)), "; "); more != "" {
			why += ": " + more
		}
		st.failAgent(e.Agent, why, false)
	case "hung":
		if ag.Pending {
			st.emit("agent_hung", e.Agent, map[string]any{"detail": e.Detail})
			st.failAgent(e.Agent, "hung", true)
		}
	case "hang_warning":
		if ag.Pending {
			st.emit("agent_hang_warning", e.Agent, map[string]any{"detail": e.Detail})
			st.notify("warn", fmt.Sprintf("%s has shown no sign of life for a while", e.Agent))
		}
	case "waiting_permission":
		st.emit("agent_waiting_permission", e.Agent, map[string]any{"detail": e.Detail})
		st.notify("warn", fmt.Sprintf("%s is waiting for a permission answer", e.Agent))
	case "rate_limited":
		st.emit("agent_rate_limited", e.Agent, map[string]any{"detail": e.Detail})
	}
}

// failAgent handles a crash, hang or timeout: restart after the backoff
// (or now), past max_retries consecutive failures → needs_human.
func (st *stepper) failAgent(id, why string, immediate bool) {
	s := st.s
	if _, pending := s.Timers[restartTimer(id)]; pending {
		return
	}
	ag := s.Agents[id]
	ag.Failures++
	s.Agents[id] = ag
	d, ok := st.cfg.restartPolicy().Retry(ag.Failures)
	if !ok {
		st.needsHuman("agent:"+id, fmt.Sprintf("Agent %s failed %d times in a row (last: %s); max_retries=%d", id, ag.Failures, why, st.cfg.MaxRetries))
		return
	}
	st.cancelTimer(timeoutTimer(id))
	if immediate || d <= 0 {
		st.restartNow(id)
		return
	}
	st.schedule(restartTimer(id), d)
	st.emit("agent_restart_scheduled", id, map[string]any{"after": d.String(), "reason": why, "attempt": ag.Failures})
}

func stallTimer(agent string) string { return "stall:" + agent }

// watchStall arms the agent's stall timer when it sits idle with work it
// has received (the assignment was delivered) and not finished.
func (st *stepper) watchStall(id string) {
	s := st.s
	ag := s.Agents[id]
	if !running(s.State) || !ag.Pending || ag.Delivered < ag.LastSeq || (ag.Status != "idle" && ag.Status != "ready") {
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
func (st *stepper) stalled(id string) {
	s := st.s
	ag, ok := s.Agents[id]
	if !ok || !ag.Pending || (ag.Status != "idle" && ag.Status != "ready") {
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
	st.emit("agent_stalled", id, map[string]any{"after": st.cfg.StallTimeout.String(), "stalls": ag.Stalls, "seq": a.Seq})
	p := RetryPolicy{Attempts: 1} // one reminder
	if _, again := p.Retry(ag.Stalls); again {
		a.Rejected = fmt.Sprintf("You went idle without writing %s. Do the assignment now and write it.", want)
		s.Assignments[id] = a
	}
	st.retryWork(p, id, "stall:"+id, reason, ag.Stalls)
}

// restartNow restarts the agent (session kept) and re-sends its work.
func (st *stepper) restartNow(id string) {
	s := st.s
	ag, ok := s.Agents[id]
	if !ok {
		return
	}
	ag.Restarts++
	ag.Status = "restarting"
	s.Agents[id] = ag
	st.cancelTimer(restartTimer(id))
	st.cancelTimer(timeoutTimer(id))
	st.do(RestartAgent{Agent: id, Role: ag.Role})
	st.emit("agent_restarted", id, map[string]any{"restarts": ag.Restarts})
	st.resend(id)
}

func (st *stepper) injection(e InjectionResult) {
	s := st.s
	ag, ok := s.Agents[e.Agent]
	if ok && e.Cancelled {
		st.emit("injection_cancelled", e.Agent, map[string]any{"seq": e.Seq, "detail": e.Detail})
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
	if !ok || e.Delivered || e.Seq != ag.LastSeq || !ag.Pending || !running(s.State) {
		return
	}
	if st.deferIfPaused(e) {
		return
	}
	st.emit("injection_failed", e.Agent, map[string]any{"seq": e.Seq, "detail": e.Detail})
	st.failAgent(e.Agent, "message not delivered: "+e.Detail, false)
}

func (st *stepper) timerFired(e TimerFired) {
	s := st.s
	if _, ok := s.Timers[e.ID]; !ok || s.State == workspace.PhasePaused {
		return // stale, or frozen by a pause (re-armed on resume)
	}
	delete(s.Timers, e.ID)
	kind, agent, _ := strings.Cut(e.ID, ":")
	st.emit("timer_fired", agent, map[string]any{"timer": e.ID})
	if !running(s.State) {
		return
	}
	switch kind {
	case "restart":
		st.restartNow(agent)
	case "timeout":
		if s.Agents[agent].Pending {
			st.emit("agent_timeout", agent, map[string]any{"after": st.cfg.AgentTimeout.String()})
			st.failAgent(agent, "timed out after "+st.cfg.AgentTimeout.String(), true)
		}
	case "resend":
		st.resend(agent)
	case "stall":
		st.stalled(agent)
	}
}

// ---- event encoding ----

// eventDecoders decode the body of an encoded event, by its type tag.
var eventDecoders = map[string]func([]byte) (Event, error){
	"task_submitted":    decodeEvent[TaskSubmitted],
	"project_selected":  decodeEvent[ProjectSelected],
	"resumed":           decodeEvent[Resumed],
	"trigger_completed": decodeEvent[TriggerCompleted],
	"subtask_done":      decodeEvent[SubtaskDone],
	"agent_health":      decodeEvent[AgentHealth],
	"injection_result":  decodeEvent[InjectionResult],
	"timer_fired":       decodeEvent[TimerFired],
	"key_pressed":       decodeEvent[KeyPressed],
	"state_not_saved":   decodeEvent[StateNotSaved],
	"context_submitted": decodeEvent[ContextSubmitted],
	"checkpoint_merged": decodeEvent[CheckpointMerged],
}

func decodeEvent[E Event](data []byte) (Event, error) {
	var e E
	err := json.Unmarshal(data, &e)
	return e, err
}

func eventType(e Event) string {
	switch e.(type) {
	case TaskSubmitted:
		return "task_submitted"
	case ProjectSelected:
		return "project_selected"
	case Resumed:
		return "resumed"
	case TriggerCompleted:
		return "trigger_completed"
	case SubtaskDone:
		return "subtask_done"
	case AgentHealth:
		return "agent_health"
	case InjectionResult:
		return "injection_result"
	case TimerFired:
		return "timer_fired"
	case KeyPressed:
		return "key_pressed"
	case StateNotSaved:
		return "state_not_saved"
	case ContextSubmitted:
		return "context_submitted"
	case CheckpointMerged:
		return "checkpoint_merged"
	}
	return ""
}

// resumedJSON is Resumed as JSON: OnDisk as MarshalEvent envelopes.
type resumedJSON struct {
	At     time.Time
	Retry  bool              `json:",omitempty"`
	OnDisk []json.RawMessage `json:",omitempty"`
}

// MarshalJSON encodes OnDisk with MarshalEvent, so it decodes back.
func (e Resumed) MarshalJSON() ([]byte, error) {
	raw, err := marshalEvents(e.OnDisk)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resumedJSON{At: e.At, Retry: e.Retry, OnDisk: raw})
}

// UnmarshalJSON reverses MarshalJSON.
func (e *Resumed) UnmarshalJSON(data []byte) error {
	var w resumedJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	evs, err := unmarshalEvents(w.OnDisk)
	if err != nil {
		return err
	}
	*e = Resumed{At: w.At, Retry: w.Retry, OnDisk: evs}
	return nil
}

func marshalEvents(evs []Event) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, ev := range evs {
		raw, err := MarshalEvent(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func unmarshalEvents(raw []json.RawMessage) ([]Event, error) {
	var out []Event
	for _, r := range raw {
		ev, err := UnmarshalEvent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

type eventEnvelope struct {
	Type  string          `json:"type"`
	Event json.RawMessage `json:"event"`
}

// MarshalEvent encodes an event as {"type": "<tag>", "event": {...}}, one
// line of JSON (the replay and deferred-event format).
func MarshalEvent(e Event) ([]byte, error) {
	t := eventType(e)
	if t == "" {
		return nil, fmt.Errorf("engine: marshal event: unknown event %T", e)
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("engine: marshal %s: %w", t, err)
	}
	return json.Marshal(eventEnvelope{Type: t, Event: body})
}

// UnmarshalEvent decodes what MarshalEvent produced.
func UnmarshalEvent(data []byte) (Event, error) {
	var env eventEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("engine: unmarshal event: %w", err)
	}
	decode, ok := eventDecoders[env.Type]
	if !ok {
		return nil, fmt.Errorf("engine: unmarshal event: unknown type %q", env.Type)
	}
	e, err := decode(env.Event)
	if err != nil {
		return nil, fmt.Errorf("engine: unmarshal %s: %w", env.Type, err)
	}
	return e, nil
}
