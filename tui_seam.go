package main

import (
	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/tui"
)

// snapshotMsg is the UI's copy of a runner snapshot: the state, the event
// tail and the shared context (decisions, constraints, glossary) that the
// runner keeps loaded off the UI goroutine.
func snapshotMsg(s engine.Snapshot) tui.SnapshotMsg {
	return tui.SnapshotMsg{State: s.State, Events: s.Events, Knowledge: s.Knowledge}
}

// runTUI runs the full-screen UI for a wired-up app and returns the exit
// code. ok is false when no UI can run (stdout is not a terminal); then the
// caller runs headless.
//
// The UI stays up after the task reaches a final state so the user can read
// it (and its summary); from there the user may go on to the start screen
// and a new task (runFrontDoor, cmd_start.go). Quitting before the task is
// over leaves it resumable (hivemind --resume).
func runTUI(a *app) (code int, ok bool) {
	if !isTerminal() {
		return 0, false
	}
	return runFrontDoor(a.opts, a), true
}

var _ tui.Launcher = (*launcher)(nil)

// title is the header text of the UI: the task's first line.
func (a *app) title() string {
	t, err := a.td.Task()
	if err != nil {
		return a.td.ID()
	}
	return firstLineOf(t.Description)
}
