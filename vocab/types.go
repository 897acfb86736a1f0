package vocab

import (
	"encoding/json"
	"time"
)

// Phase is a state of the workflow state machine, as stored in state.json.
type Phase string

// The phases of the workflow (the state machine spec, plus needs_human and
// cancelled).
const (
	PhaseIdle            Phase = "idle"
	PhaseProjectSelected Phase = "project_selected"
	PhasePlanning        Phase = "planning"
	PhasePlanReview      Phase = "plan_review"
	PhasePlanRevision    Phase = "plan_revision"
	// PhasePlanApproval: the Reviewer approved the plan and the user
	// decides (plan_approval = "human"): approve, or revise with feedback.
	PhasePlanApproval       Phase = "plan_approval"
	PhaseExecuting          Phase = "executing"
	PhaseCheckpoint         Phase = "checkpoint"
	PhaseCheckpointReview   Phase = "checkpoint_review"
	PhaseCheckpointFix      Phase = "checkpoint_fix"
	PhaseFrictionLogged     Phase = "friction_logged"
	PhaseFrictionSync       Phase = "friction_sync"
	PhaseFrictionResolution Phase = "friction_resolution"
	PhaseComplete           Phase = "complete"
	PhaseError              Phase = "error"
	PhasePaused             Phase = "paused"
	PhaseNeedsHuman         Phase = "needs_human"
	PhaseCancelled          Phase = "cancelled"
)

// Terminal reports whether no further work happens in this phase without a
// user action.
func (p Phase) Terminal() bool {
	return p == PhaseComplete || p == PhaseCancelled || p == PhaseError || p == PhaseNeedsHuman
}

// Running reports whether the workflow is under way in phase p: triggers
// and agent failures are acted on, and a pause holds it.
func (p Phase) Running() bool {
	switch p {
	case PhasePlanning, PhasePlanReview, PhasePlanRevision, PhasePlanApproval,
		PhaseExecuting, PhaseCheckpoint, PhaseCheckpointReview,
		PhaseCheckpointFix, PhaseFrictionLogged, PhaseFrictionSync,
		PhaseFrictionResolution:
		return true
	case PhaseIdle, PhaseProjectSelected, PhaseComplete, PhaseError, PhasePaused,
		PhaseNeedsHuman, PhaseCancelled:
	}
	return false
}

// Task is the immutable task definition (task.json).
type Task struct {
	ID          string    `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Description string    `json:"description"`
	Context     string    `json:"context,omitempty"`
	Constraints []string  `json:"constraints,omitempty"`
	Priority    string    `json:"priority,omitempty"`
	SubmittedBy string    `json:"submitted_by,omitempty"`
	Project     string    `json:"project"`
	Workers     int       `json:"workers"`
	Agent       string    `json:"agent,omitempty"` // agent profile name
	// Agents is the agent of each role (role → profile) when the roles
	// run different agents; empty when Agent runs them all.
	Agents map[Role]string `json:"agents,omitempty"`
	// WorkerAgents are the workers that run another agent than their
	// role's (worker id → profile); empty when none does.
	WorkerAgents map[AgentID]string `json:"worker_agents,omitempty"`
	// AgentArgs are the extra sim-agent flags the task started with (the
	// demo's pace), so a resumed task runs its sim agents the same way.
	AgentArgs []string `json:"agent_args,omitempty"`
	// PlanApproval is who approves the plan before the build: "reviewer"
	// (or empty) or "human" (the user approves after the Reviewer).
	PlanApproval string `json:"plan_approval,omitempty"`
}

// AgentOf is the agent agent id ran: a worker's own (WorkerAgents), else
// its role's (Agents), else the task's (Agent); "" when task.json names
// none (a task from before it did).
func (t Task) AgentOf(id AgentID) string {
	if a := t.WorkerAgents[id]; a != "" {
		return a
	}
	if a := t.Agents[RoleOf(id)]; a != "" {
		return a
	}
	return t.Agent
}

// Plan is the machine-readable part of plan.md (its fenced json block).
type Plan struct {
	Summary     string       `json:"summary"`
	Checkpoints []Checkpoint `json:"checkpoints"`
	Subtasks    []Subtask    `json:"subtasks"`
}

// Checkpoint is a numbered, named milestone of a plan.
type Checkpoint struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Subtask is one unit of work a worker does.
type Subtask struct {
	ID           string   `json:"id"`
	Description  string   `json:"description"`
	Checkpoint   int      `json:"checkpoint"`
	Dependencies []string `json:"dependencies"`
	// Files are "CREATE path" or "MODIFY path", paths relative to the project.
	Files []string `json:"files"`
}

// Subtask statuses in state.json.
const (
	SubtaskPending    = "pending"
	SubtaskInProgress = "in_progress"
	SubtaskDone       = "done"
	SubtaskFailed     = "failed"
)

// SubtaskState is the progress of one subtask in state.json.
type SubtaskState struct {
	Status      string    `json:"status"`
	Worker      AgentID   `json:"worker,omitempty"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	Attempts    int       `json:"attempts,omitempty"`
}

// AgentState is what the engine knows of one agent in state.json.
type AgentState struct {
	Role      Role   `json:"role"`
	Status    Health `json:"status"` // health as last reported, or restarting
	PID       int    `json:"pid,omitempty"`
	Restarts  int    `json:"restarts"`
	SessionID string `json:"session_id,omitempty"` // Claude Code session id, for --resume
	Subtask   string `json:"subtask,omitempty"`    // subtask currently assigned
	// Pending is true while the agent has an assignment it has not finished.
	Pending bool `json:"pending,omitempty"`
	// LastSeq is the seq of the last assignment written for this agent.
	LastSeq int `json:"last_seq,omitempty"`
	// Failures counts consecutive failures (crash, hang, timeout) since the
	// agent last finished work; past max_retries the run needs a human.
	Failures int `json:"failures,omitempty"`
	// Stalls counts the times the agent went idle without producing what
	// its current assignment asks (one reminder, then needs_human).
	Stalls int `json:"stalls,omitempty"`
	// Refusals counts the agent's files the engine refused (written where
	// they do not count); it is told about the first few only.
	Refusals int `json:"refusals,omitempty"`
	// Friction counts the agent's friction reports waiting for the
	// friction flow; FrictionCapped says it was told it has too many.
	Friction       int  `json:"friction,omitempty"`
	FrictionCapped bool `json:"friction_capped,omitempty"`
	// Notes counts the agent's shared-knowledge entries taken in this
	// task; NotesCapped says it was told it reached the bound.
	Notes       int  `json:"notes,omitempty"`
	NotesCapped bool `json:"notes_capped,omitempty"`
	// Delivered is the seq of the last assignment confirmed typed into
	// the agent (0: none yet).
	Delivered int `json:"delivered,omitempty"`
	// ChangedFiles is the number of files a worker changed on its git
	// branch and not yet merged. It is live UI data filled into snapshots
	// by the process that runs the task; the engine never sets it.
	ChangedFiles int `json:"changed_files,omitempty"`
	// Usage is what the agent's CLI reports it consumed (zero: none yet).
	Usage Usage `json:"usage,omitzero"`
	// UsageFiles are the CLI's session files Usage sums, as its hooks
	// named them: the next run reads them again, so a session it does not
	// resume still counts. Replaced whole, never appended to in place.
	UsageFiles []string `json:"usage_files,omitempty"`
	// Paused: the user paused this agent alone; nothing is typed into it
	// until it is resumed (its messages wait in Held).
	Paused bool `json:"paused,omitempty"`
	// Queued counts the messages handed to the agent layer that have no
	// result yet (delivered, failed or cancelled).
	Queued int `json:"queued,omitempty"`
	// LimitSeq is the seq of the last message delivered when the agent's
	// turn hit a rate limit: only that message's work is re-sent once the
	// limit clears.
	LimitSeq int `json:"limit_seq,omitempty"`
	// EarlyExits counts consecutive exits before the agent ever became
	// ready (its first prompt never appeared).
	EarlyExits int `json:"early_exits,omitempty"`
}

// Round summarises one plan or checkpoint review round, for the needs_human
// summary and the final report.
type Round struct {
	Kind     string    `json:"kind"` // "plan" or "checkpoint"
	Number   int       `json:"number"`
	Verdict  string    `json:"verdict"` // approved, feedback, issues
	Archived string    `json:"archived"`
	Summary  string    `json:"summary"`
	At       time.Time `json:"at"`
	// Checkpoint is the checkpoint id of a checkpoint round.
	Checkpoint int `json:"checkpoint,omitempty"`
}

// Timer is a pending engine timer; kept in state so pause can freeze it and
// a restart can re-arm it.
type Timer struct {
	ID       string        `json:"id"`
	Deadline time.Time     `json:"deadline,omitzero"`
	Left     time.Duration `json:"left,omitempty"` // remaining time while paused
}

// State is the content of state.json. Only the engine writes it, through a
// StateStore.
type State struct {
	TaskID            string                  `json:"task_id"`
	Phase             Phase                   `json:"state"`
	PreviousPhase     Phase                   `json:"previous_state"`
	ActiveAgents      []AgentID               `json:"active_agents"`
	ReadOnlyAgents    []AgentID               `json:"read_only_agents,omitempty"`
	Timestamp         time.Time               `json:"timestamp"`
	Project           string                  `json:"project"`
	CurrentCheckpoint int                     `json:"current_checkpoint"`
	TotalCheckpoints  int                     `json:"total_checkpoints"`
	FrictionCount     int                     `json:"friction_count"`
	RevisionCount     int                     `json:"revision_count"`
	Subtasks          map[string]SubtaskState `json:"subtasks"`
	Agents            map[AgentID]AgentState  `json:"agents"`
	Error             string                  `json:"error"`

	// Reason says why the run needs a human (needs_human) or failed (error).
	Reason string `json:"reason,omitempty"`
	// Plan is the approved (or last submitted) plan.
	Plan *Plan `json:"plan,omitempty"`
	// Versions counts archived triggers per kind ("plan", "plan-feedback",
	// "checkpoint", ...) so archive names are never reused.
	Versions map[string]int `json:"versions,omitempty"`
	// Consumed records triggers already handled, by "name@version" key, so a
	// trigger never fires twice even across restarts.
	Consumed map[string]bool `json:"consumed,omitempty"`
	// Rounds are the review rounds so far.
	Rounds []Round `json:"rounds,omitempty"`
	// Seq is the last assignment sequence number used.
	Seq int `json:"seq"`
	// Timers are the engine's pending timers.
	Timers map[string]Timer `json:"timers,omitempty"`
	// Friction lists friction files recorded for this task.
	Friction []string `json:"friction,omitempty"`
	// StartedAt is when the task started; FinishedAt when it reached a final phase.
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Clock is the elapsed clock: the time runs of Hivemind had the task
	// under way, pauses left out (State.Elapsed reads it).
	Clock RunClock `json:"clock,omitzero"`
	// Extra holds engine data that has no field yet; kept verbatim.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`

	// Holds are the accounts whose new dispatches wait for a rate limit
	// to clear, by account.
	Holds map[string]Hold `json:"holds,omitempty"`
	// Held are the assignments made while their agent's account was held,
	// in the order they were made: they are sent, in that order, when the
	// hold ends.
	Held []Assignment `json:"held,omitempty"`

	// TaskDir is the absolute task directory (set from the TaskSubmitted
	// event; the workspace root may differ from <project>/.hivemind).
	TaskDir string `json:"task_dir"`
	// Assignments is the current unfinished-or-last work assignment of each
	// agent (not read-only notices), re-sent after a restart.
	Assignments map[AgentID]Assignment `json:"assignments,omitempty"`
	// Archives maps a consumed trigger key (see Consumed) to the path,
	// relative to the task dir, it was archived to.
	Archives map[string]string `json:"archives,omitempty"`
	// PlanFile is the archived current plan (relative to the task dir).
	PlanFile string `json:"plan_file,omitempty"`
	// ReviewSubject is the archive base name (e.g. "plan_v2",
	// "friction-resolution_v1") of what the Reviewer is reviewing in
	// plan_review; the verdict is archived as <subject>-approved.md etc.
	ReviewSubject string `json:"review_subject,omitempty"`
	// CheckpointFile is the archived checkpoint.md of the current checkpoint
	// review round, if one was written.
	CheckpointFile string `json:"checkpoint_file,omitempty"`
	// IssuesFile is the archived checkpoint-issues.md being fixed.
	IssuesFile string `json:"issues_file,omitempty"`
	// FrictionPending are archived friction files not yet handled by a
	// friction flow; FrictionActive those the current flow handles.
	FrictionPending []string `json:"friction_pending,omitempty"`
	FrictionActive  []string `json:"friction_active,omitempty"`
	// ResolutionFile is the archived friction-resolution.md under review.
	ResolutionFile string `json:"resolution_file,omitempty"`
	// Fixes are the checkpoint_fix assignments of the current round, by fix
	// id (fix_<checkpoint>_<round>_<agent>); done via outputs/<id>.done.
	Fixes map[string]SubtaskState `json:"fixes,omitempty"`
	// FixRounds counts checkpoint-issues rounds of the current checkpoint.
	FixRounds int `json:"fix_rounds,omitempty"`
	// InvalidPlans counts consecutive invalid plan.md files.
	InvalidPlans int `json:"invalid_plans,omitempty"`
	// Escalation says which limit sent the run to needs_human (or error):
	// plan_revisions, plan_invalid, checkpoint_revisions, agent:<id>
	// (failures, rate limits, unreadable triggers), subtask:<id> and
	// fix:<id> (invalid done markers), stall:<id> (idle without output),
	// state_write (state.json not saved), git_merge, merge_conflicts,
	// deadlock. Retry uses it.
	Escalation string `json:"escalation,omitempty"`
	// Deferred are events (engine-encoded) that arrived while paused; they
	// are handled, in order, on resume.
	Deferred []json.RawMessage `json:"deferred,omitempty"`
	// Resend lists agents whose current assignment must be re-sent on
	// resume (they were restarted while paused).
	Resend []AgentID `json:"resend,omitempty"`
	// KnowledgeNotes are acknowledgements of shared knowledge entries (accepted
	// or rejected inbox files) per author, folded into the author's next
	// assignment so a busy agent is never interrupted for them.
	KnowledgeNotes map[AgentID][]string `json:"context_notes,omitempty"`
	// PlanApproval is the task's plan approval ("human": the user decides
	// after the Reviewer approves; see engine/flow/plangate.go).
	PlanApproval string `json:"plan_approval,omitempty"`
	// Merge is the git integration of the current checkpoint (git
	// projects only; zero otherwise).
	Merge MergeState `json:"merge,omitzero"`
}

// MergeState tracks the merge of the current checkpoint's worker branches
// into the task branch (git projects). Only scalar fields: State.Clone
// copies it by value.
type MergeState struct {
	// Checkpoint, Round and Attempt identify the last merge requested:
	// the checkpoint, the review round it is for and the merge attempt of
	// this checkpoint (1, 2, … across conflict rounds).
	Checkpoint int `json:"checkpoint,omitempty"`
	Round      int `json:"round,omitempty"`
	Attempt    int `json:"attempt,omitempty"`
	// Waiting: the merge was requested and its result has not come back.
	Waiting bool `json:"waiting,omitempty"`
	// Conflicts counts merges of this checkpoint that ended in a conflict.
	Conflicts int `json:"conflicts,omitempty"`
	// DiffFile and CheckFile (task-dir relative) are the combined diff and
	// the check output of the last clean merge; Checked/CheckOK its result.
	DiffFile  string `json:"diff_file,omitempty"`
	CheckFile string `json:"check_file,omitempty"`
	Checked   bool   `json:"checked,omitempty"`
	CheckOK   bool   `json:"check_ok,omitempty"`
	// MergedDir is where the merged code of the last clean merge lies.
	MergedDir string `json:"merged_dir,omitempty"`
}

// Abandoned reports whether the user gave the task up: from error or
// needs_human the engine took it back to idle. A submitted task goes
// straight to planning, so a task's state is idle only then.
func (s State) Abandoned() bool { return s.Phase == PhaseIdle }

// Over reports whether the task has ended for good and nothing is left to
// resume: complete, cancelled or abandoned. error and needs_human wait on
// the user: they are not over.
func (s State) Over() bool {
	return s.Phase == PhaseComplete || s.Phase == PhaseCancelled || s.Abandoned()
}

// EndReason is why the task is where it is, in words, to follow its phase
// ("cancelled: on request, …"): the reason of needs_human or error as the engine gave
// it; for a task cancelled or abandoned while it waited for the user, that
// the user ended it, with the earlier reason as what it had waited on (so
// a cancel after a stall never reads as caused by the stall). "" when
// there is nothing to say.
func (s State) EndReason() string {
	why := s.Reason
	if why == "" {
		why = s.Error
	}
	if why == "" || (s.Phase != PhaseCancelled && !s.Abandoned()) {
		return why
	}
	waited := "while it waited for you"
	if s.PreviousPhase == PhaseNeedsHuman || s.PreviousPhase == PhaseError {
		waited += " in " + string(s.PreviousPhase)
	}
	return "on request, " + waited + "; it had stopped because: " + why
}

// EndedAt is when the task ended: finished_at, or, for a task that is over
// without one (an abandon recorded by an older engine), its last state
// write. It is zero while the task runs.
func (s State) EndedAt() time.Time {
	if s.FinishedAt.IsZero() && s.Over() {
		return s.Timestamp
	}
	return s.FinishedAt
}

// Clone returns a deep copy of s, so a pure function can change the copy
// without touching the original.
func (s State) Clone() State {
	c := s
	c.ActiveAgents = cloneSlice(s.ActiveAgents)
	c.ReadOnlyAgents = cloneSlice(s.ReadOnlyAgents)
	c.Subtasks = cloneMap(s.Subtasks)
	c.Agents = cloneMap(s.Agents)
	c.Versions = cloneMap(s.Versions)
	c.Consumed = cloneMap(s.Consumed)
	c.Timers = cloneMap(s.Timers)
	c.Extra = cloneMap(s.Extra)
	c.Rounds = cloneSlice(s.Rounds)
	c.Friction = cloneSlice(s.Friction)
	c.Assignments = cloneMap(s.Assignments)
	c.Archives = cloneMap(s.Archives)
	c.FrictionPending = cloneSlice(s.FrictionPending)
	c.FrictionActive = cloneSlice(s.FrictionActive)
	c.Fixes = cloneMap(s.Fixes)
	c.Deferred = cloneSlice(s.Deferred)
	c.Resend = cloneSlice(s.Resend)
	c.Holds = cloneMap(s.Holds)
	c.Held = cloneSlice(s.Held)
	if s.KnowledgeNotes != nil {
		c.KnowledgeNotes = make(map[AgentID][]string, len(s.KnowledgeNotes))
		for k, v := range s.KnowledgeNotes {
			c.KnowledgeNotes[k] = cloneSlice(v)
		}
	}
	if s.Plan != nil {
		p := *s.Plan
		p.Checkpoints = cloneSlice(s.Plan.Checkpoints)
		p.Subtasks = cloneSlice(s.Plan.Subtasks)
		for i, st := range p.Subtasks {
			st.Dependencies = cloneSlice(st.Dependencies)
			st.Files = cloneSlice(st.Files)
			p.Subtasks[i] = st
		}
		c.Plan = &p
	}
	return c
}

// Waiting is the number of messages that wait to be typed into an agent:
// held by the engine (a pause or a rate-limit hold) and, while the team or
// the agent is paused, those already queued in the agent layer.
func (s State) Waiting() int {
	n := len(s.Held)
	for _, a := range s.Agents {
		if s.Phase == PhasePaused || a.Paused {
			n += a.Queued
		}
	}
	return n
}

// cloneSlice copies a slice, keeping nil and empty apart (they marshal
// differently: null vs []).
func cloneSlice[V any](s []V) []V {
	if s == nil {
		return nil
	}
	return append(make([]V, 0, len(s)), s...)
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Assignment is what one agent must do now (assignments/<agent_id>.json).
type Assignment struct {
	Seq         int      `json:"seq"`
	State       Phase    `json:"state"`
	Role        Role     `json:"role"`
	Agent       AgentID  `json:"agent"`
	Instruction string   `json:"instruction"`
	Subtask     *Subtask `json:"subtask"`
	// Reads are paths (absolute) the agent should read.
	Reads []string `json:"reads"`
	// Writes are paths (absolute) the agent may write; it must create one.
	Writes []string `json:"writes"`
	// DoneMarker is the path the agent creates last, or empty.
	DoneMarker string `json:"done_marker"`
	// ReadOnly is true when the agent is told, not asked to write.
	ReadOnly bool `json:"read_only,omitempty"`
	// Rejected says why the agent's previous completion of this work was
	// rejected (an invalid done marker, nothing produced): what to fix.
	Rejected string `json:"rejected,omitempty"`
	// Resent is true when this is the agent's earlier work sent again
	// (after a crash, a stall, a turn lost to a rate limit): part of it
	// may be done already.
	Resent bool `json:"resent,omitempty"`
}

// DoneMarker is the content of outputs/<subtask>.done.
type DoneMarker struct {
	AgentID     AgentID   `json:"agent_id"`
	OutputFile  string    `json:"output_file"`
	CompletedAt time.Time `json:"completed_at"`
}

// EventRecord is one line of events.jsonl.
type EventRecord struct {
	Time    time.Time      `json:"time"`
	Type    RecordType     `json:"type"`
	Task    string         `json:"task"`
	Agent   AgentID        `json:"agent,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Friction types of the cross-task friction log.
const (
	FrictionRepeatedRevision = "repeated_revision"
	FrictionReviewerPattern  = "reviewer_pattern"
	FrictionWorkerFailure    = "worker_failure"
	FrictionTimeout          = "timeout"
	FrictionEscalation       = "escalation"
)

// FrictionEntry is one entry of friction.json.
type FrictionEntry struct {
	ID              string    `json:"id"`
	Timestamp       time.Time `json:"timestamp"`
	Type            string    `json:"type"`
	Description     string    `json:"description"`
	Occurrences     int       `json:"occurrences"`
	AffectedTasks   []string  `json:"affected_tasks"`
	SuggestedAction string    `json:"suggested_action"`
	Status          string    `json:"status"` // pending, applied, dismissed
}

// Known reports whether p is one of the phases above.
func (p Phase) Known() bool {
	switch p {
	case PhaseIdle, PhaseProjectSelected, PhasePlanning, PhasePlanReview, PhasePlanRevision,
		PhasePlanApproval, PhaseExecuting, PhaseCheckpoint, PhaseCheckpointReview, PhaseCheckpointFix,
		PhaseFrictionLogged, PhaseFrictionSync, PhaseFrictionResolution, PhaseComplete,
		PhaseError, PhasePaused, PhaseNeedsHuman, PhaseCancelled:
		return true
	}
	return false
}
