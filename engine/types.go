package engine

import (
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

// State is the engine's whole state; it is what state.json holds.
type State = workspace.State

// Config holds the limits and timings the pure state machine obeys. The
// program fills every field from internal/config, which owns the defaults
// and range checks; here zero values where zero means nothing (durations,
// workers, revision cycles) fall back to DefaultConfig, and MaxRetries 0
// means no retries.
type Config struct {
	Workers           int             // number of workers (default 2)
	QuietPeriod       time.Duration   // a trigger file is complete after this long unchanged (default 300ms)
	MaxRevisionCycles int             // plan review rounds before needs_human (default 3)
	MaxRetries        int             // retries of each kind before needs_human (0: none; the config's default is 3)
	Backoff           []time.Duration // restart delays (default 5s, 15s, 45s)
	HangTimeout       time.Duration   // no output and no idle signal while working (default 120s)
	AgentTimeout      time.Duration   // one assignment may take at most this long (default 30m)
	StallTimeout      time.Duration   // idle with unfinished work this long: a reminder, then needs_human (default 120s)
	// Git: workers have their own worktrees and branches, so a checkpoint
	// first merges them (MergeCheckpoint → CheckpointMerged) before the
	// review. False: the shared-directory behaviour.
	Git bool
	// Check is the project's check command run on each merge (shown to the
	// Reviewer; run by the runner's GitWork, not by Step).
	Check string
}

// Event is a fact the engine reacts to. The set is sealed: only this package
// defines events.
type Event interface{ isEvent() }

// Effect is an intent produced by Step; the Runner carries it out. The set is
// sealed.
type Effect interface{ isEffect() }

// Agents is what the Runner needs from the agent layer (implemented by
// ptyagent.Manager; a fake in tests). Every method returns quickly; results
// come back as events (AgentHealth, InjectionResult).
type Agents interface {
	// Start starts (or, with resume, restarts keeping its conversation) the
	// agent with that id and role.
	Start(id, role string, resume bool) error
	// Stop stops the agent gracefully (escalating to SIGKILL).
	Stop(id string) error
	// Inject queues one message for the agent; it is delivered when the
	// agent is ready and idle. The outcome arrives as an InjectionResult.
	Inject(id string, seq int, text string) error
}

// ---- Events ----

// TaskSubmitted starts a new task (project_selected/idle → planning).
type TaskSubmitted struct {
	Task workspace.Task
	// TaskDir is the absolute task directory (tasks/<id>/ under the
	// workspace root, which --workspace may move away from the project).
	TaskDir string
	At      time.Time
}

// ProjectSelected moves idle → project_selected.
type ProjectSelected struct {
	Project string
	At      time.Time
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

// SubtaskDone says a worker's output and .done marker exist and validated
// (OK), or that the marker was invalid (Problem says why).
type SubtaskDone struct {
	Subtask string
	Agent   string
	OK      bool
	Problem string
	At      time.Time
}

// AgentHealth reports an agent's health as seen by the agent layer:
// starting, ready, busy, idle, waiting_permission, rate_limited,
// hang_warning, hung, exited. ExitCode is set for exited.
type AgentHealth struct {
	Agent    string
	Health   string
	ExitCode int
	PID      int
	Detail   string
	At       time.Time
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

// TimerFired says the timer with that id, scheduled by ScheduleTimer, fired.
type TimerFired struct {
	ID string
	At time.Time
}

// Key actions the user can take.
const (
	KeyPause   = "pause"
	KeyResume  = "resume"
	KeyCancel  = "cancel"
	KeyRetry   = "retry"
	KeyAbandon = "abandon"
)

// StateNotSaved says the runner could not write state.json (disk full,
// unwritable): the effects of that step that act outside (assignments,
// messages, archives, agent starts) were not carried out. The engine
// stops new work until a retry succeeds (write-ahead: nothing is assigned
// that could not be saved).
type StateNotSaved struct {
	Error string
	At    time.Time
}

// KeyPressed is a user command (pause, resume, cancel, retry, abandon).
type KeyPressed struct {
	Action string
	At     time.Time
}

func (TaskSubmitted) isEvent()    {}
func (ProjectSelected) isEvent()  {}
func (Resumed) isEvent()          {}
func (TriggerCompleted) isEvent() {}
func (SubtaskDone) isEvent()      {}
func (AgentHealth) isEvent()      {}
func (InjectionResult) isEvent()  {}
func (TimerFired) isEvent()       {}
func (KeyPressed) isEvent()       {}
func (StateNotSaved) isEvent()    {}

// ---- Effects ----

// WriteState asks the runner to persist the state (atomically, with backup).
type WriteState struct{ State State }

// AppendEvent asks the runner to append one record to events.jsonl.
type AppendEvent struct {
	Type    string
	Agent   string
	Details map[string]any
}

// WriteAssignment asks the runner to write assignments/<agent>.json + .md.
type WriteAssignment struct{ Assignment workspace.Assignment }

// Inject asks the runner to type one [HIVEMIND] line into the agent.
type Inject struct {
	Agent string
	Seq   int
	Text  string
}

// SpawnAgent asks the runner to start an agent (Resume: keep its session).
type SpawnAgent struct {
	Agent  string
	Role   string
	Resume bool
}

// RestartAgent asks the runner to stop the agent if running and start it
// again with its session resumed.
type RestartAgent struct {
	Agent string
	Role  string
}

// StopAgent asks the runner to stop an agent gracefully.
type StopAgent struct{ Agent string }

// ArchiveTrigger asks the runner to move a consumed trigger (relative to the
// task dir) to reviews/ under a versioned name (To, relative to the task dir).
type ArchiveTrigger struct {
	From string
	To   string
}

// NotifyUser asks the UI to tell the user something (bell + banner for
// needs_human, permission waits and completion).
type NotifyUser struct {
	Level   string // info, warn, error
	Message string
}

// ScheduleTimer asks the runner to send TimerFired{ID} after the duration;
// scheduling an id again replaces the earlier timer.
type ScheduleTimer struct {
	ID    string
	After time.Duration
}

// CancelTimer asks the runner to drop a pending timer.
type CancelTimer struct{ ID string }

func (WriteState) isEffect()      {}
func (AppendEvent) isEffect()     {}
func (WriteAssignment) isEffect() {}
func (Inject) isEffect()          {}
func (SpawnAgent) isEffect()      {}
func (RestartAgent) isEffect()    {}
func (StopAgent) isEffect()       {}
func (ArchiveTrigger) isEffect()  {}
func (NotifyUser) isEffect()      {}
func (ScheduleTimer) isEffect()   {}
func (CancelTimer) isEffect()     {}

// ---- git integration (see merge.go) ----

// MergeCheckpoint asks the runner to merge the workers' branches of the
// current checkpoint into the task branch (in a scratch worktree), run the
// check command and report a CheckpointMerged. Round is the review round
// the merge is for and Attempt counts merges of this checkpoint; both come
// back in the event so a stale result is recognised.
type MergeCheckpoint struct {
	Checkpoint int
	Round      int
	Attempt    int
	Workers    []string
}

func (MergeCheckpoint) isEffect() {}

// MergeConflict is one worker branch that did not merge cleanly.
type MergeConflict struct {
	Worker string   `json:"worker"`
	With   []string `json:"with,omitempty"`
	// Files are the conflicting files, project-relative.
	Files []string `json:"files,omitempty"`
	// HunksFile (task-dir relative) shows the conflict regions.
	HunksFile string `json:"hunks_file,omitempty"`
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

func (CheckpointMerged) isEvent() {}
