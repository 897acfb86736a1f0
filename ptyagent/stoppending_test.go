package ptyagent

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// pendingStart reports whether id's (re)start waits (for its previous process
// to end, or for its turn to start).
func (m *Manager) pendingStart(id vocab.AgentID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[id]
	return a != nil && a.pending
}

// stoppedUnstarted matches the exit said for a start a Stop dropped.
func stoppedUnstarted(id vocab.AgentID) func(Event) bool {
	return func(e Event) bool {
		return e.Agent == id && e.Kind == EventHealth && e.Health == vocab.HealthExited && e.PID == 0 && e.Stopped
	}
}

// A Stop that comes while a restart waits for the previous process to end
// (the task ended, or was cancelled, during a restart) drops the start:
// no new process ever runs, the exit is said as a stop (not a crash),
// and a later Start starts the agent as usual.
func TestStopDropsARestartWaitingForTheOldProcess(t *testing.T) {
	rec := &recorder{}
	// It ignores SIGTERM: its stop lasts StopTimeout (2 s), then SIGKILL.
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"worker_1": {Argv: []string{"sh", "-c", `trap '' TERM; echo up; exec cat`}, Cols: 80, Rows: 24}})
	if err := m.Start("worker_1", "worker", false); err != nil {
		t.Fatal(err)
	}
	old, ok := m.Session("worker_1")
	if !ok {
		t.Fatal("worker_1 did not start")
	}
	waitFor(t, 10*time.Second, "worker_1 running", func() bool { return old.Health() != vocab.HealthStarting })
	if err := m.Stop("worker_1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Start("worker_1", "worker", true); err != nil {
		t.Fatal(err)
	}
	if !m.pendingStart("worker_1") {
		t.Fatal("the restart did not wait for the old process")
	}
	if err := m.Stop("worker_1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the waiting restart settled", func() bool {
		select {
		case <-old.Done():
			return !m.pendingStart("worker_1")
		default:
			return false
		}
	})
	if s, _ := m.Session("worker_1"); s != old {
		t.Fatalf("a new process (pid %d) started after Stop", s.PID())
	}
	if _, ok := rec.find(stoppedUnstarted("worker_1")); !ok {
		t.Errorf("the dropped start is not said as a stop: %v", rec.healths("worker_1"))
	}
	// A Start after it is not affected.
	if err := m.Start("worker_1", "worker", true); err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Session("worker_1"); s == old {
		t.Fatal("Start after the dropped restart did not start the agent")
	}
}

// A Stop of an agent waiting for its turn to start (a kind that starts
// alone) drops its start: it never runs, and the next waiting start gets
// the turn.
func TestStopDropsAStartWaitingForItsTurn(t *testing.T) {
	dir := t.TempDir()
	goA := filepath.Join(dir, "a")
	rec := &recorder{}
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{
		"worker_1": aloneSpec("worker_1", goA), "worker_2": aloneSpec("worker_2", goA), "worker_3": aloneSpec("worker_3", goA)})
	for _, id := range []vocab.AgentID{"worker_1", "worker_2", "worker_3"} {
		if err := m.Start(id, "worker", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Stop("worker_2"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goA, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "worker_3 started after worker_1", func() bool {
		s, ok := m.Session("worker_3")
		return ok && s.Health() == vocab.HealthReady
	})
	waitFor(t, 10*time.Second, "worker_2's start settled", func() bool { return !m.pendingStart("worker_2") })
	if s, ok := m.Session("worker_2"); ok {
		t.Fatalf("worker_2 ran (pid %d) though it was stopped before its turn", s.PID())
	}
	if _, ok := rec.find(stoppedUnstarted("worker_2")); !ok {
		t.Errorf("the dropped start is not said as a stop: %v", rec.healths("worker_2"))
	}
}

// A Stop that comes while the agent's process is being started (after
// the drop check, before the session is installed) stops that process
// once it is: it does not run on.
func TestStopDuringSpawnStopsTheNewProcess(t *testing.T) {
	rec := &recorder{}
	var m *Manager
	var stopped atomic.Bool
	m, err := NewManager(ManagerConfig{
		Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (Spec, error) {
			return Spec{Argv: []string{"sh", "-c", `echo up; exec cat`}, Cols: 80, Rows: 24}, nil
		},
		OnEvent: func(e Event) {
			rec.add(e)
			// The first event of the new process, said from inside Start.
			if e.Kind == EventHealth && e.Health == vocab.HealthStarting && e.PID != 0 && stopped.CompareAndSwap(false, true) {
				_ = m.Stop(e.Agent)
			}
		},
		StopTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Start("worker_1", "worker", false); err != nil {
		t.Fatal(err)
	}
	s, ok := m.Session("worker_1")
	if !ok {
		t.Fatal("worker_1 has no session")
	}
	select {
	case <-s.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("the process (pid %d) started as Stop came runs on", s.PID())
	}
	if e, ok := rec.find(func(e Event) bool { return e.Kind == EventHealth && e.Health == vocab.HealthExited }); !ok || !e.Stopped {
		t.Errorf("its exit %+v, want one said as a stop", e)
	}
}
