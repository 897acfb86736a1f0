// Package tui is Hivemind's full-screen terminal interface: one live pane per
// agent in a grid, a status bar with the workflow state, an event-log strip,
// help, focus/zoom/attach, and notifications.
//
// The package reaches the rest of the program through its seams: it reads
// agent screens through [Terminals], sends user commands through [Engine],
// and receives engine snapshots as [SnapshotMsg] and notices as [NotifyMsg]
// (sent by the caller with tea.Program.Send). Its only I/O of its own is
// reading a finished task's outputs and friction notes for the summary
// (summary.go), in a tea.Cmd, off the render path. It never writes
// workspace files and never starts processes.
//
// Rendering follows a budget: a frame is composed only when an agent screen
// signalled a change (coalesced; capped at Options.FPS for the attached pane
// and at Options.UnfocusedFPS, in one shared slot, for all the others) or
// the model itself changed; every pane's rendered block is cached until its screen, size,
// focus or title changes; rows are stitched with plain string concatenation
// because every pane row's width is known. When nothing changes nothing runs
// (the only timers are the one-second clock while the task runs and the
// spinner while an agent is busy).
package tui
