package proto

import (
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Screen is what the server reads of an agent's terminal (a
// *ptyagent.Session; the TUI's Terminal has these methods).
type Screen interface {
	Lines(scroll int) []string
	Version() uint64
	Modes() screen.Modes
	ScrollbackLen() int
}

// Cursorer is a Screen that says where its cursor is (a Pane then
// carries it).
type Cursorer interface {
	Cursor() (x, y int, visible bool)
}

// Sender is the server's side of one pane for one client: what it sent
// last, to send only the rows that changed since.
type Sender struct {
	term   Screen // the terminal the rows are of
	gen    uint64
	ver    uint64
	scroll int
	back   int
	modes  screen.Modes
	rows   []string
	cursor *Cursor
	sent   bool
	at     time.Time // when the last update was made
}

// Update returns the update that brings the client's copy to t's rows
// scrolled scroll lines back, and false when nothing changed since the
// last one. gen is t's generation (a new terminal of the agent: a new gen
// resends every row).
func (s *Sender) Update(id vocab.AgentID, t Screen, gen uint64, scroll int) (Pane, bool) {
	return s.UpdateAt(id, t, gen, scroll, time.Now())
}

// UpdateAt is Update made at now (the time Hold counts from).
func (s *Sender) UpdateAt(id vocab.AgentID, t Screen, gen uint64, scroll int, now time.Time) (Pane, bool) {
	fresh := !s.sent || gen != s.gen || t != s.term
	v := t.Version() // before Lines: the rows are at least this new
	if !fresh && v == s.ver && scroll == s.scroll {
		return Pane{}, false
	}
	rows := t.Lines(scroll)
	back, modes := t.ScrollbackLen(), t.Modes()
	p := Pane{Agent: id, Gen: gen, Ver: v, Scroll: scroll, Back: back, N: len(rows), Modes: modes}
	if c, ok := t.(Cursorer); ok {
		x, y, vis := c.Cursor()
		p.Cursor = &Cursor{X: x, Y: y, Visible: vis}
	}
	if fresh {
		s.rows = nil
	}
	p.Set = diffRows(s.rows, rows)
	changed := fresh || len(p.Set) > 0 || len(rows) != len(s.rows) || back != s.back || modes != s.modes || scroll != s.scroll ||
		(p.Cursor != nil && (s.cursor == nil || *p.Cursor != *s.cursor))
	s.cursor = p.Cursor
	if changed {
		s.at = now
	}
	s.term, s.gen, s.ver, s.scroll, s.back, s.modes, s.rows, s.sent = t, gen, v, scroll, back, modes, rows, true
	return p, changed
}

// Hold reports how long the update of a pane asked at most fps times a
// second (Want.FPS; 0: no cap) must still wait at now; 0: make it now
// (Update then says whether anything changed). Only new content waits: a
// first update, a new terminal (gen) and a new scroll position never do.
func (s *Sender) Hold(t Screen, gen uint64, scroll, fps int, now time.Time) time.Duration {
	if fps <= 0 || !s.sent || gen != s.gen || t != s.term || scroll != s.scroll || t.Version() == s.ver {
		return 0
	}
	return max(s.at.Add(time.Second/time.Duration(fps)).Sub(now), 0)
}

// diffRows lists the rows of now that differ from before (every row of
// now that before does not have).
func diffRows(before, now []string) []Row {
	var out []Row
	for i, r := range now {
		if i < len(before) && before[i] == r {
			continue
		}
		out = append(out, Row{I: i, S: r})
	}
	return out
}

// Mirror is the client's copy of one pane.
type Mirror struct {
	Gen    uint64
	Ver    uint64
	Scroll int
	Back   int
	Modes  screen.Modes
	Rows   []string
	Cursor *Cursor // nil: the server's terminal does not say
	seen   bool
}

// Apply brings the mirror to p. A Pane of another generation starts from
// empty rows.
func (m *Mirror) Apply(p Pane) {
	if !m.seen || p.Gen != m.Gen {
		m.Rows = nil
	}
	m.seen = true
	rows := make([]string, p.N)
	copy(rows, m.Rows)
	for _, r := range p.Set {
		if r.I >= 0 && r.I < p.N {
			rows[r.I] = r.S
		}
	}
	m.Rows = rows
	m.Gen, m.Ver, m.Scroll, m.Back, m.Modes, m.Cursor = p.Gen, p.Ver, p.Scroll, p.Back, p.Modes, p.Cursor
}
