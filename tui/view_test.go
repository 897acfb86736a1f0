package tui

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // event times in golden files
	os.Exit(m.Run())
}

// checkFrame asserts the frame is exactly h lines of exactly w cells.
func checkFrame(t testing.TB, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Fatalf("%dx%d: frame has %d lines, want %d", w, h, len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("%dx%d: line %d is %d cells wide, want %d: %q", w, h, i, got, w, ansi.Strip(l))
		}
	}
}

func TestGoldenLayouts(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 6, 8, 10} {
		t.Run(fmt.Sprintf("agents_%d", n), func(t *testing.T) {
			h := newHarness(t, n, 160, 48)
			checkFrame(t, h.view(), 160, 48)
			golden.RequireEqual(t, h.plain())
		})
	}
	// A tall terminal puts 8 panes in 2 columns × 4 rows.
	t.Run("agents_8_tall", func(t *testing.T) {
		h := newHarness(t, 8, 100, 80)
		checkFrame(t, h.view(), 100, 80)
		golden.RequireEqual(t, h.plain())
	})
	// The last page of 10 agents, reached with tab.
	t.Run("agents_10_page2", func(t *testing.T) {
		h := newHarness(t, 10, 160, 48)
		for i := 0; i < 6; i++ {
			h.key("tab")
		}
		checkFrame(t, h.view(), 160, 48)
		golden.RequireEqual(t, h.plain())
	})
}

func TestGoldenStyled(t *testing.T) {
	h := newHarness(t, 4, 100, 24)
	h.send(SnapshotMsg{State: testState(4), Health: map[vocab.AgentID]vocab.Health{"reviewer": "waiting_permission"}})
	golden.RequireEqual(t, h.view())
}

func TestGoldenStates(t *testing.T) {
	cases := map[string]func(*vocab.State){
		"needs_human": func(s *vocab.State) {
			s.PreviousPhase, s.Phase = s.Phase, vocab.PhaseNeedsHuman
			s.Reason = "plan review cycles exhausted (3 of 3): the reviewer keeps asking for a migration plan"
		},
		"error": func(s *vocab.State) {
			s.PreviousPhase, s.Phase = s.Phase, vocab.PhaseError
			s.Error = "worker_2 crashed 4 times (max_retries 3)"
		},
		"paused": func(s *vocab.State) {
			s.PreviousPhase, s.Phase = s.Phase, vocab.PhasePaused
		},
		"complete": func(s *vocab.State) {
			s.PreviousPhase, s.Phase = s.Phase, vocab.PhaseComplete
			s.CurrentCheckpoint = 3
			s.FinishedAt = testNow.Add(-time.Minute)
		},
		"cancelled": func(s *vocab.State) {
			s.PreviousPhase, s.Phase = s.Phase, vocab.PhaseCancelled
		},
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 4, 120, 30)
			st := testState(4)
			mut(&st)
			// Out of a running phase the engine stopped the clock.
			end := st.FinishedAt
			if end.IsZero() {
				end = testNow
			}
			st.Clock.Stop(end)
			h.send(SnapshotMsg{State: st})
			checkFrame(t, h.view(), 120, 30)
			golden.RequireEqual(t, h.plain())
		})
	}
}

func testEvents() []vocab.EventRecord {
	base := testNow.Add(-5 * time.Minute)
	return []vocab.EventRecord{
		{Time: base, Type: "task_submitted", Task: "t1"},
		{Time: base.Add(time.Second), Type: "state_changed", Task: "t1", Details: map[string]any{"from": "idle", "to": "planning"}},
		{Time: base.Add(40 * time.Second), Type: "trigger_completed", Task: "t1", Agent: "lead", Details: map[string]any{"path": "plan.md"}},
		{Time: base.Add(41 * time.Second), Type: "state_changed", Task: "t1", Details: map[string]any{"from": "planning", "to": "plan_review"}},
		{Time: base.Add(90 * time.Second), Type: "trigger_completed", Task: "t1", Agent: "reviewer", Details: map[string]any{"path": "plan-approved.md"}},
		{Time: base.Add(91 * time.Second), Type: "assignment_written", Task: "t1", Agent: "worker_1", Details: map[string]any{"seq": 7, "subtask": "st_1"}},
		{Time: base.Add(92 * time.Second), Type: "injected", Task: "t1", Agent: "worker_1", Details: map[string]any{"seq": 7}},
		{Time: base.Add(93 * time.Second), Type: "assignment_written", Task: "t1", Agent: "worker_2", Details: map[string]any{"seq": 8, "subtask": "st_2"}},
		{Time: base.Add(94 * time.Second), Type: "injected", Task: "t1", Agent: "worker_2", Details: map[string]any{"seq": 8}},
	}
}

func TestGoldenViews(t *testing.T) {
	cases := map[string]func(*harness){
		"help":           func(h *harness) { h.key("?") },
		"zoom":           func(h *harness) { h.key("3"); h.key("z") },
		"attach":         func(h *harness) { h.key("2"); h.key("enter") },
		"confirm_cancel": func(h *harness) { h.key("c") },
		"confirm_quit":   func(h *harness) { h.key("q") },
		"event_log": func(h *harness) {
			h.send(SnapshotMsg{State: testState(4), Events: testEvents()})
			h.key("e")
		},
		"scrolled": func(h *harness) { h.key("pgup") },
		"notice": func(h *harness) {
			h.send(NotifyMsg{Level: "warn", Message: "worker_1 restarted after a crash (1 of 3)"})
		},
		"no_agents": func(h *harness) {
			h.send(SnapshotMsg{State: vocab.State{Phase: vocab.PhasePlanning, StartedAt: testNow}})
		},
		"governor": func(h *harness) { h.send(SnapshotMsg{State: governorState()}) },
		"health_looks": func(h *harness) {
			h.send(SnapshotMsg{State: testState(8), Health: map[vocab.AgentID]vocab.Health{
				"lead": "starting", "reviewer": "waiting_permission", "worker_1": "rate_limited",
				"worker_2": "hung", "worker_3": "exited", "worker_4": "hang_warning", "worker_5": "ready", "worker_6": "busy",
			}})
		},
	}
	for name, act := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 4, 120, 30)
			act(h)
			checkFrame(t, h.view(), 120, 30)
			golden.RequireEqual(t, h.plain())
		})
	}
}

// TestWidthSweep renders many layouts at widths from 40 to 240 columns
// and heights from 12 to 48: every line is exactly the width, and there are
// exactly height lines. The normal suite checks the edges and a fixed
// random sample of sizes per layout; make test-long (testkit.Long) checks
// every width at heights 12 and 48.
func TestWidthSweep(t *testing.T) {
	setups := map[string]func(*harness){
		"plain": func(*harness) {},
		"events": func(h *harness) {
			h.send(SnapshotMsg{State: testState(len(h.m.run.agents)), Events: testEvents()})
			h.key("e")
		},
		"banner": func(h *harness) {
			st := testState(len(h.m.run.agents))
			st.Phase, st.Reason = vocab.PhaseNeedsHuman, strings.Repeat("a long reason ", 30)
			h.send(SnapshotMsg{State: st})
		},
		"help":   func(h *harness) { h.key("?") },
		"zoom":   func(h *harness) { h.key("z") },
		"attach": func(h *harness) { h.key("enter") },
		"quit":   func(h *harness) { h.key("q") },
	}
	r := rand.New(rand.NewPCG(26, 7))
	for _, n := range []int{1, 3, 8, 10} {
		for _, name := range slices.Sorted(maps.Keys(setups)) {
			h := newHarness(t, n, 80, 24)
			setups[name](h)
			for _, sz := range sweepSizes(r) {
				w, ht := sz[0], sz[1]
				h.send(tea.WindowSizeMsg{Width: w, Height: ht})
				frame := h.view()
				lines := strings.Split(frame, "\n")
				if len(lines) != ht {
					t.Fatalf("%s n=%d %dx%d: %d lines", name, n, w, ht, len(lines))
				}
				for i, l := range lines {
					if lw := ansi.StringWidth(l); lw != w {
						t.Fatalf("%s n=%d %dx%d: line %d is %d wide: %q", name, n, w, ht, i, lw, ansi.Strip(l))
					}
				}
			}
		}
	}
}

// sweepSizes lists the sizes TestWidthSweep renders one layout at: under
// testkit.Long every width from 40 to 240 at heights 12 and 48; otherwise
// the corners and edges of that range and 12 sizes drawn from r.
func sweepSizes(r *rand.Rand) [][2]int {
	var sizes [][2]int
	if testkit.Long() {
		for w := 40; w <= 240; w++ {
			sizes = append(sizes, [2]int{w, 12}, [2]int{w, 48})
		}
		return sizes
	}
	for _, w := range []int{40, 41, 239, 240} {
		sizes = append(sizes, [2]int{w, 12}, [2]int{w, 48})
	}
	for range 12 {
		sizes = append(sizes, [2]int{40 + r.IntN(201), 12 + r.IntN(37)})
	}
	return sizes
}

// TestTinyTerminal never breaks the frame contract, down to 1×1.
func TestTinyTerminal(t *testing.T) {
	h := newHarness(t, 4, 80, 24)
	for w := 1; w < 40; w++ {
		for ht := 1; ht < 14; ht++ {
			h.send(tea.WindowSizeMsg{Width: w, Height: ht})
			checkFrame(t, h.view(), w, ht)
		}
	}
}

func TestResizeFollowsPanes(t *testing.T) {
	h := newHarness(t, 4, 160, 48)
	// 2×2 grid in a 160×46 area (header + footer): panes 80×23, inner 78×21.
	for _, id := range agentIDs(4) {
		if c, r := h.term(id).size(); c != 78 || r != 21 {
			t.Fatalf("%s sized %dx%d, want 78x21", id, c, r)
		}
	}
	h.key("z") // lead zoomed to the whole area: 160×46 → inner 158×44
	if c, r := h.term("lead").size(); c != 158 || r != 44 {
		t.Fatalf("zoomed lead sized %dx%d, want 158x44", c, r)
	}
	h.key("z")
	if c, r := h.term("lead").size(); c != 78 || r != 21 {
		t.Fatalf("unzoomed lead sized %dx%d, want 78x21", c, r)
	}
	n := len(h.term("lead").resizes)
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48}) // same size: no resize
	if len(h.term("lead").resizes) != n {
		t.Fatal("resize without a size change")
	}
	h.key("e") // the event strip takes rows from the panes
	if _, r := h.term("lead").size(); r >= 21 {
		t.Fatalf("event log did not shrink panes: rows %d", r)
	}
	// A restarted agent (new Terminal) is sized at once.
	nt := newFakeTerm("worker_1")
	h.terms.mu.Lock()
	h.terms.terms["worker_1"] = nt
	h.terms.mu.Unlock()
	h.send(termsChangedMsg{})
	if len(nt.resizes) != 1 {
		t.Fatalf("new terminal resized %d times, want 1", len(nt.resizes))
	}
}

func TestLayoutShapes(t *testing.T) {
	cases := []struct {
		n, w, h int
		rows    []int // panes per row
		pages   int
	}{
		{1, 160, 48, []int{1}, 1},
		{2, 160, 48, []int{2}, 1},
		{3, 160, 48, []int{2, 1}, 1},
		{4, 160, 48, []int{2, 2}, 1},
		{5, 160, 48, []int{3, 2}, 1},
		{8, 160, 48, []int{4, 4}, 1},
		{8, 100, 80, []int{2, 2, 2, 2}, 1},
		{10, 160, 48, []int{3, 2}, 2},
		{8, 40, 12, []int{2, 2}, 2},
	}
	for _, c := range cases {
		l := computeLayout(layoutInput{W: c.w, H: c.h, Agents: c.n, EventLines: 8})
		var got []int
		for _, r := range l.Rows {
			got = append(got, len(r.Cells))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.rows) || l.Pages != c.pages {
			t.Errorf("n=%d %dx%d: rows %v pages %d, want %v pages %d", c.n, c.w, c.h, got, l.Pages, c.rows, c.pages)
		}
		// Panes tile the area exactly.
		cells := 0
		for _, r := range l.Rows {
			x := 0
			for _, cell := range r.Cells {
				if cell.X != x {
					t.Errorf("n=%d: gap at x=%d", c.n, x)
				}
				x += cell.W
				cells += cell.W * r.H
			}
			if x != c.w {
				t.Errorf("n=%d: row width %d, want %d", c.n, x, c.w)
			}
		}
		if cells != l.Area.W*l.Area.H {
			t.Errorf("n=%d: panes cover %d cells, area has %d", c.n, cells, l.Area.W*l.Area.H)
		}
	}
}
