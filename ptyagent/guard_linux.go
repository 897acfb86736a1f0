//go:build linux

package ptyagent

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ownerWatch returns a function that waits up to a timeout for the owner
// (pid, the guard's parent) to be gone: its pidfd, opened now while it is
// certainly the owner, becomes readable when it exits.
func ownerWatch(owner int) func(time.Duration) {
	if os.Getppid() != owner {
		return func(time.Duration) {} // gone before the guard looked
	}
	fd, err := unix.PidfdOpen(owner, 0)
	if err != nil {
		start := selfStartOf(owner)
		return func(d time.Duration) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if p, ok := readProc(owner); !ok || p.zombie || p.start != start {
					return
				}
			}
		}
	}
	return func(d time.Duration) {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for end := time.Now().Add(d); time.Now().Before(end); {
			n, err := unix.Poll(fds, int(time.Until(end).Milliseconds())+1)
			if n > 0 || (err != nil && err != unix.EINTR) {
				return
			}
		}
	}
}

// selfStartOf is pid's start time (0 when it is gone).
func selfStartOf(pid int) uint64 {
	p, _ := readProc(pid)
	return p.start
}
