package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// emuTerm is a Terminal backed by Hivemind's emulator, as a session's is.
type emuTerm struct{ s screen.Screen }

func (e *emuTerm) Lines(scroll int) []string        { return e.s.Lines(scroll) }
func (e *emuTerm) Version() uint64                  { return e.s.Version() }
func (e *emuTerm) Resize(cols, rows int) error      { e.s.Resize(cols, rows); return nil }
func (e *emuTerm) Write(p []byte) (int, error)      { return len(p), nil }
func (e *emuTerm) Modes() screen.Modes              { return e.s.Modes() }
func (e *emuTerm) ScrollbackLen() int               { return e.s.ScrollbackLen() }
func (e *emuTerm) CopyText(sc, from, to int) string { return e.s.(textCopier).CopyText(sc, from, to) }

// y and a drag over a soft-wrapped line copy it as one line, as tmux
// does: a long path comes out whole.
func TestCopyJoinsWrappedLines(t *testing.T) {
	term := &emuTerm{s: screen.New(screen.Options{Cols: 80, Rows: 24})}
	terms := TerminalsFunc(func(id vocab.AgentID) (Terminal, bool) { return term, id == vocab.AgentLead }, make(chan struct{}))
	m := New(Options{FPS: 30, Terminals: terms, Now: func() time.Time { return testNow }})
	h := &harness{t: t, m: m}
	h.send(tea.WindowSizeMsg{Width: 60, Height: 24})
	h.send(SnapshotMsg{State: testState(1)})
	path := "/tmp/hivemind-demo-" + strings.Repeat("0123456789", 8) + "/out.txt"
	_, _ = term.s.Write([]byte("$ ls\r\n" + path + "   \r\nnext"))
	got := fmt.Sprint(h.key("y")())
	if want := "$ ls\n" + path + "\nnext"; got != want {
		t.Fatalf("y copied %q, want %q", got, want)
	}
	r := h.m.run.lay.paneRect(0)
	h.send(tea.MouseClickMsg{X: r.X + 2, Y: r.Y + 2, Button: tea.MouseLeft})
	h.send(tea.MouseMotionMsg{X: r.X + 2, Y: r.Y + 3, Button: tea.MouseLeft})
	if got := fmt.Sprint(h.send(tea.MouseReleaseMsg{X: r.X + 2, Y: r.Y + 3, Button: tea.MouseLeft})()); got != path {
		t.Fatalf("drag copied %q, want %q", got, path)
	}
}
