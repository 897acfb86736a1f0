package tui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

// smallSizes are the terminals every screen must work in: two small ones
// and a very large one (where nothing may be left mostly blank).
var smallSizes = [][2]int{{80, 24}, {60, 20}, {300, 80}}

// runScreens are the run view's screens and overlays, by name.
func runScreens() map[string]func(*harness) {
	return map[string]func(*harness){
		"panes":          func(*harness) {},
		"help":           func(h *harness) { h.key("?") },
		"confirm_quit":   func(h *harness) { h.key("q") },
		"confirm_cancel": func(h *harness) { h.key("c") },
		"context": func(h *harness) {
			h.send(SnapshotMsg{State: testState(4), Knowledge: testKnowledge()})
			h.key("x")
		},
		"events": func(h *harness) {
			h.send(SnapshotMsg{State: testState(4), Events: testEvents()})
			h.key("e")
		},
		"diff": func(h *harness) {
			h.m.run.opts.Diff = func(string) (string, error) { return testDiff, nil }
			h.key("3")
			h.runFor(h.key("d"), diffLoaded)
		},
		"search": func(h *harness) {
			h.key("/")
			for _, r := range "line -7 " {
				h.key(string(r))
			}
			h.runFor(h.key("enter"), searched)
		},
		"paused": func(h *harness) {
			st := testState(4)
			st.PreviousPhase, st.Phase = st.Phase, vocab.PhasePaused
			h.send(SnapshotMsg{State: st})
		},
		"plan_gate": func(h *harness) { h.send(SnapshotMsg{State: gateState()}) }, // plan_test.go
		"plan_feedback": func(h *harness) {
			h.send(SnapshotMsg{State: gateState()})
			h.key("f")
			for _, r := range "split st_3" {
				h.key(string(r))
			}
		},
		"needs_human": func(h *harness) {
			st := testState(4)
			st.PreviousPhase, st.Phase = st.Phase, vocab.PhaseNeedsHuman
			st.Reason = "plan review cycles exhausted (3 of 3)"
			h.send(SnapshotMsg{State: st})
		},
	}
}

const testDiff = `diff --git a/calc/sqrt.go b/calc/sqrt.go
new file mode 100644
--- /dev/null
+++ b/calc/sqrt.go
@@ -0,0 +3 @@
+package calc
+
+func Sqrt(x float64) float64 { return x }
`

// runFor runs cmd (each command of a batch in its own goroutine) until it
// produces a message want accepts, and feeds that message to the model.
// Commands that only wait (timers, screen changes) are left running; the
// model's lifecycle ends the screen waits when the test ends.
func (h *harness) runFor(cmd tea.Cmd, want func(tea.Msg) bool) {
	h.t.Helper()
	h.t.Cleanup(h.m.run.life.stop)
	ch := make(chan tea.Msg, 64)
	launch := func(c tea.Cmd) {
		if c != nil {
			go func() { ch <- c() }()
		}
	}
	launch(cmd)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case msg := <-ch:
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					launch(c)
				}
				continue
			}
			if want(msg) {
				h.send(msg)
				return
			}
		case <-deadline:
			h.t.Fatal("the command produced no expected message in 10 s")
		}
	}
}

func searched(msg tea.Msg) bool   { _, ok := msg.(searchedMsg); return ok }
func diffLoaded(msg tea.Msg) bool { _, ok := msg.(diffLoadedMsg); return ok }

// The run view at 80×24 and 60×20: every overlay fits, the footer keeps
// quit and help (or the confirmation's [y/n]), the header keeps the state,
// the clock and the task.
func TestGoldenSmall(t *testing.T) {
	for _, sz := range smallSizes {
		w, ht := sz[0], sz[1]
		for name, setup := range runScreens() {
			t.Run(fmt.Sprintf("%dx%d/%s", w, ht, name), func(t *testing.T) {
				h := newHarness(t, 4, w, ht)
				setup(h)
				frame := h.view()
				checkFrame(t, frame, w, ht)
				plain := h.plain()
				lines := strings.Split(plain, "\n")
				header, footer := lines[0], lines[len(lines)-1]
				if !strings.Contains(header, "⏱") || !strings.Contains(header, "add login") {
					t.Errorf("header %q lacks the clock or the task", header)
				}
				switch {
				case strings.HasPrefix(name, "confirm"):
					if !strings.Contains(footer, "[y/n]") {
						t.Errorf("footer %q lacks [y/n]", footer)
					}
				case name == "search" || name == "diff":
					// the search and diff keys, and still quit and help
					if !strings.Contains(footer, "q quit") || !strings.Contains(footer, "? help") {
						t.Errorf("footer %q lacks q quit / ? help", footer)
					}
				default:
					if !strings.Contains(footer, "q quit") || !strings.Contains(footer, "? help") {
						t.Errorf("footer %q lacks q quit / ? help", footer)
					}
				}
				golden.RequireEqual(t, plain)
			})
		}
	}
}

// The front door at 80×24 and 60×20: the summary keeps its key hints and
// the start screen's help fits.
func TestGoldenSmallFront(t *testing.T) {
	for _, sz := range smallSizes {
		w, ht := sz[0], sz[1]
		screens := frontScreens(t, w, ht)
		for _, name := range []string{"start_unfinished", "start_typed", "help_start", "summary_complete", "summary_cancelled", "summary_abandoned", "summary_error"} {
			t.Run(fmt.Sprintf("%dx%d/%s", w, ht, name), func(t *testing.T) {
				fh := screens[name]
				checkFrame(t, fh.view(), w, ht)
				plain := fh.plain()
				lines := strings.Split(plain, "\n")
				footer := lines[len(lines)-1]
				if !strings.Contains(footer, "quit") || !strings.Contains(footer, "help") {
					t.Errorf("footer %q lacks quit / help", footer)
				}
				golden.RequireEqual(t, plain)
			})
		}
	}
}

// Every overlay, at sizes from 40×12 to 100×30, keeps the frame contract
// and the essentials in the footer.
func TestOverlaysFitEverywhere(t *testing.T) {
	// Every 7th width and 6th height under make test-long; otherwise the
	// corners and six sizes drawn with a fixed seed.
	var sizes [][2]int
	if testkit.Long() {
		for w := 40; w <= 100; w += 7 {
			for ht := 12; ht <= 30; ht += 6 {
				sizes = append(sizes, [2]int{w, ht})
			}
		}
	} else {
		sizes = [][2]int{{40, 12}, {40, 30}, {100, 12}, {100, 30}}
		r := rand.New(rand.NewPCG(26, 10))
		for range 6 {
			sizes = append(sizes, [2]int{40 + r.IntN(61), 12 + r.IntN(19)})
		}
	}
	for name, setup := range runScreens() {
		h := newHarness(t, 4, 80, 24)
		setup(h)
		for _, sz := range sizes {
			w, ht := sz[0], sz[1]
			h.send(tea.WindowSizeMsg{Width: w, Height: ht})
			checkFrame(t, h.view(), w, ht)
			lines := strings.Split(h.plain(), "\n")
			footer := lines[len(lines)-1]
			want := "q quit • ? help"
			if strings.HasPrefix(name, "confirm") {
				want = "[y/n]"
			}
			if !strings.Contains(footer, want) {
				t.Fatalf("%s at %dx%d: footer %q lacks %q", name, w, ht, footer, want)
			}
		}
	}
}
