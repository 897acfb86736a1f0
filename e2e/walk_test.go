package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The first hour as a walk, in one run of the built binary in tmux at
// 80×24 with the sim team (the user's hand is law, #27): an inert key says
// why in the footer; attach to the Lead, type without Enter, detach: the
// TUI asks what to do with the typed text; pause, and nothing is typed
// into any agent until resume; y copies the Lead's pane with its wrapped
// lines whole; the plan sent back past max_revision_cycles stops the run
// in needs_human, whose banner shows every action at 80×24 with quit and
// help in the footer; A abandons, the summary says so, q quits, and
// nothing is left running.
func TestTUIFirstHourWalk(t *testing.T) {
	parallel(t)
	start := time.Now()
	project := t.TempDir()
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte("max_revision_cycles = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startTUI(t, tuiOptions{simArgs: "--pace 60ms --reject-plans 1", project: project, cols: 80, rows: 24, clipboard: true,
		args: []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitScreen(tuiWait, "the lead planning", func(s tuiScreen) bool {
		txt, _ := s.paneText("lead")
		return s.phase() == string(vocab.PhasePlanning) && strings.Contains(txt, "[HIVEMIND]")
	})
	dir := r.taskDir()

	// Pause at once: nothing is typed into any agent until resume.
	r.keys("p")
	r.waitScreen(tuiWait, "paused", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhasePaused) && s.contains("PAUSED")
	})
	paused := recordIndex(readEventLog(dir), 0, "paused")
	if paused < 0 {
		t.Fatal("no paused record")
	}
	// An inert key says why.
	r.keys("p")
	r.waitScreen(tuiWait, "p's reason while paused", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "already paused: r resumes")
	})

	// y copies the focused (Lead's) pane, its wrapped lines whole.
	r.keys("y")
	r.waitScreen(tuiWait, "the copy notice", func(s tuiScreen) bool { return strings.Contains(s.footer(), "copied") })
	lead := r.capture().panes()["lead"]
	var long string
	waitFor(t, tuiWait, "a copied line longer than the lead's pane is wide", func() bool {
		buf, _ := r.tmuxCmd("show-buffer")
		for _, l := range strings.Split(buf, "\n") {
			// The assignment's line while the Lead starts, or (on a busy
			// machine the pause may come after its turn) what it printed.
			if len([]rune(l)) > lead.w {
				long = l
				return true
			}
		}
		return false
	})
	t.Logf("a wrapped line copied whole: %q", long)

	// Attach to the Lead, type without Enter, detach: the TUI asks.
	r.keys("1", "Enter")
	r.waitScreen(tuiWait, "attached to the lead", func(s tuiScreen) bool { return strings.Contains(s.footer(), "attached to lead") })
	r.typeText("hello world")
	r.keys("C-]")
	r.waitScreen(tuiWait, "the question on detach", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "lead's prompt holds text you typed") && strings.Contains(s.footer(), "c clear")
	})
	r.keys("c")
	r.waitScreen(tuiWait, "the question answered", func(s tuiScreen) bool {
		return !strings.Contains(s.footer(), "holds text you typed")
	})

	// The Lead's plan arrived while paused: held, not handled.
	waitFor(t, tuiWait, "an event deferred while paused", func() bool {
		return recordIndex(readEventLog(dir), paused, "event_deferred") >= 0
	})
	if i := findRecord(readEventLog(dir), paused, func(e vocab.EventRecord) bool {
		d, _ := e.Details["delivered"].(bool)
		return e.Type == vocab.InputPrefix+"injection_result" && d
	}); i >= 0 {
		t.Fatalf("typed into an agent while paused: %v", readEventLog(dir)[i])
	}
	r.keys("r")
	r.waitScreen(tuiWait, "resumed", func(s tuiScreen) bool {
		return s.phase() != "" && s.phase() != string(vocab.PhasePaused)
	})
	r.keys("r") // not paused: says why
	r.waitScreen(tuiWait, "r's reason", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "nothing to resume")
	})

	// The plan is sent back once, max_revision_cycles = 1: needs_human,
	// every action visible at 80×24.
	s := r.waitScreen(2*tuiWait, "needs human", func(s tuiScreen) bool { return s.contains("NEEDS HUMAN") })
	all := strings.Join(strings.Fields(s.String()), " ")
	for _, want := range []string{"R retry", "A abandon", "enter attach"} {
		if !strings.Contains(all, want) {
			t.Errorf("the needs-human screen at 80×24 lacks %q:\n%s", want, s)
		}
	}
	if !essentials(s) {
		t.Errorf("footer %q lacks q quit • ? help", s.footer())
	}

	// Abandon: the summary says so; q quits.
	r.keys("A")
	r.waitScreen(tuiWait, "the abandon question", func(s tuiScreen) bool { return strings.Contains(s.footer(), "[y/n]") })
	r.keys("y")
	r.waitText(tuiWait, "ABANDONED", "What was built")
	r.keys("q")
	code := r.waitExit(tuiWait)
	if st := readState(t, dir); st.Phase != vocab.PhaseIdle {
		t.Errorf("state %s after abandon, want idle (exit %d)", st.Phase, code)
	}
	noLeftovers(t, project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}
