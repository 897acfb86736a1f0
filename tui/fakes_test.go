package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// fakeEngine records every call, in order.
type fakeEngine struct {
	mu    sync.Mutex
	calls []string
}

func (e *fakeEngine) record(s string)             { e.mu.Lock(); e.calls = append(e.calls, s); e.mu.Unlock() }
func (e *fakeEngine) Pause()                      { e.record("pause") }
func (e *fakeEngine) Resume()                     { e.record("resume") }
func (e *fakeEngine) Cancel()                     { e.record("cancel") }
func (e *fakeEngine) Retry()                      { e.record("retry") }
func (e *fakeEngine) Abandon()                    { e.record("abandon") }
func (e *fakeEngine) PauseAgent(id vocab.AgentID) { e.record("pause_agent " + string(id)) }

func (e *fakeEngine) got() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

// requireCalls checks that exactly the expected calls happened, in order.
func (e *fakeEngine) requireCalls(t *testing.T, want ...string) {
	t.Helper()
	got := e.got()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("engine calls = %q, want %q", got, want)
	}
}

// fakeTerm is a terminal whose screen is generated from its id, size,
// version and scroll position; rows are exactly cols wide, like the real
// one's.
type fakeTerm struct {
	mu      sync.Mutex
	id      string
	cols    int
	rows    int
	version uint64
	resizes [][2]int
	writes  []byte
	modes   screen.Modes
	back    int
	styled  bool
	// cache of generated screens by key, so benchmarks measure the TUI and
	// not the fake.
	cache map[[4]int][]string
	calls int // Lines calls
}

func newFakeTerm(id string) *fakeTerm {
	return &fakeTerm{id: id, cols: 80, rows: 24, back: 100, cache: map[[4]int][]string{}}
}

func (f *fakeTerm) Lines(scroll int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	k := [4]int{f.cols, f.rows, int(f.version % 2), scroll}
	if l, ok := f.cache[k]; ok {
		return l
	}
	lines := make([]string, f.rows)
	for i := range lines {
		var s string
		if f.styled {
			s = fmt.Sprintf("\x1b[38;5;%dm%s\x1b[m \x1b[1;32m$\x1b[m line %d v%d \x1b[48;2;40;40;80m%s\x1b[m",
				i%200+16, f.id, i-scroll, f.version%2, strings.Repeat("x", i%17))
		} else {
			s = fmt.Sprintf("%s $ line %d", f.id, i-scroll)
		}
		lines[i] = fitWidth(ansi.Truncate(s, f.cols, ""), f.cols)
		if f.styled {
			lines[i] += "\x1b[m"
		}
	}
	f.cache[k] = lines
	return lines
}

func (f *fakeTerm) Version() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.version }

func (f *fakeTerm) bump() { f.mu.Lock(); f.version++; f.mu.Unlock() }

func (f *fakeTerm) Resize(cols, rows int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cols, f.rows = cols, rows
	f.resizes = append(f.resizes, [2]int{cols, rows})
	return nil
}

func (f *fakeTerm) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, p...)
	return len(p), nil
}

func (f *fakeTerm) Modes() screen.Modes { f.mu.Lock(); defer f.mu.Unlock(); return f.modes }
func (f *fakeTerm) ScrollbackLen() int  { f.mu.Lock(); defer f.mu.Unlock(); return f.back }

func (f *fakeTerm) written() string { f.mu.Lock(); defer f.mu.Unlock(); return string(f.writes) }

func (f *fakeTerm) size() (int, int) { f.mu.Lock(); defer f.mu.Unlock(); return f.cols, f.rows }

type fakeTerms struct {
	mu      sync.Mutex
	terms   map[vocab.AgentID]*fakeTerm
	changed chan struct{}
}

func newFakeTerms(ids ...vocab.AgentID) *fakeTerms {
	ft := &fakeTerms{terms: map[vocab.AgentID]*fakeTerm{}, changed: make(chan struct{}, 1)}
	for _, id := range ids {
		ft.terms[id] = newFakeTerm(string(id))
	}
	return ft
}

func (f *fakeTerms) Terminal(id vocab.AgentID) (Terminal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.terms[id]
	if !ok {
		return nil, false
	}
	return t, true
}

func (f *fakeTerms) Changed() <-chan struct{} { return f.changed }

func (f *fakeTerms) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func agentIDs(n int) []vocab.AgentID {
	ids := []vocab.AgentID{}
	if n > 0 {
		ids = append(ids, vocab.AgentLead)
	}
	if n > 1 {
		ids = append(ids, vocab.AgentReviewer)
	}
	for i := 1; i <= n-2; i++ {
		ids = append(ids, vocab.WorkerID(i))
	}
	return ids
}

// testState is an executing run with n agents.
func testState(n int) vocab.State {
	st := vocab.State{
		TaskID: "t_20260314_add-auth", Phase: vocab.PhaseExecuting, PreviousPhase: vocab.PhasePlanReview,
		CurrentCheckpoint: 1, TotalCheckpoints: 3, RevisionCount: 1, FrictionCount: 2,
		StartedAt: testNow.Add(-(time.Hour + 2*time.Minute + 3*time.Second)),
		Agents:    map[vocab.AgentID]vocab.AgentState{},
	}
	st.Clock.Start(st.StartedAt) // under way since it started, as the engine keeps it
	for i, id := range agentIDs(n) {
		a := vocab.AgentState{Role: vocab.RoleOf(id), Status: "idle"}
		if a.Role == vocab.RoleWorker {
			a.Status = "busy"
			a.Subtask = fmt.Sprintf("st_%d", i-1)
			st.ActiveAgents = append(st.ActiveAgents, id)
		}
		st.Agents[id] = a
	}
	if n > 1 {
		st.ReadOnlyAgents = []vocab.AgentID{"reviewer"}
	}
	return st
}

type harness struct {
	t     testing.TB
	m     Model
	eng   *fakeEngine
	terms *fakeTerms
	cmds  []tea.Cmd
}

func newHarness(t testing.TB, n, w, h int) *harness {
	eng := &fakeEngine{}
	terms := newFakeTerms(agentIDs(n)...)
	m := New(Options{FPS: 30, Engine: eng, Terminals: terms, Title: "add login with sessions", Now: func() time.Time { return testNow }})
	hs := &harness{t: t, m: m, eng: eng, terms: terms}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.send(SnapshotMsg{State: testState(n)})
	return hs
}

func (h *harness) send(msg tea.Msg) tea.Cmd {
	nm, cmd := h.m.Update(msg)
	h.m = nm.(Model)
	h.cmds = append(h.cmds, cmd)
	return cmd
}

func (h *harness) key(s string) tea.Cmd { return h.send(keyMsg(s)) }

func (h *harness) view() string { return h.m.View().Content }

func (h *harness) plain() string { return ansi.Strip(h.view()) }

func (h *harness) term(id vocab.AgentID) *fakeTerm { return h.terms.terms[id] }

// keyMsg builds the key press bubbletea delivers for a key name.
func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "ctrl+]":
		return tea.KeyPressMsg{Code: ']', Mod: tea.ModCtrl}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)
	if len(r) == 1 {
		k := tea.KeyPressMsg{Code: r[0], Text: s}
		if r[0] >= 'A' && r[0] <= 'Z' {
			k.Code = r[0] + 32
			k.ShiftedCode = r[0]
			k.Mod = tea.ModShift
		}
		return k
	}
	panic("keyMsg: unknown key " + s)
}
