package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// wtHarness runs a Watcher on a temp dir and collects what it emits.
type wtHarness struct {
	t      *testing.T
	dir    string
	w      *Watcher
	events chan Event
}

func wtStart(t *testing.T, quiet time.Duration, setup func(dir string)) *wtHarness {
	t.Helper()
	dir := t.TempDir()
	if setup != nil {
		setup(dir)
	}
	h := &wtHarness{t: t, dir: dir, events: make(chan Event, 1000)}
	w, err := NewWatcher(WatcherConfig{
		Dir:         dir,
		QuietPeriod: quiet,
		Emit:        func(e Event) { h.events <- e },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return h
}

func (h *wtHarness) write(rel, content string) {
	h.t.Helper()
	rel = ob(rel)
	p := filepath.Join(h.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *wtHarness) appendTo(rel, content string) {
	h.t.Helper()
	f, err := os.OpenFile(filepath.Join(h.dir, filepath.FromSlash(ob(rel))), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		h.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// until collects events until one satisfies stop, failing after the deadline.
func (h *wtHarness) until(d time.Duration, stop func(Event) bool) []Event {
	h.t.Helper()
	var got []Event
	deadline := time.After(d)
	for {
		select {
		case e := <-h.events:
			got = append(got, e)
			if stop(e) {
				return got
			}
		case <-deadline:
			h.t.Fatalf("no matching event within %v; got %#v", d, got)
			return nil
		}
	}
}

// none asserts nothing more was emitted so far.
func (h *wtHarness) none() {
	h.t.Helper()
	select {
	case e := <-h.events:
		h.t.Fatalf("unexpected event %#v", e)
	default:
	}
}

func wtIsTrigger(path, content string) func(Event) bool {
	return func(e Event) bool {
		tc, ok := e.(TriggerCompleted)
		return ok && tc.Path == ob(path) && (content == "" || string(tc.Content) == content)
	}
}

func wtTriggersFor(evs []Event, path string) []TriggerCompleted {
	var out []TriggerCompleted
	for _, e := range evs {
		if tc, ok := e.(TriggerCompleted); ok && tc.Path == ob(path) {
			out = append(out, tc)
		}
	}
	return out
}

const wtPlanChunk1 = "# Plan\n\nBuild it.\n\n```json\n{\"summary\": \"calc\",\n"
const wtPlanChunk2 = " \"checkpoints\": [{\"id\": 1, \"name\": \"core\"}],\n \"subtasks\": []}\n```\n"

// wtStepped drives a Watcher by hand on a virtual clock: no Run
// goroutine; look lets time pass, then looks as Run does after a change
// (every file, then the due ones). What the watcher decides then depends
// on the order of writes and clock steps only, never on scheduling.
type wtStepped struct {
	*wtHarness
	now time.Time
}

func wtStep(t *testing.T, quiet time.Duration) *wtStepped {
	t.Helper()
	s := &wtStepped{wtHarness: &wtHarness{t: t, dir: t.TempDir(), events: make(chan Event, 1000)}, now: time.Unix(1e9, 0)}
	w, err := NewWatcher(WatcherConfig{
		Dir:         s.dir,
		QuietPeriod: quiet,
		Clock:       func() time.Time { return s.now },
		Emit:        func(e Event) { s.events <- e },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.fsw.Close() })
	s.w = w
	return s
}

// look advances the clock by d, then observes every file and checks the
// due ones; it returns what was emitted.
func (s *wtStepped) look(d time.Duration) []Event {
	s.now = s.now.Add(d)
	s.w.rescan()
	s.w.checkDue()
	var got []Event
	for {
		select {
		case e := <-s.events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// lookNone is look, failing if anything was emitted.
func (s *wtStepped) lookNone(d time.Duration, when string) {
	s.t.Helper()
	if got := s.look(d); len(got) > 0 {
		s.t.Fatalf("%s: reported %+v", when, got)
	}
}

// lookOne is look, failing unless exactly path with content was emitted.
func (s *wtStepped) lookOne(d time.Duration, path, content string) {
	s.t.Helper()
	got := s.look(d)
	if len(got) != 1 || !wtIsTrigger(path, content)(got[0]) {
		s.t.Fatalf("reported %+v, want %s once with %q", got, path, content)
	}
}

// A plan.md written in two chunks a quiet period apart (the writer pausing
// mid-fence) is held back, then reported once, with its complete content.
func TestWatcherHalfWrittenPlan(t *testing.T) {
	const quiet = 300 * time.Millisecond
	s := wtStep(t, quiet)
	s.write("plan.md", wtPlanChunk1)
	s.lookNone(0, "first chunk")
	s.lookNone(quiet, "first chunk a quiet period old (an open fence)")
	s.appendTo("plan.md", wtPlanChunk2)
	s.lookNone(0, "second chunk")
	s.lookNone(quiet-time.Millisecond, "second chunk just under a quiet period old")
	s.lookOne(time.Millisecond, "plan.md", wtPlanChunk1+wtPlanChunk2)
	s.lookNone(time.Hour, "afterwards")
}

// A file without a fence, written in two chunks with a pause shorter than
// the quiet period, is reported once, complete: the period counts from the
// last change.
func TestWatcherTwoChunksWithinQuietPeriod(t *testing.T) {
	const quiet = 400 * time.Millisecond
	s := wtStep(t, quiet)
	s.write("plan-feedback.md", "first half, ")
	s.lookNone(0, "first half")
	s.lookNone(quiet-100*time.Millisecond, "the writer pauses mid-file")
	s.appendTo("plan-feedback.md", "second half\n")
	s.lookNone(0, "second half")
	s.lookNone(quiet-time.Millisecond, "second half just under a quiet period old")
	s.lookOne(time.Millisecond, "plan-feedback.md", "first half, second half\n")
	s.lookNone(time.Hour, "afterwards")
}

// A burst of rewrites yields one event with the final content.
func TestWatcherBurst(t *testing.T) {
	const quiet = 300 * time.Millisecond
	s := wtStep(t, quiet)
	var last string
	for i := range 200 {
		last = strings.Repeat("x", i) + "\n"
		s.write("checkpoint.md", last)
		s.lookNone(time.Millisecond, "mid-burst")
	}
	s.lookNone(quiet-time.Millisecond, "just under a quiet period after the burst")
	s.lookOne(time.Millisecond, "checkpoint.md", last)
}

// Events lost by fsnotify (here: the watch is gone while the file is
// written) are recovered from the rescan an overflow error starts.
func TestWatcherOverflowRescan(t *testing.T) {
	h := wtStart(t, 50*time.Millisecond, nil)
	h.write("friction/slow-tests.md", "tests are slow\n")
	h.until(5*time.Second, wtIsTrigger("friction/slow-tests.md", ""))

	// Blind the watcher, then write: no notification can arrive.
	if err := h.w.fsw.Remove(h.dir); err != nil {
		t.Fatal(err)
	}
	if err := h.w.fsw.Remove(filepath.Join(h.dir, "agents/worker_1/friction")); err != nil {
		t.Fatal(err)
	}
	h.write("plan.md", "the plan\n")
	h.write("friction/flaky.md", "flaky\n")
	// The kernel queue overflowed: the real error path.
	h.w.fsw.Errors <- fsnotify.ErrEventOverflow
	seen := map[string]bool{}
	h.until(5*time.Second, func(e Event) bool {
		if tc, ok := e.(TriggerCompleted); ok {
			seen[tc.Path] = true
		}
		return seen[ob("plan.md")] && seen[ob("friction/flaky.md")]
	})
}

// Rescan (the path taken on overflow) reports what is on disk, once.
func TestWatcherRescanReportsOnce(t *testing.T) {
	h := wtStart(t, 50*time.Millisecond, nil)
	if err := h.w.fsw.Remove(h.dir); err != nil {
		t.Fatal(err)
	}
	h.write("plan-approved.md", "approved\n")
	h.w.Rescan()
	h.until(5*time.Second, wtIsTrigger("plan-approved.md", "approved\n"))
	// Rescanning again changes nothing: the content was already reported.
	h.w.Rescan()
	h.write("checkpoint.md", "sentinel\n")
	evs := h.until(5*time.Second, wtIsTrigger("checkpoint.md", ""))
	if got := wtTriggersFor(evs, "plan-approved.md"); len(got) != 0 {
		t.Fatalf("plan-approved.md reported again: %+v", got)
	}
}

// A turn-ended flush reports the files of that agent's outbox at once, and
// only those.
func TestWatcherFlushAgent(t *testing.T) {
	h := wtStart(t, time.Hour, nil)
	h.write("plan.md", "plan\n")
	h.write("plan-approved.md", "ok\n")
	h.w.FlushAgent(vocab.AgentReviewer)
	evs := h.until(5*time.Second, wtIsTrigger("plan-approved.md", "ok\n"))
	if got := wtTriggersFor(evs, "plan.md"); len(got) != 0 {
		t.Fatalf("reviewer's turn flushed the lead's plan.md: %+v", got)
	}
	h.w.FlushAgent(vocab.AgentLead)
	h.until(5*time.Second, wtIsTrigger("plan.md", "plan\n"))
	h.none()
	// Flush reports a fence-less or fenced file alike: the turn is over.
	h.write("friction-resolution.md", "```json\n{")
	h.w.Flush()
	h.until(5*time.Second, wtIsTrigger("friction-resolution.md", "```json\n{"))
}

// Files already there when the watcher starts (a restart) are reported; an
// archived trigger that comes back is reported again.
func TestWatcherInitialScanAndArchive(t *testing.T) {
	h := wtStart(t, 20*time.Millisecond, func(dir string) {
		_ = os.WriteFile(mkParent(filepath.Join(dir, ob("plan.md"))), []byte("v1\n"), 0o644)
		_ = os.WriteFile(mkParent(filepath.Join(dir, ob("friction/a.md"))), []byte("a\n"), 0o644)
	})
	seen := map[string]bool{}
	h.until(5*time.Second, func(e Event) bool {
		seen[e.(TriggerCompleted).Path] = true
		return seen[ob("plan.md")] && seen[ob("friction/a.md")]
	})
	if err := os.MkdirAll(filepath.Join(h.dir, "reviews"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(mkParent(filepath.Join(h.dir, ob("plan.md"))), filepath.Join(h.dir, "reviews", "plan_v1.md")); err != nil {
		t.Fatal(err)
	}
	h.write("plan.md", "v1\n")
	evs := h.until(5*time.Second, wtIsTrigger("plan.md", "v1\n"))
	for _, e := range evs {
		if tc, ok := e.(TriggerCompleted); ok && strings.HasPrefix(tc.Path, "reviews/") {
			t.Fatalf("archive reported: %v", tc.Path)
		}
	}
}

// Done markers in outputs/ (created after start, nested too) become
// SubtaskDone events validated by ReadDone.
func TestWatcherDoneMarkers(t *testing.T) {
	dir := t.TempDir()
	events := make(chan Event, 100)
	w, err := NewWatcher(WatcherConfig{
		Dir:         dir,
		QuietPeriod: 20 * time.Millisecond,
		Emit:        func(e Event) { events <- e },
		ReadDone: func(_ vocab.AgentID, st string) (vocab.DoneMarker, error) {
			if st == "st_bad" {
				return vocab.DoneMarker{AgentID: "worker_2"}, errors.New("output file missing")
			}
			return vocab.DoneMarker{AgentID: "worker_1"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	h := &wtHarness{t: t, dir: dir, w: w, events: events}
	h.write("outputs/st_1.md", "output\n") // not a marker: ignored
	h.write("outputs/st_1.done", `{"agent_id":"worker_1","output_file":"outputs/st_1.md"}`)
	h.write("outputs/st_bad.done", `{"agent_id":"worker_2"}`)
	got := map[string]SubtaskDone{}
	h.until(5*time.Second, func(e Event) bool {
		sd, ok := e.(SubtaskDone)
		if !ok {
			t.Fatalf("unexpected %#v", e)
		}
		got[sd.Subtask] = sd
		return len(got) == 2
	})
	if sd := got["st_1"]; !sd.OK || sd.Agent != "worker_1" || sd.Problem != "" {
		t.Errorf("st_1: %+v", sd)
	}
	if sd := got["st_bad"]; sd.OK || sd.Problem == "" || sd.Agent != "worker_1" {
		t.Errorf("st_bad: %+v", sd)
	}
}

// Temp files, archives, assignments, logs and other non-trigger files are
// never reported.
func TestWatcherIgnores(t *testing.T) {
	h := wtStart(t, 20*time.Millisecond, nil)
	for _, rel := range []string{
		"task.md", "state.json", "events.jsonl", ".plan.md.swp", "plan.md.tmp",
		"reviews/plan_v1.md", "assignments/lead.json", "assignments/lead.md",
		"logs/agents/lead.log", "heartbeats/lead", "backups/state-1.json",
		"friction/.draft.md", "friction/notes.txt", "outputs/st_1.md", "outputs/.st_1.done.tmp",
	} {
		h.write(rel, "x\n")
	}
	h.write("checkpoint-issues.md", "sentinel\n")
	evs := h.until(5*time.Second, wtIsTrigger("checkpoint-issues.md", ""))
	if len(evs) != 1 {
		t.Fatalf("extra events: %#v", evs)
	}
	// The filters themselves, for the files that raced the sentinel.
	for _, rel := range []string{"task.md", "reviews/plan_v1.md", "plan.md.tmp", ob("friction/.x.md"), ob("outputs/a.md"), ob("friction/sub/y.md"),
		"plan.md", "outputs/st_1.done", "friction/x.md", "agents/lead/notes.md", "agents/lead/sub/plan.md", "agents/../plan.md", "agents/x/inbox/n.md"} {
		if watchFileWanted(rel) {
			t.Errorf("watchFileWanted(%q) = true", rel)
		}
	}
	for _, rel := range []string{"plan.md", "checkpoint.md", "friction/x.md", "outputs/st_1.done", "plan-decision.md"} {
		if !watchFileWanted(ob(rel)) {
			t.Errorf("watchFileWanted(%q) = false", ob(rel))
		}
	}
}

// Every watched row of the trigger table is seen by the watcher, where
// its writer writes it, and nothing else of the table is: a trigger added
// to the table needs no change here.
func TestWatcherFollowsTriggerTable(t *testing.T) {
	h := wtStart(t, 20*time.Millisecond, nil)
	want := 0
	for _, spec := range triggers.Table() {
		var agent vocab.AgentID = "worker_3"
		if len(spec.Writers) > 0 && !spec.WrittenBy(vocab.RoleWorker) {
			agent = vocab.AgentID(spec.Writers[0])
		}
		rel := triggers.Path(agent, spec.Kind, "x")
		content := "x\n"
		if spec.Kind == triggers.Done {
			content = `{"agent_id": "worker_3", "output_file": "o"}`
		}
		if got := watchFileWanted(rel); got != spec.Watched {
			t.Errorf("%s: watched %v, want %v", rel, got, spec.Watched)
		}
		h.write(rel, content)
		if spec.Watched {
			want++
		}
	}
	got := h.until(5*time.Second, func(Event) bool { want--; return want == 0 })
	for _, e := range got {
		switch e := e.(type) {
		case TriggerCompleted:
			if ref, ok := triggers.Parse(e.Path); !ok || (e.Agent != ref.Owner) {
				t.Errorf("%s reported as written by %q", e.Path, e.Agent)
			}
		case SubtaskDone:
			if e.Agent != "worker_3" || !e.OK {
				t.Errorf("marker %+v", e)
			}
		}
	}
}

// ob places a file named as in the root layout of older versions
// (plan.md, friction/x.md, outputs/st_1.done) in the outbox of its
// writer: the Lead or the Reviewer by the trigger table, worker_1 for a
// worker's. Other paths are kept.
func ob(rel string) string {
	if strings.HasPrefix(rel, vocab.OutboxesDir+"/") {
		return rel
	}
	kind, item := triggers.Kind(rel), ""
	if dir, name, ok := strings.Cut(rel, "/"); ok {
		ext := filepath.Ext(name)
		kind, item = triggers.Kind(dir+"/*"+ext), strings.TrimSuffix(name, ext)
	}
	spec, ok := triggers.Lookup(kind)
	if !ok || spec.ByUser() || strings.Contains(item, "/") {
		return rel
	}
	var agent vocab.AgentID = "worker_1"
	switch {
	case spec.WrittenBy(vocab.RoleWorker):
	case spec.WrittenBy(vocab.RoleLead):
		agent = vocab.AgentLead
	default:
		agent = vocab.AgentReviewer
	}
	return triggers.Path(agent, kind, item)
}

// mkParent creates the directory of p and returns p.
func mkParent(p string) string {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		panic(err)
	}
	return p
}

// A flood of friction files from one outbox costs at most
// MaxFrictionInFlight events at a time: a done marker written after the
// flood is reported at once, not behind it, and every flood file is
// reported as the engine takes (archives) the earlier ones.
func TestWatcherFrictionFloodBounded(t *testing.T) {
	const n = 300
	h := wtStart(t, 20*time.Millisecond, func(dir string) {
		for i := range n {
			p := mkParent(filepath.Join(dir, "agents/worker_1/friction", fmt.Sprintf("f%04d.md", i)))
			_ = os.WriteFile(p, []byte("slow\n"), 0o644)
		}
	})
	h.write("agents/worker_2/outputs/st_2.done", `{"agent_id": "worker_2", "output_file": "o"}`)
	inFlight := map[string]bool{}
	h.until(10*time.Second, func(e Event) bool {
		if tc, ok := e.(TriggerCompleted); ok {
			inFlight[tc.Path] = true
			if len(inFlight) > MaxFrictionInFlight {
				t.Fatalf("%d friction files in flight, at most %d", len(inFlight), MaxFrictionInFlight)
			}
		}
		_, done := e.(SubtaskDone)
		return done
	})
	// The engine takes them: each archived one lets the next through.
	seen := map[string]bool{}
	for len(seen) < n {
		for p := range inFlight {
			if err := os.Remove(filepath.Join(h.dir, p)); err != nil {
				t.Fatal(err)
			}
			seen[p] = true
			delete(inFlight, p)
		}
		if len(seen) == n {
			break
		}
		e := h.until(10*time.Second, func(Event) bool { return true })[0]
		tc, ok := e.(TriggerCompleted)
		if !ok || seen[tc.Path] {
			t.Fatalf("unexpected %#v", e)
		}
		inFlight[tc.Path] = true
		if len(inFlight) > MaxFrictionInFlight {
			t.Fatalf("%d in flight", len(inFlight))
		}
	}
}
