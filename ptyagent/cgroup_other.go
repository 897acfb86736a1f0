//go:build !linux

package ptyagent

import (
	"sync/atomic"
	"syscall"
	"time"
)

// EnvCgroups set to "off" disables cgroup tracking (Linux only).
const EnvCgroups = "HIVEMIND_CGROUPS"

var cgroupsOff atomic.Bool

// cgroup is unused outside Linux.
type cgroup struct{ dir string }

func cgroupsUnavailable() string { return "not Linux" }

var sessionCgroup = newCgroup

func newCgroup(string) *cgroup                                          { return nil }
func openCgroup(string) *cgroup                                         { return nil }
func (c *cgroup) procs() []int                                          { return nil }
func (c *cgroup) signal(syscall.Signal) int                             { return 0 }
func (c *cgroup) kill(time.Duration) int                                { return 0 }
func disableCgroups(error)                                              {}
func (c *cgroup) closeFD()                                              {}
func closeCgroups()                                                     {}
func withCgroup(a *syscall.SysProcAttr, _ *cgroup) *syscall.SysProcAttr { return a }
