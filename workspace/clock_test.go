package workspace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Elapsed reads the clock the engine keeps: closed intervals, and the open
// one up to now while a run is live, up to the last state write when none
// is (killed or stopped); a state without a clock counts start to end.
func TestElapsed(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	now := at(1000)
	cases := []struct {
		name       string
		st         vocab.State
		live, dead time.Duration
	}{
		{"not started", vocab.State{Phase: vocab.PhaseIdle}, 0, 0},
		{"running since 100",
			vocab.State{Phase: vocab.PhaseExecuting, StartedAt: at(100), Timestamp: at(400), Clock: vocab.RunClock{Since: at(100)}},
			900 * time.Second, 300 * time.Second},
		{"ran 50, paused",
			vocab.State{Phase: vocab.PhasePaused, StartedAt: at(100), Timestamp: at(150), Clock: vocab.RunClock{Ran: 50 * time.Second}},
			50 * time.Second, 50 * time.Second},
		{"ran 50, running again since 900 (a pause or a resume in between)",
			vocab.State{Phase: vocab.PhaseExecuting, StartedAt: at(100), Timestamp: at(950), Clock: vocab.RunClock{Ran: 50 * time.Second, Since: at(900)}},
			150 * time.Second, 100 * time.Second},
		{"over",
			vocab.State{Phase: vocab.PhaseComplete, StartedAt: at(100), FinishedAt: at(500), Timestamp: at(500), Clock: vocab.RunClock{Ran: 300 * time.Second}},
			300 * time.Second, 300 * time.Second},
		{"a write before the interval (a clock set back)",
			vocab.State{Phase: vocab.PhaseExecuting, StartedAt: at(100), Timestamp: at(100), Clock: vocab.RunClock{Since: at(200)}},
			800 * time.Second, 0},
		{"older state, over",
			vocab.State{Phase: vocab.PhaseComplete, StartedAt: at(100), FinishedAt: at(700), Timestamp: at(700)},
			600 * time.Second, 600 * time.Second},
		{"older state, under way",
			vocab.State{Phase: vocab.PhaseExecuting, StartedAt: at(100), Timestamp: at(700)},
			600 * time.Second, 600 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.st.Elapsed(now, true); got != c.live {
				t.Errorf("live: %v, want %v", got, c.live)
			}
			if got := c.st.Elapsed(now, false); got != c.dead {
				t.Errorf("no run live: %v, want %v", got, c.dead)
			}
		})
	}
}

// The clock survives state.json: what one process wrote another reads.
func TestRunClockJSON(t *testing.T) {
	st := vocab.State{Phase: vocab.PhaseExecuting, Clock: vocab.RunClock{Ran: 83 * time.Second, Since: time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back vocab.State
	if err := json.Unmarshal(b, &back); err != nil || back.Clock.Ran != st.Clock.Ran || !back.Clock.Since.Equal(st.Clock.Since) {
		t.Fatalf("clock %+v came back as %+v (%v): %s", st.Clock, back.Clock, err, b)
	}
}

// RunLive: the lock names this live process while held; released, or
// naming a process that is gone, no run is live.
func TestRunLive(t *testing.T) {
	root := t.TempDir()
	if RunLive(root) {
		t.Fatal("live without a lock file")
	}
	l, _, err := AcquireWorkspaceLock(root)
	if err != nil {
		t.Fatal(err)
	}
	if !RunLive(root) {
		t.Fatal("not live while this process holds the lock")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if RunLive(root) {
		t.Fatal("live after the lock was released")
	}
	for pid, live := range map[int]bool{os.Getpid(): true, 1 << 22: false} { // pid_max is at most 1<<22
		b, _ := json.Marshal(lockInfo{PID: pid, Host: hostname(), Start: time.Now()})
		if err := os.WriteFile(filepath.Join(root, vocab.LockFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if RunLive(root) != live {
			t.Fatalf("a lock left naming pid %d: live %v, want %v", pid, !live, live)
		}
	}
}
