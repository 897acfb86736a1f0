package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// WatcherConfig configures a Watcher.
type WatcherConfig struct {
	// Dir is the task directory to watch.
	Dir string
	// QuietPeriod is how long a file must stay unchanged (size, mtime and
	// content) to count as complete when no turn-ended signal came; taken
	// as given (config's quiet_period_ms).
	QuietPeriod time.Duration
	// MaxWait bounds how long a file that looks unfinished (an unclosed
	// ``` fence) is held back before it is reported anyway, so an agent
	// that never closes its fence still gets an answer (default 20×QuietPeriod).
	MaxWait time.Duration
	// Clock stamps emitted events (default time.Now).
	Clock func() time.Time
	// ReadDone reads and validates agent's done marker of subtask (and the
	// output it names). Nil means: parse the marker JSON only.
	ReadDone func(agent vocab.AgentID, subtask string) (vocab.DoneMarker, error)
	// Emit receives TriggerCompleted and SubtaskDone events. It is called
	// from the watcher goroutine and must not block for long.
	Emit func(Event)
}

// Watcher turns files appearing in a task directory into engine events. It
// watches the files of the trigger table (workspace/triggers): the user's at
// the task dir root and the agents' in their outboxes agents/<id>/ (and
// their friction/ and outputs/, including directories created later). A
// file is reported once it is complete: unchanged for the quiet period, or
// at once when its writer's turn ended (Flush/FlushAgent). On an fsnotify overflow or error it
// rescans the directory, so no trigger is ever missed; it also scans once at
// start, which is how a restarted engine finds triggers written while it was
// down. Each distinct content of a path is reported once; a path that
// disappears (archived) and comes back is reported again.
type Watcher struct {
	cfg WatcherConfig
	fsw *fsnotify.Watcher

	mu          sync.Mutex
	flushAgents map[vocab.AgentID]bool // agents whose files must be checked now; "" = all
	rescanReq   bool
	kick        chan struct{}
	scanReq     chan scanRequest // ScanComplete, served by Run
	done        chan struct{}    // closed when Run returns

	// Owned by the Run goroutine.
	files *quietTracker
	dirty map[string]bool // touched by fsnotify events, not yet observed
	// flood bounds each outbox's friction files in flight (flood.go).
	flood floodGate
}

// watchSig identifies one version of a file's content: a file written
// anew (a new inode) is a new version even with the same bytes and mtime.
type watchSig struct {
	size  int64
	mtime time.Time
	ino   uint64
	mode  fs.FileMode
	sum   [32]byte
}

// fileProblem says why the file at rel (as Lstat saw it) cannot be taken
// as a trigger or done marker, in words that tell its writer what to do;
// "" when it can be read.
func fileProblem(rel string, fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Sprintf("%s is a symbolic link; Hivemind never follows links there: remove it and write %s as a regular file", rel, rel)
	case fi.IsDir():
		return fmt.Sprintf("%s is a directory; remove it and write %s as a regular file", rel, rel)
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file; remove it and write %s as a regular file", rel, rel)
	case fi.Size() > flow.MaxTriggerBytes:
		return fmt.Sprintf("%s is too large (%d bytes; at most %d): write it again, shorter (put long material in other files and refer to them)", rel, fi.Size(), flow.MaxTriggerBytes)
	}
	return ""
}

// sigOf is the signature of the file fi with content (nil: not read).
func sigOf(fi fs.FileInfo, content []byte) watchSig {
	sig := watchSig{size: fi.Size(), mtime: fi.ModTime(), ino: inodeOf(fi), mode: fi.Mode().Type()}
	if content != nil {
		sig.sum = sha256.Sum256(content)
	}
	return sig
}

// inodeOf returns the file's inode number (0 where unknown).
func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// NewWatcher creates a watcher on cfg.Dir. Call Run to start it.
func NewWatcher(cfg WatcherConfig) (*Watcher, error) {
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 20 * cfg.QuietPeriod
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Emit == nil {
		return nil, errors.New("engine: watcher: Emit is nil")
	}
	fsw, err := fsnotify.NewBufferedWatcher(256)
	if err != nil {
		return nil, fmt.Errorf("engine: watcher: %w", err)
	}
	if err := fsw.Add(cfg.Dir); err != nil {
		_ = fsw.Close()
		return nil, fmt.Errorf("engine: watch %s: %w", cfg.Dir, err)
	}
	return &Watcher{
		cfg:         cfg,
		fsw:         fsw,
		flushAgents: map[vocab.AgentID]bool{},
		kick:        make(chan struct{}, 1),
		scanReq:     make(chan scanRequest),
		done:        make(chan struct{}),
		files:       newQuietTracker(cfg.QuietPeriod),
		dirty:       map[string]bool{},
		flood:       newFloodGate(),
	}, nil
}

// Flush checks every pending file now instead of waiting for the quiet
// period: the runner calls it when an agent's turn ended. Safe from any
// goroutine.
func (w *Watcher) Flush() { w.FlushAgent("") }

// FlushAgent is Flush restricted to the files in agent's outbox, so one
// agent's turn ending does not cut short a file another agent is still
// writing. An empty agent flushes all.
func (w *Watcher) FlushAgent(agent vocab.AgentID) {
	w.mu.Lock()
	w.flushAgents[agent] = true
	w.mu.Unlock()
	w.poke()
}

// Rescan asks the watcher to walk the directory again and derive events
// from what is there (what it does itself on an overflow). Safe from any
// goroutine.
func (w *Watcher) Rescan() {
	w.mu.Lock()
	w.rescanReq = true
	w.mu.Unlock()
	w.poke()
}

func (w *Watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run scans the directory, then reports completed files until ctx is done.
// It closes the fsnotify watcher on return.
func (w *Watcher) Run(ctx context.Context) error {
	defer close(w.done)
	defer w.fsw.Close()
	w.rescan()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.armTimer(timer)
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return nil
			}
			// Debounce: take everything already queued, then look at each
			// touched file once, so a burst of writes costs one read per
			// file, not one per event.
			w.handleFS(ev)
			w.drainFS()
			w.observeDirty()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return nil
			}
			// Overflow or any other error: events may be lost, so derive
			// them from what is on disk.
			_ = err
			w.rescan()
		case req := <-w.scanReq:
			req.reply <- w.scanComplete(req.ctx)
		case <-w.kick:
			w.mu.Lock()
			agents := w.flushAgents
			w.flushAgents = map[vocab.AgentID]bool{}
			rescan := w.rescanReq
			w.rescanReq = false
			w.mu.Unlock()
			if rescan {
				w.rescan()
			}
			if len(agents) > 0 {
				w.flush(agents)
			}
		case <-timer.C:
		}
		w.checkDue()
	}
}

func (w *Watcher) drainFS() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handleFS(ev)
		default:
			return
		}
	}
}

// armTimer sets the timer to the earliest time a pending file could become
// complete.
func (w *Watcher) armTimer(t *time.Timer) {
	next := w.files.next()
	wait := time.Hour
	if !next.IsZero() {
		wait = max(next.Sub(w.cfg.Clock()), 0)
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(wait)
}

// handleFS records one fsnotify event.
func (w *Watcher) handleFS(ev fsnotify.Event) {
	rel, ok := w.rel(ev.Name)
	if !ok {
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && watchDirWanted(rel) {
			// A new subdirectory: watch it and pick up whatever was
			// written into it before the watch existed.
			for _, f := range w.addTree(ev.Name) {
				w.observe(f, false)
			}
			return
		}
		// Any other directory is ignored, except one named like a trigger
		// (plan.md created as a directory): its writer is told.
	}
	if !watchFileWanted(rel) {
		return
	}
	w.dirty[rel] = true
}

// observeDirty observes each file touched since the last call.
func (w *Watcher) observeDirty() {
	// Observing may mark more files (release): until none is left.
	for len(w.dirty) > 0 {
		for rel := range w.dirty {
			delete(w.dirty, rel)
			w.observe(rel, false)
		}
	}
}

// rescan walks the watched tree, (re-)adding watches and observing every
// candidate file; records of files that vanished are dropped.
func (w *Watcher) rescan() {
	seen := map[string]bool{}
	for _, rel := range w.candidates() {
		seen[rel] = true
	}
	w.files.keep(seen)
	for _, rel := range w.flood.keep(seen) {
		w.dirty[rel] = true
	}
	for rel := range seen {
		w.observe(rel, false)
	}
}

// candidates lists the trigger and marker files present now (relative
// paths), adding watches on every wanted directory on the way.
func (w *Watcher) candidates() []string {
	var found []string
	// Re-adding is a no-op for a live watch and repairs a lost one.
	_ = w.fsw.Add(w.cfg.Dir)
	entries, _ := os.ReadDir(w.cfg.Dir)
	for _, e := range entries {
		// A directory named like a trigger is a candidate too: its writer
		// gets told (fileProblem), not left waiting for a timeout.
		if watchFileWanted(e.Name()) {
			found = append(found, e.Name())
		}
	}
	return append(found, w.addTree(filepath.Join(w.cfg.Dir, vocab.OutboxesDir))...)
}

// addTree watches dir and its subdirectories and returns the candidate
// files found in them (relative paths).
func (w *Watcher) addTree(dir string) []string {
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, ok := w.rel(p)
		if !ok {
			return nil
		}
		if d.IsDir() {
			if !watchDirWanted(rel) {
				// A directory named like a trigger is a candidate: its
				// writer gets told (fileProblem).
				if watchFileWanted(rel) {
					found = append(found, rel)
				}
				return filepath.SkipDir
			}
			_ = w.fsw.Add(p)
			return nil
		}
		if watchFileWanted(rel) {
			found = append(found, rel)
		}
		return nil
	})
	return found
}

// flush checks the files of the given agents' outboxes, treating a stable read as
// complete at once. It lists the directory rather than trusting the
// notifications received so far: the writer's last fsnotify event may still
// be in flight when its turn-ended signal arrives.
func (w *Watcher) flush(agents map[vocab.AgentID]bool) {
	w.drainFS()
	w.observeDirty()
	for _, rel := range w.candidates() {
		ref, _ := triggers.Parse(rel)
		if agents[""] || ref.Owner == "" || agents[ref.Owner] {
			w.observe(rel, true)
		}
	}
}

// checkDue reports files that have been quiet long enough.
func (w *Watcher) checkDue() {
	for _, rel := range w.files.due(w.cfg.Clock()) {
		w.observe(rel, false)
	}
}

// observe reads rel now and reports it when complete. With turnEnded the
// quiet period is skipped.
func (w *Watcher) observe(rel string, turnEnded bool) {
	full := filepath.Join(w.cfg.Dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil {
		w.files.forget(rel)
		w.release(rel)
		return
	}
	var content []byte
	problem := fileProblem(rel, fi)
	if problem == "" {
		content, err = readBounded(full)
		if err != nil {
			w.files.forget(rel)
			w.release(rel)
			return
		}
	}
	sig := sigOf(fi, content)
	now := w.cfg.Clock()
	f := w.files.see(rel, sig, now)
	if !w.files.ready(f, now, turnEnded) {
		return
	}
	if problem == "" && markerIncomplete(rel, content) {
		// A done marker that is a cut-short JSON object is being written
		// (perhaps in pieces by a quiet agent): never read half of it. An
		// agent that stops there is caught as stalled.
		f.hold(time.Time{})
		return
	}
	if problem == "" && !turnEnded && watchLooksUnfinished(rel, content) && now.Sub(f.first) < w.cfg.MaxWait {
		f.hold(f.first.Add(w.cfg.MaxWait))
		return
	}
	if !w.flood.admit(rel) {
		// Its outbox has too many in flight: looked at again when one
		// is taken (release), not by time.
		f.hold(time.Time{})
		return
	}
	f.report()
	w.cfg.Emit(w.event(rel, content, sig, problem))
}

// release frees rel's place in flight (it was taken: archived) and marks
// the files it kept waiting as touched.
func (w *Watcher) release(rel string) {
	for _, r := range w.flood.release(rel) {
		w.dirty[r] = true
	}
}

// readBounded reads a file of at most MaxTriggerBytes (a file that grew
// past it meanwhile is cut; its next version is seen again).
func readBounded(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, flow.MaxTriggerBytes+1))
}

// markerIncomplete reports a done marker whose content is empty or a
// JSON value cut short (as opposed to one that is wrong).
func markerIncomplete(rel string, content []byte) bool {
	if !strings.HasSuffix(rel, ".done") {
		return false
	}
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(content)).Decode(&v)
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// event is the engine event of a complete file: SubtaskDone for a done
// marker, TriggerCompleted for anything else. problem (fileProblem) makes
// it a rejection.
func (w *Watcher) event(rel string, content []byte, sig watchSig, problem string) Event {
	at := w.cfg.Clock()
	if ref, ok := triggers.Parse(rel); ok && ref.Kind == triggers.Done {
		// The writer is the outbox owner; the marker must say so too.
		st := ref.Item
		ev := SubtaskDone{Subtask: st, Agent: ref.Owner, When: When{At: at}}
		if problem != "" {
			ev.Problem = problem
			return ev
		}
		var m vocab.DoneMarker
		var err error
		if w.cfg.ReadDone != nil {
			m, err = w.cfg.ReadDone(ref.Owner, st)
		} else if err = json.Unmarshal(content, &m); err == nil && m.AgentID != ref.Owner {
			err = fmt.Errorf("agent_id is %q but the marker is in the outbox of %s", m.AgentID, ref.Owner)
		}
		if err != nil {
			ev.Problem = err.Error()
		} else {
			ev.OK = true
		}
		return ev
	}
	ref, _ := triggers.Parse(rel)
	return TriggerCompleted{Path: rel, Content: content, ModTime: sig.mtime, Inode: sig.ino, Problem: problem, Agent: ref.Owner, When: When{At: at}}
}

// scanRequest asks Run for ScanComplete's answer.
type scanRequest struct {
	ctx   context.Context
	reply chan []Event
}

// ScanComplete returns the events of the trigger files and done markers
// complete on disk now and not reported yet (unchanged for the quiet
// period by their modification time, and not visibly unfinished), oldest
// first, instead of emitting them; they count as reported, so they are not
// emitted later. A file changed less than a quiet period ago is waited for
// (at most one quiet period, or until ctx is done) and taken if it stayed
// unchanged; one still changing is left to the usual path. A restarted
// runner hands these events to Step with Resumed, so work already answered
// on disk is taken before anything is re-sent. The scan runs on Run's
// goroutine; safe from any goroutine, nil when Run is not running or ctx
// ends first.
func (w *Watcher) ScanComplete(ctx context.Context) []Event {
	req := scanRequest{ctx: ctx, reply: make(chan []Event, 1)}
	select {
	case w.scanReq <- req:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return nil
	}
	return <-req.reply
}

func (w *Watcher) scanComplete(ctx context.Context) []Event {
	type found struct {
		rel     string
		content []byte
		mtime   time.Time
		sig     watchSig
		problem string
	}
	cands := w.candidates()
	// Written just before the restart (a kill right after an agent's
	// turn): wait until the newest is a quiet period old.
	var wait time.Duration
	for _, rel := range cands {
		if fi, err := os.Lstat(filepath.Join(w.cfg.Dir, filepath.FromSlash(rel))); err == nil {
			wait = max(wait, min(w.cfg.QuietPeriod-time.Since(fi.ModTime()), w.cfg.QuietPeriod))
		}
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	now := time.Now()
	var files []found
	for _, rel := range cands {
		full := filepath.Join(w.cfg.Dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		if err != nil || now.Sub(fi.ModTime()) < w.cfg.QuietPeriod {
			continue
		}
		var content []byte
		problem := fileProblem(rel, fi)
		if problem == "" {
			content, err = readBounded(full)
			if err != nil || int64(len(content)) != fi.Size() || watchLooksUnfinished(rel, content) {
				continue
			}
		}
		sig := sigOf(fi, content)
		if w.files.reportedAs(rel, sig) {
			continue
		}
		if !w.flood.admit(rel) {
			w.files.see(rel, sig, w.cfg.Clock()).hold(time.Time{})
			continue
		}
		w.files.see(rel, sig, w.cfg.Clock()).report()
		files = append(files, found{rel, content, fi.ModTime(), sig, problem})
	}
	slices.SortStableFunc(files, func(a, b found) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.rel, b.rel)
	})
	var evs []Event
	for _, f := range files {
		evs = append(evs, w.event(f.rel, f.content, f.sig, f.problem))
	}
	return evs
}

// rel returns p relative to the task dir with forward slashes.
func (w *Watcher) rel(p string) (string, bool) {
	r, err := filepath.Rel(w.cfg.Dir, p)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// watchDirWanted reports whether a directory (relative path) is watched:
// the outboxes and their subdirectories of the trigger table.
func watchDirWanted(rel string) bool { return triggers.WatchedDir(rel) }

// watchFileWanted reports whether a file (relative path) may be a trigger or
// a done marker: a watched row of the trigger table.
func watchFileWanted(rel string) bool {
	ref, ok := triggers.Parse(rel)
	if !ok {
		return false
	}
	spec, _ := triggers.Lookup(ref.Kind)
	return spec.Watched
}

// watchLooksUnfinished reports content that is visibly cut short: a
// markdown file with an unclosed ``` fence, or a done marker that is not
// yet a complete JSON object.
func watchLooksUnfinished(rel string, content []byte) bool {
	if strings.HasSuffix(rel, ".done") {
		return !json.Valid(content)
	}
	open := false
	for line := range bytes.Lines(content) {
		if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("```")) {
			open = !open
		}
	}
	return open
}
