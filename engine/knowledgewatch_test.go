package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// ctxRun is a Runner over a real workspace, task dir and shared knowledge,
// with the real state machine and recorded agents.
type ctxRun struct {
	t      *testing.T
	root   string
	td     *workspace.TaskDir
	store  *workspace.KnowledgeStore
	r      *Runner
	log    *rtLog
	agents *rtAgents
	snaps  chan Snapshot
	cancel context.CancelFunc
	done   chan error
}

func startCtxRun(t *testing.T, root string, st State, quiet time.Duration, first Event) *ctxRun {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	c := &ctxRun{t: t, root: root, log: &rtLog{}, agents: &rtAgents{failNext: map[string]error{}}, snaps: make(chan Snapshot, 10000)}
	if st.TaskID == "" {
		c.td, err = ws.CreateTask(vocab.Task{Description: "build it", Project: t.TempDir(), Workers: 2,
			Constraints: []string{"No cgo"}})
	} else {
		c.td, err = ws.OpenTask(st.TaskID)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.store, err = workspace.OpenKnowledge(root); err != nil {
		t.Fatal(err)
	}
	if ts, ok := first.(TaskSubmitted); ok {
		task, err := c.td.Task()
		if err != nil {
			t.Fatal(err)
		}
		ts.Task, ts.TaskDir = task, c.td.Dir()
		first = ts
	}
	c.r = NewRunner(RunnerConfig{
		Machine: testMachine, TaskDir: c.td, Log: c.log, Agents: c.agents, Knowledge: c.store,
		OnSnapshot: func(s Snapshot) { c.snaps <- s }, State: st, QuietPeriod: quiet,
	})
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan error, 1)
	go func() { c.done <- c.r.Run(ctx) }()
	t.Cleanup(c.stop)
	c.r.Send(first)
	return c
}

func (c *ctxRun) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	if err := <-c.done; err != nil {
		c.t.Errorf("Run: %v", err)
	}
	c.cancel = nil
}

// waitSnap waits for a snapshot satisfying ok.
func (c *ctxRun) waitSnap(what string, ok func(Snapshot) bool) Snapshot {
	c.t.Helper()
	if s := c.r.Snapshot(); ok(s) {
		return s
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-c.snaps:
			if ok(s) {
				return s
			}
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s; last snapshot: state %s, context %+v", what, c.r.Snapshot().State.Phase, c.r.Snapshot().Knowledge)
		}
	}
}

// inbox writes the note "<agent>-<n>.md" as agent's knowledge/<n>.md in
// its outbox.
func (c *ctxRun) inbox(name, content string) {
	c.t.Helper()
	writeNote(c.t, c.td.Dir(), name, content)
}

// notePath is where the note "<agent>-<n>.md" lies under taskDir.
func notePath(taskDir, name string) string {
	i := strings.LastIndexByte(name, '-')
	return filepath.Join(taskDir, vocab.OutboxesDir, name[:i], "knowledge", name[i+1:])
}

func writeNote(t *testing.T, taskDir, name, content string) {
	t.Helper()
	p := notePath(taskDir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func countKind(items []workspace.KnowledgeItem, kind string) int {
	n := 0
	for _, it := range items {
		if it.Kind == kind {
			n++
		}
	}
	return n
}

func (c *ctxRun) recordTypes() []string {
	<-c.r.Barrier()
	var out []string
	for _, r := range c.log.Records() {
		out = append(out, string(r.Type))
	}
	return out
}

// TestRunnerMergesSimultaneousInboxFiles: two agents adding at once (two
// inbox files in the same instant) are both kept, archived and logged; the
// task's own constraint is in the registry from the start.
func TestRunnerMergesSimultaneousInboxFiles(t *testing.T) {
	c := startCtxRun(t, t.TempDir(), State{}, 50*time.Millisecond, TaskSubmitted{})
	c.waitSnap("the task constraint", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindConstraint) == 1 })
	c.inbox("lead-1.md", "---\nkind: decision\ntitle: Use SQLite\n---\nsimple\n")
	c.inbox("worker_1-1.md", "---\nkind: decision\ntitle: JSON over HTTP\n---\nclients\n")
	s := c.waitSnap("two decisions", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindDecision) == 2 })
	var by []string
	for _, it := range s.Knowledge {
		if it.Kind == vocab.KindDecision {
			by = append(by, it.By)
		}
	}
	slices.Sort(by)
	if !slices.Equal(by, []string{"lead", "worker_1"}) {
		t.Errorf("authors %v", by)
	}
	ctx, err := c.store.Load()
	if err != nil || len(ctx.Decisions) != 2 || ctx.Constraints[0].Name != "No cgo" || ctx.Constraints[0].AddedBy != "user" {
		t.Fatalf("stored context %+v, %v", ctx, err)
	}
	// Both inbox files were archived.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l1, _ := os.ReadDir(filepath.Dir(notePath(c.td.Dir(), "lead-1.md")))
		l2, _ := os.ReadDir(filepath.Dir(notePath(c.td.Dir(), "worker_1-1.md")))
		left := append(l1, l2...)
		arch, _ := os.ReadDir(filepath.Join(c.store.Dir(), vocab.KnowledgeArchiveDir))
		if len(left) == 0 && len(arch) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("inbox %d files, archive %d", len(left), len(arch))
		}
		time.Sleep(10 * time.Millisecond)
	}
	types := c.recordTypes()
	if n := countOf(types, "context_merged"); n != 3 {
		t.Errorf("%d context_merged records (want 3: constraint + 2 decisions): %v", n, types)
	}
	if countOf(types, "input.context_submitted") != 2 || countOf(types, "context_submitted") != 2 {
		t.Errorf("records: %v", types)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// TestRunnerFlushesInboxOnTurnEnd: with a long quiet period, an agent's
// turn ending is what makes its entry complete; another agent's file is
// left waiting.
func TestRunnerFlushesInboxOnTurnEnd(t *testing.T) {
	c := startCtxRun(t, t.TempDir(), State{}, time.Hour, TaskSubmitted{})
	c.waitSnap("planning", func(s Snapshot) bool { return s.State.Phase == vocab.PhasePlanning })
	c.inbox("lead-1.md", "---\nkind: term\nterm: hive\n---\nthe team\n")
	c.inbox("worker_2-1.md", "---\nkind: term\nterm: drone\n---\na worker\n")
	c.r.Send(AgentHealth{Agent: "lead", Health: "idle"})
	s := c.waitSnap("the lead's term", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindTerm) == 1 })
	// The term, wherever it sorts: its time is the file's mtime, which
	// the file system may round to before the task's constraint was added.
	for _, it := range s.Knowledge {
		if it.Kind == vocab.KindTerm && it.Title != "hive" {
			t.Errorf("merged %+v", it)
		}
	}
	<-c.r.Barrier()
	if _, err := os.Stat(notePath(c.td.Dir(), "worker_2-1.md")); err != nil {
		t.Errorf("worker_2's file was taken before its turn ended: %v", err)
	}
}

// TestRunnerRejectsInvalidInboxFile: archived as invalid, nothing merged,
// and the author's next assignment says why.
func TestRunnerRejectsInvalidInboxFile(t *testing.T) {
	c := startCtxRun(t, t.TempDir(), State{}, 20*time.Millisecond, TaskSubmitted{})
	c.waitSnap("planning", func(s Snapshot) bool { return s.State.Phase == vocab.PhasePlanning })
	c.inbox("lead-1.md", "we use sqlite")
	c.waitSnap("the note", func(s Snapshot) bool { return len(s.State.KnowledgeNotes["lead"]) == 1 })
	deadline := time.Now().Add(5 * time.Second)
	for {
		arch, _ := os.ReadDir(filepath.Join(c.store.Dir(), vocab.KnowledgeArchiveDir))
		if len(arch) == 1 && strings.Contains(arch[0].Name(), "-invalid_lead-1.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("archive: %v", arch)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ctx, _ := c.store.Load(); len(ctx.Decisions) != 0 {
		t.Errorf("invalid entry merged: %+v", ctx.Decisions)
	}
	if types := c.recordTypes(); countOf(types, "context_rejected") != 1 || countOf(types, "context_merged") != 1 {
		t.Errorf("records: %v", types) // the one merge is the task constraint
	}
}

// TestContextPersistsAcrossRestartsAndTasks: what one run merged is there
// for the resumed run, which also picks up a file written while it was
// down, and for the next task in the same workspace, whose assignments
// read the same files.
func TestContextPersistsAcrossRestartsAndTasks(t *testing.T) {
	root := t.TempDir()
	c := startCtxRun(t, root, State{}, 20*time.Millisecond, TaskSubmitted{})
	c.inbox("lead-1.md", "---\nkind: decision\ntitle: Use SQLite\n---\nsimple\n")
	c.waitSnap("the decision", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindDecision) == 1 })
	<-c.r.Barrier()
	st := c.r.Snapshot().State
	c.stop()

	// Written while no engine runs.
	writeNote(t, c.td.Dir(), "worker_1-1.md", "---\nkind: decision\ntitle: Tabs\n---\ngofmt\n")
	c2 := startCtxRun(t, root, st, 20*time.Millisecond, Resumed{})
	s := c2.waitSnap("both decisions after the restart", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindDecision) == 2 })
	if s.State.TaskID != st.TaskID {
		t.Fatalf("resumed task %s", s.State.TaskID)
	}
	<-c2.r.Barrier()
	c2.stop()

	// A new task in the same workspace sees the same context.
	c3 := startCtxRun(t, root, State{}, 20*time.Millisecond, TaskSubmitted{})
	s3 := c3.waitSnap("the next task", func(s Snapshot) bool {
		return s.State.TaskID != "" && s.State.TaskID != st.TaskID && len(s.State.Assignments["lead"].Reads) > 0
	})
	if countKind(s3.Knowledge, vocab.KindDecision) != 2 {
		t.Errorf("next task sees %+v", s3.Knowledge)
	}
	reads := s3.State.Assignments["lead"].Reads
	for _, p := range vocab.KnowledgeFiles(c3.root) {
		if !slices.Contains(reads, p) {
			t.Errorf("lead reads lack %s: %v", p, reads)
		}
	}
	// The task constraint "No cgo" was entered once, not once per task.
	if ctx, _ := c3.store.Load(); len(ctx.Constraints) != 1 {
		t.Errorf("constraints: %+v", ctx.Constraints)
	}
}

// TestRunnerDuplicateTermUpdates: a term defined again by another agent
// replaces the definition, keeps the old one in its history and logs an
// update.
func TestRunnerDuplicateTermUpdates(t *testing.T) {
	c := startCtxRun(t, t.TempDir(), State{}, 20*time.Millisecond, TaskSubmitted{})
	c.waitSnap("planning", func(s Snapshot) bool { return s.State.Phase == vocab.PhasePlanning })
	c.inbox("lead-1.md", "---\nkind: term\nterm: Hive\n---\nthe team\n")
	c.waitSnap("the term", func(s Snapshot) bool { return countKind(s.Knowledge, vocab.KindTerm) == 1 })
	c.inbox("worker_1-1.md", "---\nkind: term\nterm: hive\ndefinition: the agent team of one task\n---\n")
	s := c.waitSnap("the new definition", func(s Snapshot) bool {
		for _, it := range s.Knowledge {
			if it.Kind == vocab.KindTerm && it.Revisions == 1 {
				return true
			}
		}
		return false
	})
	if countKind(s.Knowledge, vocab.KindTerm) != 1 {
		t.Fatalf("terms: %+v", s.Knowledge)
	}
	ctx, err := c.store.Load()
	if err != nil {
		t.Fatal(err)
	}
	g := ctx.Glossary[0]
	if g.Term != "Hive" || g.Definition != "the agent team of one task" || g.AddedBy != "worker_1" ||
		len(g.History) != 1 || g.History[0].Definition != "the team" || g.History[0].AddedBy != "lead" {
		t.Errorf("glossary entry %+v", g)
	}
	<-c.r.Barrier()
	updated := false
	for _, r := range c.log.Records() {
		if r.Type == "context_merged" && r.Agent == "worker_1" && r.Details["updated"] == true {
			updated = true
		}
	}
	if !updated {
		t.Error("no context_merged update record")
	}
}

// A flood of one author's inbox notes costs at most MaxNotesInFlight events
// at a time, and another author's note is reported at once; each taken
// (archived) note lets the next through.
func TestKnowledgeWatcherFloodBounded(t *testing.T) {
	dir := t.TempDir()
	const n = 200
	for i := range n {
		writeNote(t, dir, fmt.Sprintf("worker_1-%d.md", i+1), "x")
	}
	events := make(chan Event, 4*n)
	w, err := newKnowledgeWatcher(dir, 10*time.Millisecond, time.Now, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	writeNote(t, dir, "lead-1.md", "x")
	inFlight := map[string]bool{}
	taken := 0
	deadline := time.After(20 * time.Second)
	leadSeen := false
	for taken < n {
		select {
		case e := <-events:
			ks := e.(KnowledgeSubmitted)
			if ks.Agent == "lead" {
				leadSeen = true
				continue
			}
			inFlight[ks.Path] = true
			if len(inFlight) > MaxNotesInFlight {
				t.Fatalf("%d notes in flight, at most %d", len(inFlight), MaxNotesInFlight)
			}
		case <-deadline:
			t.Fatalf("%d of %d notes taken, %d in flight", taken, n, len(inFlight))
		}
		if len(inFlight) == MaxNotesInFlight || taken+len(inFlight) == n {
			for p := range inFlight {
				if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
					t.Fatal(err)
				}
				delete(inFlight, p)
				taken++
			}
		}
	}
	if !leadSeen {
		t.Fatal("the lead's note was not reported during the flood")
	}
}

// A note is its outbox owner's whatever its name; files that are not notes
// (below knowledge/, or in a symlinked outbox) are not reported.
func TestKnowledgeWatcherAuthorByPath(t *testing.T) {
	dir := t.TempDir()
	writeNote(t, dir, "worker_1-x.md", "")
	if err := os.Rename(notePath(dir, "worker_1-x.md"), filepath.Join(filepath.Dir(notePath(dir, "worker_1-x.md")), "lead-1.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents", "worker_2", "knowledge", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "worker_2", "knowledge", "sub", "1.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	writeNote(t, other, "reviewer-1.md", "x")
	if err := os.Symlink(filepath.Join(other, "agents", "reviewer"), filepath.Join(dir, "agents", "reviewer")); err != nil {
		t.Fatal(err)
	}
	var got []KnowledgeSubmitted
	w, err := newKnowledgeWatcher(dir, time.Hour, time.Now, func(e Event) { got = append(got, e.(KnowledgeSubmitted)) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.fsw.Close()
	w.flush("")
	if len(got) != 1 || got[0].Agent != "worker_1" || got[0].Path != "agents/worker_1/knowledge/lead-1.md" {
		t.Fatalf("reported %+v, want worker_1's lead-1.md only", got)
	}
}
