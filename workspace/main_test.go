package workspace

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Helper processes: the test binary re-executes itself with
// HIVEMIND_WS_HELPER set to run one of these roles in a separate process.
const helperEnv = "HIVEMIND_WS_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper runs in the child process. Roles that hold something print
// "ready" on stdout and then wait until stdin is closed (or they are killed).
func runHelper(mode string) int {
	root, task := os.Getenv("WS_ROOT"), os.Getenv("WS_TASK")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		fmt.Println("error:", err)
		return 2
	}
	wait := func() { _, _ = io.Copy(io.Discard, os.Stdin) }
	switch mode {
	case "append":
		w, err := Open(root)
		if err != nil {
			return fail(err)
		}
		td, err := w.OpenTask(task)
		if err != nil {
			return fail(err)
		}
		l, err := OpenEventLog(td)
		if err != nil {
			return fail(err)
		}
		n, _ := strconv.Atoi(os.Getenv("WS_N"))
		agent := os.Getenv("WS_AGENT")
		pad := strings.Repeat(agent, 1000)
		for i := range n {
			if err := l.Append(vocab.EventRecord{Type: "test", Agent: vocab.AgentID(agent), Details: map[string]any{"i": i, "pad": pad}}); err != nil {
				return fail(err)
			}
		}
		return 0
	case "hold-lock":
		l, _, err := AcquireWorkspaceLock(root)
		if err != nil {
			return fail(err)
		}
		fmt.Println("ready")
		wait()
		_ = l.Release()
		return 0
	case "hold-resource":
		w, err := Open(root)
		if err != nil {
			return fail(err)
		}
		td, err := w.OpenTask(task)
		if err != nil {
			return fail(err)
		}
		unlock, err := td.LockResource(context.Background(), "state.json", "child")
		if err != nil {
			return fail(err)
		}
		fmt.Println("ready")
		wait()
		unlock()
		return 0
	case "state-store":
		w, err := Open(root)
		if err != nil {
			return fail(err)
		}
		td, err := w.OpenTask(task)
		if err != nil {
			return fail(err)
		}
		s, _, _, err := OpenStateStore(td)
		if err != nil {
			return fail(err)
		}
		fmt.Println("ready")
		wait()
		_ = s.Close()
		return 0
	}
	return fail(fmt.Errorf("unknown helper mode %q", mode))
}

// helper is a running helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHelper starts the test binary in helper mode with extra env vars.
func startHelper(t *testing.T, mode string, env ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		_ = stdin.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return h
}

// waitReady blocks until the helper prints its first line and fails the
// test unless it is "ready". A deadline guards against a hung child.
func (h *helper) waitReady(t *testing.T) {
	t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		line, err := h.out.ReadString('\n')
		ch <- res{strings.TrimSpace(line), err}
	}()
	select {
	case r := <-ch:
		if r.line != "ready" {
			t.Fatalf("helper: %q %v", r.line, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not get ready within 30s")
	}
}

// kill kills the helper with SIGKILL and reaps it.
func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
}

// newTask opens a fresh workspace in a temp dir and creates one task.
func newTask(t *testing.T) (*Workspace, *TaskDir) {
	t.Helper()
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	td, err := w.CreateTask(vocab.Task{Description: "test task", Project: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return w, td
}
