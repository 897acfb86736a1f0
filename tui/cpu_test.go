package tui

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingWriter counts renderer flushes that wrote something.
type countingWriter struct{ writes atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.writes.Add(1); return len(p), nil }

// TestCPUProgram measures the CPU of a real tea.Program (model + bubbletea
// renderer writing to a discarded terminal) at 160×48 with 8 panes whose
// screens change 100 times a second each, and when idle. The emulator's
// cost is not included (the fakes return prepared screens). Run with
// HIVEMIND_TUI_CPU=1; it prints the figures and checks the budget.
func TestCPUProgram(t *testing.T) {
	if os.Getenv("HIVEMIND_TUI_CPU") == "" {
		t.Skip("set HIVEMIND_TUI_CPU=1 to measure")
	}
	terms := newFakeTerms(agentIDs(8)...)
	for _, ft := range terms.terms {
		ft.styled = true
	}
	var out countingWriter
	p := NewProgram(Options{FPS: 30, Terminals: terms, Title: "cpu"},
		tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(benchW, benchH))
	done := make(chan struct{})
	go func() { _, _ = p.Run(); close(done) }()
	defer func() { p.Quit(); <-done }()
	st := testState(8)
	st.Phase = "paused" // no clock
	for id, a := range st.Agents {
		a.Status = "idle" // no spinner
		st.Agents[id] = a
	}
	p.Send(SnapshotMsg{State: st})

	measure := func(d time.Duration, stream bool) (cpu float64, frames int64) {
		stop := make(chan struct{})
		if stream {
			go func() {
				tk := time.NewTicker(10 * time.Millisecond)
				defer tk.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tk.C:
						for _, ft := range terms.terms {
							ft.bump()
						}
						terms.signal()
					}
				}
			}()
		}
		w0, c0, t0 := out.writes.Load(), cpuTime(t), time.Now()
		time.Sleep(d) // measuring a duration, not waiting for a condition
		close(stop)
		return float64(cpuTime(t)-c0) / float64(time.Since(t0)) * 100, out.writes.Load() - w0
	}
	// Wait for the first frame before measuring.
	deadline := time.Now().Add(5 * time.Second)
	for out.writes.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no frame rendered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	idle, idleWrites := measure(3*time.Second, false)
	busy, busyWrites := measure(3*time.Second, true)
	t.Logf("idle: %.2f%% of one core, %d writes in 3 s", idle, idleWrites)
	t.Logf("8 panes streaming: %.1f%% of one core, %d renderer writes in 3 s (%.0f/s)", busy, busyWrites, float64(busyWrites)/3)
	if idle > 1 {
		t.Errorf("idle CPU %.2f%% > 1%%", idle)
	}
	if busyWrites > 3*31 {
		t.Errorf("%d frames in 3 s exceed the 30 fps cap", busyWrites)
	}
}
