package proto

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// TestPaneDiffsLoseNothingAcrossReattach streams random terminal output
// (text, colours, cursor moves, clears, scrolling, resizes, scrollback
// views) into a server-side emulator and sends it to a client over a real
// socket as row diffs; the client detaches and attaches again (a new
// Sender and Mirror: a fresh connection) at random points, 100 times.
// After every update the client's rows equal the emulator's: no row lost,
// none stale, none duplicated.
func TestPaneDiffsLoseNothingAcrossReattach(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	scr := screen.New(screen.Options{Cols: 40, Rows: 12, Scrollback: 50})
	term := &lockedScreen{s: scr}
	const gen = 1
	attaches := 0
	for attaches < 100 {
		attaches++
		a, b := net.Pipe()
		srv, cli := NewConn(a), NewConn(b)
		var snd Sender
		var mir Mirror
		steps := 1 + rng.IntN(30)
		for i := range steps {
			feed(rng, scr)
			scroll := 0
			if rng.IntN(5) == 0 {
				scroll = rng.IntN(scr.ScrollbackLen() + 1)
			}
			p, changed := snd.Update("worker-1", term, gen, scroll)
			if i == 0 && !changed {
				t.Fatal("the first update of a new client sent nothing")
			}
			if changed {
				go func() { _ = srv.Send(Msg{T: TPane, Pane: &p}) }()
				m, err := cli.Recv()
				if err != nil {
					t.Fatal(err)
				}
				mir.Apply(*m.Pane)
			}
			if want := scr.Lines(scroll); !slices.Equal(mir.Rows, want) {
				t.Fatalf("attach %d step %d: the client's rows differ from the emulator's:\nclient: %q\nserver: %q", attaches, i, mir.Rows, want)
			}
			if mir.Back != scr.ScrollbackLen() || mir.Modes != scr.Modes() {
				t.Fatalf("attach %d step %d: scrollback %d/%d, modes differ", attaches, i, mir.Back, scr.ScrollbackLen())
			}
		}
		_ = srv.Close()
		_ = cli.Close()
	}
}

// TestPaneSendsOnlyChangedRows: one changed row costs one row.
func TestPaneSendsOnlyChangedRows(t *testing.T) {
	scr := screen.New(screen.Options{Cols: 20, Rows: 5})
	term := &lockedScreen{s: scr}
	var snd Sender
	p, _ := snd.Update("lead", term, 1, 0)
	if len(p.Set) != 5 {
		t.Fatalf("first update sent %d rows, want all 5", len(p.Set))
	}
	if _, changed := snd.Update("lead", term, 1, 0); changed {
		t.Fatal("an unchanged screen sent an update")
	}
	_, _ = scr.Write([]byte("\x1b[3;1Hhello"))
	p, changed := snd.Update("lead", term, 1, 0)
	if !changed || len(p.Set) != 1 || p.Set[0].I != 2 {
		t.Fatalf("one changed row sent %+v", p.Set)
	}
	// A restarted agent (a new generation) resends everything.
	p, _ = snd.Update("lead", term, 2, 0)
	if len(p.Set) != 5 {
		t.Fatalf("a new generation sent %d rows, want 5", len(p.Set))
	}
}

func TestHelloVersionMismatchNamesServerVersion(t *testing.T) {
	err := CheckHello(Msg{T: THello, Version: Version + 1, Binary: "v9", Kind: KindUI}, "v1.2.3")
	if err == nil || !strings.Contains(err.Error(), "v1.2.3") || !strings.Contains(err.Error(), fmt.Sprint(Version)) {
		t.Fatalf("mismatch error %v does not name the server's version", err)
	}
	if err := CheckHello(Msg{T: THello, Version: Version, Kind: KindUI}, "x"); err != nil {
		t.Fatal(err)
	}
	if err := CheckHello(Msg{T: TInput, Version: Version}, "x"); err == nil {
		t.Fatal("a first message that is not a hello was taken")
	}
}

func TestRecvRefusesOverlongLine(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		_, _ = a.Write([]byte(strings.Repeat("x", MaxLine+10) + "\n"))
		_ = a.Close()
	}()
	if _, err := NewConn(b).Recv(); err != ErrTooLong {
		t.Fatalf("got %v, want ErrTooLong", err)
	}
}

// lockedScreen gives a screen.Screen the Screen interface (the test is one
// goroutine: no lock needed).
type lockedScreen struct{ s screen.Screen }

func (l *lockedScreen) Lines(n int) []string { return l.s.Lines(n) }
func (l *lockedScreen) Version() uint64      { return l.s.Version() }
func (l *lockedScreen) Modes() screen.Modes  { return l.s.Modes() }
func (l *lockedScreen) ScrollbackLen() int   { return l.s.ScrollbackLen() }

// feed writes a random burst of terminal output, sometimes resizing.
func feed(rng *rand.Rand, s screen.Screen) {
	if rng.IntN(15) == 0 {
		s.Resize(20+rng.IntN(40), 5+rng.IntN(15))
	}
	var b strings.Builder
	for range rng.IntN(8) {
		switch rng.IntN(8) {
		case 0:
			fmt.Fprintf(&b, "\x1b[%d;%dH", 1+rng.IntN(20), 1+rng.IntN(60))
		case 1:
			fmt.Fprintf(&b, "\x1b[3%dm", rng.IntN(8))
		case 2:
			b.WriteString("\x1b[2K")
		case 3:
			b.WriteString("\r\n")
		case 4:
			b.WriteString("\x1b[?1h") // a mode change alone
		case 5:
			if rng.IntN(10) == 0 {
				b.WriteString("\x1b[2J")
			}
		default:
			fmt.Fprintf(&b, "line %d ünï %x ", rng.IntN(1000), rng.Uint32())
		}
	}
	_, _ = s.Write([]byte(b.String()))
}

type cursorScreen struct{ lockedScreen }

func (c *cursorScreen) Cursor() (int, int, bool) { return c.s.Cursor() }

// A cursor that moves with no row changing is an update of its own, and
// the mirror has it where the emulator has it.
func TestPaneCarriesCursor(t *testing.T) {
	scr := screen.New(screen.Options{Cols: 20, Rows: 5})
	term := &cursorScreen{lockedScreen{s: scr}}
	var snd Sender
	var mir Mirror
	_, _ = scr.Write([]byte("hello\r\nworld"))
	p, changed := snd.Update("lead", term, 1, 0)
	if !changed || p.Cursor == nil || *p.Cursor != (Cursor{X: 5, Y: 1, Visible: true}) {
		t.Fatalf("first update: changed %v, cursor %+v; want (5,1) visible", changed, p.Cursor)
	}
	mir.Apply(p)
	_, _ = scr.Write([]byte("\x1b[1;3H")) // the cursor alone moves
	p, changed = snd.Update("lead", term, 1, 0)
	if !changed || len(p.Set) != 0 || p.Cursor == nil || *p.Cursor != (Cursor{X: 2, Y: 0, Visible: true}) {
		t.Fatalf("after a cursor move: changed %v, rows %d, cursor %+v; want the cursor at (2,0) alone", changed, len(p.Set), p.Cursor)
	}
	mir.Apply(p)
	if mir.Cursor == nil || *mir.Cursor != *p.Cursor {
		t.Fatalf("mirror cursor %+v", mir.Cursor)
	}
	if _, changed = snd.Update("lead", term, 1, 0); changed {
		t.Fatal("an update with nothing changed")
	}
}

// Hold: a pane asked at fps waits 1/fps after its last update for new
// content only; a first update, a new scroll position or terminal, and a
// pane with nothing new go at once.
func TestSenderHoldsNewContentToItsRate(t *testing.T) {
	scr := screen.New(screen.Options{Cols: 20, Rows: 4})
	term := &lockedScreen{s: scr}
	var snd Sender
	t0 := time.Unix(1000, 0)
	if d := snd.Hold(term, 1, 0, 10, t0); d != 0 {
		t.Fatalf("first update held %v", d)
	}
	if _, changed := snd.UpdateAt("lead", term, 1, 0, t0); !changed {
		t.Fatal("first update unchanged")
	}
	if d := snd.Hold(term, 1, 0, 10, t0.Add(10*time.Millisecond)); d != 0 {
		t.Fatalf("nothing new, held %v", d)
	}
	_, _ = scr.Write([]byte("new"))
	for _, c := range []struct {
		what   string
		gen    uint64
		scroll int
		fps    int
		at     time.Duration
		want   time.Duration
	}{
		{"new content 30 ms after", 1, 0, 10, 30 * time.Millisecond, 70 * time.Millisecond},
		{"new content when due", 1, 0, 10, 100 * time.Millisecond, 0},
		{"no cap", 1, 0, 0, 30 * time.Millisecond, 0},
		{"a new scroll position", 1, 3, 10, 30 * time.Millisecond, 0},
		{"a new terminal", 2, 0, 10, 30 * time.Millisecond, 0},
	} {
		if d := snd.Hold(term, c.gen, c.scroll, c.fps, t0.Add(c.at)); d != c.want {
			t.Errorf("%s: held %v, want %v", c.what, d, c.want)
		}
	}
}
