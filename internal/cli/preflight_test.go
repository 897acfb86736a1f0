package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

// fakeNoClaude runs the preflight on a machine without Claude Code.
func fakeNoClaude(t *testing.T) {
	t.Helper()
	old := checkEnv
	t.Cleanup(func() { checkEnv = old })
	checkEnv = testkit.NoClaude(t)
}

// simOptions are the options of a run with the sim agents in project.
func simOptions(project string) app.Options {
	return app.Options{Project: project, Agent: "sim", AgentSet: true, Workers: 2, WorkersSet: true}
}

// A task whose agents cannot start stops before anything is created,
// with the reason and the fix; --no-preflight goes past the check.
func TestPreflightStopsBeforeTheWorkspace(t *testing.T) {
	fakeNoClaude(t)
	project := t.TempDir()
	var out, errOut strings.Builder
	code := Run([]string{"--headless", "--agent", "claude", "--project", project, "fix the login bug"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitError {
		t.Errorf("exit %d, want %d", code, app.ExitError)
	}
	for _, want := range []string{"nothing was started or created", "fail  claude command", "npm install -g @anthropic-ai/claude-code", "hivemind doctor", "--no-preflight"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if entries, _ := os.ReadDir(project); len(entries) != 0 {
		t.Errorf("the failed preflight created %v", entries)
	}

	// The start screen's path (app.New) gives one line for the UI.
	_, err := app.New(app.Options{Project: project, Agent: "claude", AgentSet: true, CheckEnv: checkEnv}, vocab.Task{Description: "fix it now"}, io.Discard)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "claude command: claude (Claude Code") {
		t.Errorf("app.New error %q, want one line naming the check", err)
	}

	// --no-preflight: the run is wired (the missing claude would show as
	// agent exits later).
	a, err := app.New(app.Options{Project: project, Agent: "claude", AgentSet: true, NoPreflight: true, CheckEnv: checkEnv}, vocab.Task{Description: "fix it now"}, io.Discard)
	if err != nil {
		t.Fatalf("--no-preflight: %v", err)
	}
	a.Close()
}

func TestDoctorLines(t *testing.T) {
	fakeNoClaude(t)
	var out, errOut strings.Builder
	if code := Run([]string{"doctor", "--project", t.TempDir(), "--agent", "claude"}, strings.NewReader(""), &out, &errOut); code != app.ExitError {
		t.Errorf("exit %d, want %d", code, app.ExitError)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `agent "claude" (from --agent), 2 workers`) ||
		!strings.HasPrefix(lines[1], "write scopes: ") || !strings.HasPrefix(lines[2], "fail  claude command") {
		t.Errorf("doctor printed:\n%s", out.String())
	}
	// An unfinished task's own agents are checked too.
	project := t.TempDir()
	a, err := app.New(simOptions(project), vocab.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	out.Reset()
	errOut.Reset()
	if code := Run([]string{"doctor", "--project", project}, strings.NewReader(""), &out, &errOut); code != app.ExitError ||
		!strings.Contains(out.String(), "(hivemind --resume): agent \"sim\", 2 workers\nok    sim") {
		t.Errorf("doctor with an unfinished sim task: exit %d\n%s", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Run([]string{"doctor", "--project", t.TempDir(), "--agent", "sim"}, strings.NewReader(""), &out, &errOut); code != app.ExitOK || !strings.Contains(out.String(), "ok    sim") {
		t.Errorf("doctor --agent sim: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

func TestDemoCleanup(t *testing.T) {
	// Over (no unfinished task): removed.
	done := t.TempDir()
	if err := os.MkdirAll(filepath.Join(done, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if msg := demoCleanup(options{Options: app.Options{Project: done}}); msg != "removed the demo project "+done {
		t.Errorf("message %q", msg)
	}
	if _, err := os.Stat(done); err == nil {
		t.Errorf("%s still there", done)
	}
	// Unfinished: kept, and the message says where.
	open := t.TempDir()
	a, err := app.New(simOptions(open), vocab.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if msg := demoCleanup(options{Options: app.Options{Project: open}}); !strings.Contains(msg, "stays in "+open) {
		t.Errorf("message %q", msg)
	}
	if _, err := os.Stat(open); err != nil {
		t.Errorf("unfinished demo project removed: %v", err)
	}
}

func TestConfirmSandbox(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   bool
	}{{"y\n", true}, {"YES\n", true}, {"\n", false}, {"n\n", false}, {"", false}} {
		t.Setenv("IS_SANDBOX", "")
		var out strings.Builder
		got := confirmSandbox(strings.NewReader(tc.answer), &out)
		if got != tc.want || (os.Getenv("IS_SANDBOX") == "1") != tc.want {
			t.Errorf("answer %q: %v, IS_SANDBOX=%q; want %v", tc.answer, got, os.Getenv("IS_SANDBOX"), tc.want)
		}
		if !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("question: %q", out.String())
		}
	}
	root := preflight.Result{Check: preflight.CheckRoot, Status: preflight.Fail}
	login := preflight.Result{Check: "claude login", Status: preflight.Fail}
	ok := preflight.Result{Check: "claude command"}
	if !onlyRootFailed(&preflight.Error{Results: []preflight.Result{ok, root}}) ||
		onlyRootFailed(&preflight.Error{Results: []preflight.Result{root, login}}) || onlyRootFailed(os.ErrNotExist) {
		t.Error("onlyRootFailed")
	}
}

// After any run, a demo project (marked by hivemind demo) whose task is
// over is removed; a project without the mark, or the current directory,
// is not.
func TestEndDemo(t *testing.T) {
	mk := func(marked bool) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".hivemind"), 0o755); err != nil {
			t.Fatal(err)
		}
		if marked {
			if err := os.WriteFile(filepath.Join(dir, ".hivemind", demoMarker), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	demo, plain, here := mk(true), mk(false), mk(true)
	var errOut strings.Builder
	endDemo(options{Options: app.Options{Project: demo}}, &errOut)
	endDemo(options{Options: app.Options{Project: plain}}, &errOut)
	if _, err := os.Stat(demo); err == nil {
		t.Errorf("the demo project %s stays", demo)
	}
	if _, err := os.Stat(plain); err != nil {
		t.Errorf("a project without the demo mark was removed: %v", err)
	}
	t.Chdir(here)
	endDemo(options{}, &errOut)
	if _, err := os.Stat(here); err != nil || !strings.Contains(errOut.String(), "is your current directory, so it stays") {
		t.Errorf("the current directory: %v\n%s", err, errOut.String())
	}
	if n := strings.Count(errOut.String(), "hivemind demo:"); n != 2 {
		t.Errorf("%d messages:\n%s", n, errOut.String())
	}
}
