package roles_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// hookEnv makes the test binary act as the PreToolUse hook command (what
// `hivemind hook PreToolUse` does), appending each denial to the file it
// names.
const hookEnv = "HIVEMIND_ROLES_TEST_HOOK_LOG"

func TestMain(m *testing.M) {
	if log := os.Getenv(hookEnv); log != "" {
		stdin, _ := io.ReadAll(os.Stdin)
		out, denied, reason := roles.PreToolUse(stdin, os.Getenv)
		if denied {
			_, _ = os.Stdout.Write(out)
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				_, _ = f.WriteString(reason + "\n")
				_ = f.Close()
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRealClaudeReviewerWriteDenied runs real Claude Code (headless) against
// the fake Messages API as the Reviewer, with the Reviewer's tool flags and
// the PreToolUse hook. The scripted model first tries to Write a project
// source file: the hook denies it and the file must not exist; then it
// writes its review file, which must exist.
func TestRealClaudeReviewerWriteDenied(t *testing.T) {
	bin, ok := claudetest.Binary()
	if !ok {
		t.Skip("claude not on PATH")
	}
	if testing.Short() {
		t.Skip("real Claude Code test skipped in -short mode")
	}
	project := t.TempDir()
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "outputs", "reviews"} {
		if err := os.MkdirAll(filepath.Join(taskDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, "go.mod"), "module example.com/demo\n\ngo 1.26\n")
	write(filepath.Join(taskDir, "task.md"), "Add a greeting service\n")
	write(filepath.Join(taskDir, "agents", "lead", "plan.md"), "```json\n"+
		`{"summary":"s","checkpoints":[{"id":1,"name":"a"}],"subtasks":[{"id":"st_1","description":"d","checkpoint":1,"dependencies":[],"files":["CREATE src/a.go"]}]}`+"\n```\n")
	a := vocab.Assignment{Seq: 2, State: vocab.PhasePlanReview, Role: "reviewer", Agent: "reviewer",
		Instruction: "Review the plan: write plan-approved.md or plan-feedback.md",
		Reads:       []string{filepath.Join(taskDir, "task.md"), filepath.Join(taskDir, "agents", "lead", "plan.md")},
		Writes:      []string{filepath.Join(taskDir, "agents", "reviewer", "plan-approved.md"), filepath.Join(taskDir, "agents", "reviewer", "plan-feedback.md")}}
	ab, _ := json.Marshal(a)
	assignment := filepath.Join(taskDir, "assignments", "reviewer.json")
	write(assignment, string(ab))

	sc := fakeapi.DefaultScript()
	sc.Scenario.ForbiddenWrite = true
	api := fakeapi.New(sc)
	defer api.Close()

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hookLog := filepath.Join(t.TempDir(), "denials.log")
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{
			map[string]any{"type": "command", "command": self, "timeout": 30}}}}}})
	settingsFile := filepath.Join(t.TempDir(), "settings.json")
	write(settingsFile, string(settings))

	prompt, _, err := roles.Prompt("reviewer", "", "")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-p", "[HIVEMIND] Review the plan — read " + assignment},
		roles.ClaudeArgs(roles.DefaultPolicy("reviewer"), config.Default().Role("reviewer"), prompt)...)
	args = append(args, "--settings", settingsFile)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = project
	cmd.Env = append(claudetest.Env(claudetest.Home(t, project), api.URL()),
		roles.EnvRole+"=reviewer", roles.EnvAgentID+"=reviewer", roles.EnvTaskDir+"="+taskDir, roles.EnvProject+"="+project, hookEnv+"="+hookLog)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}

	if strings.Contains(string(out), "matches no known tool") {
		t.Errorf("a tool flag names a tool Claude Code does not know:\n%s", out)
	}
	src := filepath.Join(project, "src", "a.go")
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("the Reviewer's forbidden write happened: %s exists (%v)", src, err)
	}
	if _, err := os.Stat(filepath.Join(taskDir, "agents", "reviewer", "plan-feedback.md")); err != nil {
		t.Errorf("review file not written: %v\n%s", err, out)
	}
	denials, _ := os.ReadFile(hookLog)
	if !strings.Contains(string(denials), "the reviewer role may not write "+src) {
		t.Errorf("hook denials: %q", denials)
	}
	// The model saw the reason: the next request carries it in a tool result.
	seen := false
	for _, r := range api.Requests() {
		if strings.Contains(string(r.Body), "the reviewer role may not write") {
			seen = true
		}
	}
	if !seen {
		t.Error("no request to the model carried the denial reason")
	}
}
