package tui

import tea "charm.land/bubbletea/v2"

// NewProgram returns a tea.Program running New(opts), with bubbletea's
// renderer capped at the same frame rate as the model and without
// bubbletea's signal handler: the caller owns SIGINT/SIGTERM/SIGHUP and
// quits the program (p.Quit) itself. Two owners deadlock: bubbletea's
// handler blocks for ever sending its QuitMsg to an event loop that
// another owner's Quit has already ended, while Program.shutdown waits
// for that handler. Keys for the attached pane go straight to it
// (KeyFilter). Extra options (for example tea.WithContext,
// tea.WithInput/WithOutput) are applied after.
//
// Wiring, as internal/app (frontdoor.go) does it:
//
//	p := tui.NewProgram(tui.Options{Launcher: l, Session: &sess, FPS: cfg.FPS})
//	go func() { for s := range snapshots { p.Send(tui.SnapshotMsg{State: s.State, Events: s.Events, Knowledge: s.Knowledge}) } }()
//	go func() { for n := range notices { p.Send(tui.NotifyMsg{Level: n.Level, Message: n.Text}) } }()
//	_, err := p.Run() // returns after q (or ctrl+c twice); then stop the agents
func NewProgram(opts Options, extra ...tea.ProgramOption) *tea.Program {
	m := New(opts)
	po := append([]tea.ProgramOption{tea.WithFPS(m.run.opts.FPS), tea.WithoutSignalHandler(), tea.WithFilter(KeyFilter)}, extra...)
	return tea.NewProgram(m, po...)
}
