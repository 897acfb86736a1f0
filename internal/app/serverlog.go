package app

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// serverLog is where a server writes its log: its stdout, which
// StartServer pointed at the workspace's server.log (stderr too). It keeps
// the file under max while the server runs: past it, server.log becomes
// server.log.1 (the one before is dropped) and a new server.log takes
// descriptors 1 and 2. Every write through it (the server's lines, the
// records it prints, notify_command's output) checks the size.
type serverLog struct {
	path string
	max  int64

	mu sync.Mutex
}

func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := os.Stdout.Write(p)
	l.rotate()
	return n, err
}

// rotate starts a new log when the current one passed the bound; not when
// stdout is not the log (a server run by hand or in a test).
func (l *serverLog) rotate() {
	fi, err := os.Stdout.Stat()
	if err != nil || fi.Size() <= l.max {
		return
	}
	if on, err := os.Stat(l.path); err != nil || !os.SameFile(fi, on) {
		return
	}
	if os.Rename(l.path, l.path+".1") != nil {
		return
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	for _, fd := range []int{1, 2} {
		_ = unix.Dup2(int(f.Fd()), fd)
	}
}
