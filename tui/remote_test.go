package tui

import (
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// shownTerms is a PaneViewer (a server's client): it records what the
// model said it draws.
type shownTerms struct {
	*fakeTerms
	told []Shown
}

func (s *shownTerms) Showing(v Shown) { s.told = append(s.told, v) }

// A server's client is told the visible panes and which of them the model
// draws at FPS (the attached one) and which at UnfocusedFPS, so that the
// server sends each pane at the rate it is drawn.
func TestShowingTellsPaneRates(t *testing.T) {
	terms := &shownTerms{fakeTerms: newFakeTerms(agentIDs(3)...)}
	m := New(Options{FPS: 30, UnfocusedFPS: 4, Terminals: terms, Remote: &Remote{}, Now: func() time.Time { return testNow }})
	send := func(msg tea.Msg) {
		nm, _ := m.Update(msg)
		m = nm.(Model)
	}
	last := func() Shown {
		t.Helper()
		if len(terms.told) == 0 {
			t.Fatal("the model told its viewer nothing")
		}
		return terms.told[len(terms.told)-1]
	}
	send(tea.WindowSizeMsg{Width: 160, Height: 48})
	send(SnapshotMsg{State: testState(3)})
	all := agentIDs(3)
	if s := last(); !slices.Equal(s.Panes, all) || s.Fast != "" || s.SlowFPS != 4 {
		t.Fatalf("unattached: told %+v; want every pane slow at 4 fps", s)
	}
	send(keyMsg("enter")) // attach to the focused pane, the lead
	if s := last(); !slices.Equal(s.Panes, all) || s.Fast != vocab.AgentLead || s.SlowFPS != 4 {
		t.Fatalf("attached to the lead: told %+v; want the lead fast, the others at 4 fps", s)
	}
	send(keyMsg("ctrl+]")) // detach
	if s := last(); s.Fast != "" {
		t.Fatalf("detached: told %+v; want no fast pane", s)
	}
}

// A key for the attached pane reaches the agent's terminal from the
// program's filter, with no Update or View of its own (a burst of keys
// does not wait behind a frame per key); keys that change the view go on
// to Update.
func TestKeyFilterSendsAttachedKeysStraight(t *testing.T) {
	h := newHarness(t, 3, 120, 40)
	if got := KeyFilter(h.m, keyMsg("a")); got == nil {
		t.Fatal("a key of the run view (no pane attached) was swallowed")
	}
	h.key("enter") // attach to the lead
	for _, k := range []string{"h", "i", "enter"} {
		if got := KeyFilter(h.m, keyMsg(k)); got != nil {
			t.Fatalf("the attached pane's key %q went on to Update (%v)", k, got)
		}
	}
	h.m.run.input.wait()
	if got := h.term(vocab.AgentLead).written(); got != "hi\r" {
		t.Fatalf("the lead's terminal got %q; want %q", got, "hi\r")
	}
	if got := KeyFilter(h.m, keyMsg("ctrl+]")); got == nil {
		t.Fatal("the detach key was swallowed")
	}
	h.m.run.scroll[vocab.AgentLead] = 3 // scrolled back: the key returns the pane to its live view
	if got := KeyFilter(h.m, keyMsg("x")); got == nil {
		t.Fatal("a key of a scrolled-back pane skipped Update (the pane stays scrolled)")
	}
}
