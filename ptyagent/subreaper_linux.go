//go:build linux

package ptyagent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Subreaper: the process that owns the agents asks the kernel to be the
// parent of every orphan among its descendants (PR_SET_CHILD_SUBREAPER):
// an agent's tool that double-forks, its parent gone, is reparented to
// Hivemind instead of init. Hivemind then sees it among its own children,
// tells the guard (guard.go) about it, which kills it and whatever it
// started if Hivemind dies, and reaps it when it exits. That closes, with
// the guard, the case no scan can: an orphan that also cleared its
// environment (no session mark) on a machine without cgroups.
//
// Hivemind's own children are reaped by whoever started them (os/exec's
// Wait), so the reaper here must never wait for one of them: os/exec holds
// a pidfd for each child it starts (Go 1.23+ where the kernel has pidfds,
// 5.4+), and an adopted child is a child this process holds no pidfd for.
// Without working pidfds BecomeSubreaper refuses.

// adoptPoll is how often the subreaper looks for adopted children (an
// adoption sends no signal; an adopted child's exit sends SIGCHLD).
const adoptPoll = 500 * time.Millisecond

var subreaper struct {
	once sync.Once
	err  error
}

// BecomeSubreaper makes this process the child subreaper of its
// descendants and starts watching the children it adopts (reported to the
// guard, reaped when they exit). Call it where the agents' owner starts
// (before its first agent); later calls return the first one's result.
func BecomeSubreaper() error {
	subreaper.once.Do(func() {
		if err := pidfdsWork(); err != nil {
			subreaper.err = fmt.Errorf("ptyagent: not a subreaper: %w", err)
			return
		}
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			subreaper.err = fmt.Errorf("ptyagent: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
			return
		}
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGCHLD)
		go watchAdopted(sigs)
	})
	return subreaper.err
}

// pidfdsWork checks what os/exec needs to hold a pidfd for each child
// (the same probes as Go's os package).
func pidfdsWork() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); err != nil {
		return fmt.Errorf("pidfd_send_signal: %w", err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		return fmt.Errorf("waitid(P_PIDFD): %v", err)
	}
	return nil
}

// watchAdopted looks for adopted children on every SIGCHLD and every
// adoptPoll.
func watchAdopted(sigs <-chan os.Signal) {
	tick := time.NewTicker(adoptPoll)
	defer tick.Stop()
	told := map[int]uint64{}
	for {
		select {
		case <-sigs:
		case <-tick.C:
		}
		scanAdopted(told)
	}
}

// scanAdopted reports new adopted children to the guard and reaps the
// adopted children that exited. told holds the ones reported (pid → start).
func scanAdopted(told map[int]uint64) {
	kids := ownChildren()
	if len(kids) == 0 {
		return
	}
	held := pidfdPIDs()
	// The kernel lists a new child a moment before it installs the
	// pidfd of its starter: a child without one is looked at again.
	var heldAgain map[int]bool
	for _, pid := range kids {
		if held[pid] {
			continue // started here: its starter waits for it
		}
		if heldAgain == nil {
			heldAgain = pidfdPIDs()
		}
		if heldAgain[pid] {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		if p.zombie {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			delete(told, pid)
			continue
		}
		if told[pid] == p.start {
			continue
		}
		// One in an agent's cgroup dies with the cgroup; one outside every
		// agent's is told to the guard (an agent's that cleared its
		// environment without cgroups, or what Hivemind's own children
		// left, such as git's auto gc: the guard kills it too).
		if inSessionCgroup(pid) || guardAdopt(pid, p.start) {
			told[pid] = p.start
		}
	}
}

// ownChildren lists this process's children (of every thread).
func ownChildren() []int {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(w); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// pidfdPIDs returns the pids of the processes this process holds a pidfd
// for: the children os/exec started and has not yet waited for.
func pidfdPIDs() map[int]bool {
	held := map[int]bool{}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l != "anon_inode:[pidfd]" {
			continue
		}
		b, _ := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		for _, line := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("Pid:")); ok {
				if pid, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil {
					held[pid] = true
				}
			}
		}
	}
	return held
}

// killAdopted kills the adopted processes (pid → start time; a pid whose
// process has another start time was reused and is left alone) and every
// descendant of theirs: the trees are stopped first (a stopped process
// cannot fork), until no new member turns up, then killed.
func killAdopted(adopted map[int]uint64) {
	victims := map[int]uint64{}
	for round := 0; round < 50; round++ {
		procs := listProcs()
		children := map[int][]procInfo{}
		byPID := make(map[int]procInfo, len(procs))
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p)
			byPID[p.pid] = p
		}
		var stack []int
		for _, set := range []map[int]uint64{adopted, victims} {
			for pid, start := range set {
				if p, ok := byPID[pid]; ok && !p.zombie && p.start == start {
					stack = append(stack, pid)
				}
			}
		}
		added := false
		self := os.Getpid()
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range children[pid] {
				if _, seen := victims[c.pid]; seen || c.zombie || c.pid == self {
					continue
				}
				victims[c.pid], added = c.start, true
				_ = syscall.Kill(c.pid, syscall.SIGSTOP)
				stack = append(stack, c.pid)
			}
			if _, seen := victims[pid]; !seen {
				victims[pid], added = byPID[pid].start, true
				_ = syscall.Kill(pid, syscall.SIGSTOP)
			}
		}
		if !added {
			break
		}
	}
	for pid, start := range victims {
		if p, ok := readProc(pid); ok && p.start == start {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// inSessionCgroup reports whether pid is in an agent session's cgroup
// (<…>/hivemind-<pid>-<random>/<agent>-<n>).
func inSessionCgroup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return strings.HasPrefix(filepath.Base(filepath.Dir(p)), cgroupPrefix)
		}
	}
	return false
}
