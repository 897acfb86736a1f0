package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// KeepBackups is how many rolling state.json backups are kept.
const KeepBackups = 10

const (
	backupPrefix  = "state_"
	backupSuffix  = ".json"
	corruptPrefix = "corrupt_state_"
	backupTime    = "20060102T150405.000000000Z"
	writerLock    = "state-writer.lock"
)

// StateStore is the only writer of a task's state.json. OpenStateStore takes
// an exclusive flock on locks/state-writer.lock, so a second store for the
// same task, in this process or another, cannot be opened while one is
// (ErrLocked); the engine additionally holds the workspace lock. Its methods
// are safe for concurrent use.
type StateStore struct {
	mu      sync.Mutex
	t       *TaskDir
	path    string
	backups string
	lock    *os.File
	closed  bool
	now     func() time.Time
	// blobs are the hashes of blobs known to be stored (blob.go).
	blobs map[string]bool
	// sums are the hashes of the state.json contents the engine wrote
	// last (statesum.go); nil: none recorded, nothing checked.
	sums []string
}

// LoadResult says where the loaded state came from.
type LoadResult struct {
	// Restored is true when state.json was missing, empty, torn or invalid
	// and the state was restored from the backup at From.
	Restored bool
	From     string
	// Problem describes what was wrong with state.json when Restored.
	Problem string
	// Fresh is true when there was neither a state.json nor a backup: the
	// returned State is the zero value.
	Fresh bool
	// Lost says why state.json could not be used although it parses: it
	// references content (blobs/) that is missing or corrupt (ErrBlob),
	// or it is not what the engine last wrote (an agent edited it).
	// The State is then zero, as with Fresh, and nothing was changed on
	// disk: the caller rebuilds the state from events.jsonl or refuses.
	// Backups are not tried: an older one would silently redo work.
	Lost string
	// RemovedTemps counts the temp files of atomic writes (e.g.
	// .state.json.tmp-123) a killed writer had left in the task directory
	// and that were removed on open.
	RemovedTemps int
}

// tempDirs are the task directories only the engine writes with atomic
// writes (the state store's holder is the task's only engine): their
// leftover temp files are removed when the store is opened. Directories
// agents write (outputs, friction) are left alone.
var tempDirs = []string{".", vocab.AssignmentsDir, vocab.HeartbeatsDir, vocab.BackupsDir, vocab.ReviewsDir, BlobsDir}

// OpenStateStore opens the single writer of t's state.json and loads the
// state. A missing, empty, torn or invalid state.json is replaced by the
// newest backup that parses (Restored, From); the bad file is kept as
// backups/corrupt_state_<time>.json. With no state.json and no backup the
// result is Fresh and the zero State. A corrupt state.json with no valid
// backup is ErrCorruptState, and nothing is changed on disk.
func OpenStateStore(t *TaskDir) (*StateStore, vocab.State, LoadResult, error) {
	lockPath, err := t.Path(filepath.Join(vocab.LocksDir, writerLock))
	if err != nil {
		return nil, vocab.State{}, LoadResult{}, fmt.Errorf("workspace: open state: %w", err)
	}
	f, err := tryLockFile(lockPath)
	if err != nil {
		return nil, vocab.State{}, LoadResult{}, fmt.Errorf("workspace: open state of task %s: another state writer: %w", t.id, err)
	}
	s := &StateStore{t: t, path: filepath.Join(t.dir, vocab.StateFile), backups: filepath.Join(t.dir, vocab.BackupsDir), lock: f, now: time.Now, blobs: map[string]bool{}}
	// state.json itself is read with O_NOFOLLOW and replaced by rename, so
	// a symlink planted there is treated as a corrupt state, never followed.
	_ = writeLockInfo(f, lockInfo{PID: os.Getpid(), Host: hostname(), Start: time.Now().UTC(), Owner: "state writer"})
	if _, err := t.Path(vocab.BackupsDir); err != nil {
		_ = s.Close()
		return nil, vocab.State{}, LoadResult{}, fmt.Errorf("workspace: open state: %w", err)
	}
	if s.sums, err = readSums(t); err != nil {
		_ = s.Close()
		return nil, vocab.State{}, LoadResult{}, err
	}
	st, res, err := s.load()
	if err != nil {
		_ = s.Close()
		return nil, vocab.State{}, LoadResult{}, err
	}
	// Holding the writer lock, no other engine writes this task: a temp
	// file of an atomic write here is a leftover of a killed one. Best
	// effort: one that cannot be removed is harmless, only clutter.
	for _, d := range tempDirs {
		n, _ := removeAtomicTemps(filepath.Join(t.dir, d))
		res.RemovedTemps += n
	}
	return s, st, res, nil
}

// Close releases the writer lock. The store cannot be used afterwards.
func (s *StateStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return unlockFile(s.lock)
}

// Path returns the absolute path of state.json.
func (s *StateStore) Path() string { return s.path }

func (s *StateStore) load() (vocab.State, LoadResult, error) {
	st, from, problem, err := readState(s.t)
	if errors.Is(err, ErrBlob) {
		return vocab.State{}, LoadResult{Lost: err.Error()}, nil
	}
	if errors.Is(err, ErrStateEdited) {
		// Not obeyed: the caller rebuilds the state from events.jsonl;
		// the file is moved aside by the next Save.
		return vocab.State{}, LoadResult{Lost: problem}, nil
	}
	if err != nil {
		return vocab.State{}, LoadResult{}, err
	}
	if st == nil {
		return vocab.State{}, LoadResult{Fresh: true}, nil
	}
	if from == "" {
		return *st, LoadResult{}, nil
	}
	// Restore: keep the bad file for inspection, then put the backup's
	// bytes in place.
	if _, err := os.Lstat(s.path); err == nil {
		aside := filepath.Join(s.backups, corruptPrefix+s.now().UTC().Format(backupTime)+".json")
		if err := os.Rename(s.path, aside); err != nil {
			return vocab.State{}, LoadResult{}, fmt.Errorf("workspace: restore state of task %s: %w", s.t.id, err)
		}
	}
	data, err := readNoFollowMax(from, maxStateSize)
	if err != nil {
		return vocab.State{}, LoadResult{}, fmt.Errorf("workspace: restore state of task %s: %w", s.t.id, err)
	}
	if err := WriteFileAtomic(s.path, data, 0o644); err != nil {
		return vocab.State{}, LoadResult{}, fmt.Errorf("workspace: restore state of task %s: %w", s.t.id, err)
	}
	return *st, LoadResult{Restored: true, From: from, Problem: problem}, nil
}

// readState reads the task's state without changing anything on disk. It
// returns the state from state.json (from == ""), or from the newest valid
// backup (from = its path, problem = what was wrong), or nil when there is
// neither state.json nor any backup. A bad state.json without a valid
// backup is ErrCorruptState. A state.json that references a missing or
// corrupt blob is ErrBlob (no backup is tried).
func readState(t *TaskDir) (st *vocab.State, from, problem string, err error) {
	path := filepath.Join(t.dir, vocab.StateFile)
	data, rerr := readNoFollowMax(path, maxStateSize)
	missing := false
	switch {
	case errors.Is(rerr, errTooLarge):
		// Too large is not corrupt: restoring an older backup would
		// silently redo work. Report it, restore nothing.
		return nil, "", "", fmt.Errorf("workspace: read state of task %s: %w", t.id, rerr)
	case rerr == nil:
		raw := data
		data, rerr = resolveBlobs(t.dir, data)
		if rerr != nil {
			return nil, "", "", fmt.Errorf("workspace: read state of task %s: %w", t.id, rerr)
		}
		s, perr := ParseState(data, t.id)
		if perr == nil {
			if sums, err := readSums(t); err != nil || (sums != nil && !slices.Contains(sums, stateSum(raw))) {
				problem := fmt.Sprintf("state.json (sha256 %.12s…) is not what Hivemind last wrote there: it was changed outside Hivemind", stateSum(raw))
				return nil, "", problem, fmt.Errorf("workspace: read state of task %s: %s: %w", t.id, problem, ErrStateEdited)
			}
			return &s, "", "", nil
		}
		problem = "state.json: " + perr.Error()
	case errors.Is(rerr, fs.ErrNotExist):
		missing = true
		problem = "state.json is missing"
	case errors.Is(rerr, ErrSymlink):
		problem = "state.json is a symlink"
	case errors.Is(rerr, syscall.EACCES) || errors.Is(rerr, syscall.EPERM) || errors.Is(rerr, syscall.EIO):
		// Unreadable is not corrupt: report it, restore nothing.
		return nil, "", "", fmt.Errorf("workspace: read state of task %s: %w", t.id, rerr)
	default:
		problem = "state.json: " + rerr.Error()
	}
	backups, err := listBackups(filepath.Join(t.dir, vocab.BackupsDir))
	if err != nil {
		return nil, "", "", fmt.Errorf("workspace: read state of task %s: %w", t.id, err)
	}
	if missing && len(backups) == 0 {
		return nil, "", "", nil
	}
	for i := len(backups) - 1; i >= 0; i-- {
		data, err := readNoFollowMax(backups[i], maxStateSize)
		if err != nil {
			continue
		}
		if data, err = resolveBlobs(t.dir, data); err != nil {
			continue
		}
		if s, err := ParseState(data, t.id); err == nil {
			return &s, backups[i], problem, nil
		}
	}
	return nil, "", "", fmt.Errorf("workspace: read state of task %s: %s (%d backups, none valid): %w", t.id, problem, len(backups), ErrCorruptState)
}

// ParseState parses and validates state.json content: one JSON object with
// a task_id (equal to taskID when taskID is not empty). An unknown phase is
// not rejected here: a newer engine may have written it.
func ParseState(data []byte, taskID string) (vocab.State, error) {
	var st vocab.State
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return st, errors.New("empty")
	}
	if trimmed[0] != '{' {
		return st, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(trimmed, &st); err != nil {
		return vocab.State{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if st.TaskID == "" {
		return vocab.State{}, errors.New("task_id missing")
	}
	if taskID != "" && st.TaskID != taskID {
		return vocab.State{}, fmt.Errorf("belongs to task %q, not %q", st.TaskID, taskID)
	}
	return st, nil
}

// listBackups returns the backup files sorted oldest first (names sort by
// time).
func listBackups(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, backupPrefix) && strings.HasSuffix(n, backupSuffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}

// EncodeState returns what Save writes for st, in memory: state.json's
// content and the blobs it references (content by hash).
func EncodeState(st vocab.State) (data []byte, blobs map[string][]byte, err error) {
	compact, err := json.Marshal(st)
	if err != nil {
		return nil, nil, err
	}
	compact, blobs, err = externalize(compact)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, nil, err
	}
	return append(buf.Bytes(), '\n'), blobs, nil
}

// Save writes st as the new state.json: first the current state.json (if
// valid) becomes the newest of the rolling backups (KeepBackups kept), then
// the new content is written atomically. Strings longer than InlineMax
// are stored in blobs/ first, fsync'd, and state.json references them
// (blob.go). An empty st.TaskID is filled in; a different one is an error.
func (s *StateStore) Save(st vocab.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("workspace: write state of task %s: %w", s.t.id, ErrClosed)
	}
	if st.TaskID == "" {
		st.TaskID = s.t.id
	}
	if st.TaskID != s.t.id {
		return fmt.Errorf("workspace: write state: task_id %q in the state of task %s", st.TaskID, s.t.id)
	}
	data, blobs, err := EncodeState(st)
	if err != nil {
		return fmt.Errorf("workspace: write state of task %s: %w", s.t.id, err)
	}
	if err := storeBlobs(s.t.dir, blobs, s.blobs); err != nil {
		return fmt.Errorf("workspace: write state of task %s: blobs: %w", s.t.id, err)
	}
	if err := s.backup(); err != nil {
		return fmt.Errorf("workspace: write state of task %s: backup: %w", s.t.id, err)
	}
	// The hash first: a crash before the rename leaves the previous file,
	// whose hash is still listed.
	if err := s.writeSums(stateSum(data)); err != nil {
		return fmt.Errorf("workspace: write state of task %s: %w", s.t.id, err)
	}
	if err := WriteFileAtomic(s.path, data, 0o644); err != nil {
		return fmt.Errorf("workspace: write state of task %s: %w", s.t.id, err)
	}
	return nil
}

// loads reports whether state.json content would load: it parses once the
// blobs it references are resolved (and check out).
func (s *StateStore) loads(data []byte) bool {
	data, err := resolveBlobs(s.t.dir, data)
	if err != nil {
		return false
	}
	_, err = ParseState(data, s.t.id)
	return err == nil
}

// backup makes the current state.json the newest backup and prunes old
// ones. The backup is a hard link to the current file (the new state.json
// is a new inode after the rename, so the link keeps the old content); a
// copy is made where links are not supported. An invalid current file is
// moved aside as corrupt_state_<time>.json instead, so it never pushes a
// good backup out.
func (s *StateStore) backup() error {
	cur, err := readNoFollowMax(s.path, maxStateSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	now := s.now().UTC()
	if err != nil || !s.loads(cur) || !s.engineWrote(cur) {
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EIO) {
			return err
		}
		aside := filepath.Join(s.backups, corruptPrefix+now.Format(backupTime)+".json")
		if err := os.Rename(s.path, aside); err != nil {
			return err
		}
		return nil
	}
	existing, err := listBackups(s.backups)
	if err != nil {
		return err
	}
	// Names must sort after every existing backup even if the clock went
	// back or two saves share a nanosecond.
	t := now
	if n := len(existing); n > 0 {
		last := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(existing[n-1]), backupPrefix), backupSuffix)
		if lt, err := time.Parse(backupTime, last); err == nil && !t.After(lt) {
			t = lt.Add(time.Nanosecond)
		}
	}
	var name string
	for {
		name = filepath.Join(s.backups, backupPrefix+t.Format(backupTime)+backupSuffix)
		err = os.Link(s.path, name)
		if errors.Is(err, fs.ErrExist) {
			t = t.Add(time.Nanosecond)
			continue
		}
		break
	}
	// No fsync of backups/ after the link: the rename of state.json that
	// follows is fsync'd (directory included), and journaling file systems
	// commit the earlier link with it or before it. This halves the cost
	// of a Save (see BenchmarkStateSave).
	if err != nil {
		if err := WriteFileAtomic(name, cur, 0o644); err != nil {
			return err
		}
	}
	existing = append(existing, name)
	for len(existing) > KeepBackups {
		if err := os.Remove(existing[0]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		existing = existing[1:]
	}
	return nil
}
