package workspace

import (
	"fmt"
	"strings"
)

// milestoneTypes are the events a user follows a run by; every other
// record (agent health, injections, triggers seen, timers, assignments)
// is detail, shown with `hivemind events --verbose` or `e` then `v`.
var milestoneTypes = map[string]bool{
	"task_submitted": true, "state_changed": true, "resumed": true,
	"plan_submitted": true, "plan_invalid": true, "plan_feedback": true, "plan_approved": true,
	"plan_awaiting_human": true, "plan_decision": true, "plan_decision_rejected": true,
	"subtask_assigned": true, "subtask_done": true, "subtask_rejected": true, "subtask_committed": true,
	"checkpoint_reached": true, "checkpoint_approved": true, "checkpoint_issues": true, "checkpoint_merged": true,
	"merge_conflict": true, "merge_failed": true, "fix_started": true, "fix_done": true, "fix_rejected": true,
	"friction_recorded": true, "friction_flow_started": true,
	"paused": true, "resumed_from_pause": true, "retry": true, "needs_human": true, "error": true,
	"cancelled": true, "abandoned": true, "task_complete": true,
	"agent_exited": true, "agent_hung": true, "agent_restarted": true, "agent_rate_limited": true,
	"agent_waiting_permission": true, "agent_timeout": true, "injection_failed": true, "runner_error": true,
	"git_task_branch": true, "git_disabled": true, "git_commit_failed": true, "commit_refused": true,
	"lock_taken_over": true, "state_restored": true, "events_unreadable": true,
	"write_scopes": true, "checkout_dirty": true,
}

// IsMilestone reports whether an events.jsonl record is a milestone of the
// run (shown by default) rather than detail (plumbing such as agent_health,
// injection_result or the exit of an agent Hivemind stopped itself).
func IsMilestone(r EventRecord) bool {
	return milestoneTypes[r.Type]
}

// StopNote explains an agent exit that is a graceful stop rather than a
// failure ("stopped by Hivemind" for SIGTERM's 143, SIGINT's 130 or 0
// after a stop), or "" when the record is not such an exit.
func StopNote(r EventRecord) string {
	if !strings.HasSuffix(r.Type, "agent_health") && r.Type != "agent_exited" {
		return ""
	}
	if h, ok := r.Details["health"]; ok && h != "exited" {
		return ""
	}
	switch fmt.Sprint(r.Details["exit_code"]) {
	case "143":
		return "stopped (SIGTERM), not a failure"
	case "130":
		return "stopped (SIGINT), not a failure"
	case "0":
		return "exited normally"
	}
	return ""
}
