package tui

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// header is the first line of the plain view.
func (h *harness) header() string { return strings.SplitN(h.plain(), "\n", 2)[0] }

// footer is the last line of the plain view.
func (h *harness) footer() string {
	l := strings.Split(h.plain(), "\n")
	return l[len(l)-1]
}

// The progress counts approved checkpoints: while checkpoint 2 of 2 is
// being built, one is done, not two.
func TestProgressCountsApprovedCheckpoints(t *testing.T) {
	h := newHarness(t, 4, 160, 40)
	st := testState(4)
	st.CurrentCheckpoint, st.TotalCheckpoints = 2, 2
	st.Rounds = []vocab.Round{
		{Kind: "plan", Number: 1, Verdict: "approved"},
		{Kind: "checkpoint", Checkpoint: 1, Number: 1, Verdict: "issues"},
		{Kind: "checkpoint", Checkpoint: 1, Number: 2, Verdict: "approved"},
	}
	h.send(SnapshotMsg{State: st})
	if hd := h.header(); !strings.Contains(hd, "building · checkpoint 2") || !strings.Contains(hd, "1/2 checkpoints approved") ||
		strings.Contains(hd, "2/2") {
		t.Fatalf("header %q: want building checkpoint 2, 1/2 checkpoints approved", hd)
	}
	st.Phase = vocab.PhaseComplete
	h.send(SnapshotMsg{State: st})
	if hd := h.header(); !strings.Contains(hd, "2/2 checkpoints approved") {
		t.Fatalf("complete: header %q, want 2/2", hd)
	}
}

// Paused means a frozen clock: the elapsed time stands still while paused
// and the pause does not count after resume. The header shows the clock
// the state keeps (the engine stops and starts it: engine/flow), as status
// and the summary read it.
func TestPauseFreezesClock(t *testing.T) {
	now := testNow
	eng := &fakeEngine{}
	m := New(Options{FPS: 30, Engine: eng, Terminals: newFakeTerms(agentIDs(4)...), Title: "t", Now: func() time.Time { return now }})
	h := &harness{t: t, m: m, eng: eng}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 40})
	st := testState(4)
	st.StartedAt = testNow.Add(-10 * time.Minute)
	st.Clock = vocab.RunClock{Since: st.StartedAt}
	h.send(SnapshotMsg{State: st})
	if hd := h.header(); !strings.Contains(hd, "⏱ 00:10:00") {
		t.Fatalf("running: header %q", hd)
	}
	if !h.m.run.clockOn {
		t.Fatal("the clock does not tick while the task runs")
	}
	st.PreviousPhase, st.Phase, st.Timestamp = st.Phase, vocab.PhasePaused, testNow
	st.Clock.Stop(testNow)
	h.send(SnapshotMsg{State: st})
	if h.m.run.clockOn {
		t.Fatal("the clock ticks while paused")
	}
	now = testNow.Add(7 * time.Minute)
	h.send(clockTickedMsg{gen: h.m.run.clockGen})
	if hd := h.header(); !strings.Contains(hd, "⏱ 00:10:00") || !strings.Contains(hd, "paused · was building") {
		t.Fatalf("paused 7 minutes: header %q, want the clock at 00:10:00", hd)
	}
	if !strings.Contains(h.plain(), "timers frozen") {
		t.Fatal("no paused banner")
	}
	st.Phase, st.PreviousPhase, st.Timestamp = vocab.PhaseExecuting, vocab.PhasePaused, now
	st.Clock.Start(now)
	h.send(SnapshotMsg{State: st})
	now = now.Add(time.Minute)
	h.send(clockTickedMsg{gen: h.m.run.clockGen})
	if hd := h.header(); !strings.Contains(hd, "⏱ 00:11:00") {
		t.Fatalf("resumed a minute ago: header %q, want 00:11:00 (the pause left out)", hd)
	}
}

// States read as words; the raw name and its arrow are gone.
func TestStatesInWords(t *testing.T) {
	h := newHarness(t, 4, 160, 40)
	st := testState(4)
	st.Phase, st.PreviousPhase = vocab.PhaseCheckpointReview, vocab.PhaseExecuting
	h.send(SnapshotMsg{State: st})
	hd := h.header()
	if !strings.Contains(hd, "reviewing checkpoint") || strings.Contains(hd, "checkpoint_review") || strings.Contains(hd, "←") {
		t.Fatalf("header %q: want the state in words", hd)
	}
	for p := range phaseWords {
		if strings.Contains(PhaseLabel(p), "_") {
			t.Errorf("label of %s is %q", p, PhaseLabel(p))
		}
	}
	h.key("?")
	for _, want := range []string{"may write files now", "reads only", "no work in this state", "hung (silent too long)"} {
		if !strings.Contains(h.plain(), want) {
			t.Errorf("help lacks the legend entry %q", want)
		}
	}
}

func plumbingEvents() []vocab.EventRecord {
	at := testNow.Add(-time.Minute)
	code := 143
	return []vocab.EventRecord{
		{Time: at, Type: "state_changed", Details: map[string]any{"from": "executing", "to": "cancelled"}},
		{Time: at, Type: "input.agent_health", Agent: "worker_1", Details: map[string]any{"health": "busy"}},
		{Time: at, Type: "input.injection_result", Agent: "worker_1", Details: map[string]any{"delivered": true, "seq": 4}},
		{Time: at, Type: "cancelled"},
		{Time: at, Type: "input.agent_health", Agent: "worker_2", Details: map[string]any{"health": "exited", "exit_code": code}},
	}
}

// The event strip shows milestones; v adds the detail, and a graceful stop
// (exit 143 after SIGTERM) says it is not a failure.
func TestEventsMilestonesAndDetail(t *testing.T) {
	h := newHarness(t, 4, 160, 48)
	h.send(SnapshotMsg{State: testState(4), Events: plumbingEvents()})
	h.key("e")
	got := h.plain()
	if !strings.Contains(got, "building → cancelled") || !strings.Contains(got, " cancelled ") {
		t.Fatalf("milestones missing:\n%s", got)
	}
	if strings.Contains(got, "agent_health") || strings.Contains(got, "injection_result") || strings.Contains(got, "143") {
		t.Fatalf("plumbing among the milestones:\n%s", got)
	}
	h.key("v")
	got = h.plain()
	if !strings.Contains(got, "injection_result") || !strings.Contains(got, "exit_code=143 health=exited (stopped (SIGTERM), not a failure)") {
		t.Fatalf("detail view lacks the plumbing or the stop note:\n%s", got)
	}
	h.key("v")
	if strings.Contains(h.plain(), "injection_result") {
		t.Fatal("v did not go back to milestones")
	}
	if !vocab.IsMilestone(vocab.EventRecord{Type: "checkpoint_approved"}) || vocab.IsMilestone(vocab.EventRecord{Type: "input.agent_health"}) {
		t.Fatal("IsMilestone misclassifies")
	}
}

// Quitting a running task asks and promises a resume; a finished task has
// nothing to resume: q quits at once.
func TestQuitWordsFollowTheTask(t *testing.T) {
	h := newHarness(t, 4, 160, 40)
	h.key("q")
	if f := h.footer(); !strings.Contains(f, "hivemind --resume") {
		t.Fatalf("running: %q", f)
	}
	h.key("n")
	st := testState(4)
	st.Phase = vocab.PhaseComplete
	h.send(SnapshotMsg{State: st})
	if cmd := h.key("q"); cmd == nil || cmd() != tea.QuitMsg(struct{}{}) || h.m.run.confirm != confirmNone {
		t.Fatalf("complete: q did not quit at once (footer %q)", h.footer())
	}
}

// After a cancel the summary says which subtasks were not done and lists
// no planned file as created; markdown marks are gone.
func TestSummaryAfterCancel(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, vocab.OutputsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, vocab.OutputsDir, "st_1.md"), []byte("- Created: calc/sqrt.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := summaryState(dir)
	st.Phase = vocab.PhaseCancelled
	st.Subtasks = map[string]vocab.SubtaskState{
		"st_1": {Status: vocab.SubtaskDone, Worker: "worker_1"},
		"st_2": {Status: vocab.SubtaskInProgress, Worker: "worker_2"},
	}
	st.Rounds = append(st.Rounds, vocab.Round{Kind: "checkpoint", Checkpoint: 2, Number: 1, Verdict: "issues",
		Summary: "**Severity:** major — `Sqrt` panics on `-1`"})
	m := New(Options{FPS: 30, Launcher: newFakeLauncher(), Now: func() time.Time { return testNow }})
	m.width, m.height = 140, 60
	m.fd.mode, m.fd.sum.data, m.fd.sum.loaded = modeSummary, loadSummary(st, dir, "add a square root"), true
	got := m.View().Content
	plain := stripped(got)
	for _, want := range []string{"(worker_1 · done)", "+ created  calc/sqrt.go",
		"(worker_2 · not done: cancelled while in progress)", "(not done: cancelled before it started)",
		"planned files, not written: calc/sqrt_test.go", "Severity: major — Sqrt panics on -1", "1 of 3 subtask(s) done"} {
		if !strings.Contains(plain, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	for _, bad := range []string{"in_progress", "+ created  calc/sqrt_test.go", "+ created  README.md", "**"} {
		if strings.Contains(plain, bad) {
			t.Errorf("summary shows %q:\n%s", bad, plain)
		}
	}
	// Abandoned reads abandoned, in the header too.
	st.Phase = vocab.PhaseIdle
	m.fd.sum.data = loadSummary(st, dir, "x")
	if plain := stripped(m.View().Content); !strings.Contains(plain, "│ abandoned │") || !strings.Contains(plain, "not done: abandoned") {
		t.Errorf("abandoned summary:\n%s", plain)
	}
}

// The task branch is named in the header and in a live summary.
func TestBranchNamed(t *testing.T) {
	h := newHarness(t, 4, 200, 40)
	h.m.run.opts.Branch = "hivemind/t_20260314_add-auth"
	h.send(SnapshotMsg{State: testState(4)})
	if hd := h.header(); !strings.Contains(hd, "⎇ hivemind/t_20260314_add-auth") {
		t.Fatalf("header %q lacks the branch", hd)
	}
}

// Focus moves by direction in the 2×2 grid: h j k l and the arrows.
func TestFocusByDirection(t *testing.T) {
	h := newHarness(t, 4, 160, 48)
	steps := []struct{ key, want string }{
		{"l", "reviewer"}, {"j", "worker_2"}, {"h", "worker_1"}, {"k", "lead"},
		{"right", "reviewer"}, {"down", "worker_2"}, {"left", "worker_1"}, {"up", "lead"},
		{"k", "lead"}, {"h", "lead"},
	}
	for _, s := range steps {
		h.key(s.key)
		if string(h.m.run.focusID) != s.want {
			t.Fatalf("after %s: focus %s, want %s", s.key, h.m.run.focusID, s.want)
		}
	}
}

// With twelve panes, "1" "2" focuses pane 12; "1" alone focuses pane 1
// and says a second digit may follow; ] and [ turn pages.
func TestFocusPastNine(t *testing.T) {
	h := newHarness(t, 12, 160, 48)
	h.key("1")
	if h.m.run.focusID != "lead" || !strings.Contains(h.footer(), "another digit") {
		t.Fatalf("after 1: focus %s, footer %q", h.m.run.focusID, h.footer())
	}
	h.key("2")
	if h.m.run.focusID != "worker_10" {
		t.Fatalf("after 1 2: focus %s, want worker_10 (pane 12)", h.m.run.focusID)
	}
	if !strings.Contains(h.plain(), "12 ● worker_10") {
		t.Fatalf("pane 12 has no number in its title:\n%s", h.plain())
	}
	h.key("3")
	if h.m.run.focusID != "worker_1" {
		t.Fatalf("after 3: focus %s, want worker_1", h.m.run.focusID)
	}
	if h.m.run.lay.Pages != 2 || !strings.Contains(h.footer(), "page 1/2") {
		t.Fatalf("pages %d, footer %q", h.m.run.lay.Pages, h.footer())
	}
	h.key("]")
	if h.m.run.lay.Page != 1 || !strings.Contains(h.footer(), "page 2/2") {
		t.Fatalf("] did not turn the page: page %d, footer %q", h.m.run.lay.Page, h.footer())
	}
	h.key("[")
	if h.m.run.lay.Page != 0 {
		t.Fatalf("[ did not turn back: page %d", h.m.run.lay.Page)
	}
}

// / searches the focused pane's scrollback: the newest match scrolls into
// view, n and N walk the matches, esc ends the search at the live view.
func TestSearchScrollback(t *testing.T) {
	h := newHarness(t, 4, 160, 48)
	h.key("/")
	for _, r := range "LINE -7" {
		h.key(string(r))
	}
	if f := h.footer(); !strings.Contains(f, "/LINE -7") {
		t.Fatalf("prompt %q", f)
	}
	h.runFor(h.key("enter"), searched)
	// The fake screen at scroll s shows "line i-s" on row i: "line -7"
	// and "line -70" … "line -79" match, 11 lines.
	if n := len(h.m.run.find.hits); n != 11 {
		t.Fatalf("%d hits, want 11", n)
	}
	first := h.m.run.scroll["lead"]
	if first == 0 || !strings.Contains(h.plain(), "line -7 ") {
		t.Fatalf("newest match not in view (scroll %d):\n%s", first, h.plain())
	}
	if !strings.Contains(h.plain(), "/LINE -7 1/11") {
		t.Fatalf("bottom border lacks the match count:\n%s", h.plain())
	}
	if !strings.Contains(h.view(), stMatch.Render("line -7")) {
		t.Fatal("the match is not highlighted")
	}
	h.key("n")
	if h.m.run.scroll["lead"] <= first {
		t.Fatalf("n did not go to an older match: scroll %d → %d", first, h.m.run.scroll["lead"])
	}
	h.key("N")
	if h.m.run.scroll["lead"] != first {
		t.Fatalf("N did not come back: %d", h.m.run.scroll["lead"])
	}
	h.key("esc")
	if h.m.run.find.query != "" || h.m.run.scroll["lead"] != 0 {
		t.Fatalf("esc: query %q scroll %d", h.m.run.find.query, h.m.run.scroll["lead"])
	}
	// No match says so.
	h.key("/")
	h.key("z")
	h.runFor(h.key("enter"), searched)
	if !strings.Contains(h.plain(), "no match") {
		t.Fatalf("no match not said:\n%s", h.plain())
	}
}

// y copies the focused pane's visible screen with OSC 52; a mouse drag
// copies the rows it went over.
func TestCopy(t *testing.T) {
	h := newHarness(t, 4, 160, 48)
	cmd := h.key("y")
	if cmd == nil {
		t.Fatal("y returned no command")
	}
	got := fmt.Sprint(cmd())
	if !strings.HasPrefix(got, "lead $ line 0\nlead $ line 1\n") || strings.Contains(got, "\x1b") {
		t.Fatalf("copied %q", got)
	}
	if !strings.Contains(h.footer(), "copied") {
		t.Fatalf("footer %q", h.footer())
	}
	r := h.m.run.lay.paneRect(1) // reviewer
	h.send(tea.MouseClickMsg{X: r.X + 3, Y: r.Y + 3, Button: tea.MouseLeft})
	h.send(tea.MouseMotionMsg{X: r.X + 5, Y: r.Y + 5, Button: tea.MouseLeft})
	on := stSelected.Render("X")
	on = on[:strings.Index(on, "X")]
	if !strings.Contains(h.view(), on+"reviewer $ line 3") || strings.Contains(h.view(), on+"reviewer $ line 5") {
		t.Fatal("selected rows are not shown")
	}
	cmd = h.send(tea.MouseReleaseMsg{X: r.X + 5, Y: r.Y + 5, Button: tea.MouseLeft})
	if got := fmt.Sprint(cmd()); got != "reviewer $ line 2\nreviewer $ line 3\nreviewer $ line 4" {
		t.Fatalf("drag copied %q", got)
	}
	if h.m.run.focusID != "reviewer" {
		t.Fatalf("click did not focus: %s", h.m.run.focusID)
	}
}

// d shows a worker's diff, loaded in a command; lead and reviewer have
// none; a run without git says so.
func TestDiffView(t *testing.T) {
	h := newHarness(t, 4, 120, 30)
	h.key("d")
	if h.m.run.diff.show || !strings.Contains(h.footer(), "focus a worker") {
		t.Fatalf("d on the lead: %q", h.footer())
	}
	h.key("3")
	h.key("d")
	if !strings.Contains(h.footer(), "not a git project") {
		t.Fatalf("d without git: %q", h.footer())
	}
	var asked []string
	h.m.run.opts.Diff = func(id string) (string, error) {
		asked = append(asked, id)
		if id == "worker_2" {
			return "", errors.New("worker_2 has no worktree")
		}
		return testDiff, nil
	}
	h.runFor(h.key("d"), diffLoaded)
	if got := h.plain(); !strings.Contains(got, "changes of worker_1") || !strings.Contains(got, "+func Sqrt(x float64)") {
		t.Fatalf("diff view:\n%s", got)
	}
	// ? opens the help over it and esc closes the help first; q still
	// quits (it asks, agents run).
	h.key("?")
	h.key("esc")
	if !h.m.run.diff.show || h.m.run.help.show {
		t.Fatalf("esc after ?: help %v, diff %v; want the help closed, the diff kept", h.m.run.help.show, h.m.run.diff.show)
	}
	h.key("q")
	if h.m.run.confirm != confirmQuit {
		t.Fatal("q in the diff view did not ask to quit")
	}
	h.key("n")
	h.key("esc")
	if h.m.run.diff.show {
		t.Fatal("esc did not close the diff")
	}
	h.key("4")
	h.runFor(h.key("d"), diffLoaded)
	if !strings.Contains(h.plain(), "worker_2 has no worktree") {
		t.Fatalf("diff error not shown:\n%s", h.plain())
	}
	if strings.Join(asked, ",") != "worker_1,worker_2" {
		t.Fatalf("diff asked for %v", asked)
	}
}

// testAgents are the agents a start screen offers: three CLIs, one not
// installed, and a profile.
var testAgents = []AgentChoice{{Name: "claude"}, {Name: "codex"},
	{Name: "gemini", Missing: "gemini is not on PATH (npm install -g @google/gemini-cli)"}, {Name: "aider"}}

// The start screen's team row picks each role's agent and the worker
// count the task starts with: ←→ select a slot, ↑↓ change it, = gives
// every role the selected agent; the configured team is where it starts.
func TestStartTeam(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarnessWith(t, l, Options{Agents: testAgents, Workers: 2,
		StartTeam: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "my-agent --fast"}}, 160, 40)
	h.typeText("add a square root")
	h.keys("tab", "tab", "tab")
	if h.m.fd.start.focus != focusTeam || !strings.Contains(h.plain(), "Team  lead ◂ claude ▸  reviewer claude  workers my-agent --fast  × 2") {
		t.Fatalf("team row:\n%s", h.plain())
	}
	// reviewer: one down (codex); workers: one up from the configured
	// command line (aider); the count: up twice, down once, + once.
	h.keys("right", "down", "right", "up", "right", "up", "up", "down", "+")
	if !strings.Contains(h.plain(), "lead claude  reviewer codex  workers aider  × ◂ 4 ▸") {
		t.Fatalf("team row after changes:\n%s", h.plain())
	}
	// Back to the workers: gemini is not installed, and the screen says so.
	h.keys("left", "up")
	if !strings.Contains(h.plain(), "workers ◂ gemini ▸ ✖  × 4") ||
		!strings.Contains(h.plain(), "✖ gemini is not on PATH (npm install -g @google/gemini-cli)") {
		t.Fatalf("a missing CLI is not marked:\n%s", h.plain())
	}
	h.run(h.send(ctrl('s')))
	want := map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"}
	if len(l.started) != 1 || !maps.Equal(l.started[0].Agents, want) || l.started[0].Agent != "" || l.started[0].Workers != 4 {
		t.Fatalf("started %+v, want agents %v and 4 workers", l.started, want)
	}

	// = gives every role the selected role's agent; h and l move too.
	h = newFrontHarnessWith(t, newFakeLauncher(), Options{Agents: testAgents}, 160, 40)
	h.keys("tab", "tab", "tab", "l", "j", "=", "h")
	if got := h.m.fd.start.team(); !maps.Equal(got, map[vocab.Role]string{"lead": "codex", "reviewer": "codex", "worker": "codex"}) {
		t.Fatalf("team after = %v", got)
	}
}

// e on the workers splits them into one slot per worker, each picked on
// its own; the task starts with each worker's agent; + adds a worker on
// the last one's agent, - drops the last; e again joins them on the
// selected worker's agent.
func TestStartTeamEachWorker(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarnessWith(t, l, Options{Agents: testAgents, Workers: 2,
		StartTeam: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "codex"}}, 160, 40)
	h.typeText("add a square root")
	h.keys("tab", "tab", "tab", "e") // e on the Lead does nothing
	if h.m.fd.start.each != nil {
		t.Fatal("e on the Lead split the workers")
	}
	h.keys("right", "right", "e", "right", "down")
	if !strings.Contains(h.plain(), "lead claude  reviewer claude  worker_1 codex  worker_2 ◂ gemini ▸ ✖  × 2") {
		t.Fatalf("team row after e:\n%s", h.plain())
	}
	h.keys("+")
	if !strings.Contains(h.plain(), "worker_1 codex  worker_2 ◂ gemini ▸ ✖  worker_3 gemini ✖  × 3") {
		t.Fatalf("team row after +:\n%s", h.plain())
	}
	h.run(h.send(ctrl('s')))
	wantRoles := map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "codex"}
	wantWorkers := map[vocab.AgentID]string{"worker_1": "codex", "worker_2": "gemini", "worker_3": "gemini"}
	if len(l.started) != 1 || !maps.Equal(l.started[0].Agents, wantRoles) || !maps.Equal(l.started[0].WorkerAgents, wantWorkers) || l.started[0].Workers != 3 {
		t.Fatalf("started %+v, want agents %v, workers %v", l.started, wantRoles, wantWorkers)
	}

	h = newFrontHarnessWith(t, newFakeLauncher(), Options{Agents: testAgents, Workers: 3}, 160, 40)
	h.keys("tab", "tab", "tab", "right", "right", "e", "right", "right", "down", "-")
	if got := h.m.fd.start.workerTeam(); !maps.Equal(got, map[vocab.AgentID]string{"worker_1": "claude", "worker_2": "claude"}) || h.m.fd.start.slot != h.m.fd.start.countSlot() {
		t.Fatalf("after - the last worker is gone: %v, slot %d", got, h.m.fd.start.slot)
	}
	h.keys("left", "up", "e")
	if h.m.fd.start.each != nil || h.m.fd.start.team()["worker"] != "aider" || h.m.fd.start.workerTeam() != nil {
		t.Fatalf("e joins on the selected worker's agent: team %v, workers %v", h.m.fd.start.team(), h.m.fd.start.workerTeam())
	}

	// Configured workers of their own start split, and are started as
	// configured when the row is left alone.
	l = newFakeLauncher()
	h = newFrontHarnessWith(t, l, Options{Agents: testAgents, Workers: 2,
		StartTeam:    map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "claude"},
		StartWorkers: map[vocab.AgentID]string{"worker_2": "my-cli"}}, 160, 40)
	h.typeText("add a square root")
	if !strings.Contains(h.plain(), "worker_1 claude  worker_2 my-cli  × 2") {
		t.Fatalf("configured workers are not split:\n%s", h.plain())
	}
	h.run(h.send(ctrl('s')))
	if len(l.started) != 1 || !maps.Equal(l.started[0].WorkerAgents, map[vocab.AgentID]string{"worker_1": "claude", "worker_2": "my-cli"}) {
		t.Fatalf("started %+v", l.started)
	}
}

// Without agents to offer (the launcher's config decides) the Team row
// changes only the worker count.
func TestStartTeamAsConfigured(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarnessWith(t, l, Options{}, 120, 40)
	h.typeText("add a square root")
	h.keys("tab", "tab", "tab", "left", "up", "right", "up")
	if !strings.Contains(h.plain(), "Team  agents as configured  workers ◂ 3 ▸") {
		t.Fatalf("team row:\n%s", h.plain())
	}
	h.run(h.send(ctrl('s')))
	if len(l.started) != 1 || l.started[0].Agents != nil || l.started[0].Workers != 3 {
		t.Fatalf("started %+v", l.started)
	}
}

func stripped(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimRight(ansi.Strip(l), " "))
	}
	return strings.Join(out, "\n")
}

// Snapshots carry a short tail of events: the strip keeps what earlier
// tails had, so milestones are not pushed out by detail records.
func TestEventsAccumulate(t *testing.T) {
	at := testNow.Add(-time.Hour)
	rec := func(i int, typ vocab.RecordType) vocab.EventRecord {
		return vocab.EventRecord{Time: at.Add(time.Duration(i) * time.Second), Type: typ}
	}
	first := []vocab.EventRecord{rec(0, "task_submitted"), rec(1, "plan_approved"), rec(2, "input.agent_health")}
	got := mergeEvents(nil, first)
	second := []vocab.EventRecord{rec(2, "input.agent_health"), rec(3, "input.injection_result"), rec(4, "subtask_done")}
	got = mergeEvents(got, second)
	var types []string
	for _, e := range got {
		types = append(types, string(e.Type))
	}
	if want := "task_submitted plan_approved input.agent_health input.injection_result subtask_done"; strings.Join(types, " ") != want {
		t.Fatalf("merged %v, want %s", types, want)
	}
	if again := mergeEvents(got, second); len(again) != len(got) {
		t.Fatalf("the same tail twice added records: %d → %d", len(got), len(again))
	}
	// A tail that does not reach the last record kept (a gap) replaces it.
	gap := []vocab.EventRecord{rec(10, "cancelled")}
	if r := mergeEvents(got, gap); len(r) != 1 || r[0].Type != "cancelled" {
		t.Fatalf("after a gap: %v", r)
	}
	// At most maxEvents are kept.
	var many []vocab.EventRecord
	for i := 0; i < maxEvents+30; i++ {
		many = append(many, rec(100+i, "subtask_done"))
	}
	if r := mergeEvents(got, many); len(r) != maxEvents || !r[len(r)-1].Time.Equal(many[len(many)-1].Time) {
		t.Fatalf("kept %d, want the newest %d", len(r), maxEvents)
	}
}

// After a resume the header shows the clock the state keeps, not the time
// since the task started: the hours no Hivemind ran it are left out, and
// status (vocab.State.Elapsed, the same function) says the same.
func TestHeaderClockAfterResume(t *testing.T) {
	now := testNow
	eng := &fakeEngine{}
	m := New(Options{FPS: 30, Engine: eng, Terminals: newFakeTerms(agentIDs(4)...), Title: "t", Now: func() time.Time { return now }})
	h := &harness{t: t, m: m, eng: eng}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 40})
	st := testState(4)
	st.StartedAt = testNow.Add(-3 * time.Hour) // killed after 10 minutes, resumed a minute ago
	st.Clock = vocab.RunClock{Ran: 10 * time.Minute, Since: testNow.Add(-time.Minute)}
	st.Timestamp = testNow
	h.send(SnapshotMsg{State: st})
	if hd := h.header(); !strings.Contains(hd, "⏱ 00:11:00") {
		t.Fatalf("resumed: header %q, want 00:11:00 (10 minutes before the kill, 1 since the resume)", hd)
	}
	now = now.Add(time.Minute)
	h.send(clockTickedMsg{gen: h.m.run.clockGen})
	want := vocab.FormatElapsed(st.Elapsed(now, true))
	if hd := h.header(); want != "00:12:00" || !strings.Contains(hd, "⏱ "+want) {
		t.Fatalf("a minute later: header %q, want %s", hd, want)
	}
}
