package ptyagent

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

const (
	// logBufSize and logFlushDelay bound what the raw log holds in memory:
	// output reaches the file when the buffer fills, logFlushDelay after
	// the first unwritten byte, on rotation and on Close. A clean stop
	// loses nothing; a crash of the Hivemind process (SIGKILL, panic) can
	// lose the last logFlushDelay of output, at most logBufSize bytes.
	logBufSize    = 64 << 10
	logFlushDelay = 100 * time.Millisecond
)

// rawLog appends a session's raw PTY output to a file, rotating it to
// <path>.1 when it would grow past max bytes. Writes are buffered (one
// write(2) per logFlushDelay or logBufSize instead of one per PTY read);
// the reader goroutine writes, a timer flushes.
type rawLog struct {
	path string
	max  int64

	mu     sync.Mutex // guards everything below
	f      *os.File
	w      *bufio.Writer
	size   int64 // file size including buffered bytes
	err    error // first write error; logging stops after it
	flush  *time.Timer
	armed  bool // flush is scheduled
	closed bool
}

func openRawLog(path string, max int64) (*rawLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("ptyagent: log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ptyagent: open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ptyagent: stat log: %w", err)
	}
	if max <= 0 {
		max = 16 << 20 // Spec's default; a write never loops on a zero limit
	}
	l := &rawLog{path: path, max: max, f: f, w: bufio.NewWriterSize(f, logBufSize), size: st.Size()}
	l.flush = time.AfterFunc(time.Hour, l.flushTimer)
	l.flush.Stop()
	return l, nil
}

func (l *rawLog) Write(p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || l.closed {
		return
	}
	// A write may span a rotation: no file grows past max, however much
	// output comes at once.
	for len(p) > 0 {
		if l.size >= l.max {
			l.rotate()
			if l.err != nil {
				return
			}
		}
		n, err := l.w.Write(p[:min(int64(len(p)), l.max-l.size)])
		l.size += int64(n)
		p = p[n:]
		if err != nil {
			l.err = err
			return
		}
	}
	if l.w.Buffered() > 0 && !l.armed {
		l.armed = true
		l.flush.Reset(logFlushDelay)
	}
}

// flushTimer writes the buffered output out, logFlushDelay after it came.
func (l *rawLog) flushTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	if l.closed || l.err != nil {
		return
	}
	if err := l.w.Flush(); err != nil {
		l.err = err
	}
}

// rotate moves the full log to <path>.1 and starts an empty one. l.mu is
// held.
func (l *rawLog) rotate() {
	if err := l.w.Flush(); err != nil {
		l.err = err
		return
	}
	_ = l.f.Close()
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		l.err = err
		return
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		l.err = err
		return
	}
	l.f, l.size = f, 0
	l.w.Reset(f)
}

// Close writes out what is buffered and closes the file.
func (l *rawLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.flush.Stop()
	var err error
	if l.err == nil {
		err = l.w.Flush()
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
