//go:build linux

package ptyagent

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ownerWatch returns a function that waits up to a timeout for the owner
// (pid, the guard's parent) to be gone and reports whether it is: its
// pidfd, opened now while it is certainly the owner, becomes readable when
// it exits.
func ownerWatch(owner int) func(time.Duration) bool {
	if os.Getppid() != owner {
		return func(time.Duration) bool { return true } // gone before the guard looked
	}
	start := selfStartOf(owner)
	goneNow := func() bool {
		p, ok := readProc(owner)
		return !ok || p.zombie || p.start != start
	}
	fd, err := unix.PidfdOpen(owner, 0)
	if err != nil {
		return func(d time.Duration) bool {
			for end := time.Now().Add(d); time.Now().Before(end) && !goneNow(); {
				time.Sleep(10 * time.Millisecond)
			}
			return goneNow()
		}
	}
	return func(d time.Duration) bool {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for end := time.Now().Add(d); time.Now().Before(end); {
			n, err := unix.Poll(fds, int(time.Until(end).Milliseconds())+1)
			if n > 0 {
				return true
			}
			if err != nil && err != unix.EINTR {
				break
			}
		}
		return goneNow()
	}
}

// selfStartOf is pid's start time (0 when it is gone).
func selfStartOf(pid int) uint64 {
	p, _ := readProc(pid)
	return p.start
}
