package tui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/hivemind-dev/hivemind/vocab"
)

// draftTerm is a terminal whose prompt holds text the user typed.
type draftTerm struct {
	*fakeTerm
	text    string
	waiting int
	sent    bool
	cleared bool
	since   time.Time
}

func (d *draftTerm) DraftHold() (bool, int, time.Time) {
	return d.text != "" && d.waiting > 0, d.waiting, d.since
}
func (d *draftTerm) Draft() (string, bool) { return d.text, false }
func (d *draftTerm) SendDraft() error      { d.sent, d.text = true, ""; return nil }
func (d *draftTerm) ClearDraft() error     { d.cleared, d.text = true, ""; return nil }

func draftHarness(t *testing.T, w, h int) (*harness, *draftTerm) {
	hs := newHarness(t, 4, w, h)
	d := &draftTerm{fakeTerm: hs.term(vocab.WorkerID(2)), text: "hello world", waiting: 1, since: testNow.Add(-2 * time.Minute)}
	base := hs.terms
	hs.m.run.opts.Terminals = TerminalsFunc(func(id vocab.AgentID) (Terminal, bool) {
		if id == vocab.WorkerID(2) {
			return d, true
		}
		return base.Terminal(id)
	}, base.Changed())
	hs.send(SnapshotMsg{State: testState(4)})
	return hs, d
}

// A message held for the user's typed text shows in the needs banner,
// with the keys that go there.
func TestNeedsBannerShowsPromptWait(t *testing.T) {
	h, _ := draftHarness(t, 80, 24)
	v := h.plain()
	banner := strings.Join(strings.Fields(strings.Join(h.m.run.bannerNow, " ")), " ")
	if !strings.Contains(v, "waiting for your input in worker_2's prompt") ||
		!strings.Contains(banner, "waiting for your input in worker_2's prompt: 1 message(s) held 2m0s (4 enter: send or clear it)") {
		t.Fatalf("no prompt wait in the banner:\n%s", v)
	}
}

// Detaching from a pane whose prompt holds typed text asks what to do
// with it; each answer does what it says.
func TestDetachAsksAboutTypedText(t *testing.T) {
	for _, c := range []struct {
		key           string
		sent, cleared bool
		notice        string
	}{
		{"s", true, false, "sent your text"},
		{"c", false, true, "cleared your text"},
		{"k", false, false, "kept"},
	} {
		t.Run(c.key, func(t *testing.T) {
			h, d := draftHarness(t, 120, 30)
			h.key("4")
			h.key("enter")
			if !h.m.run.attached {
				t.Fatal("not attached")
			}
			h.send(keyMsg("ctrl+]"))
			if f := h.footer(); !strings.Contains(f, `worker_2's prompt holds text you typed ("hello world")`) || !strings.Contains(f, "s send · c clear · k keep") {
				t.Fatalf("no question on detach: %q", f)
			}
			h.key("x") // not an answer: the question stays
			if h.m.run.confirm != confirmDraft {
				t.Fatal("another key dismissed the question")
			}
			cmd := h.key(c.key)
			if cmd != nil {
				h.send(cmd())
			}
			if d.sent != c.sent || d.cleared != c.cleared || h.m.run.confirm != confirmNone {
				t.Fatalf("sent %v cleared %v confirm %v", d.sent, d.cleared, h.m.run.confirm)
			}
			if !strings.Contains(h.footer(), c.notice) {
				t.Errorf("footer %q", h.footer())
			}
		})
	}
	// Nothing typed: detach asks nothing.
	h, d := draftHarness(t, 120, 30)
	d.text = ""
	h.key("4")
	h.key("enter")
	h.send(keyMsg("ctrl+]"))
	if h.m.run.confirm != confirmNone {
		t.Error("asked with an empty prompt")
	}
}

// blockedTerm is a draftTerm whose writes wait until gate is closed: the
// agent has not read the keys yet.
type blockedTerm struct {
	*draftTerm
	gate chan struct{}
}

func (b *blockedTerm) Write(p []byte) (int, error) {
	<-b.gate
	return b.draftTerm.Write(p)
}

// Keys typed just before the detach that have not reached the agent yet
// (the input writer is asynchronous; its prompt reads empty so far) may
// be in its prompt a moment later: detach asks.
func TestDetachAsksWhileTypedKeysAreOnTheirWay(t *testing.T) {
	h, d := draftHarness(t, 120, 30)
	d.text = ""
	b := &blockedTerm{draftTerm: d, gate: make(chan struct{})}
	base := h.m.run.opts.Terminals
	h.m.run.opts.Terminals = TerminalsFunc(func(id vocab.AgentID) (Terminal, bool) {
		if id == vocab.WorkerID(2) {
			return b, true
		}
		return base.Terminal(id)
	}, base.Changed())
	h.key("4")
	h.key("enter")
	if !h.m.run.attached {
		t.Fatal("not attached")
	}
	h.key("h")
	h.send(keyMsg("ctrl+]"))
	if h.m.run.confirm != confirmDraft {
		t.Error("detach asked nothing while a typed key was on its way to the prompt")
	}
	close(b.gate)
	h.m.run.input.wait()
	if got := b.written(); got != "h" {
		t.Errorf("written %q, want the key", got)
	}
}

// Keys that do nothing in this mode say why, and the footer keeps how to
// quit and get help.
func TestInertKeysSayWhy(t *testing.T) {
	h := newHarness(t, 4, 120, 30)
	for k, want := range map[string]string{
		"s": "s shows the summary once the task has ended (it is building now)",
		"a": "a is for the plan gate",
		"f": "f is for the plan gate",
		"o": "o is for the plan gate",
	} {
		h.key(k)
		f := h.footer()
		if !strings.Contains(f, want) || !strings.Contains(f, "q quit • ? help") {
			t.Errorf("%s: footer %q", k, f)
		}
	}
}

// A message held past the deadline rings once (bell and desktop
// notification) for each hold, and keeps waiting.
func TestDraftDeadlineRingsOnce(t *testing.T) {
	h, d := draftHarness(t, 120, 30)
	if got := h.m.run.draftRung[vocab.WorkerID(2)]; !got.Equal(d.since) {
		t.Fatalf("no ring for a hold past the deadline (rung %v)", got)
	}
	if h.m.run.draftBell() != nil {
		t.Fatal("rang twice for one hold")
	}
	d.since = testNow.Add(-30 * time.Second) // a new hold, not late yet
	if h.m.run.draftBell() != nil {
		t.Fatal("rang before the deadline")
	}
	d.since = testNow.Add(-90 * time.Second)
	cmd := h.m.run.draftBell()
	if cmd == nil || !strings.Contains(fmt.Sprint(cmd()), "typed text in the prompt of worker_2") {
		t.Fatal("a new late hold did not ring")
	}
	if d.sent || d.cleared {
		t.Fatal("the deadline touched the user's text")
	}
}

// What the run said of the user's checkout (a checkout_dirty record) is
// in the banner while the plan is made, and gone once work is built.
func TestBannerSaysCheckoutWhilePlanning(t *testing.T) {
	h := newHarness(t, 4, 80, 24)
	st := testState(4)
	st.Phase = vocab.PhasePlanning
	ev := vocab.EventRecord{Time: testNow, Type: "checkout_dirty", Task: st.TaskID, Details: map[string]any{
		"summary": "2 uncommitted change(s) (a.go, b.go)",
		"effect":  "not part of the task: it starts from HEAD (--dirty include commits them on the task branch)"}}
	h.send(SnapshotMsg{State: st, Events: []vocab.EventRecord{ev}})
	banner := strings.Join(strings.Fields(strings.Join(h.m.run.bannerNow, " ")), " ")
	if want := "⚠ your checkout: 2 uncommitted change(s) (a.go, b.go) — not part of the task: it starts from HEAD"; !strings.Contains(banner, want) {
		t.Fatalf("banner %q lacks %q:\n%s", banner, want, h.plain())
	}
	checkFrame(t, h.view(), 80, 24)
	st.Phase = vocab.PhaseExecuting
	h.send(SnapshotMsg{State: st})
	if strings.Contains(h.plain(), "your checkout") {
		t.Fatalf("the checkout note stays while building:\n%s", h.plain())
	}
}

// Every key of the pane view, in every mode, either acts (an engine call,
// a command, a changed screen) or says in the footer why it does nothing.
func TestNoKeyIsSilent(t *testing.T) {
	modes := map[string]func(*harness){
		"running": func(h *harness) {},
		"paused": func(h *harness) {
			st := testState(4)
			st.Phase, st.PreviousPhase = vocab.PhasePaused, vocab.PhaseExecuting
			h.send(SnapshotMsg{State: st})
		},
		"needs_human": func(h *harness) {
			st := testState(4)
			st.Phase, st.Reason = vocab.PhaseNeedsHuman, "worker_2 crashed 4 times"
			h.send(SnapshotMsg{State: st})
		},
		"complete": func(h *harness) {
			st := testState(4)
			st.Phase, st.FinishedAt = vocab.PhaseComplete, testNow
			h.send(SnapshotMsg{State: st})
		},
		"cancelled": func(h *harness) {
			st := testState(4)
			st.Phase, st.FinishedAt = vocab.PhaseCancelled, testNow
			h.send(SnapshotMsg{State: st})
		},
		"agent_paused": func(h *harness) {
			st := testState(4)
			a := st.Agents["lead"]
			a.Paused = true
			st.Agents["lead"] = a
			h.send(SnapshotMsg{State: st})
		},
	}
	km := reflect.ValueOf(newKeyMap())
	for mode, setup := range modes {
		for i := range km.NumField() {
			b, ok := km.Field(i).Interface().(key.Binding)
			if !ok || !b.Enabled() {
				continue
			}
			for _, k := range b.Keys() {
				h := newHarness(t, 4, 120, 30)
				setup(h)
				before, calls := h.plain(), len(h.eng.got())
				cmd := h.key(k)
				if h.m.run.confirm == confirmCancel || h.m.run.confirm == confirmAbandon {
					h.key("y") // what the question leads to is what the key does
				}
				called := h.eng.got()[calls:]
				if len(called) > 0 && engineAccepts(called[0], h.m.run.st) {
					continue // it acted
				}
				if len(called) == 0 && (cmd != nil || h.plain() != before) {
					continue // it acted
				}
				t.Errorf("%s: %s (%s) does nothing and says nothing; footer %q", mode, k, km.Type().Field(i).Name, h.footer())
			}
		}
	}
}

// engineAccepts mirrors engine/flow's key rules (step_keys.go): whether
// the engine acts on call in st, or ignores it (a key that called it did
// nothing the user can see).
func engineAccepts(call string, st vocab.State) bool {
	p := st.Phase
	switch {
	case call == "pause":
		return teamRunning(p)
	case call == "resume":
		return p == vocab.PhasePaused
	case call == "cancel":
		return p != vocab.PhaseComplete && p != vocab.PhaseCancelled && p != vocab.PhaseIdle
	case call == "retry", call == "abandon":
		return p == vocab.PhaseNeedsHuman || p == vocab.PhaseError
	case strings.HasPrefix(call, "pause_agent "):
		return teamRunning(p) || p == vocab.PhasePaused || p == vocab.PhaseNeedsHuman
	}
	return true
}

// A needs-human reason longer than the banner gives way to the actions:
// at 80×24 and 60×20 every action stays whole on screen and the reason
// ends in "…".
func TestNeedsHumanBannerKeepsActions(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {60, 20}} {
		h := newHarness(t, 4, sz[0], sz[1])
		st := testState(4)
		st.PreviousPhase, st.Phase = st.Phase, vocab.PhaseNeedsHuman
		st.Reason = "The plan was sent back 1 times (max_revision_cycles=1); the Lead and the Reviewer do not agree. Rounds: - round 1: feedback — Plan review — round 1: changes requested Close, but the plan leaves error handling and input validation to no subtask at all"
		h.send(SnapshotMsg{State: st})
		banner := strings.Join(h.m.run.bannerNow, "\n")
		for _, want := range []string{"R retry", "A abandon", "enter attach"} {
			if !strings.Contains(banner, want) {
				t.Errorf("%dx%d: the banner lacks %q:\n%s", sz[0], sz[1], want, banner)
			}
		}
		if !strings.Contains(banner, "NEEDS HUMAN — The plan was sent back") || !strings.Contains(banner, "…") {
			t.Errorf("%dx%d: the reason is not shown, cut with …:\n%s", sz[0], sz[1], banner)
		}
		checkFrame(t, h.view(), sz[0], sz[1])
	}
}

// At 80 columns a pause keeps, in the header, what it interrupted and how
// many messages it holds (before: the count pushed "was planning" out).
func TestPausedHeaderFits80(t *testing.T) {
	h := newHarness(t, 4, 80, 24)
	st := testState(4)
	st.PreviousPhase, st.Phase = vocab.PhasePlanning, vocab.PhasePaused
	st.Plan, st.TotalCheckpoints, st.CurrentCheckpoint = nil, 0, 0
	a := st.Agents["lead"]
	a.Queued = 1
	st.Agents["lead"] = a
	h.m.run.opts.Title = "build a tiny calculator"
	h.send(SnapshotMsg{State: st})
	if hd := h.header(); !strings.Contains(hd, "paused · was planning") || !strings.Contains(hd, "1 waiting") {
		t.Errorf("header %q: want the interrupted state and the held count", hd)
	}
}
