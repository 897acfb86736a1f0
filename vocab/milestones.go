package vocab

import "fmt"

// IsMilestone reports whether an events.jsonl record is a milestone of the
// run (shown by default) rather than detail (plumbing such as agent_health,
// injection_result or the exit of an agent Hivemind stopped itself).
func IsMilestone(r EventRecord) bool {
	return r.Type.Milestone()
}

// StopNote explains an agent exit that is a graceful stop rather than a
// failure ("stopped by Hivemind" for SIGTERM's 143, SIGINT's 130 or 0
// after a stop), or "" when the record is not such an exit.
func StopNote(r EventRecord) string {
	if r.Type != RecordInputAgentHealth && r.Type != RecordAgentExited {
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
