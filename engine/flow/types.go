package flow

import (
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// State is the engine's whole state; it is what state.json holds.
type State = vocab.State

// Config holds the limits and timings the pure state machine obeys, used as
// they are: NewConfig fills every field from internal/config, which owns the
// defaults and range checks.
type Config struct {
	Workers           int             // number of workers
	QuietPeriod       time.Duration   // a trigger file is complete after this long unchanged
	MaxRevisionCycles int             // plan review rounds before needs_human
	MaxRetries        int             // retries of each kind before needs_human (0: none)
	Backoff           []time.Duration // restart delays; the last repeats
	HangTimeout       time.Duration   // no output and no idle signal while working
	AgentTimeout      time.Duration   // one assignment may take at most this long
	StallTimeout      time.Duration   // idle with unfinished work this long: a reminder, then needs_human
	// Git: workers have their own worktrees and branches, so a checkpoint
	// first merges them (MergeCheckpoint → CheckpointMerged) before the
	// review. False: the shared-directory behaviour.
	Git bool
	// Check is the project's check command run on each merge (shown to the
	// Reviewer; run by the runner's GitWork, not by Step).
	Check string
	// BudgetUSD caps the task's estimated spend: reaching it stops new
	// work (needs_human with the figures). 0: no cap.
	BudgetUSD float64
	// BudgetTokens caps the task's tokens, and RoleBudgetTokens the tokens
	// of each role's agents together, counted as Usage.Tokens counts them
	// (input + output + cache read + cache write, the figure the header
	// shows): reaching one stops new work as BudgetUSD does. They need no
	// price. 0 or absent: no cap.
	BudgetTokens     int64
	RoleBudgetTokens map[vocab.Role]int64
	// Accounts maps agents to the account (CLI credentials) they spend
	// from; a rate limit holds new work for every agent of its account.
	// Agents not listed share one account.
	Accounts map[vocab.AgentID]string
}

// Stepper is the pure state machine the Runner drives (Machine).
type Stepper interface {
	Step(State, Event) (State, []Effect)
}

// MaxTriggerBytes bounds every file an agent writes for Hivemind to read
// (trigger files, plan.md, done markers): a larger one is never read
// whole; its writer is told to make it smaller.
const MaxTriggerBytes = 1 << 20

// Effect is an intent produced by Step; the Runner carries it out. The set is
// sealed.
//
//sumtype:decl
type Effect interface{ isEffect() }

// ---- Effects ----

// WriteState asks the runner to persist the state (atomically, with backup).
type WriteState struct{ State State }

// AppendEvent asks the runner to append one record to events.jsonl.
type AppendEvent struct {
	Type    vocab.RecordType
	Agent   vocab.AgentID
	Details map[string]any
}

// WriteAssignment asks the runner to write assignments/<agent>.json + .md.
type WriteAssignment struct{ Assignment vocab.Assignment }

// Inject asks the runner to type one [HIVEMIND] line into the agent. Seq
// is the message's dispatch id: the engine emits one Inject per id, ever.
type Inject struct {
	Agent vocab.AgentID
	Seq   int
	Text  string
	// Resend: the agent's current work sent again (after a failure).
	Resend bool
	// Notice: a read-only notice (its text carries its whole content).
	Notice bool
}

// HoldDelivery asks the runner to stop (Hold) or let the agent layer type
// the messages queued for the agent: a pause covers what was handed to
// the agent layer before it, too.
type HoldDelivery struct {
	Agent vocab.AgentID
	Hold  bool
}

// Withdraw asks the runner to take back the agent's messages with a seq
// below Before that the agent layer has not started typing: they are
// superseded (newer work) or moot (the task ended). Each one taken back
// comes back as a cancelled InjectionResult.
type Withdraw struct {
	Agent  vocab.AgentID
	Before int
	Why    string // for the record: superseded by #n, the task ended
}

// SpawnAgent asks the runner to start an agent (Resume: keep its session).
type SpawnAgent struct {
	Agent  vocab.AgentID
	Role   vocab.Role
	Resume bool
}

// RestartAgent asks the runner to stop the agent if running and start it
// again with its session resumed.
type RestartAgent struct {
	Agent vocab.AgentID
	Role  vocab.Role
}

// StopAgent asks the runner to stop an agent gracefully.
type StopAgent struct{ Agent vocab.AgentID }

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
func (HoldDelivery) isEffect()    {}
func (Withdraw) isEffect()        {}
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
	Workers    []vocab.AgentID
}

func (MergeCheckpoint) isEffect() {}

// MergeConflict is one worker branch that did not merge cleanly.
type MergeConflict struct {
	Worker vocab.AgentID   `json:"worker"`
	With   []vocab.AgentID `json:"with,omitempty"`
	// Files are the conflicting files, project-relative.
	Files []string `json:"files,omitempty"`
	// HunksFile (task-dir relative) shows the conflict regions.
	HunksFile string `json:"hunks_file,omitempty"`
}
