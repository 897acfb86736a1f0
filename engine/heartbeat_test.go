package engine

import (
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

// The heartbeat writes an unchanged state again, stamped now, only while
// the task's clock runs and no step wrote it for a heartbeat: the last
// write of a run killed without a word is never older than that.
func TestRunnerHeartbeat(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	now := t0
	running := State{TaskID: "t1", Phase: vocab.PhaseExecuting, Timestamp: t0, Clock: vocab.RunClock{Since: t0}}
	paused := State{TaskID: "t1", Phase: vocab.PhasePaused, Timestamp: t0, Clock: vocab.RunClock{Ran: time.Minute}}
	for _, c := range []struct {
		name  string
		st    State
		after time.Duration
		saved bool
	}{
		{"running, written a heartbeat ago", running, 5 * time.Second, true},
		{"running, written just now", running, time.Second, false},
		{"paused", paused, time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &rtStore{}
			r := NewRunner(RunnerConfig{Machine: testMachine, Store: store, Log: &rtLog{}, Agents: &rtAgents{},
				State: c.st, NoWatch: true, Heartbeat: 5 * time.Second, Clock: func() time.Time { return now }})
			now = t0.Add(c.after)
			r.heartbeat()
			saved := store.Saved()
			if (len(saved) == 1) != c.saved {
				t.Fatalf("saved %d states, want saved %v", len(saved), c.saved)
			}
			if c.saved && (!saved[0].Timestamp.Equal(now) || saved[0].Clock != c.st.Clock) {
				t.Fatalf("saved %+v at %v, want the state stamped %v", saved[0].Clock, saved[0].Timestamp, now)
			}
		})
	}
	// Run looks on its own.
	h := rtStart(t, testMachine.Step, func(cfg *RunnerConfig) {
		cfg.State = State{TaskID: "t1", Phase: vocab.PhaseExecuting, Timestamp: time.Now(), Clock: vocab.RunClock{Since: time.Now()}}
		cfg.Heartbeat = 20 * time.Millisecond
	})
	testkit.WaitFor(t, time.Minute, "a heartbeat write", func() bool { return len(h.store.Saved()) >= 2 })
}
