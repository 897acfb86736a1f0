//go:build !linux

package ptyagent

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ownerWatch returns a function that waits up to a timeout for the owner
// (pid, the guard's parent) to be gone and reports whether it is.
func ownerWatch(owner int) func(time.Duration) bool {
	alive := func() bool { return os.Getppid() == owner && syscall.Kill(owner, 0) == nil }
	return func(d time.Duration) bool {
		for end := time.Now().Add(d); time.Now().Before(end) && alive(); {
			time.Sleep(10 * time.Millisecond)
		}
		return !alive()
	}
}

// BecomeSubreaper is Linux's (PR_SET_CHILD_SUBREAPER).
func BecomeSubreaper() error { return errors.New("ptyagent: a subreaper needs Linux") }

// killAdopted has nothing to do: there is no subreaper.
func killAdopted(map[int]uint64) {}
