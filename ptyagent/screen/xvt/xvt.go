// Package xvt is the guarded charmbracelet/x/vt emulator behind the
// screen.Screen interface, kept as a differential reference for
// ptyagent/screen's tests and the benchmarks (bench/ptybench -xvt). The
// product uses screen.New; this package keeps x/vt and ultraviolet out of
// the shipped binary.
package xvt

import (
	"fmt"
	"io"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// New returns a Screen backed by charmbracelet/x/vt with the guards the
// pinned revision needs: a pre-filter for the C1 trap, replies drained in
// their own goroutine, recover around Write, DECSTBM clamped and the
// scrollback capped. screen.New returns Hivemind's own emulator.
func New(opts screen.Options) screen.Screen {
	opts = opts.Normalized()
	s := &vtScreen{
		emu:  vt.NewEmulator(opts.Cols, opts.Rows),
		cols: opts.Cols,
		rows: opts.Rows,
		done: make(chan struct{}),
	}
	s.modes.CursorVisible = true
	s.emu.SetScrollbackSize(opts.Scrollback)
	s.f.rows = opts.Rows
	s.f.title = func(t string) { s.title = t }
	s.emu.SetCallbacks(vt.Callbacks{
		EnableMode:       func(m ansi.Mode) { s.setMode(m, true) },
		DisableMode:      func(m ansi.Mode) { s.setMode(m, false) },
		CursorVisibility: func(v bool) { s.modes.CursorVisible = v },
		AltScreen:        func(on bool) { s.modes.AltScreen = on },
	})
	reply := opts.Reply
	// x/vt writes replies into an unbuffered pipe: without a reader Write
	// blocks forever, so drain it for the emulator's whole life.
	go func() {
		defer close(s.done)
		buf := make([]byte, 256)
		for {
			n, err := s.emu.Read(buf)
			if n > 0 && reply != nil {
				_, _ = reply.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

type vtScreen struct {
	emu        *vt.Emulator
	f          filter
	buf        []byte
	title      string
	modes      screen.Modes
	cols, rows int
	done       chan struct{}
	closed     bool
	version    uint64
	panics     int
}

func (s *vtScreen) setMode(m ansi.Mode, on bool) {
	if dm, ok := m.(ansi.DECMode); ok {
		s.modes.SetDEC(int(dm), on)
	}
}

func (s *vtScreen) Write(p []byte) (int, error) {
	if s.closed || len(p) == 0 {
		return len(p), nil
	}
	s.version++
	s.buf = s.f.run(s.buf[:0], p)
	if len(s.buf) > 0 {
		s.feed(s.buf)
	}
	return len(p), nil
}

// feed writes to the emulator and contains its panics (a scroll region
// taller than the screen followed by SU/SD/IL/DL panics in x/vt; the filter
// clamps DECSTBM, this is the last line of defence). The rest of a chunk
// that panicked is lost, never the process.
func (s *vtScreen) feed(p []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.panics++
		}
	}()
	_, _ = s.emu.Write(p)
}

func (s *vtScreen) Resize(cols, rows int) {
	if cols < 1 || rows < 1 || s.closed {
		return
	}
	if cols == s.cols && rows == s.rows {
		return
	}
	s.cols, s.rows = cols, rows
	s.f.rows = rows
	s.version++
	func() {
		defer func() { _ = recover() }()
		s.emu.Resize(cols, rows)
	}()
}

func (s *vtScreen) Size() (int, int) { return s.cols, s.rows }

func (s *vtScreen) Lines(scroll int) []string {
	out := make([]string, s.rows)
	if s.closed {
		pad := strings.Repeat(" ", s.cols)
		for i := range out {
			out[i] = pad
		}
		return out
	}
	sb := s.emu.Scrollback()
	scroll = max(0, min(scroll, s.ScrollbackLen()))
	if s.modes.AltScreen {
		scroll = 0
	}
	var b strings.Builder
	for y := 0; y < s.rows; y++ {
		b.Reset()
		var line uv.Line
		if y < scroll {
			line = sb.Line(sb.Len() - scroll + y)
		} else {
			line = make(uv.Line, s.cols)
			for x := 0; x < s.cols; x++ {
				if c := s.emu.CellAt(x, y-scroll); c != nil {
					line[x] = *c
				}
			}
		}
		renderUV(&b, line, s.cols)
		out[y] = b.String()
	}
	return out
}

// renderUV renders cells as exactly cols columns with SGR styles.
func renderUV(b *strings.Builder, line uv.Line, cols int) {
	var pen uv.Style
	w := 0
	for x := 0; x < len(line) && w < cols; x++ {
		c := &line[x]
		if c.Width == 0 && c.Content == "" && x > 0 && line[x-1].Width > 1 {
			continue // wide-char continuation
		}
		cw := c.Width
		content := c.Content
		if content == "" || cw < 1 {
			content, cw = " ", 1
		}
		if w+cw > cols {
			break
		}
		if !c.Style.Equal(&pen) {
			if c.Style.IsZero() {
				b.WriteString(ansi.ResetStyle)
			} else {
				b.WriteString(ansi.ResetStyle)
				b.WriteString(c.Style.String())
			}
			pen = c.Style
		}
		b.WriteString(content)
		w += cw
	}
	if !pen.IsZero() {
		b.WriteString(ansi.ResetStyle)
	}
	for ; w < cols; w++ {
		b.WriteByte(' ')
	}
}

func (s *vtScreen) Text() string {
	if s.closed {
		return ""
	}
	var b strings.Builder
	for y := 0; y < s.rows; y++ {
		var lb strings.Builder
		for x := 0; x < s.cols; x++ {
			c := s.emu.CellAt(x, y)
			if c == nil || (c.Width == 0 && c.Content == "") {
				if c == nil {
					lb.WriteByte(' ')
				}
				continue
			}
			if c.Content == "" {
				lb.WriteByte(' ')
				continue
			}
			lb.WriteString(c.Content)
		}
		b.WriteString(strings.TrimRight(lb.String(), " "))
		if y < s.rows-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (s *vtScreen) Cursor() (int, int, bool) {
	p := s.emu.CursorPosition()
	x := max(0, min(p.X, s.cols-1))
	y := max(0, min(p.Y, s.rows-1))
	return x, y, s.modes.CursorVisible
}

func (s *vtScreen) Title() string       { return s.title }
func (s *vtScreen) Modes() screen.Modes { return s.modes }
func (s *vtScreen) Version() uint64     { return s.version }

func (s *vtScreen) ScrollbackLen() int {
	if s.closed {
		return 0
	}
	return s.emu.ScrollbackLen()
}

// Close shuts down in the order x/vt needs: close the reply pipe's write
// end so the drain goroutine sees EOF, wait for it, then Close the
// emulator (the other order is a data race on its closed flag).
func (s *vtScreen) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if pw, ok := s.emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	}
	<-s.done
	if err := s.emu.Close(); err != nil {
		return fmt.Errorf("screen: close emulator: %w", err)
	}
	return nil
}
