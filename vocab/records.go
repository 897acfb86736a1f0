package vocab

import "strings"

// RecordType is the type of an events.jsonl record. Every type Hivemind
// writes is a constant below, a milestone or detail (Milestone), except
// the state machine's input records (InputRecord, named by engine/flow's
// event registry). The strings are on disk in users' workspaces: never
// change one.
//
// Declared once: a writer names a constant, never a string
// (TestRecordTypesDeclared fails on a record type built from a literal or
// a conversion outside this file), a reader compares against the same
// constant, and lint's exhaustive check makes Milestone decide about every
// new constant. Records read back from disk keep whatever type they carry
// (an older or newer Hivemind's), so a RecordType may also be none of these.
type RecordType string

// Record types, by writer.
const (
	// The state machine's (engine/flow's stepper.emit).
	RecordAbandoned              RecordType = "abandoned"
	RecordAgentCannotStart       RecordType = "agent_cannot_start"
	RecordAgentExited            RecordType = "agent_exited"
	RecordAgentHangWarning       RecordType = "agent_hang_warning"
	RecordAgentHung              RecordType = "agent_hung"
	RecordAgentPaused            RecordType = "agent_paused"
	RecordAgentRateLimitCleared  RecordType = "agent_rate_limit_cleared"
	RecordAgentRateLimited       RecordType = "agent_rate_limited"
	RecordAgentRestartScheduled  RecordType = "agent_restart_scheduled"
	RecordAgentRestarted         RecordType = "agent_restarted"
	RecordAgentResumed           RecordType = "agent_resumed"
	RecordAgentSpawned           RecordType = "agent_spawned"
	RecordAgentStalled           RecordType = "agent_stalled"
	RecordAgentTimeout           RecordType = "agent_timeout"
	RecordAgentUsage             RecordType = "agent_usage"
	RecordAgentWaitingPermission RecordType = "agent_waiting_permission"
	RecordAgentsStopped          RecordType = "agents_stopped"
	RecordAssignmentSent         RecordType = "assignment_sent"
	RecordCancelled              RecordType = "cancelled"
	RecordCheckpointApproved     RecordType = "checkpoint_approved"
	RecordCheckpointIssues       RecordType = "checkpoint_issues"
	RecordCheckpointMerged       RecordType = "checkpoint_merged"
	RecordCheckpointReached      RecordType = "checkpoint_reached"
	RecordCheckpointStarted      RecordType = "checkpoint_started"
	RecordContextDuplicate       RecordType = "context_duplicate"
	RecordContextIgnored         RecordType = "context_ignored"
	RecordContextRejected        RecordType = "context_rejected"
	RecordContextSubmitted       RecordType = "context_submitted"
	RecordCostUnknown            RecordType = "cost_unknown"
	RecordDeferredEventDropped   RecordType = "deferred_event_dropped"
	RecordDeferredEventsDropped  RecordType = "deferred_events_dropped"
	RecordDispatchHeld           RecordType = "dispatch_held"
	RecordDispatchQueued         RecordType = "dispatch_queued"
	RecordDispatchResumed        RecordType = "dispatch_resumed"
	RecordDispatchStillHeld      RecordType = "dispatch_still_held"
	RecordError                  RecordType = "error"
	RecordEventDeferred          RecordType = "event_deferred"
	RecordFixDone                RecordType = "fix_done"
	RecordFixRejected            RecordType = "fix_rejected"
	RecordFixStarted             RecordType = "fix_started"
	RecordFrictionFlowStarted    RecordType = "friction_flow_started"
	RecordFrictionRecorded       RecordType = "friction_recorded"
	RecordHeldDispatchDropped    RecordType = "held_dispatch_dropped"
	RecordInjectionCancelled     RecordType = "injection_cancelled"
	RecordInjectionFailed        RecordType = "injection_failed"
	RecordKeyIgnored             RecordType = "key_ignored"
	RecordMergeConflict          RecordType = "merge_conflict"
	RecordMergeFailed            RecordType = "merge_failed"
	RecordMergeRequested         RecordType = "merge_requested"
	RecordMergeResultIgnored     RecordType = "merge_result_ignored"
	RecordNeedsHuman             RecordType = "needs_human"
	RecordNoticeDropped          RecordType = "notice_dropped"
	RecordNoticeSkipped          RecordType = "notice_skipped"
	RecordNotifyCommand          RecordType = "notify_command"
	RecordPaused                 RecordType = "paused"
	RecordPlanApproved           RecordType = "plan_approved"
	RecordPlanAwaitingHuman      RecordType = "plan_awaiting_human"
	RecordPlanDecision           RecordType = "plan_decision"
	RecordPlanDecisionRejected   RecordType = "plan_decision_rejected"
	RecordPlanFeedback           RecordType = "plan_feedback"
	RecordPlanInvalid            RecordType = "plan_invalid"
	RecordPlanSubmitted          RecordType = "plan_submitted"
	RecordProcessGuard           RecordType = "process_guard"
	RecordProjectIgnored         RecordType = "project_ignored"
	RecordProjectSelected        RecordType = "project_selected"
	RecordResendScheduled        RecordType = "resend_scheduled"
	RecordResumed                RecordType = "resumed"
	RecordResumedFromPause       RecordType = "resumed_from_pause"
	RecordRetry                  RecordType = "retry"
	RecordStateChanged           RecordType = "state_changed"
	RecordSubtaskAssigned        RecordType = "subtask_assigned"
	RecordSubtaskDone            RecordType = "subtask_done"
	RecordSubtaskDoneIgnored     RecordType = "subtask_done_ignored"
	RecordSubtaskRejected        RecordType = "subtask_rejected"
	RecordTaskComplete           RecordType = "task_complete"
	RecordTaskIgnored            RecordType = "task_ignored"
	RecordTaskSubmitted          RecordType = "task_submitted"
	RecordTimerFired             RecordType = "timer_fired"
	RecordTriggerConsumed        RecordType = "trigger_consumed"
	RecordTriggerDuplicate       RecordType = "trigger_duplicate"
	RecordTriggerIgnored         RecordType = "trigger_ignored"
	RecordTriggerRefused         RecordType = "trigger_refused"
	RecordTriggerRejected        RecordType = "trigger_rejected"

	// The engine's runner (effects it carried out or failed, git commits, context merges).
	RecordCommitRefused    RecordType = "commit_refused"
	RecordContextMerged    RecordType = "context_merged"
	RecordGitCommitFailed  RecordType = "git_commit_failed"
	RecordRunnerError      RecordType = "runner_error"
	RecordSubtaskCommitted RecordType = "subtask_committed"

	// Start-up and shut-down (internal/app: locks, recovery, agents, preflight, write scopes).
	RecordAgentOverridden  RecordType = "agent_overridden"
	RecordEventsUnreadable RecordType = "events_unreadable"
	RecordHivemindStopped  RecordType = "hivemind_stopped"
	RecordLeftoversReaped  RecordType = "leftovers_reaped"
	RecordLockTakenOver    RecordType = "lock_taken_over"
	RecordPreflightWarning RecordType = "preflight_warning"
	RecordStateRebuilt     RecordType = "state_rebuilt"
	RecordStateRestored    RecordType = "state_restored"
	RecordTempFilesRemoved RecordType = "temp_files_removed"
	RecordToolDenied       RecordType = "tool_denied"
	RecordWorkersKept      RecordType = "workers_kept"
	RecordWriteScopes      RecordType = "write_scopes"

	// Git (internal/app: the task branch, worktrees, checkpoint merges).
	RecordCheckoutDirty        RecordType = "checkout_dirty"
	RecordGitDisabled          RecordType = "git_disabled"
	RecordGitMerge             RecordType = "git_merge"
	RecordGitMergeConflict     RecordType = "git_merge_conflict"
	RecordGitMergeFailed       RecordType = "git_merge_failed"
	RecordGitTaskBranch        RecordType = "git_task_branch"
	RecordTaskBranchReady      RecordType = "task_branch_ready"
	RecordWorktreesPruneFailed RecordType = "worktrees_prune_failed"
	RecordWorktreesPruned      RecordType = "worktrees_pruned"

	// Remote hosts (internal/app: workers on other machines).
	RecordRemoteAssignmentFailed RecordType = "remote_assignment_failed"
	RecordRemoteCleanup          RecordType = "remote_cleanup"
	RecordRemoteFetchRetry       RecordType = "remote_fetch_retry"
	RecordRemoteHostChecked      RecordType = "remote_host_checked"
	RecordRemoteHostReady        RecordType = "remote_host_ready"
	RecordRemoteReaped           RecordType = "remote_reaped"
	RecordRemoteRefreshFailed    RecordType = "remote_refresh_failed"
	RecordRemoteSyncConnected    RecordType = "remote_sync_connected"
	RecordRemoteSyncLost         RecordType = "remote_sync_lost"
	RecordRemoteSyncRefused      RecordType = "remote_sync_refused"
	RecordRemoteUsageFailed      RecordType = "remote_usage_failed"
	// RecordRemoteWorkers notes where the workers run, so that --resume
	// places them on the same hosts (their worktrees are there).
	RecordRemoteWorkers RecordType = "remote_workers"

	// The workspace's own (the event log's repairs and reads).

	// RecordEventsTornLineDropped is appended when an appender finds a
	// torn last line (a crash mid-append) and drops it; details: bytes,
	// fragment.
	RecordEventsTornLineDropped RecordType = "events_torn_line_dropped"
	// RecordEventsBadLine is passed to FollowEvents callbacks for a line
	// that is not a valid event; details: offset, error, line.
	RecordEventsBadLine RecordType = "events_bad_line"

	// RecordInputAgentHealth logs the state machine's AgentHealth input
	// (engine/flow's event registry names every input kind; this one is
	// read back to explain an agent's exit).
	RecordInputAgentHealth RecordType = InputPrefix + "agent_health"
)

// InputPrefix starts the type of every record that logs an input event of
// the state machine ("input.<kind>", the kinds named by engine/flow's event
// registry), as opposed to the records above.
const InputPrefix = "input."

// InputRecord is the type of the record that logs an input event of kind
// kind.
func InputRecord(kind string) RecordType { return RecordType(InputPrefix + kind) }

// InputKind returns the kind of the input event t logs, and whether t is
// such a record.
func (t RecordType) InputKind() (kind string, ok bool) {
	return strings.CutPrefix(string(t), InputPrefix)
}

// Milestone reports whether records of type t are milestones of the run, the
// events a user follows it by (shown by default); every other record (agent
// health, injections, triggers seen, timers, assignments, input records)
// is detail, shown with `hivemind events --verbose` or `e` then `v`.
func (t RecordType) Milestone() bool {
	// No default: lint's exhaustive check names a new constant missing here.
	switch t {
	case RecordAbandoned,
		RecordAgentExited,
		RecordAgentHung,
		RecordAgentRateLimited,
		RecordAgentRestarted,
		RecordAgentTimeout,
		RecordAgentWaitingPermission,
		RecordCancelled,
		RecordCheckoutDirty,
		RecordCheckpointApproved,
		RecordCheckpointIssues,
		RecordCheckpointMerged,
		RecordCheckpointReached,
		RecordCommitRefused,
		RecordError,
		RecordEventsUnreadable,
		RecordFixDone,
		RecordFixRejected,
		RecordFixStarted,
		RecordFrictionFlowStarted,
		RecordFrictionRecorded,
		RecordGitCommitFailed,
		RecordGitDisabled,
		RecordGitTaskBranch,
		RecordInjectionFailed,
		RecordLockTakenOver,
		RecordMergeConflict,
		RecordMergeFailed,
		RecordNeedsHuman,
		RecordPaused,
		RecordPlanApproved,
		RecordPlanAwaitingHuman,
		RecordPlanDecision,
		RecordPlanDecisionRejected,
		RecordPlanFeedback,
		RecordPlanInvalid,
		RecordPlanSubmitted,
		RecordResumed,
		RecordResumedFromPause,
		RecordRetry,
		RecordRunnerError,
		RecordStateChanged,
		RecordStateRestored,
		RecordSubtaskAssigned,
		RecordSubtaskCommitted,
		RecordSubtaskDone,
		RecordSubtaskRejected,
		RecordTaskComplete,
		RecordTaskSubmitted,
		RecordWriteScopes:
		return true
	case RecordNotifyCommand,
		RecordProcessGuard,
		RecordAgentCannotStart,
		RecordAgentHangWarning,
		RecordAgentOverridden,
		RecordAgentPaused,
		RecordAgentRateLimitCleared,
		RecordAgentRestartScheduled,
		RecordAgentResumed,
		RecordAgentSpawned,
		RecordAgentStalled,
		RecordAgentUsage,
		RecordAgentsStopped,
		RecordAssignmentSent,
		RecordCheckpointStarted,
		RecordContextDuplicate,
		RecordContextIgnored,
		RecordContextMerged,
		RecordContextRejected,
		RecordContextSubmitted,
		RecordCostUnknown,
		RecordDeferredEventDropped,
		RecordDeferredEventsDropped,
		RecordDispatchHeld,
		RecordDispatchQueued,
		RecordDispatchResumed,
		RecordDispatchStillHeld,
		RecordEventDeferred,
		RecordGitMerge,
		RecordGitMergeConflict,
		RecordGitMergeFailed,
		RecordHeldDispatchDropped,
		RecordHivemindStopped,
		RecordInjectionCancelled,
		RecordKeyIgnored,
		RecordLeftoversReaped,
		RecordMergeRequested,
		RecordMergeResultIgnored,
		RecordNoticeDropped,
		RecordNoticeSkipped,
		RecordPreflightWarning,
		RecordProjectIgnored,
		RecordProjectSelected,
		RecordRemoteAssignmentFailed,
		RecordRemoteCleanup,
		RecordRemoteFetchRetry,
		RecordRemoteHostChecked,
		RecordRemoteHostReady,
		RecordRemoteReaped,
		RecordRemoteRefreshFailed,
		RecordRemoteSyncConnected,
		RecordRemoteSyncLost,
		RecordRemoteSyncRefused,
		RecordRemoteUsageFailed,
		RecordRemoteWorkers,
		RecordResendScheduled,
		RecordStateRebuilt,
		RecordSubtaskDoneIgnored,
		RecordTaskBranchReady,
		RecordTaskIgnored,
		RecordTempFilesRemoved,
		RecordTimerFired,
		RecordToolDenied,
		RecordTriggerConsumed,
		RecordTriggerDuplicate,
		RecordTriggerIgnored,
		RecordTriggerRefused,
		RecordTriggerRejected,
		RecordWorkersKept,
		RecordWorktreesPruneFailed,
		RecordWorktreesPruned,
		RecordEventsTornLineDropped,
		RecordEventsBadLine,
		RecordInputAgentHealth:
		return false
	}
	return false
}
