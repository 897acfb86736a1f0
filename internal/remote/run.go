package remote

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/internal/procenv"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
)

// Files of a run dir (~/.cache/hivemind/run/<id>/ on the host).
const (
	envFile  = "env"       // the agent's environment, NUL-separated; removed once read
	procFile = "proc"      // "<helper pid> <start ticks>" while the helper runs
	sockFile = "hook.sock" // the forwarded hook relay socket
	// maxEnvFile bounds the environment file read back.
	maxEnvFile = 1 << 20
)

// Stop timings of the remote side: after a hang-up or SIGTERM the agent
// has stopGrace to exit before everything of the session is killed.
var (
	stopGrace = 3 * time.Second
	killWait  = 2 * time.Second
)

// Run is `hivemind-hook remote-run <run dir> -- command…`, started by
// Launch's ssh in the remote PTY: it runs the agent with the environment
// of the run dir, and when the agent exits, the connection drops (SIGHUP)
// or it is told to stop (SIGTERM), it kills every process that carries
// the session's mark, removes the run dir and exits with the agent's
// status. While it runs the run dir names it, so Reap can tell a live
// session from one whose helper was killed outright.
func Run(args []string, stderr io.Writer) int {
	resume := len(args) > 1 && args[1] == claudeResumeFlag
	if resume {
		args = append(args[:1:1], args[2:]...)
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(stderr, "usage: hivemind-hook remote-run <run dir> ["+claudeResumeFlag+"] -- command…")
		return 2
	}
	dir, argv := args[0], args[2:]
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hivemind-hook remote-run: %v\r\n", err)
		_ = os.RemoveAll(dir)
		return 1
	}
	extra, err := readEnvFile(filepath.Join(dir, envFile))
	if err != nil {
		return fail(err)
	}
	mark := ""
	for _, kv := range extra {
		if v, ok := strings.CutPrefix(kv, MarkEnv+"="); ok {
			mark = v
		}
	}
	if !ValidMark(mark) {
		return fail(fmt.Errorf("the environment carries no valid %s", MarkEnv))
	}
	extra = append(extra, hookrelay.EnvHookSocket+"="+filepath.Join(dir, sockFile))
	if err := os.WriteFile(filepath.Join(dir, procFile), fmt.Appendf(nil, "%d %d\n", os.Getpid(), procenv.Start(os.Getpid())), 0o600); err != nil {
		return fail(err)
	}

	// Notified, not ignored: an ignored signal stays ignored in the agent.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	env := mergeEnv(os.Environ(), extra)
	if resume {
		argv = claudeResumeArgv(argv, env)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %w", argv[0], err))
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	stopping := false
	var killAt <-chan time.Time
loop:
	for {
		select {
		case <-exited:
			break loop
		case s := <-sigs:
			if (s != syscall.SIGHUP && s != syscall.SIGTERM) || stopping {
				// SIGINT and SIGQUIT came from the terminal to the whole
				// foreground group: the agent has its own.
				continue
			}
			stopping = true
			// The agent is in this process group; its setsid children
			// carry the mark.
			_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGTERM)
			signalMarked(mark, syscall.SIGTERM)
			killAt = time.After(stopGrace)
		case <-killAt:
			break loop
		}
	}
	left := reapMarked(mark, killWait)
	select {
	case <-exited:
	default:
		_ = cmd.Process.Kill()
		<-exited
	}
	if left == 0 {
		_ = os.RemoveAll(dir)
	}
	code := 0
	if ps := cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	return code
}

// readEnvFile reads and removes the run dir's environment file: it holds
// secrets and is read once.
func readEnvFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	defer f.Close()
	_ = os.Remove(path)
	b, err := io.ReadAll(io.LimitReader(f, maxEnvFile+1))
	if err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	if len(b) > maxEnvFile {
		return nil, fmt.Errorf("environment file larger than %d bytes", maxEnvFile)
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, _, ok := bytes.Cut(kv, []byte("=")); ok && len(k) > 0 {
			env = append(env, string(kv))
		}
	}
	return env, nil
}

// mergeEnv is base with the variables of extra set (replacing any of the
// same name).
func mergeEnv(base, extra []string) []string {
	set := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// signalMarked sends sig to every process of this user carrying the
// session's mark and returns how many there were.
func signalMarked(mark string, sig syscall.Signal) int {
	pids := procenv.ProcsWithEnv(os.Getuid(), MarkEnv+"="+mark)
	for _, pid := range pids {
		if pid != os.Getpid() {
			_ = syscall.Kill(pid, sig)
		}
	}
	return len(pids)
}

// reapMarked kills every marked process and waits (at most wait) until
// none is left; it returns how many still are.
func reapMarked(mark string, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for {
		n := signalMarked(mark, syscall.SIGKILL)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		// Killed processes are not our children: nothing to wait on.
		time.Sleep(25 * time.Millisecond)
	}
}

// Reap is `hivemind-hook remote-reap [id…]` on the host: for each run dir
// whose helper is gone (killed outright, or the machine rebooted) — and
// for each named id, whatever its state — it kills the session's marked
// processes and removes the dir. A run dir that never got a helper is
// removed once older than a minute. It prints what it did.
func Reap(args []string, stdout, stderr io.Writer) int {
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintln(stderr, "hivemind-hook remote-reap:", err)
		return 1
	}
	named := map[string]bool{}
	for _, a := range args {
		named[a] = true
	}
	root := filepath.Join(home, ".cache", "hivemind", "run")
	ents, _ := os.ReadDir(root)
	sessions, procs := 0, 0
	for _, e := range ents {
		id := e.Name()
		if !e.IsDir() || !ValidMark(id) {
			continue
		}
		dir := filepath.Join(root, id)
		pid, start, hasProc := readProcFile(filepath.Join(dir, procFile))
		alive := hasProc && pid > 0 && procenv.Alive(pid, start)
		switch {
		case named[id]:
			if alive && syscall.Kill(pid, syscall.SIGKILL) == nil {
				procs++ // the helper: not marked itself
			}
		case alive:
			continue
		case !hasProc:
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < time.Minute {
				continue // a launch between its two connections
			}
		}
		procs += signalMarked(id, syscall.SIGKILL)
		if reapMarked(id, killWait) == 0 {
			_ = os.RemoveAll(dir)
		}
		sessions++
	}
	fmt.Fprintf(stdout, "reaped %d processes of %d sessions\n", procs, sessions)
	return 0
}

func readProcFile(path string) (pid int, start uint64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 100 {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil
}

// Main runs the helper's remote sub-commands (remote-launch, remote-run,
// remote-reap, remote-sync, remote-ping); ok is false when args name none of them.
func Main(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "remote-launch":
		return Launch(args[1:], stderr), true
	case "remote-run":
		return Run(args[1:], stderr), true
	case "remote-reap":
		return Reap(args[1:], stdout, stderr), true
	case "remote-sync":
		return Sync(args[1:], os.Stdin, stdout, stderr), true
	case "remote-ping":
		fmt.Fprintln(stdout, pingAnswer)
		return 0, true
	}
	return 0, false
}
