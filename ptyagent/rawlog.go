package ptyagent

import (
	"fmt"
	"os"
	"path/filepath"
)

// rawLog appends a session's raw PTY output to a file, rotating it to
// <path>.1 when it would grow past max bytes. Only the reader goroutine
// uses it.
type rawLog struct {
	path string
	max  int64
	f    *os.File
	size int64
	err  error // first write error; logging stops after it
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
		f.Close()
		return nil, fmt.Errorf("ptyagent: stat log: %w", err)
	}
	return &rawLog{path: path, max: max, f: f, size: st.Size()}, nil
}

func (l *rawLog) Write(p []byte) {
	if l == nil || l.err != nil {
		return
	}
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		l.rotate()
		if l.err != nil {
			return
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if err != nil {
		l.err = err
	}
}

func (l *rawLog) rotate() {
	l.f.Close()
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
}

func (l *rawLog) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}
