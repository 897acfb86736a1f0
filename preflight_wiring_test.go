package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/workspace"
)

// fakeNoClaude is a machine without Claude Code (and without any other
// program): the preflight of a claude run fails at once.
func fakeNoClaude(t *testing.T) {
	t.Helper()
	old := checkEnv
	t.Cleanup(func() { checkEnv = old })
	checkEnv = func() preflight.Env {
		e := preflight.System()
		e.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
		e.Output = func(context.Context, ...string) ([]byte, error) {
			t.Error("a command ran although claude is missing")
			return nil, exec.ErrNotFound
		}
		return e
	}
}

// A task whose agents cannot start stops before anything is created,
// with the reason and the fix; --no-preflight goes past the check.
func TestPreflightStopsBeforeTheWorkspace(t *testing.T) {
	fakeNoClaude(t)
	project := t.TempDir()
	var out, errOut strings.Builder
	code := run([]string{"--headless", "--agent", "claude", "--project", project, "fix the login bug"}, strings.NewReader(""), &out, &errOut)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, want := range []string{"nothing was started or created", "fail  claude command", "npm install -g @anthropic-ai/claude-code", "hivemind doctor", "--no-preflight"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if entries, _ := os.ReadDir(project); len(entries) != 0 {
		t.Errorf("the failed preflight created %v", entries)
	}

	// The start screen's path (newApp) gives one line for the UI.
	_, err := newApp(options{project: project, agent: "claude", agentSet: true}, workspace.Task{Description: "fix it now"}, io.Discard)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "claude command: claude (Claude Code") {
		t.Errorf("newApp error %q, want one line naming the check", err)
	}

	// --no-preflight: the run is wired (the missing claude would show as
	// agent exits later).
	a, err := newApp(options{project: project, agent: "claude", agentSet: true, noPreflight: true}, workspace.Task{Description: "fix it now"}, io.Discard)
	if err != nil {
		t.Fatalf("--no-preflight: %v", err)
	}
	a.close()
}

func TestDoctorLines(t *testing.T) {
	fakeNoClaude(t)
	var out, errOut strings.Builder
	if code := run([]string{"doctor", "--project", t.TempDir(), "--agent", "claude"}, strings.NewReader(""), &out, &errOut); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `agent "claude" (from --agent), 2 workers`) || !strings.HasPrefix(lines[1], "fail  claude command") {
		t.Errorf("doctor printed:\n%s", out.String())
	}
	// An unfinished task's own agents are checked too.
	project := t.TempDir()
	a, err := newApp(simOptions(project), workspace.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	out.Reset()
	errOut.Reset()
	if code := run([]string{"doctor", "--project", project}, strings.NewReader(""), &out, &errOut); code != exitError ||
		!strings.Contains(out.String(), "(hivemind --resume): agent \"sim\", 2 workers\nok    sim") {
		t.Errorf("doctor with an unfinished sim task: exit %d\n%s", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"doctor", "--project", t.TempDir(), "--agent", "sim"}, strings.NewReader(""), &out, &errOut); code != exitOK || !strings.Contains(out.String(), "ok    sim") {
		t.Errorf("doctor --agent sim: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

func TestAgentsOf(t *testing.T) {
	cfg, _, err := config.Load(t.TempDir(), t.TempDir(), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	with := func(agent string, f func(*config.Config)) config.Config {
		c := cfg
		c.Agent = agent
		c.Roles = map[string]config.RoleConfig{}
		for k, v := range cfg.Roles {
			c.Roles[k] = v
		}
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want preflight.Agent
	}{
		{"default claude bypasses permissions", with("claude", nil),
			preflight.Agent{Name: "claude", Kind: preflight.Claude, Roles: "lead, reviewer, 2 workers", Bypass: true}},
		{"claude in acceptEdits", with("claude", func(c *config.Config) {
			for r, rc := range c.Roles {
				rc.PermissionMode = "acceptEdits"
				c.Roles[r] = rc
			}
		}), preflight.Agent{Name: "claude", Kind: preflight.Claude, Roles: "lead, reviewer, 2 workers"}},
		{"one worker", with("sim", func(c *config.Config) { c.Workers = 1 }),
			preflight.Agent{Name: "sim", Kind: preflight.Sim, Roles: "lead, reviewer, 1 worker"}},
		{"profile", with("codex", func(c *config.Config) {
			c.Profiles = map[string]config.Profile{"codex": {Command: []string{"codex", "--full-auto"}}}
		}), preflight.Agent{Name: "codex", Kind: preflight.Command, Argv0: "codex", Roles: "lead, reviewer, 2 workers"}},
		{"command line", with("FOO=1 my-agent --x", nil),
			preflight.Agent{Name: "FOO=1 my-agent --x", Kind: preflight.Command, Argv0: "my-agent", Shell: true, Roles: "lead, reviewer, 2 workers"}},
	} {
		if got := agentsOf(tc.cfg); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestResumeAgents(t *testing.T) {
	task := workspace.Task{Agent: "sim", Workers: 3}
	for _, tc := range []struct {
		name        string
		o           options
		cfgAgent    string
		cfgWorkers  int
		wantAgent   string
		wantWorkers int
		wantNotes   []string
	}{
		{"config default is ignored", options{}, "claude", 2, "sim", 3, nil},
		{"same flags", options{agentSet: true, workersSet: true}, "sim", 3, "sim", 3, nil},
		{"--agent overrides, noted", options{agentSet: true}, "claude", 3, "claude", 3, []string{"agent_overridden"}},
		{"--workers is ignored, noted", options{workersSet: true}, "sim", 5, "sim", 3, []string{"workers_kept"}},
	} {
		cfg := config.Config{Agent: tc.cfgAgent, Workers: tc.cfgWorkers}
		got, notes := resumeAgents(tc.o, cfg, task)
		var types []string
		for _, n := range notes {
			types = append(types, n.Type)
		}
		if got.Agent != tc.wantAgent || got.Workers != tc.wantWorkers || strings.Join(types, ",") != strings.Join(tc.wantNotes, ",") {
			t.Errorf("%s: agent %q workers %d notes %v; want %q %d %v", tc.name, got.Agent, got.Workers, types, tc.wantAgent, tc.wantWorkers, tc.wantNotes)
		}
	}
	// A task from before task.json named its agent keeps the config's.
	if got, _ := resumeAgents(options{}, config.Config{Agent: "claude", Workers: 2}, workspace.Task{}); got.Agent != "claude" || got.Workers != 2 {
		t.Errorf("old task: %+v", got)
	}
}

// The wired resume runs the task's agents: a sim task resumed with the
// config default (claude) gets the sim factory, and its preflight is
// the sim's (which passes on a machine without Claude Code).
func TestNewAppResumeKeepsAgents(t *testing.T) {
	fakeNoClaude(t)
	project := t.TempDir()
	a, err := newApp(simOptions(project), workspace.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	b, err := newApp(options{project: project, resume: true}, workspace.Task{}, io.Discard)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer b.close()
	if b.cfg.Agent != "sim" || b.cfg.Workers != 2 {
		t.Errorf("resumed with agent %q, %d workers; want sim, 2", b.cfg.Agent, b.cfg.Workers)
	}
}

func TestDemoCleanup(t *testing.T) {
	// Over (no unfinished task): removed.
	done := t.TempDir()
	if err := os.MkdirAll(filepath.Join(done, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if msg := demoCleanup(options{project: done}); msg != "removed the demo project "+done {
		t.Errorf("message %q", msg)
	}
	if _, err := os.Stat(done); err == nil {
		t.Errorf("%s still there", done)
	}
	// Unfinished: kept, and the message says where.
	open := t.TempDir()
	a, err := newApp(simOptions(open), workspace.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	if msg := demoCleanup(options{project: open}); !strings.Contains(msg, "stays in "+open) {
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
