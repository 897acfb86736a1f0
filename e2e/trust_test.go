package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// spawnerAgent is a custom agent that leaves children behind the way
// agents' tools do: a nohup child, and a grandchild in its own session
// (setsid + nohup) whose parent exits at once. With HM_DROP_MARK=1 the
// grandchild also clears Hivemind's session mark and the HIVEMIND_*
// variables from its environment. Each agent records its pids (and its
// relay socket) in $HM_PIDS/<agent>.<pid>.<kind>, then reads its
// terminal forever.
const spawnerAgent = `#!/bin/sh
d="$HM_PIDS"; me="$HIVEMIND_AGENT_ID.$$"
drop=""
if [ "$HM_DROP_MARK" = 1 ]; then
	drop="-u HIVEMIND_SESSION_MARK -u HIVEMIND_PROJECT -u HIVEMIND_AGENT_ID -u HIVEMIND_HOOK_TOKEN"
fi
(env $drop setsid nohup sleep 1000 >/dev/null 2>&1 & echo $! > "$d/$me.tmp" && mv "$d/$me.tmp" "$d/$me.escaped")
nohup sleep 1000 >/dev/null 2>&1 &
echo $! > "$d/$me.tmp" && mv "$d/$me.tmp" "$d/$me.nohup"
echo "$HIVEMIND_HOOK_SOCKET" > "$d/$me.tmp" && mv "$d/$me.tmp" "$d/$me.sock"
echo ready
exec cat
`

// spawner writes the agent script and returns the --agent value and the
// pid directory.
func spawner(t *testing.T) (agent, pids string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "spawner.sh")
	if err := os.WriteFile(script, []byte(spawnerAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	pids = filepath.Join(dir, "pids")
	if err := os.Mkdir(pids, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A failed test leaves nothing running either.
		left, _ := spawned(t, pids, "")
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return "sh " + script, pids
}

// spawnerConfig is the --config of a run of spawner agents: every role
// may also write pids, where the agents record what they started (their
// write scopes would refuse it otherwise).
func spawnerConfig(t *testing.T, pids string) []string {
	t.Helper()
	p := filepath.Join(filepath.Dir(pids), "config.toml")
	var b strings.Builder
	for _, r := range vocab.Roles() {
		fmt.Fprintf(&b, "[roles.%s]\nwritable = [%q]\n", r, pids)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", p}
}

// spawned returns the pids recorded in dir (kind "" = all kinds) and the
// relay sockets the agents were given.
func spawned(t *testing.T, dir, kind string) (pids []int, socks []string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		switch {
		case strings.HasSuffix(name, ".sock"):
			socks = append(socks, v)
		case strings.HasSuffix(name, ".escaped"), strings.HasSuffix(name, ".nohup"):
			if kind != "" && !strings.HasSuffix(name, "."+kind) {
				continue
			}
			if pid, err := strconv.Atoi(v); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, socks
}

// procAlive reports whether pid is a live (non-zombie) process.
func procAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !isZombie(stat)
}

// allGone waits until none of pids is alive.
func allGone(t *testing.T, what string, pids []int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		for _, pid := range pids {
			if procAlive(pid) {
				cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				left = append(left, strconv.Itoa(pid)+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
			}
			t.Fatalf("%s: processes left:\n%s", what, strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// trackingModes runs f with cgroup tracking (an escaping grandchild that
// drops the session mark) and with the mark scan alone (a grandchild that
// keeps it; without cgroups nothing can find one that drops it once its
// parent is gone).
func trackingModes(t *testing.T, f func(t *testing.T, env []string)) {
	t.Run("cgroup", func(t *testing.T) { f(t, []string{"HM_DROP_MARK=1"}) })
	t.Run("mark", func(t *testing.T) { f(t, []string{"HIVEMIND_CGROUPS=off"}) })
}

// Closing the terminal or ssh session (SIGHUP) of a headless run stops
// every agent and everything they started: setsid/nohup children, and
// (with cgroups) a grandchild that dropped Hivemind's session mark and was
// reparented to init. The relay socket is removed.
func TestHeadlessSIGHUPStopsEverything(t *testing.T) {
	parallel(t)
	trackingModes(t, func(t *testing.T, env []string) {
		agent, pidDir := spawner(t)
		project, home := t.TempDir(), t.TempDir()
		env = append(env, "HM_PIDS="+pidDir)
		cmd, out, exited := startSpawnerRun(t, home, pidDir, env, append(spawnerConfig(t, pidDir), "--headless", "--agent", agent, "--workers", "1",
			"--project", project, "build a tiny calculator")...)
		// Let the grandchildren's parents exit, so they are orphans.
		escaped, _ := spawned(t, pidDir, "escaped")
		waitFor(t, 10*time.Second, "orphaned grandchildren", func() bool {
			for _, pid := range escaped {
				stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
				i := bytes.LastIndexByte(stat, ')')
				if i < 0 {
					return false
				}
				// The subshell that started it is gone once its
				// parent is no longer a shell.
				comm, _ := os.ReadFile("/proc/" + strings.Fields(string(stat[i+1:]))[1] + "/comm")
				if strings.TrimSpace(string(comm)) == "sh" {
					return false
				}
			}
			return true
		})
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case <-exited:
		case <-time.After(2 * time.Minute):
			t.Fatalf("hivemind did not exit after SIGHUP:\n%s", out.String())
		}
		if !strings.Contains(out.String(), "HANGUP") {
			t.Errorf("output does not say it was hung up:\n%s", out.String())
		}
		pids, socks := spawned(t, pidDir, "")
		allGone(t, "after SIGHUP", pids)
		for _, s := range socks {
			if _, err := os.Lstat(s); !os.IsNotExist(err) {
				t.Errorf("relay socket %s left: %v", s, err)
			}
		}
		noLeftovers(t, project)
	})
}

// After `kill -9` of Hivemind its agents die (parent-death signal) but
// their setsid/nohup children do not. The next run reaps them, from the
// process records in the task dir, before it starts any agent, says so in
// the event log, and removes the dead run's relay socket: `--resume` of
// the task, and as well a new task in the same workspace (the workspace
// lock says no other Hivemind runs there).
func TestKill9ThenNextRunReapsLeftovers(t *testing.T) {
	parallel(t)
	for _, next := range []string{"resume", "new task"} {
		t.Run(next, func(t *testing.T) {
			trackingModes(t, func(t *testing.T, env []string) { kill9ThenNextRun(t, env, next == "resume") })
		})
	}
}

func kill9ThenNextRun(t *testing.T, env []string, resume bool) {
	agent, pidDir := spawner(t)
	project, home := t.TempDir(), t.TempDir()
	// Without the guard, which would reap them at once
	// (TestKill9LeavesNothing): the next run's reaping is what this tests.
	env = append(env, "HM_PIDS="+pidDir, "HIVEMIND_GUARD=off")
	cfg := spawnerConfig(t, pidDir)
	cmd, _, exited := startSpawnerRun(t, home, pidDir, env, append(cfg, "--headless", "--agent", agent, "--workers", "1",
		"--project", project, "build a tiny calculator")...)
	dir := taskDir(t, project)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	first, socks := spawned(t, pidDir, "")
	alive := 0
	for _, pid := range first {
		if procAlive(pid) {
			alive++
		}
	}
	if alive == 0 {
		t.Fatal("nothing outlived the kill: the test proves nothing")
	}
	// The next run's agents record their own children afresh.
	for _, f := range mustGlob(t, filepath.Join(pidDir, "*")) {
		_ = os.Remove(f)
	}

	// The next run reaps before it starts any agent: by the time its lead
	// has new children, the old ones are gone.
	args := []string{"--headless", "--json", "--resume", "--agent", agent, "--workers", "1", "--project", project}
	if !resume {
		args = append(args[:2:2], "--agent", agent, "--workers", "1", "--project", project, "write a haiku")
	}
	args = append(slices.Clip(cfg), args...)
	cmd2, out2, exited2 := startSpawnerRun(t, home, pidDir, env, args...)
	allGone(t, "after the next run started", first)
	if !strings.Contains(out2.String(), `"leftovers_reaped"`) {
		t.Errorf("the next run does not report leftovers_reaped:\n%s", out2.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, vocab.ProcsDir, "*.json")); !resume && len(m) != 0 {
		t.Errorf("the killed task's records are left: %v", m)
	}
	for _, s := range socks {
		if _, err := os.Lstat(s); !os.IsNotExist(err) {
			t.Errorf("killed run's relay socket %s left: %v", s, err)
		}
	}
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited2:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the next run did not exit after SIGTERM:\n%s", out2.String())
	}
	second, _ := spawned(t, pidDir, "")
	allGone(t, "after the next run", second)
	if m, _ := filepath.Glob(filepath.Join(project, ".hivemind", vocab.TasksDir, "*", vocab.ProcsDir, "*.json")); len(m) != 0 {
		t.Errorf("process records left after a clean stop: %v", m)
	}
	if st := readState(t, dir); resume && st.Phase != vocab.PhaseCancelled {
		t.Errorf("state %s after SIGTERM of the resumed run, want cancelled", st.Phase)
	}
	noLeftovers(t, project)
}

// startSpawnerRun starts hivemind with args and env (agents are spawner
// scripts writing to pidDir) and waits until the lead has started its
// children. exited receives the run's end.
func startSpawnerRun(t *testing.T, home, pidDir string, env []string, args ...string) (*exec.Cmd, *syncBuffer, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	t.Cleanup(cancel)
	cmd, out := hivemind(t, ctx, home, args...)
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitFor(t, runDeadline, "the lead's children", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("hivemind exited early: %v\n%s", err, out.String())
		default:
		}
		pids, socks := spawned(t, pidDir, "")
		return len(pids) >= 2 && len(socks) >= 1
	})
	return cmd, out, exited
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The full-screen UI handles SIGHUP (its terminal closed) like SIGTERM:
// it quits, stopping every agent and everything they started.
func TestTUISIGHUPStopsEverything(t *testing.T) {
	parallel(t)
	requireTmux(t)
	trackingModes(t, func(t *testing.T, env []string) {
		agent, pidDir := spawner(t)
		r := startTUI(t, tuiOptions{args: append(spawnerConfig(t, pidDir), "--agent", agent, "--workers", "1", "build a tiny calculator"),
			env: append(env, "HM_PIDS="+pidDir)})
		var socks []string
		waitFor(t, runDeadline, "the lead's children", func() bool {
			if dead, code := r.exited(); dead {
				t.Fatalf("hivemind exited early (status %d):\n%s", code, r.capture())
			}
			var pids []int
			pids, socks = spawned(t, pidDir, "")
			return len(pids) >= 2 && len(socks) >= 1
		})
		// The relay socket is hm-<hivemind's pid>-<random>.sock.
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(socks[0]), "hm-"), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil {
			t.Fatalf("socket %s names no pid", socks[0])
		}
		if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		r.waitExit(2 * time.Minute)
		pids, socks := spawned(t, pidDir, "")
		allGone(t, "after SIGHUP", pids)
		for _, s := range socks {
			if _, err := os.Lstat(s); !os.IsNotExist(err) {
				t.Errorf("relay socket %s left: %v", s, err)
			}
		}
		noLeftovers(t, r.project)
	})
}
