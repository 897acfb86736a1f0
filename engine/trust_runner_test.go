package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// TestDiskFullStopsNewWork: when state.json cannot be written, nothing
// the unsaved step decided is assigned, typed or archived (write-ahead);
// the run waits in needs_human saying why; a retry once the disk has room
// sends the work and does the held archive.
func TestDiskFullStopsNewWork(t *testing.T) {
	st := planReviewIn(t, "/ws/tasks/t1")
	h := rtStart(t, testMachine.Step, func(c *RunnerConfig) { c.State = st })
	if err := os.WriteFile(filepath.Join(h.files.dir, "plan-approved.md"), []byte("LGTM"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.store.setFail(syscall.ENOSPC)
	h.r.Send(TriggerCompleted{Path: ob("plan-approved.md"), Content: []byte("LGTM"), Agent: "reviewer", Inode: 1})
	snap := rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.Phase == vocab.PhaseNeedsHuman })
	if snap.State.Escalation != "state_write" || !strings.Contains(snap.State.Reason, "no space left on device") {
		t.Fatalf("escalation %q reason %q", snap.State.Escalation, snap.State.Reason)
	}
	<-h.r.Barrier()
	for _, c := range append(h.agents.Calls(), h.files.Calls()...) {
		if strings.HasPrefix(c, "Inject") || strings.HasPrefix(c, "WriteAssignment") || strings.HasPrefix(c, "Archive") {
			t.Fatalf("acted although the state was not saved: %s", c)
		}
	}
	h.store.setFail(nil)
	h.r.Retry()
	rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.Phase == vocab.PhaseExecuting })
	<-h.r.Barrier()
	injected := map[string]bool{}
	for _, c := range h.agents.Calls() {
		if f := strings.Fields(c); f[0] == "Inject" {
			injected[f[1]] = true
		}
	}
	archived := false
	for _, c := range h.files.Calls() {
		archived = archived || strings.HasPrefix(c, "Archive "+ob("plan-approved.md")+" ")
	}
	if !injected["worker_1"] || !injected["worker_2"] || !archived {
		t.Fatalf("after retry: injected %v archived %v (calls %v %v)", injected, archived, h.agents.Calls(), h.files.Calls())
	}
	if saved := h.store.Saved(); len(saved) == 0 || saved[len(saved)-1].Phase != vocab.PhaseExecuting {
		t.Fatalf("state not saved after retry")
	}
}

// TestEveryInjectionEndsWithAResult: an injection the agent layer never
// answered (the task ended, the program quit) gets a recorded, stepped
// result, cancelled; one that was answered gets no second result.
func TestEveryInjectionEndsWithAResult(t *testing.T) {
	st := planReviewIn(t, "/ws/tasks/t1")
	log := &rtLog{}
	agents := &rtAgents{failNext: map[string]error{}}
	r := NewRunner(RunnerConfig{Machine: testMachine, TaskDir: &rtFiles{dir: t.TempDir()}, Store: &rtStore{}, Log: log,
		Agents: agents, State: st, NoWatch: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	r.Send(TriggerCompleted{Path: ob("plan-approved.md"), Content: []byte("ok"), Agent: "reviewer", Inode: 1})
	<-r.Barrier()
	// worker_1's message is confirmed; worker_2's never is.
	seqs := map[string]int{}
	for _, c := range agents.Calls() {
		var id string
		var seq int
		if n, _ := fmt.Sscanf(c, "Inject %s %d", &id, &seq); n == 2 {
			seqs[id] = seq
		}
	}
	if seqs["worker_1"] == 0 || seqs["worker_2"] == 0 {
		t.Fatalf("injections %v", agents.Calls())
	}
	r.Send(InjectionResult{Agent: "worker_1", Seq: seqs["worker_1"], Delivered: true})
	<-r.Barrier()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	results := map[vocab.AgentID][]string{}
	for _, rec := range log.Records() {
		if rec.Type == vocab.InputPrefix+"injection_result" {
			d, _ := rec.Details["delivered"].(bool)
			c, _ := rec.Details["cancelled"].(bool)
			results[rec.Agent] = append(results[rec.Agent], fmt.Sprintf("delivered=%v cancelled=%v", d, c))
		}
	}
	if got := results["worker_1"]; len(got) != 1 || got[0] != "delivered=true cancelled=false" {
		t.Fatalf("worker_1 results %v", got)
	}
	if got := results["worker_2"]; len(got) != 1 || got[0] != "delivered=false cancelled=true" {
		t.Fatalf("worker_2 results %v", got)
	}
}

// Snapshots before the first step show the loaded state and say so: a
// resumed needs_human task about to be retried is not taken for finished.
func TestSnapshotSaysWhenStepped(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) { return st, nil }, func(c *RunnerConfig) {
		c.State = State{TaskID: "t1", Phase: vocab.PhaseNeedsHuman}
	})
	h.r.Log("state_rebuilt", "", nil)
	if s := rtWaitSnap(t, h.snaps, func(Snapshot) bool { return true }); s.Stepped {
		t.Fatalf("a record made the snapshot stepped")
	}
	h.r.Send(Resumed{})
	rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.Stepped })
}

// When the task ends, injections still in flight are recorded as
// cancelled at once (the run is over), and a result the agent layer
// reports for them afterwards is dropped: exactly one result each.
func TestInjectionsEndWithTheTask(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		k, ok := ev.(KeyPressed)
		if !ok {
			return st, nil
		}
		switch k.Action {
		case flow.KeyPause:
			return st, []Effect{Inject{Agent: "worker_1", Seq: 5, Text: "[HIVEMIND] x — read /a.json"}}
		case flow.KeyCancel:
			st.Phase = vocab.PhaseComplete
			return st, []Effect{WriteState{State: st}}
		}
		return st, nil
	}, nil)
	h.r.Pause()
	h.r.Cancel()
	<-h.r.Barrier()
	results := func() (n int, cancelled bool) {
		for _, rec := range h.log.Records() {
			if rec.Type == vocab.InputPrefix+"injection_result" && rec.Agent == "worker_1" {
				n++
				cancelled, _ = rec.Details["cancelled"].(bool)
			}
		}
		return
	}
	if n, c := results(); n != 1 || !c {
		t.Fatalf("%d results (cancelled %v) when the task ended, want 1 cancelled", n, c)
	}
	h.r.Send(InjectionResult{Agent: "worker_1", Seq: 5, Delivered: true})
	<-h.r.Barrier()
	if n, _ := results(); n != 1 {
		t.Fatalf("%d results after a late delivery, want 1", n)
	}
}
