// Package screen owns terminal emulation for agent panes: the Screen
// interface, Hivemind's own emulator behind New (Term: x/ansi parser,
// wcwidth-compatible widths, rows held by pointer so scrolling moves
// pointers, interned styles, compact capped scrollback, tmux-identical
// screens on the issue-8 workload, tmux's reflow on resize: see reflow.go).
// Subpackage xvt is the guarded charmbracelet/x/vt emulator kept as a
// differential reference (tests and benchmarks only, so the shipped binary
// does not link x/vt).
//
// Subpackage workload generates the deterministic agent-like stream used
// by the benchmarks, the differential test against tmux and the fuzz seeds.
package screen
