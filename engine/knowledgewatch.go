package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// KnowledgeFiles is what the Runner needs from the shared knowledge
// (workspace.KnowledgeStore).
type KnowledgeFiles interface {
	// Merge adds a validated entry (idempotent per source).
	Merge(e vocab.InboxEntry, by, taskID, source string, at time.Time) (workspace.MergeResult, error)
	// Archive moves a note (from: absolute, in its author's outbox; to:
	// relative to the knowledge dir).
	Archive(from, to string) error
	// Items lists every entry, newest first (for snapshots).
	Items() ([]workspace.KnowledgeItem, error)
}

var _ KnowledgeFiles = (*workspace.KnowledgeStore)(nil)

// knowledgeWatcher reports complete shared-knowledge notes in the outboxes
// of the task (agents/<id>/knowledge/*.md, triggers.Knowledge) as
// KnowledgeSubmitted events, their author being the outbox's owner. A file
// is complete when it has been unchanged for the quiet period, or at once
// when an agent's turn ended (flush). Its state is guarded by a mutex
// rather than owned by its goroutine, so the runner can flush
// synchronously: the entries an agent wrote during its turn are then
// queued before anything the task-dir watcher reports for that turn (its
// done marker), and the next assignment already sees them.
type knowledgeWatcher struct {
	dir   string // the task dir; files are keyed by their path relative to it
	clock func() time.Time
	emit  func(Event)
	fsw   *fsnotify.Watcher

	mu      sync.Mutex
	files   *quietTracker
	watched map[string]bool // directories added to fsw
	kick    chan struct{}
	// gate bounds each author's notes in flight (flood.go): a flood of
	// notes is neither read whole at every scan nor queued ahead of the
	// task's own events.
	gate floodGate
}

func newKnowledgeWatcher(taskDir string, quiet time.Duration, clock func() time.Time, emit func(Event)) (*knowledgeWatcher, error) {
	if err := os.MkdirAll(filepath.Join(taskDir, vocab.OutboxesDir), 0o755); err != nil {
		return nil, fmt.Errorf("engine: knowledge outboxes: %w", err)
	}
	fsw, err := fsnotify.NewBufferedWatcher(64)
	if err != nil {
		return nil, fmt.Errorf("engine: knowledge watcher: %w", err)
	}
	w := &knowledgeWatcher{dir: taskDir, clock: clock, emit: emit, fsw: fsw,
		files: newQuietTracker(quiet), watched: map[string]bool{}, kick: make(chan struct{}, 1),
		gate: newGate(MaxNotesInFlight, noteOwner)}
	if err := w.watch(vocab.OutboxesDir); err != nil {
		_ = fsw.Close()
		return nil, err
	}
	return w, nil
}

// noteOwner is the outbox owner of a note (rel to the task dir).
func noteOwner(rel string) (vocab.AgentID, bool) {
	ref, ok := triggers.Parse(rel)
	return ref.Owner, ok && ref.Kind == triggers.Knowledge
}

// watch adds the directory rel (slash, relative to the task dir) to fsw
// once. Called under mu or before the watcher runs.
func (w *knowledgeWatcher) watch(rel string) error {
	if w.watched[rel] {
		return nil
	}
	if err := w.fsw.Add(filepath.Join(w.dir, filepath.FromSlash(rel))); err != nil {
		return fmt.Errorf("engine: watch %s: %w", rel, err)
	}
	w.watched[rel] = true
	return nil
}

// run scans once, then on every change and when a pending file is due,
// until ctx is done.
func (w *knowledgeWatcher) run(ctx context.Context) {
	defer w.fsw.Close()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := w.scan(false, "")
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(w.clock()), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.fsw.Events:
			if !ok {
				return
			}
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// Repair a lost watch; the scan finds what was missed.
			w.mu.Lock()
			clear(w.watched)
			_ = w.watch(vocab.OutboxesDir)
			w.mu.Unlock()
		case <-w.kick:
		case <-timer.C:
		}
	}
}

// flush reports the notes of agent (all notes when agent is "") now,
// without waiting for the quiet period: that agent's turn ended, so what
// it wrote is complete. Safe from any goroutine.
func (w *knowledgeWatcher) flush(agent vocab.AgentID) { w.scan(true, agent) }

// notes lists the notes in the outboxes (slash paths relative to the task
// dir), watching every outbox and knowledge/ directory it passes.
func (w *knowledgeWatcher) notes() []string {
	var out []string
	owners, _ := os.ReadDir(filepath.Join(w.dir, vocab.OutboxesDir))
	for _, o := range owners {
		if !o.IsDir() || !vocab.ValidID(o.Name()) {
			continue // a symlink or a stray file is no outbox
		}
		outbox := vocab.OutboxesDir + "/" + o.Name()
		_ = w.watch(outbox)
		kdir := outbox + "/" + triggers.Knowledge.Dir()
		fi, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(kdir)))
		if err != nil || !fi.IsDir() {
			continue
		}
		_ = w.watch(kdir)
		entries, _ := os.ReadDir(filepath.Join(w.dir, filepath.FromSlash(kdir)))
		for _, e := range entries {
			rel := kdir + "/" + e.Name()
			if _, ok := noteOwner(rel); ok && !e.IsDir() {
				out = append(out, rel)
			}
		}
	}
	return out
}

// scan looks at every note, reports the complete ones not reported yet,
// and returns when the next pending file becomes due (zero: none). With
// turnEnded, the files of agent ("" = all) count as complete at once.
func (w *knowledgeWatcher) scan(turnEnded bool, agent vocab.AgentID) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	now := w.clock()
	for _, rel := range w.notes() {
		if w.gate.full(rel) {
			seen[rel] = true // waits, unread, until one of its author's is taken
			continue
		}
		full := filepath.Join(w.dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if f := w.files.files[rel]; f != nil && f.reported() && f.sig.size == fi.Size() && f.sig.mtime.Equal(fi.ModTime()) && f.sig.ino == inodeOf(fi) {
			seen[rel] = true // reported, not taken yet: not read again
			continue
		}
		// Bounded like every file an agent writes: a huge one is read no
		// further than the limit (the entry parser rejects it as too big).
		content, err := readBounded(full)
		if err != nil {
			continue
		}
		seen[rel] = true
		f := w.files.see(rel, sigOf(fi, content), now)
		author, _ := noteOwner(rel)
		if !w.files.ready(f, now, turnEnded && (agent == "" || agent == author)) {
			continue
		}
		if !w.gate.admit(rel) {
			f.hold(time.Time{})
			continue
		}
		f.report()
		w.emit(KnowledgeSubmitted{Path: rel, Content: content,
			Agent: author, ModTime: f.sig.mtime, When: When{At: w.clock()}})
	}
	w.files.keep(seen) // archived: a file coming back under that name is new
	if len(w.gate.keep(seen)) > 0 {
		// A place in flight freed: scan again for the waiting.
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return w.files.next()
}

// ---- runner glue ----

// startKnowledge loads the shared knowledge into the snapshot and, unless
// watching is off or there is no task dir, starts the notes watcher.
func (r *Runner) startKnowledge(ctx context.Context, wg *sync.WaitGroup) error {
	if r.cfg.Knowledge == nil {
		return nil
	}
	r.loadKnowledge()
	if r.cfg.NoWatch || r.cfg.TaskDir == nil {
		return nil
	}
	w, err := newKnowledgeWatcher(r.cfg.TaskDir.Dir(), r.cfg.QuietPeriod, r.cfg.Clock, r.Send)
	if err != nil {
		return err
	}
	r.cw = w
	wg.Go(func() { w.run(ctx) })
	return nil
}

// flushKnowledge reports the notes an agent finished writing.
func (r *Runner) flushKnowledge(agent vocab.AgentID) {
	if r.cw != nil {
		r.cw.flush(agent)
	}
}

// loadKnowledge refreshes the snapshot's knowledge list.
func (r *Runner) loadKnowledge() {
	items, err := r.cfg.Knowledge.Items()
	if err != nil {
		r.fail("load_context", "", err)
		return
	}
	r.smu.Lock()
	r.snap.Knowledge = items
	r.smu.Unlock()
}

// applyKnowledge carries out MergeKnowledge and ArchiveKnowledge.
func (r *Runner) applyKnowledge(e Effect) {
	if r.cfg.Knowledge == nil {
		return
	}
	switch e := e.(type) {
	case MergeKnowledge:
		res, err := r.cfg.Knowledge.Merge(e.Entry, string(e.Agent), e.TaskID, e.Source, e.At)
		if err != nil {
			// The note stays: a restart (or a fixed file) retries.
			r.fail("merge_context", e.Agent, err)
			return
		}
		if res.Added || res.Updated {
			r.record(vocab.EventRecord{Time: r.cfg.Clock(), Type: vocab.RecordContextMerged, Task: r.state.TaskID, Agent: e.Agent,
				Details: map[string]any{"kind": res.Kind, "id": res.ID, "title": e.Entry.Title, "updated": res.Updated, "path": e.From}})
			r.loadKnowledge()
		}
		if e.From != "" {
			if err := r.archiveNote(e.From, e.To); err != nil {
				r.fail("archive_context", e.Agent, err)
			}
		}
	case ArchiveKnowledge:
		if err := r.archiveNote(e.From, e.To); err != nil {
			r.fail("archive_context", "", err)
		}
	default: // apply passes only these two
	}
}

// archiveNote archives the note from (relative to the task dir).
func (r *Runner) archiveNote(from, to string) error {
	if r.cfg.TaskDir == nil {
		return fmt.Errorf("engine: archive %s: no task dir", from)
	}
	return r.cfg.Knowledge.Archive(filepath.Join(r.cfg.TaskDir.Dir(), filepath.FromSlash(from)), to)
}
