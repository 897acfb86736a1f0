package tui

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

// frontScreens builds every front-door screen at w×h, by name.
func frontScreens(t *testing.T, w, h int) map[string]*frontHarness {
	t.Helper()
	past := testPastTasks()
	screens := map[string]*frontHarness{}
	add := func(name string, p *Project, setup func(*frontHarness)) {
		l := newFakeLauncher()
		if p != nil {
			p.Dir = testProject
			l.projects[testProject] = *p
		}
		fh := newFrontHarness(t, l, w, h)
		if setup != nil {
			setup(fh)
		}
		screens[name] = fh
	}
	add("start_empty", nil, nil)
	add("start_not_git", &Project{}, nil)
	add("start_past_tasks", &Project{Git: true, Tasks: past[1:]}, nil)
	add("start_unfinished", &Project{Git: true, Unfinished: &past[0], Tasks: past}, nil)
	add("start_locked", &Project{Git: true, Unfinished: &past[0], Tasks: past,
		LockedBy: "workspace: lock /home/dev/calc/.hivemind: locked by another process: held by pid 4242 on devbox since 14:02"}, nil)
	add("start_typed", &Project{Git: true, Tasks: past[1:]}, func(fh *frontHarness) {
		fh.typeText("add a square root function\nnegative input returns an error")
		fh.keys("tab")
		fh.typeText("no new dependencies\nkeep the public API")
		fh.keys("tab")
		fh.typeText("calc/ holds the evaluator")
	})
	add("start_error", &Project{Git: true}, func(fh *frontHarness) { fh.run(fh.send(ctrl('s'))) })
	// The checkout has uncommitted edits: said on the screen, and asked
	// when the task starts.
	add("start_dirty_said", &Project{Git: true, Tasks: past[1:], Checkout: dirtyCheckout}, nil)
	add("start_dirty", &Project{Git: true, Tasks: past[1:], Checkout: dirtyCheckout}, func(fh *frontHarness) {
		fh.l.startErr = dirtyQuestion(fh.l, nil)
		fh.typeText("add a square root")
		fh.run(fh.send(ctrl('s')))
	})
	add("help_start", &Project{Git: true, Tasks: past[1:]}, func(fh *frontHarness) { fh.keys("esc", "?") })
	add("summary_past", &Project{Git: true, Tasks: past[1:]}, func(fh *frontHarness) { fh.keys("esc", "enter") })

	summary := func(p vocab.Phase, mut func(*vocab.State)) func(*frontHarness) {
		return func(fh *frontHarness) {
			dir := t.TempDir()
			writeSummaryFixture(t, dir)
			fh.l.usage = []AgentUsage{
				{Agent: "lead", InputTokens: 1234567, OutputTokens: 45678, Note: "Claude Code transcript"},
				{Agent: "reviewer", InputTokens: 8123, OutputTokens: 950, CostUSD: 0.42, CostKnown: true},
				{Agent: "worker_1", Note: "the built-in sim agent uses no model"},
			}
			fh.l.branch = "hivemind/" + fh.l.taskID
			fh.typeText("add a square root")
			fh.run(fh.send(ctrl('s')))
			st := summaryState(dir)
			st.TaskID = fh.l.taskID
			if p == vocab.PhaseIdle {
				// Abandoned: idle after the run stopped on an error.
				st.Phase = vocab.PhaseError
				fh.run(fh.send(SnapshotMsg{State: st}))
			}
			st.Phase = p
			if mut != nil {
				mut(&st)
			}
			fh.run(fh.send(SnapshotMsg{State: st}))
		}
	}
	add("summary_complete", &Project{Git: true}, summary(vocab.PhaseComplete, nil))
	add("summary_error", &Project{Git: true}, summary(vocab.PhaseError, func(s *vocab.State) {
		s.Reason = "worker_2 crashed 4 times (max_retries 3)"
		s.FinishedAt = testNow.Add(-30 * 1e9)
		s.Clock.Ran = s.FinishedAt.Sub(s.StartedAt)
	}))
	add("summary_abandon_confirm", &Project{Git: true}, func(fh *frontHarness) {
		summary(vocab.PhaseError, func(s *vocab.State) { s.Reason = "deadlock: no subtask can start" })(fh)
		fh.keys("A")
	})
	add("summary_cancelled", &Project{Git: true}, summary(vocab.PhaseCancelled, func(s *vocab.State) {
		s.Plan, s.Subtasks, s.Fixes, s.Rounds, s.Friction = nil, nil, nil, s.Rounds[:1], nil
	}))
	// Abandoned (idle after it ran) with one subtask of the plan finished.
	add("summary_abandoned", &Project{Git: true}, summary(vocab.PhaseIdle, func(s *vocab.State) {
		s.PreviousPhase, s.Reason = vocab.PhaseNeedsHuman, "worker_2 crashed 4 times (max_retries 3)"
		s.FinishedAt = testNow.Add(-30 * 1e9)
		s.Clock.Ran = s.FinishedAt.Sub(s.StartedAt)
	}))
	return screens
}

// teamScreens are the start screen with a mixed team picked on the Team
// row: every CLI installed and the row focused, and with Gemini CLI
// missing and the focus elsewhere.
func teamScreens(t *testing.T, w, h int) map[string]*frontHarness {
	t.Helper()
	installed := slices.Clone(testAgents)
	installed[2].Missing = ""
	pick := func(agents []AgentChoice, after ...string) *frontHarness {
		l := newFakeLauncher()
		l.projects[testProject] = Project{Dir: testProject, Git: true, Tasks: testPastTasks()[1:]}
		fh := newFrontHarnessWith(t, l, Options{Agents: agents, Workers: 2,
			StartTeam: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "claude"}}, w, h)
		fh.typeText("add a square root function")
		// three workers (← wraps to the count), reviewer codex, workers gemini
		fh.keys("tab", "tab", "tab", "left", "+", "right", "right", "down", "right", "down", "down")
		fh.keys(after...)
		return fh
	}
	return map[string]*frontHarness{
		"team_mixed":   pick(installed),
		"team_missing": pick(testAgents, "shift+tab"),
		// e splits the workers; worker_2 then runs codex.
		"team_each": pick(installed, "e", "right", "up"),
	}
}

func TestGoldenStartTeam(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		w, h := sz[0], sz[1]
		for name, fh := range teamScreens(t, w, h) {
			t.Run(fmt.Sprintf("%dx%d/%s", w, h, name), func(t *testing.T) {
				checkFrame(t, fh.view(), w, h)
				plain := fh.plain()
				glance := strings.NewReplacer("◂ ", "", " ▸", "").Replace(plain)
				want := []string{"lead claude  reviewer codex  workers gemini"}
				if name == "team_each" { // wrapped on a narrow screen
					want = []string{"lead claude  reviewer codex  worker_1 gemini  worker_2 codex", "worker_3 gemini  × 3"}
				}
				if !strings.Contains(glance, want[0]) || !strings.Contains(glance, want[len(want)-1]) {
					t.Errorf("the pick is not visible at a glance:\n%s", plain)
				}
				if missing := strings.Contains(glance, "gemini ✖"); missing != (name == "team_missing") {
					t.Errorf("gemini marked missing: %v", missing)
				}
				golden.RequireEqual(t, plain)
			})
		}
	}
}

func writeSummaryFixture(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"agents/worker_1/outputs/st_1.md":             "# st_1\n\n## Files\n- Created: calc/sqrt.go\n- Modified: calc/calc.go\n",
		"agents/worker_2/outputs/st_2.md":             "# st_2 — output\n\n## Changes\n\n- CREATE calc/sqrt_test.go\n",
		"agents/worker_1/outputs/fix_1_1_worker_1.md": "## Files\n- Modified: calc/sqrt.go\n",
		"reviews/friction_v1-worker_1.md":             "# The test suite takes 40 s: every test rebuilds the parser tables\n",
	}
	for name, body := range files {
		writeFile(t, dir, name, body)
	}
}

func TestGoldenFront(t *testing.T) {
	for name, fh := range frontScreens(t, 120, 40) {
		t.Run(name, func(t *testing.T) {
			checkFrame(t, fh.view(), 120, 40)
			golden.RequireEqual(t, fh.plain())
		})
	}
	t.Run("picker", func(t *testing.T) {
		fh := newFrontHarnessAt(t, newFakeLauncher(), "testdata/pickerproj", 100, 24)
		fh.run(fh.send(ctrl('o')))
		fh.waitFor("the picker to list the folders", func() bool { return strings.Contains(fh.plain(), "docs") })
		fh.keys("down")
		checkFrame(t, fh.view(), 100, 24)
		golden.RequireEqual(t, fh.plain())
	})
}

// Every front-door screen fits every width from 40 to 240 columns.
func TestFrontWidthSweep(t *testing.T) {
	// Every 25th width at heights 12 and 30 under testkit.Long; otherwise
	// the four corners and two sizes drawn with a fixed seed (building
	// the screens is what costs).
	var sizes [][2]int
	if testkit.Long() {
		for w := 40; w <= 240; w += 25 {
			sizes = append(sizes, [2]int{w, 12}, [2]int{w, 30})
		}
	} else {
		sizes = [][2]int{{40, 12}, {40, 30}, {240, 12}, {240, 30}}
		r := rand.New(rand.NewPCG(26, 8))
		for range 2 {
			sizes = append(sizes, [2]int{40 + r.IntN(201), 12 + r.IntN(19)})
		}
	}
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		screens := frontScreens(t, w, h)
		maps.Copy(screens, teamScreens(t, w, h))
		for name, fh := range screens {
			frame := fh.view()
			lines := strings.Split(frame, "\n")
			if len(lines) != h {
				t.Fatalf("%s %dx%d: %d lines", name, w, h, len(lines))
			}
			for i, l := range lines {
				if got := ansi.StringWidth(l); got != w {
					t.Fatalf("%s %dx%d: line %d is %d cells: %q", name, w, h, i, got, ansi.Strip(l))
				}
			}
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
