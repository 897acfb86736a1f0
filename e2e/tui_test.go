package e2e_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/procenv"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// The TUI tests run the built binary in tmux 160×48 (tmux_helpers_test.go)
// with the built-in sim agents and assert on what the screen shows. They
// wait on screen or workspace conditions with deadlines, never on sleeps.

// tuiWait bounds one wait for something the TUI shows.
const tuiWait = 30 * time.Second

var simAgents = []string{"lead", "reviewer", "worker_1", "worker_2"}

// recordIndex is the index of the first record at or after from of type
// typ (-1 if none).
func recordIndex(recs []vocab.EventRecord, from int, typ vocab.RecordType) int {
	for i := max(from, 0); i < len(recs); i++ {
		if recs[i].Type == typ {
			return i
		}
	}
	return -1
}

// quit presses q and, when the TUI asks because agents still run, y; it
// returns hivemind's exit status.
func (r *tuiRun) quit() int {
	r.t.Helper()
	r.keys("q")
	deadline := time.Now().Add(tuiWait)
	for time.Now().Before(deadline) {
		if dead, code := r.exited(); dead {
			return code
		}
		if strings.Contains(r.capture().footer(), "Quit Hivemind?") {
			r.keys("y")
			return r.waitExit(tuiWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.t.Fatalf("q neither quit nor asked to confirm; screen:\n%s", r.capture())
	return -1
}

// checkGrid asserts the 2×2 layout of four panes that fill 160 columns.
func checkGrid(t *testing.T, s tuiScreen) {
	t.Helper()
	p := s.panes()
	lead, rev, w1, w2 := p["lead"], p["reviewer"], p["worker_1"], p["worker_2"]
	if lead.x != 0 || rev.x != lead.w || lead.w+rev.w != tmuxCols || lead.y != rev.y {
		t.Errorf("top row: lead %+v, reviewer %+v; want side by side across %d columns", lead, rev, tmuxCols)
	}
	if w1.x != 0 || w2.x != w1.w || w1.w+w2.w != tmuxCols || w1.y != w2.y || w1.y != lead.y+lead.h {
		t.Errorf("bottom row: worker_1 %+v, worker_2 %+v; want side by side below the lead", w1, w2)
	}
	if !strings.Contains(w1.title, "(worker)") || !strings.Contains(w2.title, "(worker)") {
		t.Errorf("worker titles %q, %q do not show the role", w1.title, w2.title)
	}
}

// The controls, in one run: four live panes, pause (nothing is injected
// while paused, events are deferred), attach-and-type into a worker, detach,
// zoom, resume (back to the state before the pause), cancel and quit, with
// no process left behind.
func TestTUIControls(t *testing.T) {
	parallel(t)
	start := time.Now()
	// Paced so a turn of the lead lasts long enough to pause in it.
	r := startTUI(t, tuiOptions{simArgs: "--pace 30ms",
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})

	// Four panes with titles and the sim agents' own output inside.
	s := r.waitScreen(tuiWait, "four panes showing the sim agents' banners", func(s tuiScreen) bool {
		for _, id := range simAgents {
			txt, ok := s.paneText(id)
			if !ok || !strings.Contains(txt, "Hivemind sim agent") || !strings.Contains(txt, "agent "+id+" · role") {
				return false
			}
		}
		return true
	})
	checkGrid(t, s)
	if got := len(s.panes()); got != 4 {
		t.Errorf("%d panes on screen, want 4", got)
	}

	// The lead gets its assignment: the header says planning.
	r.waitScreen(tuiWait, "the lead planning", func(s tuiScreen) bool {
		txt, _ := s.paneText("lead")
		return s.phase() == string(vocab.PhasePlanning) && strings.Contains(txt, "[HIVEMIND]")
	})
	dir := r.taskDir()

	// Pause.
	r.keys("p")
	s = r.waitScreen(tuiWait, "the paused header and banner", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhasePaused) && s.contains("PAUSED")
	})
	recs := readEventLog(dir)
	paused := recordIndex(recs, 0, "paused")
	if paused < 0 {
		t.Fatal("no paused event recorded")
	}
	prev := recDetail(recs[paused], "previous_state")
	if !strings.Contains(s.header(), "was "+tui.PhaseLabel(vocab.Phase(prev))) {
		t.Errorf("header %q does not show the previous state %s", s.header(), prev)
	}
	// The busy agent finishes its turn; what it produced waits.
	waitFor(t, tuiWait, "an event deferred while paused", func() bool {
		return recordIndex(readEventLog(dir), paused, "event_deferred") >= 0
	})

	// Attach to worker_1 (focus 3, enter) and type: the bytes reach its
	// PTY (the line discipline echoes them into its pane) and the agent
	// (it answers the line).
	r.keys("3")
	r.waitScreen(tuiWait, "worker_1 focused", func(s tuiScreen) bool {
		return s.panes()["worker_1"].border == "┏"
	})
	r.keys("Enter")
	s = r.waitScreen(tuiWait, "attached to worker_1", func(s tuiScreen) bool {
		p := s.panes()["worker_1"]
		return p.border == "╔" && strings.Contains(s.footer(), "attached to worker_1")
	})
	if title := s.panes()["worker_1"].title; !strings.Contains(title, "ctrl+] detach") {
		t.Errorf("attached pane title %q does not show the detach key", title)
	}
	const typed = "hello from the tmux test"
	r.typeText(typed)
	r.waitScreen(tuiWait, "the typed text in worker_1's pane", func(s tuiScreen) bool {
		txt, _ := s.paneText("worker_1")
		return strings.Contains(txt, typed)
	})
	r.keys("Enter")
	s = r.waitScreen(tuiWait, "worker_1's answer to the typed line", func(s tuiScreen) bool {
		txt, _ := s.paneText("worker_1")
		return strings.Contains(txt, "I follow Hivemind")
	})
	for _, id := range []string{"lead", "reviewer", "worker_2"} {
		if txt, _ := s.paneText(id); strings.Contains(txt, typed) {
			t.Errorf("typed text shows in %s's pane too", id)
		}
	}
	// Detach: keys are the TUI's again.
	r.keys("C-]")
	r.waitScreen(tuiWait, "detached", func(s tuiScreen) bool {
		return s.panes()["worker_1"].border == "┏" && !strings.Contains(s.footer(), "attached")
	})

	// Zoom the focused pane to the full width, and back (z reaching the
	// TUI also shows the keys are no longer the agent's).
	r.keys("z")
	s = r.waitScreen(tuiWait, "worker_1 zoomed", func(s tuiScreen) bool {
		p := s.panes()
		return len(p) == 1 && p["worker_1"].w == tmuxCols
	})
	if h := s.panes()["worker_1"].h; h < tmuxRows-4 {
		t.Errorf("zoomed pane is %d rows high, want nearly the %d-row screen", h, tmuxRows)
	}
	r.keys("z")
	r.waitScreen(tuiWait, "four panes again", func(s tuiScreen) bool { return len(s.panes()) == 4 })

	// Nothing was injected while paused.
	recs = readEventLog(dir)
	if i := recordIndex(recs, paused, "assignment_sent"); i >= 0 {
		t.Errorf("assignment sent to %s while paused", recs[i].Agent)
	}
	if p := readState(t, dir); len(p.Deferred) == 0 {
		t.Errorf("state.json holds no deferred events while paused")
	}

	// Resume: back to the state before the pause, the deferred work is
	// handled and injections go on.
	r.keys("r")
	r.waitScreen(tuiWait, "the header to leave paused", func(s tuiScreen) bool {
		return s.phase() != "" && s.phase() != string(vocab.PhasePaused) && !s.contains("PAUSED")
	})
	var resumed int
	waitFor(t, tuiWait, "resumed_from_pause and a new assignment", func() bool {
		recs = readEventLog(dir)
		resumed = recordIndex(recs, paused, "resumed_from_pause")
		return resumed >= 0 && recordIndex(recs, resumed, "assignment_sent") >= 0
	})
	if got := recDetail(recs[resumed], "state"); got != prev {
		t.Errorf("resumed to %s, paused in %s", got, prev)
	}
	// The workflow goes on on screen: the header reaches execution.
	r.waitScreen(tuiWait, "the header to say executing", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseExecuting)
	})

	// Cancel (asks first).
	r.keys("c")
	r.waitScreen(tuiWait, "the cancel question", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "Cancel the task?")
	})
	r.keys("y")
	r.waitText(tuiWait, "CANCELLED")
	waitFor(t, tuiWait, "state.json to say cancelled", func() bool {
		return readState(t, dir).Phase == vocab.PhaseCancelled
	})

	if code := r.quit(); code != exitCancelled {
		t.Errorf("exit status %d after cancel, want %d", code, exitCancelled)
	}
	noLeftovers(t, r.project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}

// exitCancelled is hivemind's exit status for a cancelled task.
const exitCancelled = 1

// A run to completion shows the complete banner; q then exits 0 and no
// process is left.
func TestTUIComplete(t *testing.T) {
	parallel(t)
	start := time.Now()
	r := startTUI(t, tuiOptions{simArgs: "--pace 2ms",
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitText(2*tuiWait, "COMPLETE")
	st := checkComplete(t, r.taskDir())
	if st.RevisionCount < 1 {
		t.Errorf("revision_count %d: the sim reviewer rejects the first plan", st.RevisionCount)
	}
	if code := r.quit(); code != 0 {
		t.Errorf("exit status %d after a complete task, want 0", code)
	}
	noLeftovers(t, r.project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}

// A cancel confirmed and a quit typed at once (one burst of keys: the
// runner has not handled the cancel when the UI quits) end the task as
// cancelled: the exit status and the message are the task's end, not a
// task left unfinished.
func TestTUICancelThenQuitAtOnce(t *testing.T) {
	parallel(t)
	r := startTUI(t, tuiOptions{simArgs: "--pace 30ms",
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitScreen(tuiWait, "the lead busy", func(s tuiScreen) bool {
		return strings.Contains(s.panes()["lead"].title, "busy")
	})
	// c y: cancel and confirm; q y: quit, and confirm if the UI still
	// thinks the task runs (once it knows it is over, q leaves at once
	// and the second y goes nowhere).
	r.keys("c", "y", "q", "y")
	if code := r.waitExit(tuiWait); code != exitCancelled {
		t.Errorf("exit status %d after cancel then quit, want %d (cancelled)", code, exitCancelled)
	}
	if st := readState(t, r.taskDir()); st.Phase != vocab.PhaseCancelled {
		t.Errorf("state %s after cancel then quit, want cancelled", st.Phase)
	}
	noLeftovers(t, r.project)
}

// q while agents run asks first; y stops every agent and exits 0, and the
// task stays resumable (not in a final state).
func TestTUIQuitWhileRunning(t *testing.T) {
	parallel(t)
	start := time.Now()
	r := startTUI(t, tuiOptions{simArgs: "--pace 30ms",
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitScreen(tuiWait, "the lead busy", func(s tuiScreen) bool {
		return strings.Contains(s.panes()["lead"].title, "busy")
	})
	r.keys("q")
	r.waitScreen(tuiWait, "the quit question", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "Quit Hivemind?")
	})
	r.keys("y")
	if code := r.waitExit(tuiWait); code != 0 {
		t.Errorf("exit status %d after quitting a running task, want 0", code)
	}
	if st := readState(t, r.taskDir()); st.Phase.Terminal() {
		t.Errorf("state %s after quit, want a resumable one", st.Phase)
	}
	noLeftovers(t, r.project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}

// A complete task stops its agents at once, while the UI stays open on
// the summary: every process of the run (found by its environment) is
// gone within 2 s of task_complete, the panes (v) keep each agent's last
// screen under an "exited" title, and q then quits without asking
// (nothing runs that quitting would stop).
// With --server, the same holds while the client stays attached, and q
// leaves without the detach-or-stop question (no team is left to keep
// working): the server then ends.
func TestTUICompleteStopsAgents(t *testing.T) {
	parallel(t)
	t.Run("in process", func(t *testing.T) { completeStopsAgents(t, nil) })
	t.Run("server", func(t *testing.T) { completeStopsAgents(t, serverEnv(t), "--server") })
}

func completeStopsAgents(t *testing.T, env []string, args ...string) {
	parallel(t)
	r := startTUI(t, tuiOptions{simArgs: "--pace 2ms", env: env,
		args: append(args, "--agent", "sim", "--workers", "2", "build a tiny calculator")})
	mark := "HIVEMIND_PROJECT=" + r.project
	if !pollUntil(tuiWait, func() bool { return len(procenv.ProcsWithEnv(os.Getuid(), mark)) >= len(simAgents) }) {
		t.Fatalf("the agents never ran: %v", procenv.ProcsWithEnv(os.Getuid(), mark))
	}
	r.waitText(2*tuiWait, "COMPLETE")
	var recs []vocab.EventRecord
	i := -1
	if !pollUntil(tuiWait, func() bool {
		recs = readRecords(t, r.taskDir())
		i = recordIndex(recs, 0, "task_complete")
		return i >= 0
	}) {
		t.Fatal("no task_complete record")
	}
	at := recs[i].Time
	var left []int
	if !pollUntil(time.Until(at.Add(2*time.Second)), func() bool {
		left = procenv.ProcsWithEnv(os.Getuid(), mark)
		return len(left) == 0
	}) {
		t.Fatalf("%d processes of the run still there 2 s after task_complete: %v", len(left), left)
	}
	t.Logf("every agent process gone %v after task_complete", time.Since(at).Round(time.Millisecond))
	if dead, _ := r.exited(); dead {
		t.Fatal("hivemind exited by itself after complete; the UI stays until q")
	}
	// The state says so too (the UI reads the agents' health from it).
	var st vocab.State
	if !pollUntil(tuiWait, func() bool {
		st = readState(t, r.taskDir())
		for _, a := range st.Agents {
			if a.Status != vocab.HealthExited {
				return false
			}
		}
		return true
	}) {
		t.Errorf("agents in state.json after complete: %+v", st.Agents)
	}
	// The panes keep what the agents showed last (their emulators stay),
	// and say each agent exited: not a crash, nothing that needs the user.
	r.keys("v")
	panes := strings.Join(r.waitScreen(tuiWait, "every pane to say its agent exited", func(s tuiScreen) bool {
		return strings.Count(strings.Join(s, "\n"), "⏻ exited") == len(simAgents)
	}), "\n")
	if strings.Count(panes, "Wrote ") < len(simAgents) || strings.Contains(panes, "needs you") || strings.Contains(panes, "restarting") {
		t.Errorf("the panes after complete do not keep the agents' last screens, or raise an alarm:\n%s", panes)
	}
	r.keys("q")
	if code := r.waitExit(tuiWait); code != 0 {
		t.Errorf("exit status %d after q on a complete task, want 0", code)
	}
	if env != nil && !pollUntil(tuiWait, func() bool { return len(servers(t, r.project, env)) == 0 }) {
		t.Error("the server still runs after its last client left a complete task")
	}
}
