package flow

import (
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

// Event is a fact the engine reacts to. The set is sealed (unexported
// methods): adding an event means writing its type and methods here, listing
// it in eventKinds (codec.go) and handling it in stepper.handle (step.go);
// the compiler asks for the methods, `make lint` (gochecksumtype) for the
// handler and TestEventCodecsRoundTrip for the registration.
//
//sumtype:decl
type Event interface {
	// Kind names the event in both encodings: MarshalEvent's "type" and
	// events.jsonl's "input.<kind>".
	Kind() string
	// Time is when the event happened (zero until the runner stamps it).
	Time() time.Time
	// withTime returns the event with its time set to at.
	withTime(at time.Time) Event
	// gate is what Step does with the event before its handler runs.
	gate() gate
	// toWire fills the details of the events.jsonl record and returns the
	// record's agent; fromWire (called on the zero value) reverses it.
	toWire(w *eventWire) (agent string)
	fromWire(w *eventWire, agent string, at time.Time) (Event, error)
}

// gate is an event's policy before its handler runs.
type gate int

const (
	// gateNone: the handler sees the event in every state.
	gateNone gate = iota
	// gateTask: without a task the event is dropped (stepper.noTask says
	// so where it matters); while paused it is deferred to the resume.
	gateTask
)

// stamp fills a zero time with now.
func stamp(e Event, now time.Time) Event {
	if e.Time().IsZero() {
		return e.withTime(now)
	}
	return e
}

// TaskSubmitted starts a new task (project_selected/idle → planning).
type TaskSubmitted struct {
	Task workspace.Task
	// TaskDir is the absolute task directory (tasks/<id>/ under the
	// workspace root, which --workspace may move away from the project).
	TaskDir string
	At      time.Time
}

func (TaskSubmitted) Kind() string                  { return "task_submitted" }
func (e TaskSubmitted) Time() time.Time             { return e.At }
func (e TaskSubmitted) withTime(at time.Time) Event { e.At = at; return e }
func (TaskSubmitted) gate() gate                    { return gateNone }
func (e TaskSubmitted) toWire(w *eventWire) string {
	t := e.Task
	w.Task, w.TaskDir = &t, e.TaskDir
	return ""
}
func (TaskSubmitted) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	var t workspace.Task
	if w.Task != nil {
		t = *w.Task
	}
	return TaskSubmitted{Task: t, TaskDir: w.TaskDir, At: at}, nil
}

// ProjectSelected moves idle → project_selected.
type ProjectSelected struct {
	Project string
	At      time.Time
}

func (ProjectSelected) Kind() string                  { return "project_selected" }
func (e ProjectSelected) Time() time.Time             { return e.At }
func (e ProjectSelected) withTime(at time.Time) Event { e.At = at; return e }
func (ProjectSelected) gate() gate                    { return gateNone }
func (e ProjectSelected) toWire(w *eventWire) string  { w.Project = e.Project; return "" }
func (ProjectSelected) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	return ProjectSelected{Project: w.Project, At: at}, nil
}

// Resumed is sent once when the runner resumes a task from state.json after
// a restart; the engine re-spawns agents and re-sends unfinished assignments.
type Resumed struct {
	At time.Time
	// Retry: the user asked to retry what stopped the task (needs_human or
	// error) as it resumes (hivemind --resume --retry, headless).
	Retry bool
	// OnDisk are the trigger files and done markers already complete on
	// disk when the runner started (TriggerCompleted and SubtaskDone from
	// the watcher's first scan, Watcher.ScanComplete), oldest first. They
	// are handled before unfinished work is re-sent, so an agent whose
	// answer is already there is not asked again. The runner fills it in.
	OnDisk []Event
}

func (Resumed) Kind() string                  { return "resumed" }
func (e Resumed) Time() time.Time             { return e.At }
func (e Resumed) withTime(at time.Time) Event { e.At = at; return e }

// gate: without a task, Resumed still takes what is on disk (a trigger
// that starts nothing is reported as ignored).
func (Resumed) gate() gate { return gateNone }
func (e Resumed) toWire(w *eventWire) string {
	w.OnDisk, _ = marshalEvents(e.OnDisk)
	if e.Retry {
		w.Action = KeyRetry
	}
	return ""
}
func (Resumed) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	onDisk, err := unmarshalEvents(w.OnDisk)
	if err != nil {
		return nil, err
	}
	return Resumed{At: at, Retry: w.Action == KeyRetry, OnDisk: onDisk}, nil
}

// TriggerCompleted says a trigger file (path relative to the task dir, e.g.
// "plan.md", "friction/slow.md", "checkpoint.md") is complete: its writer's
// turn ended or it has been stable for the quiet period. Content is the
// file's bytes at that moment.
type TriggerCompleted struct {
	Path    string
	Content []byte
	Agent   string // writer, when known
	// ModTime is the file's modification time; with the content it
	// identifies this instance of the file, so a trigger seen again after a
	// restart is not handled twice while an identical rewrite still counts.
	ModTime time.Time
	// Inode is the file's inode number (0 when unknown): a file written
	// anew is a new instance even with the same bytes and mtime.
	Inode uint64
	// Problem says why the file cannot be taken (a symlink, a directory,
	// too large; Content is then empty): its writer is told.
	Problem string
	At      time.Time
}

func (TriggerCompleted) Kind() string                  { return "trigger_completed" }
func (e TriggerCompleted) Time() time.Time             { return e.At }
func (e TriggerCompleted) withTime(at time.Time) Event { e.At = at; return e }
func (TriggerCompleted) gate() gate                    { return gateTask }
func (e TriggerCompleted) toWire(w *eventWire) string {
	w.Inode, w.Problem = e.Inode, e.Problem
	w.setFile(e.Path, e.Content, e.ModTime)
	return e.Agent
}
func (TriggerCompleted) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	p, c, m := w.file()
	return TriggerCompleted{Path: p, Content: c, ModTime: m, Inode: w.Inode, Problem: w.Problem, Agent: agent, At: at}, nil
}

// SubtaskDone says a worker's output and .done marker exist and validated
// (OK), or that the marker was invalid (Problem says why).
type SubtaskDone struct {
	Subtask string
	Agent   string
	OK      bool
	Problem string
	At      time.Time
}

func (SubtaskDone) Kind() string                  { return "subtask_done" }
func (e SubtaskDone) Time() time.Time             { return e.At }
func (e SubtaskDone) withTime(at time.Time) Event { e.At = at; return e }
func (SubtaskDone) gate() gate                    { return gateTask }
func (e SubtaskDone) toWire(w *eventWire) string {
	ok := e.OK
	w.Subtask, w.Problem, w.OK = e.Subtask, e.Problem, &ok
	return e.Agent
}
func (SubtaskDone) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	return SubtaskDone{Subtask: w.Subtask, Agent: agent, OK: w.OK != nil && *w.OK, Problem: w.Problem, At: at}, nil
}

// AgentHealth reports an agent's health as seen by the agent layer.
// ExitCode is set for exited.
type AgentHealth struct {
	Agent    string
	Health   workspace.Health
	ExitCode int
	PID      int
	Detail   string
	At       time.Time
}

func (AgentHealth) Kind() string                  { return "agent_health" }
func (e AgentHealth) Time() time.Time             { return e.At }
func (e AgentHealth) withTime(at time.Time) Event { e.At = at; return e }

// gate: health is recorded in every state; only a failure is deferred
// while paused (stepper.health).
func (AgentHealth) gate() gate { return gateNone }
func (e AgentHealth) toWire(w *eventWire) string {
	w.Health, w.PID, w.Detail = e.Health, e.PID, e.Detail
	if e.Health == workspace.HealthExited {
		c := e.ExitCode
		w.ExitCode = &c
	}
	return e.Agent
}
func (AgentHealth) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	h := AgentHealth{Agent: agent, Health: w.Health, PID: w.PID, Detail: w.Detail, At: at}
	if w.ExitCode != nil {
		h.ExitCode = *w.ExitCode
	}
	return h, nil
}

// AgentUsage reports what an agent's CLI recorded it consumed so far (its
// whole session) and the estimated cost, when it changed.
type AgentUsage struct {
	Agent string
	Usage workspace.Usage
	At    time.Time
}

func (AgentUsage) Kind() string                  { return "agent_usage" }
func (e AgentUsage) Time() time.Time             { return e.At }
func (e AgentUsage) withTime(at time.Time) Event { e.At = at; return e }

// gate: usage is recorded in every state (spend continues while paused).
func (AgentUsage) gate() gate { return gateNone }
func (e AgentUsage) toWire(w *eventWire) string {
	u := e.Usage
	w.Usage = &u
	return e.Agent
}
func (AgentUsage) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	e := AgentUsage{Agent: agent, At: at}
	if w.Usage != nil {
		e.Usage = *w.Usage
	}
	return e, nil
}

// InjectionResult reports whether the message with that seq was submitted.
// Every injection ends with one: delivered, failed, or Cancelled (the
// runner stopped before the agent layer answered; not a failure of the
// agent: unfinished work is re-sent on resume).
type InjectionResult struct {
	Agent     string
	Seq       int
	Delivered bool
	Cancelled bool
	Detail    string
	At        time.Time
}

func (InjectionResult) Kind() string                  { return "injection_result" }
func (e InjectionResult) Time() time.Time             { return e.At }
func (e InjectionResult) withTime(at time.Time) Event { e.At = at; return e }

// gate: deliveries are recorded in every state; only a failure is
// deferred while paused (stepper.injection).
func (InjectionResult) gate() gate { return gateNone }
func (e InjectionResult) toWire(w *eventWire) string {
	seq, d := e.Seq, e.Delivered
	w.Detail, w.Cancelled, w.Seq, w.Delivered = e.Detail, e.Cancelled, &seq, &d
	return e.Agent
}
func (InjectionResult) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	r := InjectionResult{Agent: agent, Detail: w.Detail, Cancelled: w.Cancelled, At: at}
	if w.Seq != nil {
		r.Seq = *w.Seq
	}
	r.Delivered = w.Delivered != nil && *w.Delivered
	return r, nil
}

// TimerFired says the timer with that id, scheduled by ScheduleTimer, fired.
type TimerFired struct {
	ID string
	At time.Time
}

func (TimerFired) Kind() string                  { return "timer_fired" }
func (e TimerFired) Time() time.Time             { return e.At }
func (e TimerFired) withTime(at time.Time) Event { e.At = at; return e }
func (TimerFired) gate() gate                    { return gateNone }
func (e TimerFired) toWire(w *eventWire) string  { w.ID = e.ID; return "" }
func (TimerFired) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	return TimerFired{ID: w.ID, At: at}, nil
}

// Key actions the user can take.
const (
	KeyPause   = "pause"
	KeyResume  = "resume"
	KeyCancel  = "cancel"
	KeyRetry   = "retry"
	KeyAbandon = "abandon"
)

// KeyPressed is a user command (pause, resume, cancel, retry, abandon).
type KeyPressed struct {
	Action string
	At     time.Time
}

func (KeyPressed) Kind() string                  { return "key_pressed" }
func (e KeyPressed) Time() time.Time             { return e.At }
func (e KeyPressed) withTime(at time.Time) Event { e.At = at; return e }
func (KeyPressed) gate() gate                    { return gateNone }
func (e KeyPressed) toWire(w *eventWire) string  { w.Action = e.Action; return "" }
func (KeyPressed) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	return KeyPressed{Action: w.Action, At: at}, nil
}

// StateNotSaved says the runner could not write state.json (disk full,
// unwritable): the effects of that step that act outside (assignments,
// messages, archives, agent starts) were not carried out. The engine
// stops new work until a retry succeeds (write-ahead: nothing is assigned
// that could not be saved).
type StateNotSaved struct {
	Error string
	At    time.Time
}

func (StateNotSaved) Kind() string                  { return "state_not_saved" }
func (e StateNotSaved) Time() time.Time             { return e.At }
func (e StateNotSaved) withTime(at time.Time) Event { e.At = at; return e }
func (StateNotSaved) gate() gate                    { return gateNone }
func (e StateNotSaved) toWire(w *eventWire) string  { w.Detail = e.Error; return "" }
func (StateNotSaved) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	return StateNotSaved{Error: w.Detail, At: at}, nil
}

// KnowledgeSubmitted says an inbox file of the shared knowledge is complete.
type KnowledgeSubmitted struct {
	// Path is relative to the context dir: "inbox/<agent>-<n>.md".
	Path    string
	Content []byte
	// Agent is the author, from the file name.
	Agent   string
	ModTime time.Time
	At      time.Time
}

func (KnowledgeSubmitted) Kind() string                  { return "context_submitted" }
func (e KnowledgeSubmitted) Time() time.Time             { return e.At }
func (e KnowledgeSubmitted) withTime(at time.Time) Event { e.At = at; return e }
func (KnowledgeSubmitted) gate() gate                    { return gateTask }
func (e KnowledgeSubmitted) toWire(w *eventWire) string {
	w.setFile(e.Path, e.Content, e.ModTime)
	return e.Agent
}
func (KnowledgeSubmitted) fromWire(w *eventWire, agent string, at time.Time) (Event, error) {
	p, c, m := w.file()
	return KnowledgeSubmitted{Path: p, Content: c, ModTime: m, Agent: agent, At: at}, nil
}

// CheckpointMerged is the outcome of a MergeCheckpoint.
type CheckpointMerged struct {
	Checkpoint int `json:"checkpoint"`
	Round      int `json:"round"`
	Attempt    int `json:"attempt"`
	// Merged: every branch merged; DiffFile (and, when a check ran,
	// CheckFile) are task-dir relative files for the Reviewer.
	Merged    bool   `json:"merged,omitempty"`
	DiffFile  string `json:"diff_file,omitempty"`
	CheckFile string `json:"check_file,omitempty"`
	Checked   bool   `json:"checked,omitempty"`
	CheckOK   bool   `json:"check_ok,omitempty"`
	// MergedDir is where the merged code can be read.
	MergedDir string          `json:"merged_dir,omitempty"`
	Conflicts []MergeConflict `json:"conflicts,omitempty"`
	// Error: git itself failed.
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at,omitzero"`
}

func (CheckpointMerged) Kind() string                  { return "checkpoint_merged" }
func (e CheckpointMerged) Time() time.Time             { return e.At }
func (e CheckpointMerged) withTime(at time.Time) Event { e.At = at; return e }
func (CheckpointMerged) gate() gate                    { return gateTask }
func (e CheckpointMerged) toWire(w *eventWire) string {
	e.At = time.Time{} // the record's time
	w.Merge = &e
	return ""
}
func (CheckpointMerged) fromWire(w *eventWire, _ string, at time.Time) (Event, error) {
	var m CheckpointMerged
	if w.Merge != nil {
		m = *w.Merge
	}
	m.At = at
	return m, nil
}
