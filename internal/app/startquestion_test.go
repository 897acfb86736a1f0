package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/tui"
)

// A failed preflight reaches the start screen with every failed check and
// its fix on lines of their own; a failure of the root check alone is a
// question whose yes runs sandboxed.
func TestStartErrorForTheStartScreen(t *testing.T) {
	t.Setenv("IS_SANDBOX", "")
	root := preflight.Result{Check: preflight.CheckRoot, Status: preflight.Fail, Msg: "refuses as root", Fix: "run IS_SANDBOX=1 hivemind …"}
	path := preflight.Result{Check: "codex", Status: preflight.Fail, Msg: "codex is not on PATH", Fix: "npm install -g @openai/codex"}
	ok := preflight.Result{Check: "claude", Status: preflight.OK, Msg: "2.1.197"}
	sandboxed := func() (tui.Session, error) { return tui.Session{TaskID: "t"}, nil }

	err := startError(&preflight.Error{Results: []preflight.Result{ok, root, path}}, sandboxed)
	var q *tui.StartQuestion
	if errors.As(err, &q) {
		t.Fatal("asked although a yes cannot fix the missing codex")
	}
	want := "the agents cannot start; nothing was started or created:\n" +
		"claude as root: refuses as root\nfix: run IS_SANDBOX=1 hivemind …\n" +
		"codex: codex is not on PATH\nfix: npm install -g @openai/codex"
	if err.Error() != want {
		t.Fatalf("error:\n%s\nwant:\n%s", err, want)
	}

	err = startError(&preflight.Error{Results: []preflight.Result{ok, root}}, sandboxed)
	if !errors.As(err, &q) || !strings.Contains(q.Question, "IS_SANDBOX=1") {
		t.Fatalf("root alone: %v", err)
	}
	if s, err := q.Yes(); err != nil || s.TaskID != "t" {
		t.Fatalf("yes: %v %v", s, err)
	}

	other := errors.New("workspace: locked")
	if startError(other, sandboxed) != other {
		t.Error("another error changed")
	}
}
