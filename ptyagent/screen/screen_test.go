package screen

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/hivemind-dev/hivemind/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// NewVT is the x/vt reference emulator (xvt.New), set by xvt_test.go: an
// external test file, since package xvt imports screen.
var NewVT func(Options) Screen

// forEach runs a behaviour test against every Screen implementation.
func forEach(t *testing.T, f func(t *testing.T, mk func(Options) Screen)) {
	t.Helper()
	impls := []struct {
		name string
		new  func(Options) Screen
	}{
		{"default", New},
		{"vt", NewVT},
	}
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { f(t, im.new) })
	}
}

func newScreen(t *testing.T, mk func(Options) Screen, cols, rows int) Screen {
	t.Helper()
	s := mk(Options{Cols: cols, Rows: rows})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func write(s Screen, str string) { _, _ = s.Write([]byte(str)) }

func checkInvariants(t *testing.T, s Screen) {
	t.Helper()
	cols, rows := s.Size()
	for _, scroll := range []int{0, s.ScrollbackLen()} {
		lines := s.Lines(scroll)
		if len(lines) != rows {
			t.Fatalf("Lines(%d): %d lines, want %d", scroll, len(lines), rows)
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w != cols {
				t.Fatalf("Lines(%d)[%d] width %d, want %d: %q", scroll, i, w, cols, l)
			}
		}
	}
	x, y, _ := s.Cursor()
	if x < 0 || x >= cols || y < 0 || y >= rows {
		t.Fatalf("cursor (%d,%d) outside %dx%d", x, y, cols, rows)
	}
}

func TestColours(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 20, 3)
		write(s, "\x1b[31mred\x1b[0m \x1b[1;38;2;1;2;3mbold\x1b[m \x1b[48;5;200mbg\x1b[0m")
		l := s.Lines(0)[0]
		if ansi.Strip(l) != "red bold bg         " {
			t.Fatalf("plain %q", ansi.Strip(l))
		}
		for _, want := range []string{"31", "38;2;1;2;3", "48;5;200"} {
			if !strings.Contains(l, want) {
				t.Errorf("line %q lacks %q", l, want)
			}
		}
		if !strings.HasSuffix(strings.TrimRight(l, " "), "\x1b[m") {
			t.Errorf("styled line does not end with a reset: %q", l)
		}
		checkInvariants(t, s)
	})
}

func TestCursorMoves(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 5)
		write(s, "ab\r\ncd")
		if x, y, v := s.Cursor(); x != 2 || y != 1 || !v {
			t.Fatalf("cursor %d,%d,%v", x, y, v)
		}
		write(s, "\x1b[4;7H*\x1b[?25l")
		if x, y, v := s.Cursor(); x != 7 || y != 3 || v {
			t.Fatalf("cursor %d,%d,%v", x, y, v)
		}
		if got := s.Text(); got != "ab\ncd\n\n      *\n" {
			t.Fatalf("text %q", got)
		}
	})
}

func TestAltScreen(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 3)
		write(s, "main")
		write(s, "\x1b[?1049h")
		if !s.Modes().AltScreen {
			t.Fatal("alt screen not reported")
		}
		write(s, "\x1b[Halt")
		if got := s.Text(); got != "alt\n\n" {
			t.Fatalf("alt text %q", got)
		}
		write(s, "\x1b[?1049l")
		if s.Modes().AltScreen {
			t.Fatal("alt screen still reported")
		}
		if got := s.Text(); got != "main\n\n" {
			t.Fatalf("main text %q", got)
		}
		if x, y, _ := s.Cursor(); x != 4 || y != 0 {
			t.Fatalf("cursor not restored: %d,%d", x, y)
		}
	})
}

func TestModes(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 3)
		write(s, "\x1b[?2004h\x1b[?1004h\x1b[?1000h\x1b[?1006h\x1b[?1h\x1b[?2026h")
		m := s.Modes()
		if !m.BracketedPaste || !m.FocusEvents || !m.MouseNormal || !m.MouseSGR || !m.AppCursorKeys || !m.SyncOutput || !m.MouseTracking() {
			t.Fatalf("modes %+v", m)
		}
		write(s, "\x1b[?2004l\x1b[?1000l\x1b[?2026l")
		m = s.Modes()
		if m.BracketedPaste || m.MouseTracking() || m.SyncOutput {
			t.Fatalf("modes %+v", m)
		}
	})
}

func TestWideChars(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 3)
		write(s, "日本語x")
		if got := s.Text(); got != "日本語x\n\n" {
			t.Fatalf("text %q", got)
		}
		if x, _, _ := s.Cursor(); x != 7 {
			t.Fatalf("cursor x %d", x)
		}
		checkInvariants(t, s)
	})
}

// TestClaudeTitle is the regression test for the C1 trap: ✳ is E2 9C B3 and
// a parser that takes 0x9C as the string terminator prints " Claude Code".
func TestClaudeTitle(t *testing.T) {
	const seq = "\x1b]0;✳ Claude Code\x07"
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		for _, split := range []bool{false, true} {
			s := newScreen(t, mk, 30, 3)
			if split {
				for i := range len(seq) {
					write(s, seq[i:i+1])
				}
			} else {
				write(s, seq)
			}
			if got := s.Text(); got != "\n\n" {
				t.Fatalf("stray text %q", got)
			}
			if got := s.Title(); got != "✳ Claude Code" {
				t.Fatalf("title %q", got)
			}
			if x, y, _ := s.Cursor(); x != 0 || y != 0 {
				t.Fatalf("cursor moved to %d,%d", x, y)
			}
			write(s, "\x1b]2;a;b ✻\x1b\\ok")
			if got := s.Title(); got != "a;b ✻" {
				t.Fatalf("title %q", got)
			}
			if got := s.Text(); got != "ok\n\n" {
				t.Fatalf("text %q", got)
			}
		}
	})
}

func TestControlStringsDoNotLeak(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 30, 3)
		write(s, "\x1bPq✳data\x1b\\\x1b_Gé✳\x1b\\\x1b^pm✳\x07\x1bXsos\x9c")
		write(s, "\x1b]8;;https://example.com/✳\x07link\x1b]8;;\x07")
		write(s, "\x9b\x90\xff")
		if got := s.Text(); got != "link\n\n" {
			t.Fatalf("text %q", got)
		}
	})
}

// TestScrollRegionTallerThanScreen feeds the input that panics x/vt.
func TestScrollRegionTallerThanScreen(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 5)
		write(s, "a\r\nb\r\nc")
		for _, seq := range []string{"\x1b[1;50r\x1b[3S", "\x1b[2;90r\x1b[2T", "\x1b[0;99r\x1b[2;1H\x1b[4L", "\x1b[1;70r\x1b[3M", "\x1b[5;2r\x1b[9S"} {
			write(s, seq)
			checkInvariants(t, s)
		}
		write(s, "\x1b[r\x1b[Hok")
		if !strings.HasPrefix(s.Text(), "ok") {
			t.Fatalf("screen unusable after bad regions: %q", s.Text())
		}
	})
}

// syncBuffer is a Reply writer safe for the drain goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 5*time.Second, what, cond)
}

func TestReplies(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		var rb syncBuffer
		s := mk(Options{Cols: 20, Rows: 5, Reply: &rb})
		defer func() { _ = s.Close() }()
		write(s, "ab\r\ncde\x1b[c\x1b[6n")
		waitFor(t, "DA1 and CPR replies", func() bool {
			r := rb.String()
			return strings.Contains(r, "\x1b[?") && strings.HasSuffix(r, "c\x1b[2;4R")
		})
	})
}

func TestScrollbackCapAndView(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := mk(Options{Cols: 12, Rows: 3, Scrollback: 50})
		defer func() { _ = s.Close() }()
		for i := range 200 {
			write(s, "line "+strconv.Itoa(i)+"\r\n")
		}
		if n := s.ScrollbackLen(); n != 50 {
			t.Fatalf("scrollback %d, want 50", n)
		}
		view := s.Lines(2)
		if got := strings.TrimRight(ansi.Strip(view[0]), " "); got != "line 196" {
			t.Fatalf("scrolled view row 0 %q", got)
		}
		if got := strings.TrimRight(ansi.Strip(view[2]), " "); got != "line 198" {
			t.Fatalf("scrolled view row 2 %q", got)
		}
		checkInvariants(t, s)
	})
}

func TestResize(t *testing.T) {
	forEach(t, func(t *testing.T, mk func(Options) Screen) {
		s := newScreen(t, mk, 10, 5)
		write(s, "hello\r\nworld")
		v := s.Version()
		s.Resize(20, 8)
		if c, r := s.Size(); c != 20 || r != 8 {
			t.Fatalf("size %dx%d", c, r)
		}
		if s.Version() == v {
			t.Fatal("version unchanged by resize")
		}
		checkInvariants(t, s)
		s.Resize(4, 2)
		checkInvariants(t, s)
	})
}

// TestResizeRewrapsText is issue 19's zoom and unzoom: a line soft-wrapped
// at one width is whole again at another, in the scrollback and on the
// screen, and the cursor stays after the prompt.
func TestResizeRewrapsText(t *testing.T) {
	const msg = "● Revised plan written (revision 2), addressing the reviewer's feedback."
	s := newTerm(Options{Cols: 80, Rows: 6})
	defer func() { _ = s.Close() }()
	write(s, "line one\r\n"+msg+"\r\n> ")
	for _, cols := range []int{24, 11, 7, 33, 80} {
		s.Resize(cols, 6)
		rows := []*line{}
		for i := range s.sb.len() {
			l := &line{}
			s.decode(s.sb.get(i), l, true)
			rows = append(rows, l)
		}
		var all []string
		var cur []cell
		for _, l := range append(rows, s.scr...) {
			cur = append(cur, l.c...)
			if !l.wrapped {
				all = append(all, s.lineText(cur))
				cur = nil
			}
		}
		if len(all) < 3 || all[0] != "line one" || all[1] != msg || all[2] != ">" {
			t.Fatalf("at %d columns the lines are %q", cols, all)
		}
		if x, y, _ := s.Cursor(); s.lineText(s.scr[y].c) != ">" || x != 2 {
			t.Fatalf("at %d columns the cursor is at (%d,%d) on %q", cols, x, y, s.lineText(s.scr[y].c))
		}
	}
	if got := strings.Split(s.Text(), "\n")[1]; got != msg {
		t.Fatalf("back at 80 columns row 1 is %q", got)
	}
}

// TestResizeHeightKeepsCursorRows checks tmux's rule when the height
// shrinks: rows below the cursor go first, whatever they hold, then rows
// from the top move into the scrollback; growing brings them back.
func TestResizeHeightKeepsCursorRows(t *testing.T) {
	s := newTerm(Options{Cols: 10, Rows: 6})
	defer func() { _ = s.Close() }()
	write(s, "a\r\nb\r\nc\r\nd\r\ne\r\nf\x1b[3;1H")
	s.Resize(10, 3)
	if got := s.Text(); got != "a\nb\nc" {
		t.Fatalf("after shrinking to 3 rows the screen is %q", got)
	}
	if s.ScrollbackLen() != 0 {
		t.Fatalf("scrollback %d lines, want 0 (the rows below the cursor are dropped)", s.ScrollbackLen())
	}
	s.Resize(10, 2)
	if got := s.Text(); got != "b\nc" || s.ScrollbackLen() != 1 {
		t.Fatalf("after shrinking to 2 rows: screen %q, scrollback %d", got, s.ScrollbackLen())
	}
	s.Resize(10, 4)
	if got := s.Text(); got != "a\nb\nc\n" || s.ScrollbackLen() != 0 {
		t.Fatalf("after growing to 4 rows: screen %q, scrollback %d", got, s.ScrollbackLen())
	}
	if x, y, _ := s.Cursor(); x != 0 || y != 2 {
		t.Fatalf("cursor (%d,%d), want (0,2)", x, y)
	}
}

// TestResizeAltScreenNotReflowed checks that the alternate screen is cut,
// not reflowed, and that the main screen takes the new size when the
// program leaves the alternate screen.
func TestResizeAltScreenNotReflowed(t *testing.T) {
	s := newTerm(Options{Cols: 10, Rows: 3})
	defer func() { _ = s.Close() }()
	write(s, "0123456789abcdef\x1b[?1049h\x1b[Halt screen")
	s.Resize(5, 3)
	if got := s.Text(); got != "alt s\n\n" {
		t.Fatalf("alternate screen at 5 columns %q", got)
	}
	s.Resize(12, 3)
	if got := s.Text(); got != "alt screen\n\n" {
		t.Fatalf("alternate screen back at 12 columns %q (tmux keeps the cells cut)", got)
	}
	write(s, "\x1b[?1049l")
	if got := s.Text(); got != "0123456789ab\ncdef\n" {
		t.Fatalf("main screen after leaving at 12 columns %q", got)
	}
	if x, y, _ := s.Cursor(); x != 4 || y != 1 {
		t.Fatalf("cursor (%d,%d), want (4,1)", x, y)
	}
}
