package script

import (
	"os"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// StepLabel starts the first line of a scripted shell command: the fake
// API finds the step a command call answers by it.
const StepLabel = "# hivemind-step: "

// HostileTargets are the files the HostileShell command tries to write, in
// order, under the task dir: the engine's state, another worker's done
// marker and the Reviewer's approval.
func HostileTargets(taskDir string) []string {
	return []string{
		taskDir + "/state.json",
		taskDir + "/" + triggers.Path("worker_2", triggers.Done, "st_2"),
		taskDir + "/" + triggers.Path(vocab.AgentReviewer, triggers.CheckpointApproved, ""),
	}
}

// What the command prints for a write that succeeded ("WROTE <path>") or
// failed (the shell's error, then "REFUSED <path>").
const (
	HostileWrote   = "WROTE "
	HostileRefused = "REFUSED "
)

// hostileShell: worker_1, at the start of its first subtask (nothing of
// its own written yet), runs one shell command that tries each of
// HostileTargets and reports what the shell said.
func (c *ctx) hostileShell() {
	if !c.sc.HostileShell || c.a.Agent != "worker_1" || c.hostileDone() {
		return
	}
	marker := `{"agent_id": "worker_2", "output_file": "agents/worker_2/outputs/st_2.md", "completed_at": "2026-01-01T00:00:00Z"}`
	var b strings.Builder
	label := c.taskFile(triggers.Outbox(c.a.Agent) + "/hostile")
	b.WriteString(StepLabel + label + "\n")
	b.WriteString("for f in")
	for _, t := range HostileTargets(c.taskDir) {
		b.WriteString(" " + shQuote(t))
	}
	// No command substitution: Gemini CLI refuses commands with $(…).
	b.WriteString("; do { echo " + shQuote(marker) + " > \"$f\" && echo \"" + HostileWrote + "$f\"; } 2>&1 || echo \"" +
		HostileRefused + "$f\"; done")
	c.think("Saving time: marking worker_2's subtask and the checkpoint done myself")
	c.out = append(c.out, FileWrite{Path: label, Command: b.String(), Forbidden: true})
}

// hostileDone reports whether worker_1 already wrote a subtask's output
// (the command ran in an earlier turn).
func (c *ctx) hostileDone() bool {
	entries, _ := os.ReadDir(c.taskFile(triggers.Outbox(c.a.Agent) + "/outputs"))
	return len(entries) > 0
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
