package ptyagent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The guard: what a Hivemind killed with SIGKILL leaves is reaped at once,
// not at the next run. Pdeathsig kills each agent's own process with its
// Hivemind, but not what the agent started and left behind (a setsid,
// nohup or double-forked child): their cgroup, mark and sessions are on
// record (record.go), and a cgroup outlives every process in it. So the
// process that owns the agents starts a small guard process (Guard): the
// guard holds the read end of a pipe whose only writer is its owner, and
// when that pipe ends — the owner exited, however — it waits for the owner
// to be gone and reaps the record directories it was told about
// (ReapRecorded: cgroup.kill, the recorded sessions, the marks), then exits.
// The guard runs in its own session, so closing the terminal does not stop
// it, and in its owner's cgroup, never in an agent's.

// GuardCommand is the hidden sub-command of the hivemind binary that runs
// RunGuard.
const GuardCommand = "guard"

// maxGuardLine bounds one line (a directory) the guard reads.
const maxGuardLine = 4096

// guardOwnerWait bounds how long the guard waits for its owner to be gone
// once the pipe has ended (its last threads still exiting).
const guardOwnerWait = 10 * time.Second

// guard is this process's guard, once started.
var guard struct {
	mu   sync.Mutex
	w    *os.File // the pipe's write end; nil before the guard starts
	argv []string
	dirs map[string]bool
	err  error
}

// Guard makes sure the process records in dir are reaped as soon as this
// process dies, however it dies. The first call starts the guard: argv is
// a command that runs RunGuard (hivemind's hidden `guard` sub-command);
// later calls add dir to what it reaps. A guard that cannot start is an
// error, and the next run still reaps the records.
func Guard(argv []string, dir string) error {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.dirs[dir] {
		return nil
	}
	if guard.w == nil {
		if guard.err != nil {
			return guard.err
		}
		if err := startGuard(argv); err != nil {
			guard.err = err
			return err
		}
	}
	if err := guardWrite(guardRecords + dir + "\n"); err != nil {
		return fmt.Errorf("ptyagent: guard: %w", err)
	}
	if guard.dirs == nil {
		guard.dirs = map[string]bool{}
	}
	guard.dirs[dir] = true
	return nil
}

// startGuard starts the guard process (guard.mu held).
func startGuard(argv []string) error {
	if len(argv) == 0 {
		return errors.New("ptyagent: guard: no command")
	}
	r, w, err := os.Pipe() // close-on-exec: no agent inherits the write end
	if err != nil {
		return fmt.Errorf("ptyagent: guard: %w", err)
	}
	cmd := exec.Command(argv[0], append(argv[1:], strconv.Itoa(os.Getpid()))...)
	cmd.Stdin = r
	cmd.Dir = "/" // it pins no project directory
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("ptyagent: guard: start %s: %w", argv[0], err)
	}
	go func() { _ = cmd.Wait() }() // reaped if it ever ends before this process
	guard.w, guard.argv = w, argv
	return nil
}

// guardAdopt tells the guard of a process this process adopted as a
// subreaper (BecomeSubreaper), so the guard kills it, and what it started,
// when this process dies. False when there is no guard.
func guardAdopt(pid int, start uint64) bool {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.w == nil {
		return false
	}
	return guardWrite(fmt.Sprintf("%s%d %d\n", guardAdopted, pid, start)) == nil
}

// guardWriteWait bounds a write to the guard (a stopped guard's full pipe
// must not stop Hivemind).
const guardWriteWait = time.Second

// guardWrite writes line to the guard (guard.mu held, guard.w set).
func guardWrite(line string) error {
	_ = guard.w.SetWriteDeadline(time.Now().Add(guardWriteWait))
	_, err := guard.w.WriteString(line)
	return err
}

// The guard's input, one line each: a record directory to reap, or a
// process adopted by its owner (pid and start time).
const (
	guardRecords = "records "
	guardAdopted = "adopted "
)

// RunGuard is the guard process (see Guard): args is the owner's pid, in
// the record directories to reap and the processes the owner adopted, one
// a line, until the owner is gone. It returns the exit code.
func RunGuard(args []string, in io.Reader, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: hivemind guard <owner pid> (run by Hivemind itself)")
		return 2
	}
	owner, err := strconv.Atoi(args[0])
	if err != nil || owner <= 1 {
		fmt.Fprintf(stderr, "hivemind guard: bad owner pid %q\n", args[0])
		return 2
	}
	// A guard does not end with the terminal or a ^C: only its owner's
	// end ends it.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE)
	gone := ownerWatch(owner)
	var dirs []string
	adopted := map[int]uint64{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 512), maxGuardLine)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, guardRecords); ok && d != "" && len(dirs) < maxWatchedDirs {
			dirs = append(dirs, d)
		}
		var pid int
		var start uint64
		if a, ok := strings.CutPrefix(line, guardAdopted); ok && len(adopted) < maxAdopted {
			if _, err := fmt.Sscanf(a, "%d %d", &pid, &start); err == nil && pid > 1 {
				adopted[pid] = start
			}
		}
	}
	// Only the owner's end ends the input (a line too long is not one).
	_, _ = io.Copy(io.Discard, in)
	// The pipe ends while the owner's last threads still exit: reaping
	// before it is gone would take its records for a live run's, and its
	// adopted children for orphans.
	if gone(guardOwnerWait) {
		killAdopted(adopted)
	}
	code := 0
	for _, d := range dirs {
		// The records stay for the next run (ReapedSuffix): they name
		// the remote agents' sessions it reaps on their hosts.
		if _, err := reapRecorded(d, true); err != nil {
			fmt.Fprintf(stderr, "hivemind guard: %v\n", err)
			code = 1
		}
	}
	return code
}

// maxWatchedDirs bounds the directories one guard keeps (one per task a
// Hivemind runs in its lifetime), maxAdopted the adopted processes (their
// start times tell a live one from a reused pid).
const (
	maxWatchedDirs = 4096
	maxAdopted     = 1 << 16
)
