package engine

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hivemind-dev/hivemind/workspace"
)

// TestDiskFullStopsNewWork: when state.json cannot be written, nothing
// the unsaved step decided is assigned, typed or archived (write-ahead);
// the run waits in needs_human saying why; a retry once the disk has room
// sends the work and does the held archive.
func TestDiskFullStopsNewWork(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanReview()
	h := rtStart(t, testMachine.Step, func(c *RunnerConfig) { c.State = sc.s })
	if err := os.WriteFile(filepath.Join(h.files.dir, "plan-approved.md"), []byte("LGTM"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.store.setFail(syscall.ENOSPC)
	h.r.Send(TriggerCompleted{Path: "plan-approved.md", Content: []byte("LGTM"), Agent: "reviewer", Inode: 1})
	snap := rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.State == workspace.PhaseNeedsHuman })
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
	rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.State == workspace.PhaseExecuting })
	<-h.r.Barrier()
	injected := map[string]bool{}
	for _, c := range h.agents.Calls() {
		if f := strings.Fields(c); f[0] == "Inject" {
			injected[f[1]] = true
		}
	}
	archived := false
	for _, c := range h.files.Calls() {
		archived = archived || strings.HasPrefix(c, "Archive plan-approved.md ")
	}
	if !injected["worker_1"] || !injected["worker_2"] || !archived {
		t.Fatalf("after retry: injected %v archived %v (calls %v %v)", injected, archived, h.agents.Calls(), h.files.Calls())
	}
	if saved := h.store.Saved(); len(saved) == 0 || saved[len(saved)-1].State != workspace.PhaseExecuting {
		t.Fatalf("state not saved after retry")
	}
}
