//go:build linux

package ptyagent

import (
	"bytes"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// procInfo is what /proc/<pid>/stat says about a process.
type procInfo struct {
	pid, ppid, pgrp, sid int
	start                uint64 // start time in clock ticks after boot
	zombie               bool
}

// listProcs reads every process from /proc.
func listProcs() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procInfo, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// The command name is in parentheses and may contain anything; the
	// fields after the last ')' are: state ppid pgrp session …
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgrp, _ = strconv.Atoi(string(f[2]))
	p.sid, _ = strconv.Atoi(string(f[3]))
	if len(f) > 19 {
		p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	}
	return p, true
}

// descendantSessions returns the session ids of root's descendants that
// left root's session (setsid children such as Claude's Bash-tool
// commands), so they can be found after their parent is gone.
func descendantSessions(root int, procs []procInfo) []int {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var sids []int
	seen := map[int]bool{root: true}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[pid] {
			if seen[c.pid] {
				continue
			}
			seen[c.pid] = true
			if c.sid != root && c.sid == c.pid {
				sids = append(sids, c.sid)
			}
			stack = append(stack, c.pid)
		}
	}
	return sids
}

// agentProcs returns the live (non-zombie) processes that belong to the
// agent: its own session (sid == root, root is a session leader through
// Setsid), its descendants, the recorded setsid sessions, and any process
// whose environment carries the session's mark (a setsid child orphaned
// before a scan recorded its session).
func agentProcs(root int, alive bool, sids map[int]bool, mark string, procs []procInfo) []int {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	// Descendants count only while root lives: after it is reaped its pid
	// may belong to an unrelated process.
	desc := map[int]bool{}
	stack := []int{}
	if alive {
		stack = append(stack, root)
	}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[pid] {
			if !desc[c] {
				desc[c] = true
				stack = append(stack, c)
			}
		}
	}
	self := os.Getpid()
	var out []int
	for _, p := range procs {
		if p.zombie || p.pid == self {
			continue
		}
		if (alive && p.pid == root) || p.sid == root || sids[p.sid] || desc[p.pid] || hasMark(p.pid, mark) {
			out = append(out, p.pid)
		}
	}
	return out
}

// killAgentProcs sends sig to every process that belongs to the agent and
// returns how many were signalled.
func killAgentProcs(root int, alive bool, sids map[int]bool, mark string, sig syscall.Signal) int {
	pids := agentProcs(root, alive, sids, mark, listProcs())
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// hasMark reports whether the environment of pid holds the variable
// markEnv=mark. Processes of other users are unreadable and never match.
func hasMark(pid int, mark string) bool {
	return mark != "" && markOf(pid) == mark
}

// markOf returns the value of markEnv in the environment of pid ("" when
// it has none or is unreadable).
func markOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(markEnv+"=")); ok {
			return string(v)
		}
	}
	return ""
}

// sessionOf returns the session id of pid (0 when unknown).
func sessionOf(pid int) int {
	p, _ := readProc(pid)
	return p.sid
}

// sysProcAttr puts the agent in its own session (so its process group and
// session can be signalled whole), makes the PTY its controlling terminal,
// and kills it when Hivemind dies (Pdeathsig: it fires when the OS thread
// that forked the child exits, go.dev/issue/27505, so agents are forked on
// the spawn thread, which lives as long as the process: onSpawnThread).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Pdeathsig: syscall.SIGKILL}
}

// peerPID returns the pid of the process at the other end of a unix
// socket connection (SO_PEERCRED), 0 when unknown.
func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// spawn is the OS thread every agent is forked from (onSpawnThread).
var spawn struct {
	once sync.Once
	reqs chan func()
}

// onSpawnThread runs f on one OS thread that never exits. Go ends a
// thread when a goroutine locked to it returns without unlocking (the
// Landlock exec path locks one, a library may too); an agent forked from
// such a thread would be killed by its Pdeathsig while Hivemind runs on.
// The spawn goroutine locks its thread and never returns, so the thread
// dies only with the process.
func onSpawnThread(f func()) {
	spawn.once.Do(func() {
		spawn.reqs = make(chan func())
		go spawnLoop(spawn.reqs)
	})
	done := make(chan struct{})
	spawn.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// spawnLoop runs the spawn requests on its thread, locked for good.
func spawnLoop(reqs <-chan func()) {
	runtime.LockOSThread()
	for req := range reqs {
		req()
	}
}
