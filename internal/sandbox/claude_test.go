package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Real Claude Code, offline, confined with no Hivemind hook in the way:
// the model's scripted Write of a project file outside the scope fails in
// the tool itself (the kernel refuses it), while its writes inside the
// scope (the task's output and done marker) work.
func TestClaudeWriteRefusedByKernel(t *testing.T) {
	if !Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	bin, ok := claudetest.Binary()
	if !ok {
		t.Skip("claude is not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkout, task := filepath.Join(root, "checkout"), filepath.Join(root, "task")
	for _, d := range []string{checkout, filepath.Join(task, "assignments"), filepath.Join(task, "outputs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Do subtask st_1", DoneMarker: filepath.Join(task, "outputs", "st_1.done"),
		Writes:  []string{filepath.Join(task, "outputs", "st_1.md")},
		Subtask: &vocab.Subtask{ID: "st_1", Description: "add hello.go", Checkpoint: 1, Files: []string{"CREATE hello.go"}}}
	b, _ := json.Marshal(a)
	assignment := filepath.Join(task, "assignments", "worker_1.json")
	if err := os.WriteFile(assignment, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sc := fakeapi.DefaultScript()
	sc.Project = checkout // the model writes the project's files there
	api := fakeapi.New(sc)
	defer api.Close()
	home := claudetest.Home(t, checkout)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := Wrap(exe, []string{home, task}, []string{bin, "-p", "--dangerously-skip-permissions",
		"[HIVEMIND] Do subtask st_1 — read " + assignment})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = checkout, claudetest.Env(home, api.URL())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	target := filepath.Join(checkout, "hello.go")
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("%s was written outside the scope", target)
	}
	var refused string
	for _, r := range api.Requests() {
		for _, tr := range r.Results {
			if tr.IsError && (strings.Contains(tr.Text, "EACCES") || strings.Contains(strings.ToLower(tr.Text), "permission denied")) {
				refused = tr.Text
			}
		}
	}
	if refused == "" {
		t.Fatalf("no Write tool result reports the refusal; claude said:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(task, "outputs", "st_1.done")); err != nil {
		t.Errorf("the done marker inside the scope: %v", err)
	}
	t.Logf("Claude's Write of %s: %q", target, refused)
}
