package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ---- restart: write-ahead of consumed markers, resume order ----

// executingIn returns a task in executing with its task dir at dir, as the
// real machine reaches it: st_1 in progress on worker_1, st_2 on worker_2
// (validPlan), stamped now so no timer is overdue on resume.
func executingIn(t *testing.T, dir string) State {
	t.Helper()
	s := planReviewIn(t, dir)
	at := time.Now()
	s, _ = testMachine.Step(s, TriggerCompleted{Path: ob("plan-approved.md"), Content: []byte("LGTM"), ModTime: at, When: When{At: at}})
	if s.Phase != vocab.PhaseExecuting || s.Subtasks["st_1"].Worker != "worker_1" || !s.Agents["worker_1"].Pending ||
		s.Subtasks["st_2"].Worker != "worker_2" {
		t.Fatalf("setup: %s %+v", s.Phase, s.Subtasks)
	}
	return s
}

// planReviewIn returns a task whose plan (validPlan) the Reviewer is
// reviewing, its task dir at dir, stamped now.
func planReviewIn(t *testing.T, dir string) State {
	t.Helper()
	at := time.Now()
	s := State{Phase: vocab.PhaseIdle}
	for _, ev := range []Event{
		TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Workers: 2, Description: "do it"}, TaskDir: dir, When: When{At: at}},
		TriggerCompleted{Path: ob("plan.md"), Content: validPlan, Agent: "lead", ModTime: at, When: When{At: at}},
	} {
		s, _ = testMachine.Step(s, ev)
	}
	if s.Phase != vocab.PhasePlanReview {
		t.Fatalf("setup: %s, want plan_review", s.Phase)
	}
	return s
}

// writeDone writes outputs/<id>.md and its marker, last modified well
// before now (written while no Hivemind ran, or before a kill).
func writeDone(t *testing.T, dir, id, agent string) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	for _, f := range []struct{ name, content string }{
		{id + ".md", "# " + id + "\ndone\n"},
		{id + ".done", `{"agent_id": "` + agent + `", "output_file": "agents/` + agent + `/outputs/` + id + `.md", "completed_at": "2026-01-01T00:00:00Z"}`},
	} {
		p := filepath.Join(dir, vocab.OutboxesDir, agent, vocab.OutputsDir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// recCounter counts the engine's records by type and subtask, across runs.
type recCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *recCounter) add(r vocab.EventRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	sub, _ := r.Details["subtask"].(string)
	c.n[string(r.Type)+" "+sub]++
}

func (c *recCounter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// sawSubtaskDone reports whether ev is (or a Resumed carries) a
// SubtaskDone for id.
func sawSubtaskDone(ev Event, id string) bool {
	switch e := ev.(type) {
	case SubtaskDone:
		return e.Subtask == id
	case Resumed:
		for _, x := range e.OnDisk {
			if d, ok := x.(SubtaskDone); ok && d.Subtask == id {
				return true
			}
		}
	}
	return false
}

// A kill right after the step that took a done marker: that step had no
// outside effect (the other subtask of the checkpoint is still running, the
// next one waits for it), so a lazy save would lose it. It is on disk
// before the runner does anything else, and a runner reopened from what
// the kill left takes the marker it finds again as already done: exactly
// one subtask_done, and the subtask is not sent to its worker again.
func TestRunnerKillAfterSubtaskDoneTakesMarkerOnce(t *testing.T) {
	dir := t.TempDir()
	start := executingIn(t, dir)
	var recs recCounter

	// First run: the done marker arrives; the process is "killed" right
	// after that step: its runner goroutine never runs again, and what the
	// store holds at that moment is what state.json holds.
	store1 := &rtStore{}
	killed := make(chan State, 1)
	freeze := make(chan struct{})
	var once sync.Once
	r1 := NewRunner(RunnerConfig{
		Machine: testMachine, TaskDir: &rtFiles{dir: dir}, Store: store1, Log: &rtLog{}, Agents: &rtAgents{},
		State: start, NoWatch: true, OnRecord: recs.add,
		OnSnapshot: func(s Snapshot) {
			if s.State.Subtasks["st_1"].Status != vocab.SubtaskDone {
				return
			}
			once.Do(func() {
				disk := start
				if saved := store1.Saved(); len(saved) > 0 {
					disk = saved[len(saved)-1]
				}
				killed <- disk
				<-freeze
			})
		},
	})
	ctx1, cancel1 := context.WithCancel(context.Background())
	done1 := make(chan error, 1)
	go func() { done1 <- r1.Run(ctx1) }()
	t.Cleanup(func() {
		cancel1()
		close(freeze)
		<-done1
	})
	writeDone(t, dir, "st_1", "worker_1")
	r1.Send(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	var disk State
	select {
	case disk = <-killed:
	case <-time.After(10 * time.Second):
		t.Fatal("the done marker was not handled within 10s")
	}
	if got := disk.Subtasks["st_1"].Status; got != vocab.SubtaskDone {
		t.Errorf("state.json at the kill: st_1 is %s, want done (the step that took its marker was not saved)", got)
	}

	// Second run, from what the kill left, with the watcher finding the
	// marker on disk again.
	agents2 := &rtAgents{failNext: map[string]error{}}
	seen := make(chan Event, 1000)
	store2 := &rtStore{}
	r2 := NewRunner(RunnerConfig{
		Machine: rtStepper{fn: testMachine.Step, seen: seen}, TaskDir: &rtFiles{dir: dir}, Store: store2, Log: &rtLog{},
		Agents: agents2, State: disk, QuietPeriod: 20 * time.Millisecond, OnRecord: recs.add,
	})
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() { done2 <- r2.Run(ctx2) }()
	defer func() {
		cancel2()
		if err := <-done2; err != nil {
			t.Error(err)
		}
	}()
	r2.Send(Resumed{})
	deadline := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case ev := <-seen:
			found = sawSubtaskDone(ev, "st_1")
		case <-deadline:
			t.Fatal("the resumed runner did not see st_1's marker within 10s")
		}
	}
	<-r2.Barrier()

	if n := recs.get("subtask_done st_1"); n != 1 {
		t.Errorf("st_1 done %d times, want 1", n)
	}
	for _, c := range agents2.Calls() {
		if strings.HasPrefix(c, "Inject worker_1 ") {
			t.Errorf("st_1 sent to worker_1 again after the restart: %s", c)
		}
	}
	if st := r2.Snapshot().State; st.Subtasks["st_1"].Status != vocab.SubtaskDone || st.Agents["worker_1"].Pending {
		t.Errorf("after resume: st_1 %s, worker_1 pending %v", st.Subtasks["st_1"].Status, st.Agents["worker_1"].Pending)
	}
}

// The runner hands what its watcher finds complete on disk at start to the
// Resumed step, before anything is re-sent: the worker whose marker is
// there is not asked again (no wasted turn answered by trigger_ignored),
// and the watcher does not report the marker a second time.
func TestRunnerResumeTakesDiskBeforeResend(t *testing.T) {
	dir := t.TempDir()
	start := executingIn(t, dir)
	writeDone(t, dir, "st_1", "worker_1")
	var recs recCounter
	h := rtStart(t, testMachine.Step, func(c *RunnerConfig) {
		c.TaskDir = &rtFiles{dir: dir}
		c.State = start
		c.NoWatch = false
		c.QuietPeriod = 20 * time.Millisecond
		c.OnRecord = recs.add
	})
	h.r.Send(Resumed{})
	res, ok := h.next().(Resumed)
	if !ok {
		t.Fatalf("first event %#v, want Resumed", res)
	}
	if len(res.OnDisk) != 1 || !sawSubtaskDone(res, "st_1") {
		t.Fatalf("Resumed.OnDisk = %#v, want st_1's done marker", res.OnDisk)
	}
	<-h.r.Barrier()
	var injected []string
	for _, c := range h.agents.Calls() {
		if strings.HasPrefix(c, "Inject ") {
			injected = append(injected, strings.Fields(c)[1])
		}
	}
	if !reflect.DeepEqual(injected, []string{"worker_2"}) {
		t.Fatalf("injected to %v, want only worker_2: %q", injected, h.agents.Calls())
	}
	// The watcher is live and does not report st_1 again: a later marker
	// is reported alone.
	writeDone(t, dir, "st_2", "worker_2")
	h.r.Send(AgentHealth{Agent: "worker_2", Health: "idle"})
	for {
		ev := h.next()
		if sawSubtaskDone(ev, "st_1") {
			t.Fatal("st_1's marker reported again")
		}
		if sawSubtaskDone(ev, "st_2") {
			break
		}
	}
	<-h.r.Barrier()
	if n := recs.get("subtask_done st_1"); n != 1 {
		t.Errorf("st_1 done %d times", n)
	}
}

// ScanComplete returns only files complete on disk (old enough, or
// unchanged once waited for; not cut short), oldest first, and Run does
// not report them again.
func TestWatcherScanComplete(t *testing.T) {
	dir := t.TempDir()
	ago := func(d time.Duration) time.Time { return time.Now().Add(-d) }
	files := []struct {
		rel, content string
		mod          time.Time
	}{
		{"plan.md", "# plan\n```json\n{}\n```\n", ago(time.Minute)},
		{"outputs/st_1.done", `{"agent_id": "worker_1"}`, ago(2 * time.Minute)},
		{"friction/slow.md", "slow", ago(30 * time.Second)},
		{"friction/recent.md", "written just before the restart", time.Now()},
		{"checkpoint.md", "```json\n{", ago(time.Minute)},        // cut short
		{"plan-approved.md", "fresh", time.Now().Add(time.Hour)}, // never quiet long enough
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(ob(f.rel)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mod, f.mod); err != nil {
			t.Fatal(err)
		}
	}
	events := make(chan Event, 100)
	w, err := NewWatcher(WatcherConfig{Dir: dir, QuietPeriod: time.Second, MaxWait: time.Hour, Emit: func(e Event) { events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	var got []string
	for _, ev := range w.ScanComplete(ctx) {
		switch e := ev.(type) {
		case TriggerCompleted:
			got = append(got, e.Path)
		case SubtaskDone:
			if !e.OK || e.Agent != "worker_1" {
				t.Errorf("marker event %#v", e)
			}
			got = append(got, ob("outputs/"+e.Subtask+".done"))
		}
	}
	if want := []string{ob("outputs/st_1.done"), ob("plan.md"), ob("friction/slow.md"), ob("friction/recent.md")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanComplete = %q, want %q (oldest first)", got, want)
	}
	if evs := w.ScanComplete(ctx); len(evs) != 0 {
		t.Fatalf("second ScanComplete: %#v, want nothing (all reported)", evs)
	}
	// A flush reports every file not reported yet, in one pass: the two
	// ScanComplete left out, nothing it returned. A marker written after
	// it and flushed next comes after everything the first pass reported.
	w.Flush()
	var flushed []string
	for {
		var ev Event
		select {
		case ev = <-events:
		case <-time.After(10 * time.Second):
			t.Fatalf("flush reported only %q", flushed)
		}
		if d, ok := ev.(SubtaskDone); ok && d.Subtask == "zz" {
			break
		}
		tc, ok := ev.(TriggerCompleted)
		if !ok {
			t.Fatalf("reported again: %#v", ev)
		}
		flushed = append(flushed, tc.Path)
		if len(flushed) == 2 {
			if err := os.WriteFile(mkParent(filepath.Join(dir, ob("outputs/zz.done"))), []byte(`{"agent_id": "worker_2"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			w.Flush()
		}
	}
	slices.Sort(flushed)
	if want := []string{ob("plan-approved.md"), ob("checkpoint.md")}; !reflect.DeepEqual(flushed, want) {
		t.Fatalf("flushed %q, want %q", flushed, want)
	}
}
