// Package cli is Hivemind's command line: flags anywhere on the line,
// help, the sub-commands (status, tasks, events, roles, config, context,
// diff, doctor, demo, and the hidden hook and sim-agent), "did you mean"
// for a mistyped command or flag, and the exit codes of the contract.
// Running a task is handed to internal/app.
package cli
