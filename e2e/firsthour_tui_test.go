package e2e_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// essentials reports whether the footer still offers quit and help.
func essentials(s tuiScreen) bool {
	return strings.HasSuffix(strings.TrimSpace(s.footer()), "q quit • ? help")
}

var clockRE = regexp.MustCompile(`⏱ (\d\d:\d\d:\d\d)`)

// clock is the elapsed time the header shows ("" if none).
func (s tuiScreen) clock() string {
	m := clockRE.FindStringSubmatch(s.header())
	if m == nil {
		return ""
	}
	return m[1]
}

// The first hour at 80×24, in one run of the real binary with the sim
// team: the header keeps the state in words, the clock and the task; the
// footer keeps quit and help; the help overlay fits; the event strip shows
// milestones and, with v, the detail; / finds text in a pane and y copies
// it (OSC 52 into tmux's buffer); pause freezes the clock; cancel ends in
// a summary that says what was not done; `hivemind events` prints
// milestones and --verbose the rest.
func TestTUIFirstHour80x24(t *testing.T) {
	parallel(t)
	start := time.Now()
	r := startTUI(t, tuiOptions{simArgs: "--pace 30ms", cols: 80, rows: 24, clipboard: true,
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})

	s := r.waitScreen(tuiWait, "four panes and the lead planning", func(s tuiScreen) bool {
		return len(s.panes()) == 4 && s.phase() == string(vocab.PhasePlanning)
	})
	if !strings.Contains(s.header(), "planning") || s.clock() == "" || !strings.Contains(s.header(), "build a tiny") {
		t.Errorf("header %q: want the state in words, the clock and the task", s.header())
	}
	if !essentials(s) {
		t.Errorf("footer %q lacks q quit • ? help", s.footer())
	}

	// Pause first, so the checks below see a run that stands still: the
	// clock too.
	r.keys("p")
	s = r.waitScreen(tuiWait, "paused", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhasePaused) && strings.Contains(s.header(), "was ")
	})
	frozen := s.clock()
	watch := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(watch) {
		if c := r.capture().clock(); c != frozen && c != "" {
			t.Fatalf("clock moved while paused: %s → %s", frozen, c)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Help fits: a closed box, scrollable, the legend in it.
	r.keys("?")
	s = r.waitText(tuiWait, "Hivemind keys")
	top, bottom := -1, -1
	for i, l := range s {
		if strings.Contains(l, "╭") && !strings.Contains(l, "─ ") {
			top = i
		}
		if strings.Contains(l, "╰") && strings.Contains(l, "╯") {
			bottom = i
		}
	}
	if top < 0 || bottom <= top || !s.contains("scroll") || !essentials(s) {
		t.Errorf("help box not whole at 80×24 (top %d, bottom %d):\n%s", top, bottom, s)
	}
	for i := 0; i < 60; i++ {
		r.keys("Down")
	}
	r.waitText(tuiWait, "clock stopped") // the states legend, at the end
	r.keys("Escape")
	// (Wait for it: a key sent right after Escape would read as alt+key.)
	r.waitScreen(tuiWait, "the help to close", func(s tuiScreen) bool { return !s.contains("↑↓ scroll · lines") })

	// Events: milestones, then with v every record.
	r.keys("e")
	s = r.waitText(tuiWait, "events: milestones", "planning")
	if s.contains("input.") || s.contains("agent_health") {
		t.Errorf("plumbing among the milestones:\n%s", s)
	}
	r.keys("v")
	r.waitText(tuiWait, "events: all detail", "input.")
	r.keys("e")
	r.waitScreen(tuiWait, "the event strip to close", func(s tuiScreen) bool { return !s.contains("events: all detail") })

	// Search the lead's pane for its banner; copy the lead's screen.
	r.keys("/")
	r.typeText("sim agent")
	r.keys("Enter")
	r.waitText(tuiWait, "/sim agent 1/")
	r.keys("y")
	r.waitScreen(tuiWait, "the copy notice", func(s tuiScreen) bool { return strings.Contains(s.footer(), "copied") })
	var buf string
	waitFor(t, tuiWait, "tmux's paste buffer to hold the copy", func() bool {
		buf, _ = r.tmuxCmd("show-buffer")
		return strings.Contains(buf, "sim agent")
	})
	if strings.Contains(buf, "\x1b") {
		t.Errorf("copied text has escape sequences: %q", buf)
	}
	r.keys("Escape")
	r.waitScreen(tuiWait, "the search to end", func(s tuiScreen) bool { return !s.contains("/sim agent") })

	r.keys("r")
	r.waitScreen(tuiWait, "resumed", func(s tuiScreen) bool {
		return s.phase() != "" && s.phase() != string(vocab.PhasePaused)
	})

	// Cancel: the summary says what was not done and keeps its keys.
	r.keys("c")
	r.waitScreen(tuiWait, "the cancel question", func(s tuiScreen) bool { return strings.Contains(s.footer(), "[y/n]") })
	r.keys("y")
	s = r.waitText(tuiWait, "CANCELLED", "What was built")
	if s.contains("in_progress") || !strings.Contains(s.footer(), "q quit") || !strings.Contains(s.footer(), "help") {
		t.Errorf("summary after cancel:\n%s", s)
	}
	if code := r.quit(); code != exitCancelled {
		t.Errorf("exit status %d after cancel, want %d", code, exitCancelled)
	}
	noLeftovers(t, r.project)

	// hivemind events: milestones by default, every record with --verbose;
	// the agents' exits at the stop read as a stop, not a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, out := hivemind(t, ctx, r.home, "events", "--project", r.project)
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("hivemind events: exit %d\n%s", code, out)
	}
	if got := out.String(); strings.Contains(got, "agent_health") || !strings.Contains(got, "cancelled") ||
		!strings.Contains(got, "--verbose") {
		t.Errorf("hivemind events (milestones):\n%s", got)
	}
	cmd, out = hivemind(t, ctx, r.home, "events", "--verbose", "--project", r.project)
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("hivemind events --verbose: exit %d\n%s", code, out)
	}
	verbose := out.String()
	if !strings.Contains(verbose, "agent_health") {
		t.Errorf("hivemind events --verbose lacks the detail:\n%s", verbose)
	}
	for _, l := range strings.Split(verbose, "\n") {
		if strings.Contains(l, "exit_code=143") && !strings.Contains(l, "not a failure") {
			t.Errorf("a stop reads like a failure: %s", l)
		}
	}
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}

// The start screen's team row and the diff view, in a git project: the
// task starts with the agent and worker count chosen there (three workers,
// three worker panes), the header names the task branch, arrows and hjkl
// move the focus, and d on a worker shows its real git diff.
func TestTUITeamAndDiff(t *testing.T) {
	parallel(t)
	start := time.Now()
	r := startTUI(t, tuiOptions{simArgs: "--pace 20ms", project: wtRepo(t, false), args: []string{"--agent", "sim"}})
	r.waitScreen(tuiWait, "the start screen", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseProjectSelected)
	})
	const task = "build a tiny calculator"
	r.typeText(task)
	r.keys("Tab", "Tab", "Tab")
	r.waitText(tuiWait, "lead ◂ sim ▸  reviewer sim  workers sim", "←/→ role • ↑/↓ change")
	r.keys("+")
	r.waitText(tuiWait, "workers sim  × 3")
	r.keys("C-s")

	s := r.waitScreen(tuiWait, "five panes", func(s tuiScreen) bool { return len(s.panes()) == 5 })
	dir := r.taskDir()
	tj := readTask(t, dir)
	if tj.Workers != 3 || tj.Agent != "sim" {
		t.Errorf("task.json workers %d agent %q, want 3 and sim", tj.Workers, tj.Agent)
	}
	if branch := "hivemind/" + filepath.Base(dir); !strings.Contains(s.header(), "⎇ "+branch) {
		t.Errorf("header %q does not name the branch %s", s.header(), branch)
	}

	// Focus by direction: from the lead, l goes right, h comes back.
	r.keys("1", "l")
	r.waitScreen(tuiWait, "the reviewer focused", func(s tuiScreen) bool { return s.panes()["reviewer"].border == "┏" })
	r.keys("h")
	r.waitScreen(tuiWait, "the lead focused", func(s tuiScreen) bool { return s.panes()["lead"].border == "┏" })

	// Once worker_1 has changed files, pause (nothing merges meanwhile)
	// and look at its diff.
	// (A checkpoint may merge the changes between the title and the
	// pause, the title's count a moment behind: then the diff is empty;
	// close it, resume and try again.)
	for attempt := 1; ; attempt++ {
		r.waitScreen(2*tuiWait, "worker_1 with changed files", func(s tuiScreen) bool {
			return strings.Contains(s.panes()["worker_1"].title, "±")
		})
		r.keys("p")
		r.waitScreen(tuiWait, "paused", func(s tuiScreen) bool { return s.phase() == string(vocab.PhasePaused) })
		r.keys("3", "d")
		s = r.waitScreen(tuiWait, "worker_1's diff", func(s tuiScreen) bool {
			return s.contains("changes of worker_1") && (s.contains("diff --git") && s.contains("+++ b/") || s.contains("no changes yet"))
		})
		if !s.contains("no changes yet") || attempt == 5 {
			break
		}
		r.keys("Escape")
		r.waitScreen(tuiWait, "the empty diff to close", func(s tuiScreen) bool { return !s.contains("changes of worker_1") })
		r.keys("r")
		r.waitScreen(tuiWait, "resumed", func(s tuiScreen) bool {
			return s.phase() != "" && s.phase() != string(vocab.PhasePaused)
		})
	}
	s = r.waitText(tuiWait, "changes of worker_1", "diff --git", "+++ b/")
	if !strings.Contains(s.footer(), "close diff") || !essentials(s) {
		t.Errorf("diff footer %q", s.footer())
	}
	r.keys("Escape")
	r.waitScreen(tuiWait, "the diff to close", func(s tuiScreen) bool { return !s.contains("changes of worker_1") })
	// d on the reviewer explains itself.
	r.keys("2", "d")
	r.waitScreen(tuiWait, "the note that only workers have a diff", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "focus a worker")
	})
	r.quit()
	noLeftovers(t, r.project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}
