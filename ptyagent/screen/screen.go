// Package screen defines the terminal emulator seam: what a pane needs from
// an emulated screen, independent of which emulator implements it.

package screen

import "io"

// Modes are the terminal private modes a caller may need to know.
type Modes struct {
	AltScreen      bool // ?1049 / ?1047 / ?47
	BracketedPaste bool // ?2004
	FocusEvents    bool // ?1004
	MouseX10       bool // ?9
	MouseNormal    bool // ?1000
	MouseButton    bool // ?1002
	MouseAny       bool // ?1003
	MouseSGR       bool // ?1006
	CursorVisible  bool // ?25
	AppCursorKeys  bool // ?1 (DECCKM)
	SyncOutput     bool // ?2026
}

// decFlags are the private modes (DECSET/DECRST numbers) Modes records.
var decFlags = [...]struct {
	mode int
	flag func(*Modes) *bool
}{
	{1, func(m *Modes) *bool { return &m.AppCursorKeys }},
	{9, func(m *Modes) *bool { return &m.MouseX10 }},
	{25, func(m *Modes) *bool { return &m.CursorVisible }},
	{1000, func(m *Modes) *bool { return &m.MouseNormal }},
	{1002, func(m *Modes) *bool { return &m.MouseButton }},
	{1003, func(m *Modes) *bool { return &m.MouseAny }},
	{1004, func(m *Modes) *bool { return &m.FocusEvents }},
	{1006, func(m *Modes) *bool { return &m.MouseSGR }},
	{2004, func(m *Modes) *bool { return &m.BracketedPaste }},
	{2026, func(m *Modes) *bool { return &m.SyncOutput }},
}

// SetDEC records the private mode when it is one of Modes' flags; any
// other is the emulator's to act on or ignore.
func (m *Modes) SetDEC(mode int, on bool) {
	for _, d := range decFlags {
		if d.mode == mode {
			*d.flag(m) = on
			return
		}
	}
}

// MouseTracking reports whether the application asked for any mouse events.
func (m Modes) MouseTracking() bool {
	return m.MouseX10 || m.MouseNormal || m.MouseButton || m.MouseAny
}

// Options configure a new Screen.
type Options struct {
	Cols, Rows int
	// Scrollback is the number of lines kept above the screen (default 2000).
	Scrollback int
	// Reply receives the emulator's answers to terminal queries (DA1, DSR
	// CPR, DECRQM...). It must be written back to the PTY. May be nil.
	Reply io.Writer
}

// Screen is an emulated terminal screen. Implementations are not safe for
// concurrent use; the owner (ptyagent.Session) serialises access.
type Screen interface {
	// Write feeds output bytes of the child process. It never panics and
	// never returns an error for malformed input.
	Write(p []byte) (int, error)
	// Resize changes the screen size.
	Resize(cols, rows int)
	// Size returns the screen size.
	Size() (cols, rows int)
	// Lines renders the visible rows as styled strings (SGR sequences, each
	// line exactly cols cells wide, ending with a reset when styled). With
	// scroll > 0 the view is moved that many lines back into the scrollback.
	Lines(scroll int) []string
	// Text returns the visible screen as plain text, one line per row with
	// trailing spaces trimmed.
	Text() string
	// Cursor returns the cursor position (0-based) and visibility.
	Cursor() (x, y int, visible bool)
	// Title is the window title last set by OSC 0/2.
	Title() string
	// Modes returns the private modes currently set.
	Modes() Modes
	// ScrollbackLen is the number of lines currently held above the screen.
	ScrollbackLen() int
	// Version increases on every change that may alter what Lines, Text,
	// Cursor, Title or Modes return (every Write with bytes and every
	// Resize), so a renderer can skip panes whose version it already drew.
	Version() uint64
	// Close releases the emulator's resources.
	Close() error
}

// MaxControlString bounds a control string (OSC, DCS, …) an emulator
// withholds; longer ones are discarded.
const MaxControlString = 64 << 10

// DefaultScrollback is the scrollback length used when Options.Scrollback
// is zero.
const DefaultScrollback = 2000

// Normalized returns opts with defaults applied and sizes clamped to at
// least 1x1.
func (o Options) Normalized() Options {
	o.Cols = max(o.Cols, 1)
	o.Rows = max(o.Rows, 1)
	if o.Scrollback == 0 {
		o.Scrollback = DefaultScrollback
	}
	o.Scrollback = max(o.Scrollback, 0)
	return o
}

// New returns a Screen for opts: Hivemind's own emulator (see Term).
func New(opts Options) Screen {
	return newTerm(opts)
}
