package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
	"go.uber.org/goleak"
)

// rtAgents records every call; tests assert the exact calls happened.
type rtAgents struct {
	mu       sync.Mutex
	calls    []string
	failNext map[string]error // method → error returned once
	onInject func(id vocab.AgentID, seq int, text string)
	queued   map[vocab.AgentID][]int // what Withdraw finds not typed yet
}

func (f *rtAgents) call(method, s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, method+" "+s)
	if err := f.failNext[method]; err != nil {
		delete(f.failNext, method)
		return err
	}
	return nil
}

func (f *rtAgents) Start(id vocab.AgentID, role vocab.Role, resume bool) error {
	return f.call("Start", fmt.Sprintf("%s %s %v", id, role, resume))
}
func (f *rtAgents) Stop(id vocab.AgentID) error { return f.call("Stop", string(id)) }
func (f *rtAgents) Inject(id vocab.AgentID, seq int, text string) error {
	err := f.call("Inject", fmt.Sprintf("%s %d %s", id, seq, text))
	f.mu.Lock()
	cb := f.onInject
	f.mu.Unlock()
	if cb != nil {
		cb(id, seq, text)
	}
	return err
}

func (f *rtAgents) HoldDelivery(id vocab.AgentID, hold bool) {
	_ = f.call("HoldDelivery", fmt.Sprintf("%s %v", id, hold))
}
func (f *rtAgents) Withdraw(id vocab.AgentID, before int) []int {
	_ = f.call("Withdraw", fmt.Sprintf("%s %d", id, before))
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, seq := range f.queued[id] {
		if seq < before {
			out = append(out, seq)
		}
	}
	return out
}

func (f *rtAgents) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// rtFiles is a TaskFiles over a real temp dir that records calls.
type rtFiles struct {
	dir        string
	mu         sync.Mutex
	calls      []string
	onAssign   func()
	failAssign error
}

func (f *rtFiles) Dir() string { return f.dir }
func (f *rtFiles) WriteAssignment(a vocab.Assignment) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("WriteAssignment %s %d", a.Agent, a.Seq))
	if f.onAssign != nil {
		f.onAssign()
	}
	return f.failAssign
}
func (f *rtFiles) Archive(from, to string) error {
	f.mu.Lock()
	f.calls = append(f.calls, "Archive "+from+" "+to)
	f.mu.Unlock()
	dst := filepath.Join(f.dir, to)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(filepath.Join(f.dir, from), dst)
}
func (f *rtFiles) ReadDone(agent vocab.AgentID, st string) (vocab.DoneMarker, error) {
	return vocab.DoneMarker{AgentID: agent}, nil
}
func (f *rtFiles) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

type rtStore struct {
	mu     sync.Mutex
	states []State
	fail   error // returned by every Save while set
}

func (s *rtStore) Save(st State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.states = append(s.states, st.Clone())
	return nil
}

func (s *rtStore) setFail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

func (s *rtStore) Saved() []State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]State(nil), s.states...)
}

type rtLog struct {
	mu   sync.Mutex
	recs []vocab.EventRecord
}

func (l *rtLog) Append(r vocab.EventRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}
func (l *rtLog) Records() []vocab.EventRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]vocab.EventRecord(nil), l.recs...)
}

// rtStepper answers each event with the effects its function returns
// and forwards every event it sees to a channel.
type rtStepper struct {
	fn   func(State, Event) (State, []Effect)
	seen chan Event
}

func (s rtStepper) Step(st State, ev Event) (State, []Effect) {
	s.seen <- ev
	if s.fn == nil {
		return st, nil
	}
	return s.fn(st, ev)
}

type rtHarness struct {
	t      *testing.T
	r      *Runner
	agents *rtAgents
	files  *rtFiles
	store  *rtStore
	log    *rtLog
	seen   chan Event
	snaps  chan Snapshot
	notes  chan string
}

func rtStart(t *testing.T, fn func(State, Event) (State, []Effect), mod func(*RunnerConfig)) *rtHarness {
	t.Helper()
	h := &rtHarness{
		t:      t,
		agents: &rtAgents{failNext: map[string]error{}},
		files:  &rtFiles{dir: t.TempDir()},
		store:  &rtStore{},
		log:    &rtLog{},
		seen:   make(chan Event, 10000),
		snaps:  make(chan Snapshot, 10000),
		notes:  make(chan string, 100),
	}
	cfg := RunnerConfig{
		Machine:    rtStepper{fn: fn, seen: h.seen},
		TaskDir:    h.files,
		Store:      h.store,
		Log:        h.log,
		Agents:     h.agents,
		OnSnapshot: func(s Snapshot) { h.snaps <- s },
		OnNotify:   func(level, msg string) { h.notes <- level + ": " + msg },
		State:      State{TaskID: "t1", Phase: vocab.PhasePlanning},
		NoWatch:    true,
	}
	if mod != nil {
		mod(&cfg)
	}
	h.r = NewRunner(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

// next returns the next event Step saw, failing after a deadline.
func (h *rtHarness) next() Event {
	h.t.Helper()
	select {
	case ev := <-h.seen:
		return ev
	case <-time.After(5 * time.Second):
		h.t.Fatal("Step not called within 5s")
		return nil
	}
}

// Effects are carried out in the order Step returned them, each against
// the right collaborator.
func TestRunnerAppliesEffectsInOrder(t *testing.T) {
	asg := vocab.Assignment{Seq: 7, Agent: "reviewer", Role: "reviewer"}
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if _, ok := ev.(KeyPressed); !ok {
			return st, nil
		}
		st.Phase = vocab.PhasePlanReview
		return st, []Effect{
			ArchiveTrigger{From: "plan.md", To: "reviews/plan_v1.md"},
			WriteAssignment{Assignment: asg},
			Inject{Agent: "reviewer", Seq: 7, Text: "[HIVEMIND] read /x/assignments/reviewer.json"},
			SpawnAgent{Agent: "worker_1", Role: "worker"},
			RestartAgent{Agent: "lead", Role: "lead"},
			StopAgent{Agent: "worker_2"},
			NotifyUser{Level: "info", Message: "plan ready"},
			WriteState{State: st},
			AppendEvent{Type: "state_changed", Agent: "", Details: map[string]any{"to": "plan_review"}},
		}
	}, nil)
	if err := os.WriteFile(filepath.Join(h.files.dir, "plan.md"), []byte("p"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.r.Pause()
	if ev := h.next(); !reflect.DeepEqual(ev.(KeyPressed).Action, flow.KeyPause) {
		t.Fatalf("got %#v", ev)
	}
	snap := rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.Phase == vocab.PhasePlanReview })

	wantAgents := []string{
		"Inject reviewer 7 [HIVEMIND] read /x/assignments/reviewer.json",
		"Start worker_1 worker false",
		"Stop lead",
		"Start lead lead true",
		"Stop worker_2",
	}
	if got := h.agents.Calls(); !slices.Equal(got, wantAgents) {
		t.Errorf("agent calls:\n got %q\nwant %q", got, wantAgents)
	}
	// Archives and assignments are independent files, written concurrently.
	wantFiles := []string{"Archive plan.md reviews/plan_v1.md", "WriteAssignment reviewer 7"}
	if got := h.files.Calls(); !slices.Equal(slices.Sorted(slices.Values(got)), wantFiles) {
		t.Errorf("file calls:\n got %q\nwant %q", got, wantFiles)
	}
	if _, err := os.Stat(filepath.Join(h.files.dir, "reviews", "plan_v1.md")); err != nil {
		t.Errorf("archive not moved: %v", err)
	}
	if len(h.store.states) != 1 || h.store.states[0].Phase != vocab.PhasePlanReview {
		t.Errorf("saved states: %+v", h.store.states)
	}
	if n := <-h.notes; n != "info: plan ready" {
		t.Errorf("notify: %q", n)
	}
	<-h.r.Barrier() // records are written in the background
	recs := h.log.Records()
	types := make([]string, len(recs))
	for i, r := range recs {
		types[i] = string(r.Type)
		if r.Task != "t1" || r.Time.IsZero() {
			t.Errorf("record %d lacks task/time: %+v", i, r)
		}
	}
	if want := []string{"input.key_pressed", "state_changed"}; !slices.Equal(types, want) {
		t.Errorf("records %q, want %q", types, want)
	}
	if len(snap.Events) != 2 {
		t.Errorf("snapshot events: %+v", snap.Events)
	}
}

func rtWaitSnap(t *testing.T, ch chan Snapshot, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-ch:
			if ok(s) {
				return s
			}
		case <-deadline:
			t.Fatal("no matching snapshot within 5s")
		}
	}
}

// Timers fire once, a rescheduled timer fires only at its new time, and a
// cancelled one never fires.
func TestRunnerTimers(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if k, ok := ev.(KeyPressed); ok && k.Action == flow.KeyRetry {
			return st, []Effect{
				ScheduleTimer{ID: "replaced", After: time.Hour},
				ScheduleTimer{ID: "cancelled", After: 20 * time.Millisecond},
				ScheduleTimer{ID: "replaced", After: 30 * time.Millisecond},
				CancelTimer{ID: "cancelled"},
				ScheduleTimer{ID: "sentinel", After: 300 * time.Millisecond},
			}
		}
		return st, nil
	}, nil)
	h.r.Retry()
	h.next()
	var fired []string
	for {
		ev := h.next()
		tf, ok := ev.(TimerFired)
		if !ok {
			t.Fatalf("unexpected %#v", ev)
		}
		if tf.At.IsZero() {
			t.Error("TimerFired without At")
		}
		fired = append(fired, tf.ID)
		if tf.ID == "sentinel" {
			break
		}
	}
	if want := []string{"replaced", "sentinel"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %q, want %q", fired, want)
	}
}

// Failed injections and starts come back to the engine as events.
func TestRunnerFeedsBackFailures(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if _, ok := ev.(KeyPressed); ok {
			return st, []Effect{Inject{Agent: "lead", Seq: 3, Text: "[HIVEMIND] x"}, SpawnAgent{Agent: "worker_1", Role: "worker"}}
		}
		return st, nil
	}, nil)
	h.agents.failNext["Inject"] = errors.New("no such agent")
	h.agents.failNext["Start"] = errors.New("exec: not found")
	h.r.Cancel()
	h.next()
	got := []Event{h.next(), h.next()}
	ir, ok := got[0].(InjectionResult)
	if !ok || ir.Agent != "lead" || ir.Seq != 3 || ir.Delivered || ir.Detail != "no such agent" {
		t.Errorf("first feedback: %#v", got[0])
	}
	ah, ok := got[1].(AgentHealth)
	if !ok || ah.Agent != "worker_1" || ah.Health != "exited" || ah.ExitCode != -1 {
		t.Errorf("second feedback: %#v", got[1])
	}
	<-h.r.Barrier() // records are written in the background
	var errs int
	for _, r := range h.log.Records() {
		if r.Type == "runner_error" {
			errs++
		}
	}
	if errs != 2 {
		t.Errorf("runner_error records: %d, want 2", errs)
	}
}

// An agent's idle signal flushes the files its role writes at once: with
// an hour-long quiet period the plan still arrives.
func TestRunnerIdleFlushesWatcher(t *testing.T) {
	h := rtStart(t, nil, func(c *RunnerConfig) {
		c.NoWatch = false
		c.QuietPeriod = time.Hour
		c.State.Agents = map[vocab.AgentID]vocab.AgentState{"lead": {Role: "lead"}}
	})
	if err := os.WriteFile(mkParent(filepath.Join(h.files.dir, ob("plan.md"))), []byte("plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.r.Send(AgentHealth{Agent: "lead", Health: "idle"})
	if ev := h.next(); ev.(AgentHealth).Health != "idle" {
		t.Fatalf("got %#v", ev)
	}
	tc, ok := h.next().(TriggerCompleted)
	if !ok || tc.Path != ob("plan.md") || string(tc.Content) != "plan\n" {
		t.Fatalf("got %#v", tc)
	}
}

// Send is safe from many goroutines; every event is stepped and logged
// exactly once, and the snapshot tail is capped.
func TestRunnerConcurrentSend(t *testing.T) {
	h := rtStart(t, nil, nil)
	const n, g = 200, 8
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				h.r.Send(TimerFired{ID: fmt.Sprintf("%d-%d", i, j)})
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for range n * g {
		seen[h.next().(TimerFired).ID] = true
	}
	if len(seen) != n*g {
		t.Fatalf("distinct events %d, want %d", len(seen), n*g)
	}
	var snap Snapshot
	for i := range n * g {
		snap = rtWaitSnap(t, h.snaps, func(Snapshot) bool { return true })
		if want := min(i+1, SnapshotEvents); len(snap.Events) != want {
			t.Fatalf("snapshot %d has %d events, want %d", i, len(snap.Events), want)
		}
	}
	if len(snap.Events) != SnapshotEvents {
		t.Errorf("snapshot tail %d, want %d", len(snap.Events), SnapshotEvents)
	}
}

// Every input event survives the events.jsonl round trip, so a log can be
// replayed through Step.
func TestEncodeDecodeEvent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ev := range []Event{
		TaskSubmitted{Task: vocab.Task{ID: "t1", Description: "calc", Project: "/p", Workers: 2, CreatedAt: at}, TaskDir: "/p/.hivemind/tasks/t1", When: When{At: at}},
		ProjectSelected{Project: "/p", When: When{At: at}},
		Resumed{When: When{At: at}},
		// What a restarted runner found on disk travels in the record.
		Resumed{When: When{At: at}, OnDisk: []Event{
			SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, When: When{At: at}},
			TriggerCompleted{Path: ob("plan.md"), Content: []byte("p"), ModTime: at.Add(-time.Minute), When: When{At: at}},
		}},
		TriggerCompleted{Path: ob("plan.md"), Content: []byte("# plan\n```json\n{}\n```\n"), Agent: "lead", ModTime: at.Add(-time.Second), When: When{At: at}},
		TriggerCompleted{Path: ob("plan-approved.md"), Content: []byte{}, When: When{At: at}},
		SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, When: When{At: at}},
		SubtaskDone{Subtask: "st_2", Agent: "worker_2", Problem: "missing output", When: When{At: at}},
		AgentHealth{Agent: "lead", Health: "exited", ExitCode: 0, PID: 42, Detail: "bye", When: When{At: at}},
		AgentHealth{Agent: "lead", Health: "idle", When: When{At: at}},
		InjectionResult{Agent: "lead", Seq: 4, Delivered: true, When: When{At: at}},
		InjectionResult{Agent: "lead", Seq: 0, Detail: "timeout", When: When{At: at}},
		TimerFired{ID: "backoff:lead", When: When{At: at}},
		KeyPressed{Action: flow.KeyAbandon, When: When{At: at}},
	} {
		rec := flow.EncodeEvent(ev, "t1")
		// Through JSON, as events.jsonl stores it.
		var back vocab.EventRecord
		b, err := rtJSONRoundTrip(rec, &back)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := flow.DecodeEvent(back)
		if err != nil || !ok {
			t.Fatalf("%T: decode %s: ok=%v err=%v", ev, b, ok, err)
		}
		if tc, isTC := ev.(TriggerCompleted); isTC && len(tc.Content) == 0 {
			tc.Content = []byte{}
			ev = tc
		}
		if !reflect.DeepEqual(got, ev) {
			t.Errorf("round trip of %T:\n got %#v\nwant %#v\n via %s", ev, got, ev, b)
		}
	}
	if _, ok, _ := flow.DecodeEvent(vocab.EventRecord{Type: "state_changed"}); ok {
		t.Error("engine record decoded as input")
	}
	if _, _, err := flow.DecodeEvent(vocab.EventRecord{Type: "input.bogus"}); err == nil {
		t.Error("unknown input type decoded without error")
	}
}

func rtJSONRoundTrip(in vocab.EventRecord, out *vocab.EventRecord) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return b, json.Unmarshal(b, out)
}

// The state is saved before any effect outside the runner (write-ahead),
// a step without such effects is saved once the queue runs empty, and a
// message naming an assignment that could not be written is not typed.
func TestRunnerWriteAheadAndLazySave(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		switch e := ev.(type) {
		case AgentHealth:
			st.Agents = map[vocab.AgentID]vocab.AgentState{e.Agent: {Role: "lead", Status: e.Health}}
			return st, []Effect{WriteState{State: st}}
		case KeyPressed:
			st.Seq++
			return st, []Effect{
				WriteState{State: st},
				WriteAssignment{Assignment: vocab.Assignment{Seq: st.Seq, Agent: "lead"}},
				Inject{Agent: "lead", Seq: st.Seq, Text: "[HIVEMIND] x"},
			}
		}
		return st, nil
	}, nil)
	saved := func() int { return len(h.store.Saved()) }

	// A health-only step: saved when the queue is empty.
	h.r.Send(AgentHealth{Agent: "lead", Health: "busy"})
	h.next()
	<-h.r.Barrier()
	if n := saved(); n != 1 {
		t.Fatalf("saves after a health step: %d, want 1", n)
	}

	// An acting step: its state is on disk before the assignment is written.
	h.files.mu.Lock()
	h.files.onAssign = func() {
		if got := h.store.Saved(); len(got) != 2 || got[1].Seq != 1 {
			t.Errorf("assignment written before its state was saved: %d saves", len(got))
		}
	}
	h.files.mu.Unlock()
	h.r.Pause()
	h.next()
	<-h.r.Barrier()
	if calls := h.agents.Calls(); !slices.Equal(calls, []string{"Inject lead 1 [HIVEMIND] x"}) {
		t.Fatalf("agent calls %q", calls)
	}

	// The assignment cannot be written: no Inject, a failed result instead.
	h.files.mu.Lock()
	h.files.onAssign, h.files.failAssign = nil, errors.New("disk full")
	h.files.mu.Unlock()
	h.r.Pause()
	h.next()
	ir, ok := h.next().(InjectionResult)
	if !ok || ir.Delivered || ir.Agent != "lead" || ir.Seq != 2 {
		t.Fatalf("want a failed InjectionResult for seq 2, got %#v", ir)
	}
	if calls := h.agents.Calls(); len(calls) != 1 {
		t.Fatalf("injected despite the failed assignment: %q", calls)
	}
}

// Run leaves nothing behind: watcher, log writer and timers all stop, and
// Barrier never blocks on a stopped runner.
func TestRunnerStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	files := &rtFiles{dir: t.TempDir()}
	r := NewRunner(RunnerConfig{
		Machine: rtStepper{seen: make(chan Event, 100), fn: func(st State, ev Event) (State, []Effect) {
			return st, []Effect{ScheduleTimer{ID: "later", After: time.Hour}, AppendEvent{Type: "x"}}
		}},
		TaskDir: files, Log: &rtLog{}, Agents: &rtAgents{}, QuietPeriod: time.Hour,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	r.Pause()
	<-r.Barrier()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Barrier():
	case <-time.After(5 * time.Second):
		t.Fatal("Barrier blocks after Run returned")
	}
}

// A withdrawn message gets its one result, cancelled and saying why.
func TestRunnerWithdrawEndsMessagesCancelled(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if k, ok := ev.(KeyPressed); ok && k.Action == flow.KeyPause {
			return st, []Effect{Inject{Agent: "lead", Seq: 1, Text: "a"}, Inject{Agent: "lead", Seq: 2, Text: "b"},
				Withdraw{Agent: "lead", Before: 2, Why: "superseded by #2"}}
		}
		return st, nil
	}, nil)
	h.agents.queued = map[vocab.AgentID][]int{"lead": {1, 2}}
	h.r.Pause()
	if _, ok := h.next().(KeyPressed); !ok {
		t.Fatal("first step is not the key")
	}
	r, ok := h.next().(InjectionResult)
	if !ok || r.Seq != 1 || !r.Cancelled || !strings.Contains(r.Detail, "superseded by #2") {
		t.Fatalf("result %+v, want #1 cancelled, saying why", r)
	}
	if got := h.agents.Calls(); !slices.Contains(got, "Withdraw lead 2") {
		t.Fatalf("calls %q", got)
	}
}
