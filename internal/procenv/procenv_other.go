//go:build !linux

package procenv

import "syscall"

// ProcsWithEnv finds nothing without /proc.
func ProcsWithEnv(uid int, kv string) []int { return nil }

// Start is unknown without /proc (0).
func Start(pid int) uint64 { return 0 }

// Alive reports whether a process pid exists (the pid may have been
// reused: Reap then leaves the run dir for a later run).
func Alive(pid int, _ uint64) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
