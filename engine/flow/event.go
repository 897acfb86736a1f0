package flow

import (
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Event is a fact the engine reacts to. The set is sealed (unexported
// methods): adding an event means writing its type here (embedding When,
// with toWire and fromWire), one line in eventKinds (codec.go: its kind name
// and gate) and its case in stepper.handle (step.go); the compiler asks for
// When and the methods, `make lint` (gochecksumtype) for the handler and
// TestEventCodecsRoundTrip for the registration.
//
//sumtype:decl
type Event interface {
	// Time is when the event happened (zero until the runner stamps it);
	// When provides it.
	Time() time.Time
	// toWire fills the details of the events.jsonl record and returns the
	// record's agent; fromWire (called on the zero value) reverses it.
	toWire(w *eventWire) (agent vocab.AgentID)
	fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error)
}

// When is when an event happened. Every event embeds it, which gives the
// event its Time and lets the runner stamp it (eventKind.withTime).
type When struct {
	At time.Time
}

// Time is when the event happened (zero until the runner stamps it).
func (w When) Time() time.Time { return w.At }

func (w *When) setTime(at time.Time) { w.At = at }

// gate is an event's policy before its handler runs (eventKinds says which).
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
		return withTime(e, now)
	}
	return e
}

// TaskSubmitted starts a new task (project_selected/idle → planning).
type TaskSubmitted struct {
	Task vocab.Task
	// TaskDir is the absolute task directory (tasks/<id>/ under the
	// workspace root, which --workspace may move away from the project).
	TaskDir string
	When
}

func (e TaskSubmitted) toWire(w *eventWire) vocab.AgentID {
	t := e.Task
	w.Task, w.TaskDir = &t, e.TaskDir
	return ""
}
func (TaskSubmitted) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	var t vocab.Task
	if w.Task != nil {
		t = *w.Task
	}
	return TaskSubmitted{Task: t, TaskDir: w.TaskDir, When: When{At: at}}, nil
}

// ProjectSelected moves idle → project_selected.
type ProjectSelected struct {
	Project string
	When
}

func (e ProjectSelected) toWire(w *eventWire) vocab.AgentID { w.Project = e.Project; return "" }
func (ProjectSelected) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	return ProjectSelected{Project: w.Project, When: When{At: at}}, nil
}

// Resumed is sent once when the runner resumes a task from state.json after
// a restart; the engine re-spawns agents and re-sends unfinished assignments.
type Resumed struct {
	When
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

func (e Resumed) toWire(w *eventWire) vocab.AgentID {
	w.OnDisk, _ = marshalEvents(e.OnDisk)
	if e.Retry {
		w.Action = KeyRetry
	}
	return ""
}
func (Resumed) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	onDisk, err := unmarshalEvents(w.OnDisk)
	if err != nil {
		return nil, err
	}
	return Resumed{When: When{At: at}, Retry: w.Action == KeyRetry, OnDisk: onDisk}, nil
}

// TriggerCompleted says a trigger file (path relative to the task dir, e.g.
// "plan.md", "friction/slow.md", "checkpoint.md") is complete: its writer's
// turn ended or it has been stable for the quiet period. Content is the
// file's bytes at that moment.
type TriggerCompleted struct {
	Path    string
	Content []byte
	Agent   vocab.AgentID // writer, when known
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
	When
}

func (e TriggerCompleted) toWire(w *eventWire) vocab.AgentID {
	w.Inode, w.Problem = e.Inode, e.Problem
	w.setFile(e.Path, e.Content, e.ModTime)
	return e.Agent
}
func (TriggerCompleted) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	p, c, m := w.file()
	return TriggerCompleted{Path: p, Content: c, ModTime: m, Inode: w.Inode, Problem: w.Problem, Agent: agent, When: When{At: at}}, nil
}

// SubtaskDone says a worker's output and .done marker exist and validated
// (OK), or that the marker was invalid (Problem says why).
type SubtaskDone struct {
	Subtask string
	Agent   vocab.AgentID
	OK      bool
	Problem string
	When
}

func (e SubtaskDone) toWire(w *eventWire) vocab.AgentID {
	ok := e.OK
	w.Subtask, w.Problem, w.OK = e.Subtask, e.Problem, &ok
	return e.Agent
}
func (SubtaskDone) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	return SubtaskDone{Subtask: w.Subtask, Agent: agent, OK: w.OK != nil && *w.OK, Problem: w.Problem, When: When{At: at}}, nil
}

// AgentHealth reports an agent's health as seen by the agent layer.
// ExitCode is set for exited.
type AgentHealth struct {
	Agent    vocab.AgentID
	Health   vocab.Health
	ExitCode int
	PID      int
	Detail   string
	// Cause is a diagnosed cause of an exit that a restart cannot fix (a
	// host that cannot be reached, a missing or not executable program,
	// a CLI not logged in), said so the user can fix it; empty: none.
	Cause string
	// Stopped: Hivemind stopped the agent as the run ends (the user quit)
	// or could not start it for that reason; an exit that is not a
	// failure, counted toward no retry limit.
	Stopped bool
	When
}

func (e AgentHealth) toWire(w *eventWire) vocab.AgentID {
	w.Health, w.PID, w.Detail, w.Cause, w.Stopped = e.Health, e.PID, e.Detail, e.Cause, e.Stopped
	if e.Health == vocab.HealthExited {
		c := e.ExitCode
		w.ExitCode = &c
	}
	return e.Agent
}
func (AgentHealth) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	h := AgentHealth{Agent: agent, Health: w.Health, PID: w.PID, Detail: w.Detail, Cause: w.Cause, Stopped: w.Stopped, When: When{At: at}}
	if w.ExitCode != nil {
		h.ExitCode = *w.ExitCode
	}
	return h, nil
}

// AgentUsage reports what an agent's CLI recorded it consumed so far (its
// whole session) and the estimated cost, when it changed.
type AgentUsage struct {
	Agent vocab.AgentID
	Usage vocab.Usage
	// Files are the session files Usage sums (nil: not said; the
	// recorded ones stay).
	Files []string
	When
}

func (e AgentUsage) toWire(w *eventWire) vocab.AgentID {
	u := e.Usage
	w.Usage = &u
	w.Files = e.Files
	return e.Agent
}
func (AgentUsage) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	e := AgentUsage{Agent: agent, Files: w.Files, When: When{At: at}}
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
	Agent     vocab.AgentID
	Seq       int
	Delivered bool
	Cancelled bool
	Detail    string
	When
}

func (e InjectionResult) toWire(w *eventWire) vocab.AgentID {
	seq, d := e.Seq, e.Delivered
	w.Detail, w.Cancelled, w.Seq, w.Delivered = e.Detail, e.Cancelled, &seq, &d
	return e.Agent
}
func (InjectionResult) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	r := InjectionResult{Agent: agent, Detail: w.Detail, Cancelled: w.Cancelled, When: When{At: at}}
	if w.Seq != nil {
		r.Seq = *w.Seq
	}
	r.Delivered = w.Delivered != nil && *w.Delivered
	return r, nil
}

// TimerFired says the timer with that id, scheduled by ScheduleTimer, fired.
type TimerFired struct {
	ID string
	When
}

func (e TimerFired) toWire(w *eventWire) vocab.AgentID { w.ID = e.ID; return "" }
func (TimerFired) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	return TimerFired{ID: w.ID, When: When{At: at}}, nil
}

// Key actions the user can take.
const (
	KeyPause   = "pause"
	KeyResume  = "resume"
	KeyCancel  = "cancel"
	KeyRetry   = "retry"
	KeyAbandon = "abandon"
	// KeyPauseAgent and KeyResumeAgent pause and resume one agent
	// (KeyPressed.Agent): nothing is typed into it meanwhile.
	KeyPauseAgent  = "pause_agent"
	KeyResumeAgent = "resume_agent"
	// KeyToggleAgent pauses one agent or resumes it when it is paused,
	// decided by the engine's own state (a client's snapshot may be
	// behind: two quick presses are a pause and a resume).
	KeyToggleAgent = "toggle_agent"
)

// KeyPressed is a user command (pause, resume, cancel, retry, abandon;
// pause_agent and resume_agent name their Agent).
type KeyPressed struct {
	Action string
	Agent  vocab.AgentID
	When
}

func (e KeyPressed) toWire(w *eventWire) vocab.AgentID { w.Action = e.Action; return e.Agent }
func (KeyPressed) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	return KeyPressed{Action: w.Action, Agent: agent, When: When{At: at}}, nil
}

// StateNotSaved says the runner could not write state.json (disk full,
// unwritable): the effects of that step that act outside (assignments,
// messages, archives, agent starts) were not carried out. The engine
// stops new work until a retry succeeds (write-ahead: nothing is assigned
// that could not be saved).
type StateNotSaved struct {
	Error string
	When
}

func (e StateNotSaved) toWire(w *eventWire) vocab.AgentID { w.Detail = e.Error; return "" }
func (StateNotSaved) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	return StateNotSaved{Error: w.Detail, When: When{At: at}}, nil
}

// KnowledgeSubmitted says an inbox file of the shared knowledge is complete.
type KnowledgeSubmitted struct {
	// Path is relative to the task dir: "agents/<agent>/knowledge/<n>.md".
	Path    string
	Content []byte
	// Agent is the author: the owner of the outbox.
	Agent   vocab.AgentID
	ModTime time.Time
	When
}

func (e KnowledgeSubmitted) toWire(w *eventWire) vocab.AgentID {
	w.setFile(e.Path, e.Content, e.ModTime)
	return e.Agent
}
func (KnowledgeSubmitted) fromWire(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error) {
	p, c, m := w.file()
	return KnowledgeSubmitted{Path: p, Content: c, ModTime: m, Agent: agent, When: When{At: at}}, nil
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
	Error string `json:"error,omitempty"`
	// At is the event's time, not When: this JSON is also the merge record
	// in events.jsonl, where the time is the record's ("at", left out).
	At time.Time `json:"at,omitzero"`
}

func (e CheckpointMerged) Time() time.Time       { return e.At }
func (e *CheckpointMerged) setTime(at time.Time) { e.At = at }
func (e CheckpointMerged) toWire(w *eventWire) vocab.AgentID {
	e.At = time.Time{} // the record's time
	w.Merge = &e
	return ""
}
func (CheckpointMerged) fromWire(w *eventWire, _ vocab.AgentID, at time.Time) (Event, error) {
	var m CheckpointMerged
	if w.Merge != nil {
		m = *w.Merge
	}
	m.At = at
	return m, nil
}
