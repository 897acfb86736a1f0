package tui

import (
	"cmp"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// fakeLauncher answers the front door from memory and records every call.
type fakeLauncher struct {
	branch   string // the sessions' git branch ("": none)
	mu       sync.Mutex
	calls    []string
	projects map[string]Project
	started  []vocab.Task
	startErr error
	closed   int
	eng      *fakeEngine
	terms    *fakeTerms
	taskID   string
	usage    []AgentUsage
	scanErr  error
}

func newFakeLauncher() *fakeLauncher {
	return &fakeLauncher{projects: map[string]Project{}, eng: &fakeEngine{},
		terms: newFakeTerms(agentIDs(4)...), taskID: "20260314-150926-ab12"}
}

func (l *fakeLauncher) record(s string) { l.mu.Lock(); l.calls = append(l.calls, s); l.mu.Unlock() }

func (l *fakeLauncher) Scan(project string) (Project, error) {
	l.record("scan " + project)
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.projects[project]
	if !ok {
		p = Project{Dir: project, Git: true}
	}
	return p, l.scanErr
}

func (l *fakeLauncher) session() Session {
	return Session{TaskID: l.taskID, Title: "add a square root", Engine: l.eng, Terminals: l.terms, Branch: l.branch,
		Close: func() error { l.record("close"); l.mu.Lock(); l.closed++; l.mu.Unlock(); return nil }}
}

func (l *fakeLauncher) Start(project string, t vocab.Task) (Session, error) {
	l.record("start " + project)
	l.mu.Lock()
	l.started = append(l.started, t)
	err := l.startErr
	l.mu.Unlock()
	if err != nil {
		return Session{}, err
	}
	return l.session(), nil
}

func (l *fakeLauncher) Resume(project string) (Session, error) {
	l.record("resume " + project)
	return l.session(), nil
}

func (l *fakeLauncher) Usage(st vocab.State) []AgentUsage {
	l.record("usage " + st.TaskID)
	return l.usage
}

// requireCalls checks exactly these launcher calls happened, in order.
func (l *fakeLauncher) requireCalls(t *testing.T, want ...string) {
	t.Helper()
	l.mu.Lock()
	got := append([]string(nil), l.calls...)
	l.mu.Unlock()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("launcher calls = %q, want %q", got, want)
	}
}

const testProject = "/home/dev/calc"

// pastTasks is a workspace history: one unfinished task (error) and three
// finished ones, newest first.
func testPastTasks() []PastTask {
	st := func(p vocab.Phase, started, took time.Duration) PastTask {
		s := testNow.Add(-started)
		pt := PastTask{Phase: p, Created: s, Started: s, Finished: s.Add(took)}
		if p == vocab.PhaseError {
			pt.Finished = time.Time{}
		}
		return pt
	}
	ts := []PastTask{
		st(vocab.PhaseError, 30*time.Minute, 0),
		st(vocab.PhaseComplete, 3*time.Hour, 12*time.Minute+4*time.Second),
		st(vocab.PhaseIdle, 26*time.Hour, 2*time.Minute),
		st(vocab.PhaseCancelled, 50*time.Hour, 41*time.Second),
	}
	ids := []string{"20260314-143926-e001", "20260314-120926-c0de", "20260313-130926-ab01", "20260312-130926-77aa"}
	desc := []string{"add a square root function\nwith tests", "build a tiny calculator", "port the parser to generics", "add a REPL"}
	for i := range ts {
		ts[i].ID, ts[i].Description = ids[i], desc[i]
		s := vocab.State{TaskID: ids[i], Phase: ts[i].Phase, StartedAt: ts[i].Started, FinishedAt: ts[i].Finished}
		s.Clock.Ran = ts[i].Duration(testNow) // the clock its runs kept
		ts[i].State = &s
	}
	return ts
}

// frontHarness is a Model with a fake launcher, fed by hand. Commands run
// in goroutines, as in a program; the messages of the front door's commands
// (and the folder picker's) come back through msgs and are fed to Update by
// waitFor and settle, on the test goroutine.
type frontHarness struct {
	*harness
	l    *fakeLauncher
	msgs chan tea.Msg
}

func newFrontHarness(t testing.TB, l *fakeLauncher, w, h int) *frontHarness {
	return newFrontHarnessAt(t, l, testProject, w, h)
}

func newFrontHarnessAt(t testing.TB, l *fakeLauncher, project string, w, h int) *frontHarness {
	return newFrontHarnessWith(t, l, Options{Project: project}, w, h)
}

// newFrontHarnessWith is newFrontHarness with more options (the project,
// when opts has none, FPS, Launcher and Now are set here).
func newFrontHarnessWith(t testing.TB, l *fakeLauncher, opts Options, w, h int) *frontHarness {
	opts.FPS, opts.Launcher, opts.Now = 30, l, func() time.Time { return testNow }
	opts.Project = cmp.Or(opts.Project, testProject)
	m := New(opts)
	fh := &frontHarness{harness: &harness{t: t, m: m, eng: l.eng, terms: l.terms}, l: l,
		msgs: make(chan tea.Msg, 4096)}
	fh.send(tea.WindowSizeMsg{Width: w, Height: h})
	fh.run(m.Init())
	return fh
}

// frontMsg reports whether msg is one the front door's commands produce.
func frontMsg(msg tea.Msg) bool {
	switch msg.(type) {
	case projectScannedMsg, sessionStartedMsg, sessionClosedMsg, summaryLoadedMsg:
		return true
	}
	return reflect.TypeOf(msg) != nil && reflect.TypeOf(msg).PkgPath() == "charm.land/bubbles/v2/filepicker"
}

// start runs cmd in a goroutine. Commands that only wait (the run view's
// timers and screen waits) may never report; nobody waits for them.
func (h *frontHarness) start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		select {
		case h.msgs <- msg:
		default:
		}
	}()
}

// run starts cmd and settles.
func (h *frontHarness) run(cmd tea.Cmd) {
	h.t.Helper()
	h.start(cmd)
	h.settle()
}

// settle feeds command results until no launcher call or summary read is
// outstanding.
func (h *frontHarness) settle() {
	h.t.Helper()
	h.waitFor("the front door to settle", func() bool {
		return h.m.fd.start.busy == "" && !(h.m.fd.mode == modeSummary && !h.m.fd.sum.loaded)
	})
}

// waitFor feeds command results to Update until cond holds (deadline 5 s).
func (h *frontHarness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			switch msg := msg.(type) {
			case tea.BatchMsg:
				for _, c := range msg {
					h.start(c)
				}
			default:
				if frontMsg(msg) {
					h.start(h.send(msg))
				}
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s (busy %q, mode %v)", what, h.m.fd.start.busy, h.m.fd.mode)
		}
	}
}

// keys presses keys (names as keyMsg knows them, plus f1) and settles.
func (h *frontHarness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.run(h.send(frontKeyMsg(k)))
	}
}

// typeText types s into the focused field, rune by rune.
func (h *frontHarness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		if r == '\n' {
			h.run(h.send(tea.KeyPressMsg{Code: tea.KeyEnter}))
			continue
		}
		h.run(h.send(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
}

// ctrl builds a ctrl+letter key press.
func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }

// frontKeyMsg is keyMsg plus the keys only the front door uses.
func frontKeyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "f1":
		return tea.KeyPressMsg{Code: tea.KeyF1}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return keyMsg(k)
}
