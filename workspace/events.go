package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/vocab"
)

// EventLog appends to a task's events.jsonl. Each event is one line written
// with a single write(2) on an O_APPEND descriptor under an exclusive flock
// and fsync'd before Append returns, so lines from many goroutines and
// processes never interleave and an acknowledged event survives a crash.
type EventLog struct {
	mu   sync.Mutex // the flock is per open file, not per goroutine
	f    *os.File
	path string
	task string
}

// OpenEventLog opens (creating) the task's events.jsonl for appending. A
// symlink at that path is refused (ErrSymlink).
func OpenEventLog(t *TaskDir) (*EventLog, error) {
	path, err := t.Path(vocab.EventsFile)
	if err != nil {
		return nil, fmt.Errorf("workspace: open events: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = ErrSymlink
		}
		return nil, fmt.Errorf("workspace: open events %s: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close() // read-only, already failing
		return nil, fmt.Errorf("workspace: open events %s: not a regular file", path)
	}
	return &EventLog{f: f, path: path, task: t.id}, nil
}

// Path returns the absolute path of events.jsonl.
func (l *EventLog) Path() string { return l.path }

// Append writes r as one line and fsyncs it. A zero Time is set to now and
// an empty Task to the log's task id.
func (l *EventLog) Append(r vocab.EventRecord) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	if r.Task == "" {
		r.Task = l.task
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("workspace: append event %s: %w", r.Type, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("workspace: append event %s: %w", r.Type, ErrClosed)
	}
	fd := int(l.f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("workspace: append event %s: flock: %w", r.Type, err)
	}
	defer syscall.Flock(fd, syscall.LOCK_UN)
	prefix, err := l.repairTail()
	if err != nil {
		return fmt.Errorf("workspace: append event %s: %w", r.Type, err)
	}
	if len(prefix) > 0 {
		line = append(prefix, line...)
	}
	// One write(2) per line: O_APPEND makes it land at the end as a whole.
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("workspace: append event %s: %w", r.Type, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("workspace: append event %s: fsync: %w", r.Type, err)
	}
	return nil
}

// repairTail runs under the flock. If the file does not end in a newline
// (an appender crashed mid-write), a fragment that is a complete event just
// gets its newline; anything else is truncated away — it was never
// acknowledged — and an RecordEventsTornLineDropped line describing it is
// returned to be written before the next event.
func (l *EventLog) repairTail() ([]byte, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil
	}
	var last [1]byte
	if _, err := l.f.ReadAt(last[:], size-1); err != nil {
		return nil, err
	}
	if last[0] == '\n' {
		return nil, nil
	}
	// Find the start of the fragment, reading backwards in chunks.
	start := int64(0)
	const chunk = 64 << 10
	for end := size; end > 0; {
		off := max(end-chunk, 0)
		buf := make([]byte, end-off)
		if _, err := l.f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			start = off + int64(i) + 1
			break
		}
		end = off
	}
	frag := make([]byte, size-start)
	if _, err := l.f.ReadAt(frag, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if _, err := parseEventLine(frag); err == nil {
		return []byte{'\n'}, nil
	}
	if err := l.f.Truncate(start); err != nil {
		return nil, err
	}
	shown := frag
	if len(shown) > 200 {
		shown = shown[:200]
	}
	rep, err := json.Marshal(vocab.EventRecord{
		Time: time.Now().UTC(), Type: vocab.RecordEventsTornLineDropped, Task: l.task,
		Details: map[string]any{"bytes": len(frag), "offset": start, "fragment": string(shown)},
	})
	if err != nil {
		return nil, err
	}
	return append(rep, '\n'), nil
}

// Close closes the log (idempotent).
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// parseEventLine parses one line (without its newline) as an event: a JSON
// object with a non-empty type.
func parseEventLine(line []byte) (vocab.EventRecord, error) {
	var r vocab.EventRecord
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return r, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return vocab.EventRecord{}, err
	}
	if r.Type == "" {
		return vocab.EventRecord{}, errors.New("event without type")
	}
	return r, nil
}

// ReadEvents reads a whole events.jsonl. An unterminated last line that is
// not a complete event (a crash mid-append) is left out and reported with
// torn = true. A bad line anywhere else is an error (wrapping ErrBadEvents)
// naming its line number; the records before it are returned with it. Blank
// lines are skipped. A missing file wraps fs.ErrNotExist.
func ReadEvents(path string) (recs []vocab.EventRecord, torn bool, err error) {
	return ReadEventsProgress(path, nil)
}

// eventsProgressStep is how many bytes ReadEventsProgress reads between
// two progress calls (64 MiB; tests shorten it).
var eventsProgressStep int64 = 64 << 20

// ReadEventsProgress is ReadEvents that streams the file (a large log is
// never held whole) and, when progress is not nil, calls it with the bytes
// read and the file's size every eventsProgressStep bytes, so a long
// rebuild can say how far it is.
func ReadEventsProgress(path string, progress func(done, total int64)) (recs []vocab.EventRecord, torn bool, err error) {
	// Not readNoFollow: an event log may be larger than its size cap.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		return nil, false, fmt.Errorf("workspace: read events: %w", err)
	}
	defer f.Close() // read-only
	var total int64
	if fi, err := f.Stat(); err == nil {
		total = fi.Size()
	}
	br := bufio.NewReaderSize(f, 1<<20)
	var done, next int64 = 0, eventsProgressStep
	lineNo := 0
	for {
		line, rerr := br.ReadBytes('\n')
		done += int64(len(line))
		if rerr != nil && rerr != io.EOF {
			return recs, false, fmt.Errorf("workspace: read events: %w", rerr)
		}
		last := rerr == io.EOF // no newline: the log's unterminated tail
		if len(line) > 0 {
			lineNo++
		}
		if len(bytes.TrimSpace(line)) > 0 {
			r, perr := parseEventLine(bytes.TrimSuffix(line, []byte("\n")))
			switch {
			case perr != nil && last:
				return recs, true, nil
			case perr != nil:
				return recs, false, fmt.Errorf("workspace: read events %s: line %d: %w: %v", path, lineNo, ErrBadEvents, perr)
			}
			recs = append(recs, r)
		}
		if progress != nil && done >= next {
			progress(done, total)
			next = done + eventsProgressStep
		}
		if last {
			return recs, false, nil
		}
	}
}

// ParseEvents is ReadEvents on bytes.
func ParseEvents(data []byte) (recs []vocab.EventRecord, torn bool, err error) {
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		i := bytes.IndexByte(data, '\n')
		var line []byte
		last := i < 0
		if last {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, perr := parseEventLine(line)
		if perr != nil {
			if last {
				return recs, true, nil
			}
			return recs, false, fmt.Errorf("line %d: %w: %v", lineNo, ErrBadEvents, perr)
		}
		recs = append(recs, r)
	}
	return recs, false, nil
}

// followPoll is how often FollowEvents checks the file when no file-system
// notification arrives (some file systems send none).
const followPoll = 250 * time.Millisecond

// FollowEvents calls fn for every complete line of the events file at path
// from byte offset from on, then keeps waiting for new lines like tail -f,
// until ctx is done (then it returns nil). The file may not exist yet. A
// line that is not a valid event is passed as an RecordEventsBadLine record. If
// the file shrinks below the offset it is read again from the start.
func FollowEvents(ctx context.Context, path string, from int64, fn func(vocab.EventRecord)) error {
	if from < 0 {
		from = 0
	}
	wake := make(chan struct{}, 1)
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if err := w.Add(filepath.Dir(path)); err == nil {
			go func() {
				for {
					select {
					case _, ok := <-w.Events:
						if !ok {
							return
						}
						select {
						case wake <- struct{}{}:
						default:
						}
					case _, ok := <-w.Errors:
						if !ok {
							return
						}
					}
				}
			}()
		}
	}
	ticker := time.NewTicker(followPoll)
	defer ticker.Stop()
	off := from
	var pending []byte
	buf := make([]byte, 64<<10)
	for {
		if ctx.Err() != nil {
			return nil
		}
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		switch {
		case err == nil:
			if fi, err := f.Stat(); err == nil && fi.Size() < off {
				off, pending = 0, nil
			}
			for ctx.Err() == nil {
				n, rerr := f.ReadAt(buf, off+int64(len(pending)))
				if n > 0 {
					pending = append(pending, buf[:n]...)
					for {
						i := bytes.IndexByte(pending, '\n')
						if i < 0 {
							break
						}
						line := pending[:i]
						if len(bytes.TrimSpace(line)) > 0 {
							r, perr := parseEventLine(line)
							if perr != nil {
								r = vocab.EventRecord{Time: time.Now().UTC(), Type: vocab.RecordEventsBadLine,
									Details: map[string]any{"offset": off, "error": perr.Error(), "line": string(line)}}
							}
							fn(r)
						}
						off += int64(i) + 1
						pending = pending[i+1:]
					}
					pending = append([]byte(nil), pending...)
				}
				if rerr != nil || n == 0 {
					break
				}
			}
			_ = f.Close()
		case errors.Is(err, fs.ErrNotExist):
		default:
			return fmt.Errorf("workspace: follow events %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-ticker.C:
		}
	}
}
