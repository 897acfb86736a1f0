package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/workspace"
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
	f, err := os.OpenFile(filepath.Join(h.dir, filepath.FromSlash(rel)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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
		return ok && tc.Path == path && (content == "" || string(tc.Content) == content)
	}
}

func wtTriggersFor(evs []Event, path string) []TriggerCompleted {
	var out []TriggerCompleted
	for _, e := range evs {
		if tc, ok := e.(TriggerCompleted); ok && tc.Path == path {
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
	if err := h.w.fsw.Remove(filepath.Join(h.dir, "friction")); err != nil {
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
		return seen["plan.md"] && seen["friction/flaky.md"]
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

// A turn-ended flush reports the files that role writes at once, and only
// those.
func TestWatcherFlushRole(t *testing.T) {
	h := wtStart(t, time.Hour, nil)
	h.write("plan.md", "plan\n")
	h.write("plan-approved.md", "ok\n")
	h.w.FlushRole(workspace.RoleReviewer)
	evs := h.until(5*time.Second, wtIsTrigger("plan-approved.md", "ok\n"))
	if got := wtTriggersFor(evs, "plan.md"); len(got) != 0 {
		t.Fatalf("reviewer's turn flushed the lead's plan.md: %+v", got)
	}
	h.w.FlushRole(workspace.RoleLead)
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
		_ = os.MkdirAll(filepath.Join(dir, "friction"), 0o755)
		_ = os.WriteFile(filepath.Join(dir, "plan.md"), []byte("v1\n"), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "friction", "a.md"), []byte("a\n"), 0o644)
	})
	seen := map[string]bool{}
	h.until(5*time.Second, func(e Event) bool {
		seen[e.(TriggerCompleted).Path] = true
		return seen["plan.md"] && seen["friction/a.md"]
	})
	if err := os.MkdirAll(filepath.Join(h.dir, "reviews"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(h.dir, "plan.md"), filepath.Join(h.dir, "reviews", "plan_v1.md")); err != nil {
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
		ReadDone: func(st string) (workspace.DoneMarker, error) {
			if st == "st_bad" {
				return workspace.DoneMarker{AgentID: "worker_2"}, errors.New("output file missing")
			}
			return workspace.DoneMarker{AgentID: "worker_1"}, nil
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
	if sd := got["st_bad"]; sd.OK || sd.Problem == "" || sd.Agent != "worker_2" {
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
	for _, rel := range []string{"task.md", "reviews/plan_v1.md", "plan.md.tmp", "friction/.x.md", "outputs/a.md"} {
		if watchFileWanted(rel) {
			t.Errorf("watchFileWanted(%q) = true", rel)
		}
	}
	for _, rel := range []string{"plan.md", "checkpoint.md", "friction/x.md", "friction/sub/y.md", "outputs/st_1.done"} {
		if !watchFileWanted(rel) {
			t.Errorf("watchFileWanted(%q) = false", rel)
		}
	}
}
