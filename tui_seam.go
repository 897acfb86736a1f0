package main

// runTUI runs the full-screen UI for a wired-up app and returns the exit
// code. ok is false when no UI can run (then the caller runs headless).
//
// Seam for the TUI: build tui.New(tui.Options{...}) from a.runner (the
// Engine: Pause/Resume/Cancel/Retry/Abandon, Snapshot), a.agents (the
// sessions' screens, Changed()) and a.onSnapshot (set it before starting
// the runner to forward snapshots with program.Send).
func runTUI(a *app) (code int, ok bool) {
	_ = a
	return 0, false
}
