//go:build !linux

package ptyagent

import (
	"net"
	"syscall"
)

type procInfo struct {
	pid, ppid, pgrp, sid int
	start                uint64 // start time in clock ticks after boot
	zombie               bool
}

func listProcs() []procInfo { return nil }

func descendantSessions(root int, procs []procInfo) []int { return nil }

func agentProcs(root int, alive bool, sids map[int]bool, mark string, procs []procInfo) []int {
	return nil
}

func killAgentProcs(root int, alive bool, sids map[int]bool, mark string, sig syscall.Signal) int {
	if alive {
		_ = syscall.Kill(-root, sig)
		return 1
	}
	return 0
}

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true}
}

func readProc(pid int) (procInfo, bool) { return procInfo{}, false }

func hasMark(pid int, mark string) bool { return false }

func peerPID(net.Conn) int { return 0 }

func markOf(pid int) string { return "" }

func sessionOf(pid int) int { return 0 }

// onSpawnThread runs f (Pdeathsig, and its thread's lifetime, are Linux's).
func onSpawnThread(f func()) { f() }
