package tui

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// findMsg runs cmd (descending into batches) and returns the first message
// of type T it produces. Leaves that block (timers, channel waits) run in
// their own goroutines; success does not wait for them.
func findMsg[T tea.Msg](t *testing.T, cmd tea.Cmd) (T, bool) {
	t.Helper()
	var zero T
	if cmd == nil {
		return zero, false
	}
	found := make(chan T, 16)
	var run func(c tea.Cmd)
	pending := make(chan struct{}, 64)
	run = func(c tea.Cmd) {
		pending <- struct{}{}
		go func() {
			defer func() { <-pending }()
			msg := c()
			switch msg := msg.(type) {
			case tea.BatchMsg:
				for _, sub := range msg {
					if sub != nil {
						run(sub)
					}
				}
			case T:
				found <- msg
			}
		}()
	}
	run(cmd)
	select {
	case m := <-found:
		return m, true
	case <-time.After(3 * time.Second):
		return zero, false
	}
}

func requireQuit(t *testing.T, cmd tea.Cmd) {
	t.Helper()
	if _, ok := findMsg[tea.QuitMsg](t, cmd); !ok {
		t.Fatal("expected tea.Quit")
	}
}

// msgsOf runs cmd and returns the messages its leaves yield, descending
// into batches and sequences. The caller is inside synctest.Test: the
// leaves run in the bubble and synctest.Wait returns once each has
// answered or is durably blocked (a timer, a wait on the model's
// channels), so a slow leaf is never taken for a waiting one and a waiting
// one does not stall the test.
func msgsOf(cmd tea.Cmd) []tea.Msg {
	var mu sync.Mutex
	var msgs []tea.Msg
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			v := reflect.ValueOf(msg)
			if v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
				for i := range v.Len() { // a Batch or Sequence
					run(v.Index(i).Interface().(tea.Cmd))
				}
				return
			}
			mu.Lock()
			msgs = append(msgs, msg)
			mu.Unlock()
		}()
	}
	run(cmd)
	synctest.Wait()
	mu.Lock()
	defer mu.Unlock()
	return msgs
}

// requireNoQuit fails if cmd yields tea.QuitMsg (inside synctest.Test).
func requireNoQuit(t *testing.T, cmd tea.Cmd) {
	t.Helper()
	for _, m := range msgsOf(cmd) {
		if _, ok := m.(tea.QuitMsg); ok {
			t.Fatal("unexpected tea.Quit")
		}
	}
}

// msgsOf sees through batches and sequences, and returns without the
// leaves that wait.
func TestMsgsOf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		wait := func() tea.Msg { <-block; return nil }
		got := msgsOf(tea.Batch(wait, tea.Sequence(wait, tea.Quit), tea.Raw("x")))
		var quit, raw int
		for _, m := range got {
			switch m.(type) {
			case tea.QuitMsg:
				quit++
			case tea.RawMsg:
				raw++
			}
		}
		if quit != 1 || raw != 1 || len(got) != 2 {
			t.Errorf("messages %#v", got)
		}
		close(block)
	})
}

func newKeyHarness(t *testing.T) *harness {
	h := newHarness(t, 4, 120, 30)
	t.Cleanup(func() { h.m.run.life.stop(); h.m.run.input.wait() })
	return h
}

func TestKeyPauseResume(t *testing.T) {
	h := newKeyHarness(t)
	h.key("r") // running: nothing to resume, and the footer says so
	if f := h.footer(); !strings.Contains(f, "nothing to resume: the team is running (p pauses it)") {
		t.Errorf("r while running: footer %q", f)
	}
	h.key("p")
	st := testState(4)
	st.Phase, st.PreviousPhase = vocab.PhasePaused, vocab.PhaseExecuting
	h.send(SnapshotMsg{State: st})
	h.key("p") // paused: already
	if f := h.footer(); !strings.Contains(f, "already paused: r resumes the team") {
		t.Errorf("p while paused: footer %q", f)
	}
	h.key("r")
	h.eng.requireCalls(t, "pause", "resume")
}

func TestKeyCancelAsks(t *testing.T) {
	h := newKeyHarness(t)
	h.key("c")
	if h.m.run.confirm != confirmCancel || !strings.Contains(h.plain(), "Cancel the task?") {
		t.Fatal("c did not ask")
	}
	h.eng.requireCalls(t) // nothing yet
	h.key("n")
	h.eng.requireCalls(t)
	if h.m.run.confirm != confirmNone {
		t.Fatal("n did not close the question")
	}
	h.key("c")
	h.key("esc")
	h.eng.requireCalls(t)
	h.key("c")
	h.key("p") // other keys do nothing while asking
	h.key("y")
	h.eng.requireCalls(t, "cancel")
}

func TestKeyQuit(t *testing.T) {
	t.Run("asks_when_agents_run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newKeyHarness(t)
			requireNoQuit(t, h.key("q"))
			if h.m.run.confirm != confirmQuit {
				t.Fatal("q did not ask")
			}
			requireNoQuit(t, h.key("n"))
			h.key("q")
			requireQuit(t, h.key("y"))
			h.eng.requireCalls(t) // quitting does not cancel the task
		})
	})
	t.Run("ctrl+c_twice", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newKeyHarness(t)
			requireNoQuit(t, h.key("ctrl+c"))
			requireQuit(t, h.key("ctrl+c"))
		})
	})
	t.Run("immediate_when_nothing_runs", func(t *testing.T) {
		h := newKeyHarness(t)
		st := testState(4)
		h.send(SnapshotMsg{State: st, Health: map[vocab.AgentID]vocab.Health{"lead": "exited", "reviewer": "exited", "worker_1": "exited", "worker_2": "exited"}})
		requireQuit(t, h.key("q"))
	})
}

func TestKeyRetryAbandon(t *testing.T) {
	h := newKeyHarness(t)
	h.key("R") // executing: nothing to retry
	h.key("A")
	h.eng.requireCalls(t)
	if !strings.Contains(h.plain(), "abandon is for") {
		t.Fatal("no notice for A outside needs_human")
	}
	st := testState(4)
	st.Phase, st.Reason = vocab.PhaseNeedsHuman, "limit"
	h.send(SnapshotMsg{State: st})
	h.key("R")
	h.eng.requireCalls(t, "retry")
	h.key("A")
	h.eng.requireCalls(t, "retry")
	h.key("y")
	h.eng.requireCalls(t, "retry", "abandon")
	st.Phase = vocab.PhaseError
	h.send(SnapshotMsg{State: st})
	h.key("R")
	h.eng.requireCalls(t, "retry", "abandon", "retry")
}

func TestKeyFocus(t *testing.T) {
	h := newKeyHarness(t)
	steps := []struct{ key, want string }{
		{"tab", "reviewer"}, {"tab", "worker_1"}, {"tab", "worker_2"}, {"tab", "lead"},
		{"shift+tab", "worker_2"}, {"1", "lead"}, {"3", "worker_1"}, {"9", "worker_1"}, {"2", "reviewer"},
	}
	for _, s := range steps {
		h.key(s.key)
		if string(h.m.run.focusID) != s.want {
			t.Fatalf("after %s focus=%s, want %s", s.key, h.m.run.focusID, s.want)
		}
	}
	if !strings.Contains(h.view(), borders[borderFocus].tl) {
		t.Fatal("focused pane not drawn with the focus border")
	}
}

func TestKeyZoom(t *testing.T) {
	h := newKeyHarness(t)
	h.key("2")
	h.key("z")
	if !h.m.run.zoom || len(h.m.run.lay.Rows) != 1 || h.m.run.lay.Rows[0].Cells[0].Agent != 1 {
		t.Fatal("z did not zoom the focused pane")
	}
	if strings.Contains(h.plain(), "lead $ line") {
		t.Fatal("other panes visible while zoomed")
	}
	h.key("z")
	if h.m.run.zoom || !strings.Contains(h.plain(), "lead $ line") {
		t.Fatal("z did not restore the grid")
	}
}

func TestKeyAttach(t *testing.T) {
	h := newKeyHarness(t)
	w1 := h.term("worker_1")
	h.key("3")
	h.key("enter")
	if !h.m.run.attached || !strings.Contains(h.plain(), "ATTACHED · ctrl+] detach") {
		t.Fatal("enter did not attach")
	}
	for _, k := range []string{"l", "s", "enter", "up", "p", "q", "ctrl+c", "tab"} {
		h.key(k)
	}
	h.send(tea.KeyPressMsg{Code: 'x', Mod: tea.ModAlt})
	w1.mu.Lock()
	w1.modes.AppCursorKeys = true
	w1.mu.Unlock()
	h.key("up")
	h.m.run.input.wait()
	want := "ls\r\x1b[Apq\x03\t\x1bx\x1bOA"
	if got := w1.written(); got != want {
		t.Fatalf("attached input = %q, want %q", got, want)
	}
	h.eng.requireCalls(t) // p and q went to the agent, not the engine
	if h.m.run.confirm != confirmNone {
		t.Fatal("q asked to quit while attached")
	}

	// Paste: plain, then bracketed when the app enabled it.
	h.send(tea.PasteMsg{Content: "a\nb"})
	w1.mu.Lock()
	w1.modes.BracketedPaste = true
	w1.mu.Unlock()
	h.send(tea.PasteMsg{Content: "x\x1by"})
	h.m.run.input.wait()
	if got := strings.TrimPrefix(w1.written(), want); got != "a\rb\x1b[200~xy\x1b[201~" {
		t.Fatalf("paste = %q", got)
	}

	h.key("ctrl+]")
	if h.m.run.attached {
		t.Fatal("ctrl+] did not detach")
	}
	before := w1.written()
	h.key("p")
	h.m.run.input.wait()
	if w1.written() != before {
		t.Fatal("input reached the agent after detaching")
	}
	h.eng.requireCalls(t, "pause")
	if h.term("lead").written() != "" {
		t.Fatal("input reached an unfocused agent")
	}
}

func TestKeyScrollback(t *testing.T) {
	h := newKeyHarness(t)
	h.key("pgup")
	step := h.m.run.scroll["lead"]
	if step <= 0 {
		t.Fatal("pgup did not scroll")
	}
	if !strings.Contains(h.plain(), "↑ "+strconv.Itoa(step)+"/100") {
		t.Fatal("scroll position not shown")
	}
	for i := 0; i < 50; i++ {
		h.key("pgup")
	}
	if h.m.run.scroll["lead"] != 100 {
		t.Fatalf("scroll = %d, want clamped to 100", h.m.run.scroll["lead"])
	}
	h.key("pgdown")
	if h.m.run.scroll["lead"] != 100-step {
		t.Fatalf("pgdn: scroll = %d", h.m.run.scroll["lead"])
	}
	h.key("end")
	if h.m.run.scroll["lead"] != 0 {
		t.Fatal("end did not return to live")
	}
	for i := 0; i < 3; i++ {
		h.key("pgdown")
	}
	if h.m.run.scroll["lead"] != 0 {
		t.Fatal("scrolled below live")
	}
}

func TestKeyEventsHelp(t *testing.T) {
	h := newKeyHarness(t)
	h.key("e")
	if !h.m.run.showEvents || !strings.Contains(h.plain(), "events: milestones") {
		t.Fatal("e did not show the event log")
	}
	h.key("e")
	if h.m.run.showEvents {
		t.Fatal("e did not hide the event log")
	}
	h.key("?")
	if !h.m.run.help.show || !strings.Contains(h.plain(), "Hivemind keys") {
		t.Fatal("? did not show help")
	}
	h.key("?")
	if h.m.run.help.show {
		t.Fatal("? did not close help")
	}
	h.key("?")
	h.key("esc")
	if h.m.run.help.show {
		t.Fatal("esc did not close help")
	}
}

func TestMouse(t *testing.T) {
	h := newKeyHarness(t)
	// 120×30, 4 panes: area rows 1..28, panes 60×14.
	h.send(tea.MouseClickMsg{X: 70, Y: 20, Button: tea.MouseLeft})
	if h.m.run.focusID != "worker_2" {
		t.Fatalf("click focused %s, want worker_2", h.m.run.focusID)
	}
	h.send(tea.MouseWheelMsg{X: 5, Y: 5, Button: tea.MouseWheelUp})
	if h.m.run.scroll["lead"] != wheelLines || h.m.run.scroll["worker_2"] != 0 {
		t.Fatalf("wheel scrolled %v", h.m.run.scroll)
	}
	h.send(tea.MouseWheelMsg{X: 5, Y: 5, Button: tea.MouseWheelDown})
	if h.m.run.scroll["lead"] != 0 {
		t.Fatal("wheel down did not scroll back")
	}

	// Attached to an app with SGR mouse tracking: the wheel goes to the app,
	// in pane-relative coordinates.
	w2 := h.term("worker_2")
	w2.mu.Lock()
	w2.modes = screen.Modes{MouseNormal: true, MouseSGR: true}
	w2.mu.Unlock()
	h.key("enter")
	h.send(tea.MouseWheelMsg{X: 70, Y: 20, Button: tea.MouseWheelUp})
	h.send(tea.MouseClickMsg{X: 61, Y: 16, Button: tea.MouseLeft})
	h.send(tea.MouseReleaseMsg{X: 61, Y: 16, Button: tea.MouseLeft})
	h.m.run.input.wait()
	// Pane worker_2 is at x=60, y=15 (inner origin 61,16).
	if got, want := w2.written(), "\x1b[<64;10;5M\x1b[<0;1;1M\x1b[<0;1;1m"; got != want {
		t.Fatalf("forwarded mouse = %q, want %q", got, want)
	}
	if h.m.run.scroll["worker_2"] != 0 {
		t.Fatal("wheel scrolled the pane instead of reaching the app")
	}
	// A click on another pane detaches and focuses it.
	h.send(tea.MouseClickMsg{X: 5, Y: 5, Button: tea.MouseLeft})
	if h.m.run.attached || h.m.run.focusID != "lead" {
		t.Fatal("click on another pane did not detach and focus")
	}
}

func TestNotifications(t *testing.T) {
	h := newKeyHarness(t)
	st := testState(4)
	st.Phase, st.Reason = vocab.PhaseNeedsHuman, "revision limit"
	raw, ok := findMsg[tea.RawMsg](t, h.send(SnapshotMsg{State: st}))
	if !ok {
		t.Fatal("no notification on needs_human")
	}
	s := raw.Msg.(string)
	for _, want := range []string{"\a", "\x1b]9;Hivemind: needs you: revision limit\a", "\x1b]777;notify;Hivemind;needs you: revision limit\a"} {
		if !strings.Contains(s, want) {
			t.Fatalf("notification %q lacks %q", s, want)
		}
	}
	// The same state again does not ring again.
	synctest.Test(t, func(t *testing.T) {
		for _, m := range msgsOf(h.send(SnapshotMsg{State: st})) {
			if _, ok := m.(tea.RawMsg); ok {
				t.Fatal("rang twice for one transition")
			}
		}
	})
	st.Phase = vocab.PhaseExecuting
	h.send(SnapshotMsg{State: st})
	raw, ok = findMsg[tea.RawMsg](t, h.send(SnapshotMsg{State: st, Health: map[vocab.AgentID]vocab.Health{"worker_2": "waiting_permission"}}))
	if !ok || !strings.Contains(raw.Msg.(string), "worker_2 is waiting for permission") {
		t.Fatal("no notification on waiting_permission")
	}
	st.Phase = vocab.PhaseComplete
	raw, ok = findMsg[tea.RawMsg](t, h.send(SnapshotMsg{State: st}))
	if !ok || !strings.Contains(raw.Msg.(string), "task complete") {
		t.Fatal("no notification on complete")
	}
	raw, ok = findMsg[tea.RawMsg](t, h.send(NotifyMsg{Level: "warn", Message: "disk \x1b[31mfull"}))
	if !ok || !strings.Contains(raw.Msg.(string), "disk full") || strings.Contains(raw.Msg.(string), "[31m") {
		t.Fatalf("NotifyMsg notification = %q", raw.Msg)
	}
	if !strings.Contains(h.plain(), "disk full") {
		t.Fatal("notice not shown")
	}
	h.key("tab")
	if strings.Contains(h.plain(), "disk full") {
		t.Fatal("notice not cleared by a key")
	}
}

// TestFrameCap: screen changes are drawn at most once per frame interval;
// other messages in between do not pick up new screen content.
func TestFrameCap(t *testing.T) {
	h := newKeyHarness(t)
	lead := h.term("lead")
	h.view()
	calls := lead.calls
	lead.bump()
	h.key("w") // a message redraws, but samples no new screen version
	h.view()
	if lead.calls != calls {
		t.Fatal("screen re-read without a frame")
	}
	h.send(termsChangedMsg{}) // first change: drawn at once
	h.view()
	if lead.calls != calls+1 {
		t.Fatalf("change not drawn: %d Lines calls", lead.calls-calls)
	}
	lead.bump()
	cmd := h.send(termsChangedMsg{}) // within the interval: waits for a tick
	if !h.m.run.frameTimer || h.m.run.waiting {
		t.Fatal("second change inside the frame interval was not deferred")
	}
	if _, ok := findMsg[frameTickedMsg](t, cmd); !ok {
		t.Fatal("no frame tick scheduled")
	}
	h.view()
	if lead.calls != calls+1 {
		t.Fatal("deferred change drawn early")
	}
	cmd = h.send(frameTickedMsg{})
	if !h.m.run.waiting || h.m.run.frameTimer {
		t.Fatal("not waiting for changes after the frame")
	}
	h.view()
	if lead.calls != calls+2 {
		t.Fatal("deferred change not drawn on the frame tick")
	}
	h.terms.signal()
	if _, ok := findMsg[termsChangedMsg](t, cmd); !ok {
		t.Fatal("the wait command did not deliver the change signal")
	}
	// An unchanged screen is not re-read on later frames.
	h.send(frameTickedMsg{})
	h.view()
	if lead.calls != calls+2 {
		t.Fatal("unchanged screen re-read")
	}
}

// TestIdleNoWork: a paused run with no busy agent schedules nothing.
func TestIdleNoWork(t *testing.T) {
	h := newKeyHarness(t)
	st := testState(4)
	st.Phase = vocab.PhasePaused
	st.Clock.Stop(testNow)
	for id, a := range st.Agents {
		a.Status = "idle"
		st.Agents[id] = a
	}
	h.send(SnapshotMsg{State: st})
	if h.m.run.clockOn {
		t.Fatal("clock runs while paused")
	}
	if cmd := h.send(tea.WindowSizeMsg{Width: 120, Height: 30}); cmd != nil {
		t.Fatal("idle update scheduled work")
	}
	if cmd := h.key("tab"); cmd != nil {
		t.Fatal("key in idle scheduled work")
	}
	// The spinner stops when nobody is busy.
	h.m.run.spinning = true
	if cmd := h.send(spinner.TickMsg{ID: h.m.run.spin.ID()}); cmd != nil || h.m.run.spinning {
		t.Fatal("spinner kept ticking with no busy agent")
	}
}

func TestClockTicksWhileRunning(t *testing.T) {
	h := newKeyHarness(t)
	if !h.m.run.clockOn {
		t.Fatal("clock not started for a running task")
	}
	gen := h.m.run.clockGen
	cmd := h.send(clockTickedMsg{gen: gen})
	if _, ok := findMsg[clockTickedMsg](t, cmd); !ok {
		t.Fatal("clock did not re-arm")
	}
	if !strings.Contains(h.plain(), "01:02:03") {
		t.Fatal("elapsed time not shown")
	}
}

type cursorTerm struct {
	*fakeTerm
	x, y int
}

func (c *cursorTerm) Cursor() (int, int, bool) { return c.x, c.y, true }

func TestAttachedCursor(t *testing.T) {
	h := newKeyHarness(t)
	ct := &cursorTerm{fakeTerm: newFakeTerm("reviewer"), x: 4, y: 2}
	h.m.run.opts.Terminals = TerminalsFunc(func(id vocab.AgentID) (Terminal, bool) {
		if id == "reviewer" {
			return ct, true
		}
		return h.terms.Terminal(id)
	}, h.terms.Changed())
	h.key("2")
	if h.m.View().Cursor != nil {
		t.Fatal("cursor shown while not attached")
	}
	h.key("enter")
	c := h.m.View().Cursor
	// reviewer's pane is at x=60, y=1 in a 120×30 4-pane grid.
	if c == nil || c.X != 60+1+4 || c.Y != 1+1+2 {
		t.Fatalf("cursor = %+v, want at (65,4)", c)
	}
}
