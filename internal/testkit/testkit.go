// Package testkit holds the test helpers that tests of several packages
// share: waiting on a condition with a deadline, tasks on disk in a given
// state, and a machine without Claude Code for the preflight.
package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// LongEnv is the environment variable that makes sampled tests
// exhaustive (make test-long, nightly): the normal suite checks a fixed
// sample, edges included; the long one every case.
const LongEnv = "HIVEMIND_TEST_LONG"

// Long reports whether the exhaustive forms of sampled tests run.
func Long() bool { return os.Getenv(LongEnv) != "" }

// WaitFor polls cond until it holds, failing the test when d passes
// first: set d for a loaded machine, it costs nothing when cond holds soon.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NewTask creates a task with a state (none when st is nil) in the
// workspace at root and returns its id.
func NewTask(t *testing.T, root string, task vocab.Task, st *vocab.State) string {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(task)
	if err != nil {
		t.Fatal(err)
	}
	if st != nil {
		st.TaskID, st.TaskDir = td.ID(), td.Dir()
		store, _, _, err := workspace.OpenStateStore(td)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Save(*st); err != nil {
			t.Fatal(err)
		}
		_ = store.Close()
	}
	return td.ID()
}

// NoClaude is a machine without Claude Code (and without any other
// program), for preflight.Env: the preflight of a claude run fails at
// once, and a command it runs fails the test.
func NoClaude(t *testing.T) func() preflight.Env {
	return func() preflight.Env {
		e := preflight.System()
		e.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
		e.Output = func(context.Context, ...string) ([]byte, error) {
			t.Error("a command ran although claude is missing")
			return nil, exec.ErrNotFound
		}
		return e
	}
}

// Git returns a function that runs git in dir with a test identity,
// failing the test on an error.
func Git(t testing.TB, dir string) func(args ...string) {
	return func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// InitRepo makes dir a git repository whose one commit holds the file
// name with content, and returns Git(t, dir).
func InitRepo(t testing.TB, dir, name, content string) func(args ...string) {
	t.Helper()
	git := Git(t, dir)
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", name)
	git("commit", "-qm", "init")
	return git
}
