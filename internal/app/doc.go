// Package app wires and runs one Hivemind run: the workspace lock, the
// task (new or resumed), its state store and event log, git worktrees, the
// agents in their PTYs and the engine runner (New, in named steps), then
// runs it headless or under the full-screen UI (Run), or opens the UI's
// start screen (RunFrontDoor). It is the one package that imports tui: it
// implements tui.Launcher, so the UI starts, resumes and lists tasks
// through it.
package app
