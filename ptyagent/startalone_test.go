package ptyagent

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// kindAlone is a test kind whose agents start one at a time.
const kindAlone ProfileKind = "test-start-alone"

func init() {
	RegisterKind(kindAlone, Behavior{
		Submit:     SubmitRules{Confirm: ConfirmNone, EnterDelay: 10 * time.Millisecond},
		Ready:      ReadyRules{Mode: ReadyQuiet, Quiet: 100 * time.Millisecond, Pattern: `READY`},
		StartAlone: true,
	})
}

// aloneSpec is an agent of kindAlone that is starting until the file go
// exists (then it prints READY and echoes what it is typed).
func aloneSpec(id vocab.AgentID, goFile string) Spec {
	return Spec{ID: id, Role: "worker", Kind: kindAlone, Cols: 80, Rows: 24,
		Argv: []string{"sh", "-c", `echo booting; while [ ! -e "$1" ]; do sleep 0.02; done; echo READY; exec cat`, "sh", goFile}}
}

// Agents of a kind that starts alone (opencode: instances started
// together left one stuck before its prompt) are started one at a time:
// the second's process does not exist while the first is starting, a
// message sent to it meanwhile is held and delivered once it runs, and it
// starts once the first leaves starting.
func TestStartAloneWaitsForTheStartUnderWay(t *testing.T) {
	dir := t.TempDir()
	goA, goB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	rec := &recorder{}
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"worker_1": aloneSpec("worker_1", goA), "worker_2": aloneSpec("worker_2", goB)})
	if err := m.Start("worker_1", "worker", false); err != nil {
		t.Fatal(err)
	}
	if err := m.Start("worker_2", "worker", false); err != nil {
		t.Fatal(err)
	}
	if err := m.Inject("worker_2", 1, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Session("worker_2"); ok {
		t.Fatal("worker_2 started while worker_1 was starting")
	}
	if _, ok := rec.find(func(e Event) bool {
		return e.Agent == "worker_2" && e.Kind == EventHealth && strings.HasPrefix(e.Detail, "waiting to start")
	}); !ok {
		t.Error("worker_2's wait is not said")
	}
	a, ok := m.Session("worker_1")
	if !ok {
		t.Fatal("worker_1 did not start")
	}
	waitFor(t, 10*time.Second, "worker_1 booting", func() bool { return a.Health() == vocab.HealthStarting })
	if err := os.WriteFile(goA, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goB, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "worker_2 started and given its message", func() bool {
		_, ok := rec.find(delivered(1))
		return ok
	})
	var readyA, startB int
	for i, e := range rec.all() {
		switch {
		case e.Kind == EventHealth && e.Agent == "worker_1" && e.Health == vocab.HealthReady && readyA == 0:
			readyA = i + 1
		case e.Kind == EventHealth && e.Agent == "worker_2" && e.Health == vocab.HealthStarting && e.PID != 0 && startB == 0:
			startB = i + 1
		}
	}
	if readyA == 0 || startB < readyA {
		t.Errorf("worker_2 started (event %d) before worker_1 was ready (event %d)", startB, readyA)
	}
}

// A start waiting for its turn does not keep Close waiting: it is
// dropped (the agent never runs).
func TestStartAloneWaitingStartEndsOnClose(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{}
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{
		"worker_1": aloneSpec("worker_1", filepath.Join(dir, "never")), "worker_2": aloneSpec("worker_2", filepath.Join(dir, "never"))})
	for _, id := range []vocab.AgentID{"worker_1", "worker_2"} {
		if err := m.Start(id, "worker", false); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- m.Close() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close hangs on a start waiting for its turn")
	}
	if _, ok := m.Session("worker_2"); ok {
		t.Error("worker_2 ran after Close")
	}
}

// loadedSpec is an agent that prints READY at once and echoes what it is
// typed, whose Ready.Loaded is loaded.
func loadedSpec(loaded func() bool, wait time.Duration) Spec {
	return Spec{ID: "worker_1", Role: "worker", Kind: kindAlone, Cols: 80, Rows: 24,
		Argv:  []string{"sh", "-c", `echo READY; exec cat`},
		Ready: ReadyRules{Mode: ReadyQuiet, Quiet: 50 * time.Millisecond, Pattern: `READY`, Loaded: loaded, LoadedWait: wait}}
}

// A resumed CLI that draws its prompt before it has loaded its saved
// conversation (Gemini) is not ready, and is typed nothing, until
// Ready.Loaded holds, however long its prompt has been quiet on the
// screen.
func TestReadyWaitsForTheConversationLoaded(t *testing.T) {
	var asked atomic.Int32
	var done atomic.Bool
	rec := &recorder{}
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"worker_1": loadedSpec(func() bool {
		asked.Add(1)
		return done.Load()
	}, time.Hour)})
	if err := m.Start("worker_1", "worker", true); err != nil {
		t.Fatal(err)
	}
	if err := m.Inject("worker_1", 1, "hello"); err != nil {
		t.Fatal(err)
	}
	s, ok := m.Session("worker_1")
	if !ok {
		t.Fatal("worker_1 did not start")
	}
	// Asked again and again: the prompt is drawn and quiet.
	waitFor(t, 20*time.Second, "Ready.Loaded asked 5 times", func() bool { return asked.Load() >= 5 })
	if h := s.Health(); h != vocab.HealthStarting {
		t.Fatalf("health %s before the conversation is loaded, want starting", h)
	}
	if _, ok := rec.find(delivered(1)); ok || strings.Contains(s.Text(), "hello") {
		t.Fatal("the message was typed before the conversation was loaded")
	}
	done.Store(true)
	waitFor(t, 20*time.Second, "the message delivered once loaded", func() bool {
		_, ok := rec.find(delivered(1))
		return ok
	})
	if e, _ := rec.find(func(e Event) bool { return e.Kind == EventHealth && e.Health == vocab.HealthReady }); e.Detail != "output quiet, conversation loaded" {
		t.Errorf("ready detail %q", e.Detail)
	}
}

// A CLI that never shows its conversation loaded is ready after
// Ready.LoadedWait, and says so: it cannot stay starting for good.
func TestReadyWithoutLoadedAfterItsWait(t *testing.T) {
	rec := &recorder{}
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"worker_1": loadedSpec(func() bool { return false }, 300*time.Millisecond)})
	if err := m.Start("worker_1", "worker", true); err != nil {
		t.Fatal(err)
	}
	if err := m.Inject("worker_1", 1, "hello"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the message delivered after the wait", func() bool {
		_, ok := rec.find(delivered(1))
		return ok
	})
	if e, _ := rec.find(func(e Event) bool { return e.Kind == EventHealth && e.Health == vocab.HealthReady }); !strings.Contains(e.Detail, "not seen loaded in 300ms") {
		t.Errorf("ready detail %q", e.Detail)
	}
}
