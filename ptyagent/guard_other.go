//go:build !linux

package ptyagent

import (
	"os"
	"syscall"
	"time"
)

// ownerWatch returns a function that waits up to a timeout for the owner
// (pid, the guard's parent) to be gone.
func ownerWatch(owner int) func(time.Duration) {
	return func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end) && os.Getppid() == owner && syscall.Kill(owner, 0) == nil; {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
