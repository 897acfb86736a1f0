package tui

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The start screen scans the project at once and, with nothing to resume,
// puts the cursor in the task field.
func TestStartScansProject(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarness(t, l, 120, 40)
	l.requireCalls(t, "scan "+testProject)
	if h.m.fd.mode != modeStart || h.m.fd.start.focus != focusTask || !h.m.fd.start.task.Focused() {
		t.Fatalf("mode %v focus %v: want the start screen with the task field focused", h.m.fd.mode, h.m.fd.start.focus)
	}
	if got := h.plain(); !strings.Contains(got, " ready ") || !strings.Contains(got, testProject) {
		t.Fatalf("start screen does not show the selected project:\n%s", got)
	}
}

// Typing a task with constraints and context, then ctrl+s, asks the
// launcher to start exactly that task; its panes appear.
func TestStartSubmitsTask(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarness(t, l, 120, 40)
	h.typeText("add a square root\nwith tests")
	h.keys("tab")
	h.typeText("no new dependencies\n\n  keep it small ")
	h.keys("tab")
	h.typeText("the calculator lives in calc/")
	h.run(h.send(ctrl('s')))

	l.requireCalls(t, "scan "+testProject, "start "+testProject)
	want := vocab.Task{Description: "add a square root\nwith tests", Context: "the calculator lives in calc/",
		Constraints: []string{"no new dependencies", "keep it small"}, SubmittedBy: "tui", Project: testProject}
	if !reflect.DeepEqual(l.started[0], want) {
		t.Fatalf("started %+v\nwant %+v", l.started[0], want)
	}
	if h.m.fd.mode != modeRun || h.m.run.opts.Engine != Engine(l.eng) || h.m.fd.start.task.Value() != "" {
		t.Fatalf("after start: mode %v, engine %v, task field %q", h.m.fd.mode, h.m.run.opts.Engine, h.m.fd.start.task.Value())
	}
	// Snapshots of another task (an older run) are ignored; the session's
	// own show its panes.
	other := testState(4)
	other.TaskID = "someone-else"
	h.send(SnapshotMsg{State: other})
	if h.m.run.haveState {
		t.Fatal("a snapshot of another task was taken")
	}
	st := testState(4)
	st.TaskID = l.taskID
	h.send(SnapshotMsg{State: st})
	if got := h.plain(); !strings.Contains(got, "worker_2 $ line 0") {
		t.Fatalf("panes do not show after the task started:\n%s", got)
	}
	// The run view's keys reach the session's engine.
	h.keys("p")
	l.eng.requireCalls(t, "pause")
}

func TestStartRefusesEmptyTaskAndShowsErrors(t *testing.T) {
	l := newFakeLauncher()
	h := newFrontHarness(t, l, 120, 40)
	h.run(h.send(ctrl('s')))
	l.requireCalls(t, "scan "+testProject)
	if !strings.Contains(h.plain(), "type the task first") {
		t.Fatalf("no error for an empty task:\n%s", h.plain())
	}
	l.startErr = errors.New("claude (Claude Code) is not on PATH")
	h.typeText("x")
	h.run(h.send(ctrl('s')))
	if h.m.fd.mode != modeStart || !strings.Contains(h.plain(), "claude (Claude Code) is not on PATH") {
		t.Fatalf("a failed start must stay on the start screen with the error:\n%s", h.plain())
	}
	if h.m.fd.start.task.Value() != "x" {
		t.Fatalf("the form lost its text: %q", h.m.fd.start.task.Value())
	}
}

func TestStartFocusKeys(t *testing.T) {
	l := newFakeLauncher()
	l.projects[testProject] = Project{Dir: testProject, Git: true, Tasks: testPastTasks()[1:]}
	h := newFrontHarness(t, l, 120, 40)
	steps := []struct {
		key  string
		want startFocus
	}{
		{"tab", focusConstraints}, {"tab", focusContext}, {"tab", focusTeam}, {"tab", focusList}, {"tab", focusTask},
		{"shift+tab", focusList}, {"n", focusTask}, {"esc", focusList}, {"i", focusTask},
	}
	for _, s := range steps {
		h.keys(s.key)
		if h.m.fd.start.focus != s.want {
			t.Fatalf("after %s: focus %v, want %v", s.key, h.m.fd.start.focus, s.want)
		}
	}
	// Single keys are text in a field, commands in the list.
	h.keys("q", "?")
	if h.m.fd.start.task.Value() != "q?" || h.m.fd.help.show {
		t.Fatalf("task field %q, help %v: keys must go to the field", h.m.fd.start.task.Value(), h.m.fd.help.show)
	}
	h.keys("f1")
	if !h.m.fd.help.show {
		t.Fatal("f1 does not open help in a field")
	}
	h.keys("esc", "esc", "?")
	if !h.m.fd.help.show || h.m.fd.start.focus != focusList {
		t.Fatalf("? in the list: help %v focus %v", h.m.fd.help.show, h.m.fd.start.focus)
	}
	h.keys("?")
	// The list: select a past task and open its summary, then come back.
	h.keys("down", "down", "up", "j")
	if h.m.fd.start.sel != 2 {
		t.Fatalf("selected %d, want 2", h.m.fd.start.sel)
	}
	h.keys("enter")
	if h.m.fd.mode != modeSummary || h.m.fd.sum.live || h.m.fd.sum.data.TaskID != "20260312-130926-77aa" {
		t.Fatalf("enter: mode %v live %v task %s", h.m.fd.mode, h.m.fd.sum.live, h.m.fd.sum.data.TaskID)
	}
	h.keys("esc")
	if h.m.fd.mode != modeStart {
		t.Fatalf("esc from a past summary: mode %v", h.m.fd.mode)
	}
	if cmd := h.key("q"); cmd == nil || cmd() != tea.QuitMsg(struct{}{}) {
		t.Fatal("q in the list does not quit")
	}
}

func TestStartResume(t *testing.T) {
	l := newFakeLauncher()
	past := testPastTasks()
	l.projects[testProject] = Project{Dir: testProject, Git: true, Unfinished: &past[0], Tasks: past}
	h := newFrontHarness(t, l, 120, 40)
	if h.m.fd.start.focus != focusList {
		t.Fatalf("with an unfinished task the list has the focus (got %v)", h.m.fd.start.focus)
	}
	h.keys("r")
	l.requireCalls(t, "scan "+testProject, "resume "+testProject)
	if h.m.fd.mode != modeRun || h.m.fd.sess == nil {
		t.Fatal("resume did not show the run")
	}

	// ctrl+r works from a field; a locked workspace resumes nothing.
	l2 := newFakeLauncher()
	l2.projects[testProject] = Project{Dir: testProject, Unfinished: &past[0], Tasks: past, LockedBy: "held by pid 4242"}
	h2 := newFrontHarness(t, l2, 120, 40)
	h2.keys("n")
	h2.run(h2.send(ctrl('r')))
	l2.requireCalls(t, "scan "+testProject)
	if !strings.Contains(h2.plain(), "running in another Hivemind") {
		t.Fatalf("locked: no explanation:\n%s", h2.plain())
	}

	// Nothing to resume.
	l3 := newFakeLauncher()
	h3 := newFrontHarness(t, l3, 120, 40)
	h3.run(h3.send(ctrl('r')))
	l3.requireCalls(t, "scan "+testProject)
	if !strings.Contains(h3.plain(), "nothing to resume") {
		t.Fatalf("no notice:\n%s", h3.plain())
	}
}

func TestFolderPicker(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"alpha", "beta"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := newFakeLauncher()
	h := newFrontHarnessAt(t, l, dir, 100, 30)

	open := func(want string) {
		t.Helper()
		h.run(h.send(ctrl('o')))
		if h.m.fd.mode != modePicker {
			t.Fatalf("ctrl+o: mode %v", h.m.fd.mode)
		}
		// The picker reads the directory in its own command.
		h.waitFor("the picker to list "+want, func() bool { return strings.Contains(h.plain(), want) })
	}
	open("alpha")
	h.keys("esc")
	if h.m.fd.mode != modeStart || h.m.fd.start.project != dir {
		t.Fatalf("esc: mode %v project %s", h.m.fd.mode, h.m.fd.start.project)
	}
	open("alpha")
	h.keys("down", "enter") // the highlighted folder: beta
	if h.m.fd.start.project != filepath.Join(dir, "beta") || h.m.fd.mode != modeStart {
		t.Fatalf("enter: project %s mode %v", h.m.fd.start.project, h.m.fd.mode)
	}
	open("No Files Found")
	h.keys(".") // this folder (beta itself)
	l.requireCalls(t, "scan "+dir, "scan "+filepath.Join(dir, "beta"), "scan "+filepath.Join(dir, "beta"))
}

// liveHarness is a front door running the fake launcher's session.
func liveHarness(t *testing.T) *frontHarness {
	l := newFakeLauncher()
	h := newFrontHarness(t, l, 120, 40)
	h.typeText("add a square root")
	h.run(h.send(ctrl('s')))
	if h.m.fd.sess == nil {
		t.Fatal("no session")
	}
	return h
}

func (h *frontHarness) phase(p vocab.Phase, mut ...func(*vocab.State)) {
	st := testState(4)
	st.TaskID = h.l.taskID
	st.PreviousPhase, st.Phase = st.Phase, p
	st.TaskDir = ""
	for _, f := range mut {
		f(&st)
	}
	h.run(h.send(SnapshotMsg{State: st}))
}

// complete → summary → new task (complete → idle): the session is closed
// and the project scanned again.
func TestSummaryAfterComplete(t *testing.T) {
	h := liveHarness(t)
	h.phase(vocab.PhaseExecuting)
	if h.m.fd.mode != modeRun {
		t.Fatalf("executing: mode %v", h.m.fd.mode)
	}
	h.phase(vocab.PhaseComplete)
	if h.m.fd.mode != modeSummary || !h.m.fd.sum.live || !h.m.fd.sum.loaded {
		t.Fatalf("complete: mode %v live %v loaded %v", h.m.fd.mode, h.m.fd.sum.live, h.m.fd.sum.loaded)
	}
	h.keys("v")
	if h.m.fd.mode != modeRun {
		t.Fatalf("v: mode %v", h.m.fd.mode)
	}
	h.keys("s")
	if h.m.fd.mode != modeSummary {
		t.Fatalf("s: mode %v", h.m.fd.mode)
	}
	h.keys("down", "pgdown", "up")
	if h.m.fd.sum.scroll != 20 {
		t.Fatalf("scroll %d, want 20", h.m.fd.sum.scroll)
	}
	h.keys("enter")
	h.l.requireCalls(t, "scan "+testProject, "start "+testProject, "usage "+h.l.taskID, "close", "scan "+testProject)
	if h.m.fd.mode != modeStart || h.m.fd.sess != nil || h.m.run.opts.Engine != nil || h.m.run.haveState {
		t.Fatalf("after enter: mode %v session %v", h.m.fd.mode, h.m.fd.sess)
	}
	if h.m.fd.start.focus != focusTask {
		t.Fatalf("focus %v, want the task field", h.m.fd.start.focus)
	}
}

// error offers retry (→ planning: back to the panes) or abandon (→ idle).
func TestErrorChoice(t *testing.T) {
	h := liveHarness(t)
	h.phase(vocab.PhaseError, func(s *vocab.State) { s.Reason = "worker_2 crashed 4 times" })
	if h.m.fd.mode != modeSummary || !strings.Contains(h.plain(), "R retry · A abandon") {
		t.Fatalf("error: mode %v\n%s", h.m.fd.mode, h.plain())
	}
	h.keys("R")
	h.l.eng.requireCalls(t, "retry")
	h.phase(vocab.PhasePlanning)
	if h.m.fd.mode != modeRun {
		t.Fatalf("after retry: mode %v", h.m.fd.mode)
	}
	h.phase(vocab.PhaseError)
	h.keys("A")
	if h.m.run.confirm != confirmAbandon || !strings.Contains(h.plain(), "Abandon the task?") {
		t.Fatalf("A does not ask:\n%s", h.plain())
	}
	h.keys("n")
	h.l.eng.requireCalls(t, "retry")
	h.keys("A", "y")
	h.l.eng.requireCalls(t, "retry", "abandon")
	h.phase(vocab.PhaseIdle)
	if h.m.fd.mode != modeSummary || !strings.Contains(h.plain(), "ABANDONED") {
		t.Fatalf("abandoned: mode %v\n%s", h.m.fd.mode, h.plain())
	}
	// R and A no longer apply.
	h.keys("R", "A")
	h.l.eng.requireCalls(t, "retry", "abandon")
	if h.m.run.confirm != confirmNone {
		t.Fatal("A asked on an abandoned task")
	}
}

// The summary's help is the front door's: open on a failed task's summary
// when the task runs again, it gives way to the panes (not to the run
// view's help, which the user did not open), and the next summary shows
// without it. A question over the summary takes the keys from it.
func TestSummaryHelpWhenTaskRunsAgain(t *testing.T) {
	h := liveHarness(t)
	h.phase(vocab.PhaseError)
	h.keys("?")
	if h.m.screen() != screenSummary || !strings.Contains(h.plain(), "Hivemind — start screen and summary keys") {
		t.Fatalf("? on the summary: screen %v\n%s", h.m.screen(), h.plain())
	}
	h.phase(vocab.PhasePlanning) // retried elsewhere (another client, or R before ?)
	if h.m.screen() != screenRun || h.m.run.help.show || strings.Contains(h.plain(), "Hivemind keys") {
		t.Fatalf("running again: screen %v, want the panes\n%s", h.m.screen(), h.plain())
	}
	h.phase(vocab.PhaseError)
	if h.m.screen() != screenSummary || strings.Contains(h.plain(), "summary keys") {
		t.Fatalf("failed again: screen %v, want the summary without help\n%s", h.m.screen(), h.plain())
	}
	h.keys("A")
	if h.m.screen() != screenConfirm {
		t.Fatalf("A on the summary: screen %v, want the question", h.m.screen())
	}
	h.keys("?")
	if h.m.screen() != screenConfirm || h.m.fd.help.show || h.m.run.help.show {
		t.Fatalf("? answers nothing while asked: screen %v", h.m.screen())
	}
	h.keys("esc")
	if h.m.screen() != screenSummary || h.m.run.confirm != confirmNone {
		t.Fatalf("esc: screen %v, confirm %v", h.m.screen(), h.m.run.confirm)
	}
}

// needs_human and pause stay on the panes, where the banner and keys are.
func TestNeedsHumanStaysOnPanes(t *testing.T) {
	h := liveHarness(t)
	h.phase(vocab.PhaseNeedsHuman)
	h.phase(vocab.PhasePaused)
	if h.m.fd.mode != modeRun {
		t.Fatalf("mode %v", h.m.fd.mode)
	}
	// s is not a summary while the task runs.
	h.keys("s")
	if h.m.fd.mode != modeRun {
		t.Fatal("s opened a summary of a running task")
	}
}

// q behaves the same on every end screen: the task is over, nothing is
// left to resume, so it quits at once (even while agents still run); on
// a failed task's summary, which can be resumed, it asks.
func TestSummaryQuitSameOnEveryEnd(t *testing.T) {
	for _, p := range []vocab.Phase{vocab.PhaseComplete, vocab.PhaseCancelled, vocab.PhaseIdle} {
		h := liveHarness(t)
		h.phase(vocab.PhaseError)
		h.phase(p)
		if h.m.fd.mode != modeSummary {
			t.Fatalf("%s: no summary", p)
		}
		if cmd := h.key("q"); cmd == nil || cmd() != tea.QuitMsg(struct{}{}) || h.m.run.confirm != confirmNone {
			t.Errorf("%s: q did not quit at once", p)
		}
	}
	h := liveHarness(t)
	h.phase(vocab.PhaseError)
	h.keys("q")
	if h.m.run.confirm != confirmQuit {
		t.Fatal("error: q did not ask while agents run")
	}
	cmd := h.key("y")
	if cmd == nil || cmd() != tea.QuitMsg(struct{}{}) {
		t.Fatal("y does not quit")
	}
}

// Without a launcher nothing of the front door shows (the plain run view).
func TestNoLauncherNoFrontDoor(t *testing.T) {
	h := newHarness(t, 4, 120, 30)
	st := testState(4)
	st.Phase = vocab.PhaseComplete
	h.send(SnapshotMsg{State: st})
	h.key("s")
	if h.m.fd.on || h.m.fd.mode != modeRun {
		t.Fatal("front door active without a launcher")
	}
}

func TestParseFileChanges(t *testing.T) {
	md := "# st_2\n\n## Files\n- Created: api/login.go\n- Modified: `api/router.go`, api/mw.go\n" +
		"* **Deleted:** old.go\n- CREATE src/a.go\n- MODIFY main.go — wire it\n- Created: api/login.go\n" +
		"- not a file line\n## Notes\nCreated: prose.go\n"
	got := parseFileChanges(md)
	want := []fileChange{{"created", "api/login.go"}, {"modified", "api/router.go"}, {"modified", "api/mw.go"},
		{"deleted", "old.go"}, {"created", "src/a.go"}, {"modified", "main.go"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestLoadSummary(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"agents/worker_1/outputs/st_1.md":             "# st_1\n\n## Changes\n\n- CREATE calc/sqrt.go\n- MODIFY calc/calc.go\n",
		"agents/worker_2/outputs/st_2.md":             "# st_2\nnothing listed\n",
		"agents/worker_1/outputs/fix_1_1_worker_1.md": "- Modified: calc/sqrt.go\n",
		"reviews/friction_v1-worker_1.md":             "# Friction: the build is slow\n\nDetails…\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := summaryState(dir)
	s := loadSummary(st, "", "title\nsecond line")
	if s.Title != "title" || len(s.Subtasks) != 4 {
		t.Fatalf("title %q, %d subtasks", s.Title, len(s.Subtasks))
	}
	if got := s.Subtasks[0].Files; len(got) != 2 || got[0] != (fileChange{"created", "calc/sqrt.go"}) || s.Subtasks[0].FromPlan {
		t.Errorf("st_1: %+v", s.Subtasks[0])
	}
	if got := s.Subtasks[1]; !got.FromPlan || len(got.Files) != 1 || got.Files[0].Path != "calc/sqrt_test.go" {
		t.Errorf("st_2 (no files in its output: the plan's): %+v", got)
	}
	if got := s.Subtasks[2]; got.ID != "st_3" || got.Status != vocab.SubtaskPending || !got.FromPlan {
		t.Errorf("st_3 (no output): %+v", got)
	}
	if got := s.Subtasks[3]; !got.Fix || len(got.Files) != 1 {
		t.Errorf("fix: %+v", got)
	}
	if len(s.Friction) != 1 || s.Friction[0].Text != "Friction: the build is slow" {
		t.Errorf("friction: %+v", s.Friction)
	}
	if s.Team != nil {
		t.Errorf("team without task.json: %v", s.Team)
	}
	// A mixed team's summary says which agent each worker ran.
	task := `{"agent":"claude","agents":{"lead":"claude","reviewer":"claude","worker":"codex"},"worker_agents":{"worker_2":"gemini"}}`
	if err := os.WriteFile(filepath.Join(dir, vocab.TaskFile), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	s = loadSummary(st, "", "title")
	if s.Team["worker_1"] != "codex" || s.Team["worker_2"] != "gemini" || s.Team["lead"] != "claude" {
		t.Errorf("team: %v", s.Team)
	}
}

// summaryState is a finished task with a plan, rounds and friction whose
// task directory is dir.
func summaryState(dir string) vocab.State {
	st := testState(4)
	st.TaskID, st.TaskDir = "20260314-150926-ab12", dir
	st.PreviousPhase, st.Phase = vocab.PhaseCheckpointReview, vocab.PhaseComplete
	st.StartedAt, st.FinishedAt = testNow.Add(-14*time.Minute-5*time.Second), testNow.Add(-time.Minute)
	st.Clock = vocab.RunClock{Ran: st.FinishedAt.Sub(st.StartedAt)}
	st.Plan = &vocab.Plan{Subtasks: []vocab.Subtask{
		{ID: "st_1", Description: "square root function", Files: []string{"CREATE calc/sqrt.go"}},
		{ID: "st_2", Description: "tests for the square root", Files: []string{"CREATE calc/sqrt_test.go"}},
		{ID: "st_3", Description: "document it", Files: []string{"MODIFY README.md"}},
	}}
	st.Subtasks = map[string]vocab.SubtaskState{
		"st_1": {Status: vocab.SubtaskDone, Worker: "worker_1"},
		"st_2": {Status: vocab.SubtaskDone, Worker: "worker_2"},
	}
	st.Fixes = map[string]vocab.SubtaskState{"fix_1_1_worker_1": {Status: vocab.SubtaskDone, Worker: "worker_1"}}
	at := testNow.Add(-10 * time.Minute)
	st.Rounds = []vocab.Round{
		{Kind: "plan", Number: 1, Verdict: "feedback", Summary: "Split st_1: the parser and the evaluator touch the same file", At: at},
		{Kind: "plan", Number: 2, Verdict: "approved", Summary: "Plan approved", At: at.Add(time.Minute)},
		{Kind: "checkpoint", Checkpoint: 1, Number: 1, Verdict: "issues", Summary: "negative input panics", At: at.Add(5 * time.Minute)},
		{Kind: "checkpoint", Checkpoint: 1, Number: 2, Verdict: "approved", Summary: "Checkpoint 1 approved", At: at.Add(7 * time.Minute)},
	}
	st.Friction = []string{"reviews/friction_v1-worker_1.md"}
	st.FrictionCount = 1
	return st
}

// A project that cannot be read (a missing folder) starts nothing.
func TestStartRefusesUnreadableProject(t *testing.T) {
	l := newFakeLauncher()
	l.scanErr = errors.New("stat /home/dev/calc: no such file or directory")
	h := newFrontHarness(t, l, 120, 40)
	h.typeText("x")
	h.run(h.send(ctrl('s')))
	l.requireCalls(t, "scan "+testProject)
	if got := h.plain(); !strings.Contains(got, "no such file or directory") || !strings.Contains(got, "choose a project folder first") ||
		!strings.Contains(got, " idle ") {
		t.Fatalf("unreadable project:\n%s", got)
	}
}

// The front door reaches the run view only through what it asks: each key
// of its screens that acts on the run view (quit, retry, abandon, leave
// the task) comes back as an act the Model applies, a question of the run
// view takes the keys, and the live task's end covers the panes.
func TestFrontDoorAsks(t *testing.T) {
	failed := testState(2)
	failed.TaskID, failed.Phase = "t1", vocab.PhaseError
	fresh := func(mode screenMode, live bool) (*frontDoor, frontCtx) {
		fd := newFrontDoor(Options{Launcher: newFakeLauncher(), Project: testProject})
		c := frontCtx{w: 100, h: 30}
		if live {
			fd.begin(&Session{TaskID: failed.TaskID, Close: func() error { return nil }})
			c.st, c.haveState, c.title = failed, true, "add a square root"
		}
		if mode == modeSummary {
			fd.openSummary(failed, live, c.title)
		}
		fd.mode = mode
		return &fd, c
	}
	for _, tc := range []struct {
		name     string
		mode     screenMode
		live     bool
		key      string
		act      frontAct
		notice   string
		pass     bool
		wantMode screenMode
	}{
		{"live summary q asks the run view", modeSummary, true, "q", actQuitLive, "", false, modeSummary},
		{"past summary q quits", modeSummary, false, "q", actQuit, "", false, modeSummary},
		{"R retries", modeSummary, true, "R", actRetry, "retrying…", false, modeSummary},
		{"A asks to abandon", modeSummary, true, "A", actAbandon, "", false, modeSummary},
		{"enter leaves the task", modeSummary, true, "enter", actEnd, "", false, modeStart},
		{"v shows the panes", modeSummary, true, "v", actNone, "", false, modeRun},
		{"esc on a past summary", modeSummary, false, "esc", actNone, "", false, modeStart},
		{"start ctrl+c quits", modeStart, false, "ctrl+c", actQuit, "", false, modeStart},
		{"picker ctrl+c quits", modePicker, false, "ctrl+c", actQuit, "", false, modePicker},
		{"the panes' keys are the run view's", modeRun, true, "q", actNone, "", true, modeRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, c := fresh(tc.mode, tc.live)
			a := fd.Update(pressOf(t, tc.key), c)
			n := ""
			if a.notice != nil {
				n = a.notice.text
			}
			if a.act != tc.act || n != tc.notice || a.pass != tc.pass || fd.mode != tc.wantMode {
				t.Fatalf("act %v notice %q pass %v mode %v; want %v %q %v %v", a.act, n, a.pass, fd.mode, tc.act, tc.notice, tc.pass, tc.wantMode)
			}
		})
	}
	t.Run("a question of the run view takes the keys", func(t *testing.T) {
		fd, c := fresh(modeSummary, true)
		c.asking = true
		if a := fd.Update(pressOf(t, "q"), c); !a.pass || a.act != actNone {
			t.Fatalf("act %v pass %v: want the key passed to the run view", a.act, a.pass)
		}
	})
	t.Run("the live task's end covers the panes", func(t *testing.T) {
		fd, c := fresh(modeRun, true)
		if a := fd.after(c); a.act != actCover || a.cmd == nil || fd.mode != modeSummary || !fd.sum.live {
			t.Fatalf("act %v mode %v live %v: want the live summary over the panes", a.act, fd.mode, fd.sum.live)
		}
		if a := fd.after(c); a.act != actNone {
			t.Fatalf("the same phase again: act %v", a.act)
		}
	})
}
