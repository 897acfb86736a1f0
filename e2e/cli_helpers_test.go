package e2e_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
)

// cliTurnDeadline bounds one scripted turn of a real CLI (start, type,
// three writes, exit) on a loaded 2-core machine.
const cliTurnDeadline = 2 * time.Minute

// cliOffline is one real agent CLI (Codex or Gemini) in a PTY against the
// scripted fake API, in a git project holding one worker assignment.
type cliOffline struct {
	Name       string // "codex" or "gemini"
	Bin        string
	API        *fakeapi.Server
	Project    string
	Home       string
	Assignment string // absolute path of the worker assignment
	HookLog    string // every hook's stdin JSON, one line each
	Session    *ptyagent.Session
	// Spec, when set, adjusts the session's spec before start.
	Spec func(*ptyagent.Spec)
}

// setupCLI skips the test when name is not on PATH (or in -short mode) and
// otherwise prepares the fake API, a git project with a worker assignment
// whose script writes greet.go, outputs/st_1.md and the done marker, and a
// home directory.
func setupCLI(t *testing.T, name, pkg string) *cliOffline {
	t.Helper()
	bin, ok := agenttest.Binary(name)
	if !ok {
		t.Skipf("real %s CLI is not on PATH: `npm install --prefix DIR %s` and add DIR/node_modules/.bin to PATH to run this test (.ci/run does)", name, pkg)
	}
	if testing.Short() {
		t.Skipf("real %s end-to-end test skipped in -short mode", name)
	}
	realCLISlot(t)
	project := t.TempDir()
	gitInit(t, project)
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "agents/worker_1/outputs", "reviews"} {
		if err := os.MkdirAll(filepath.Join(taskDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Implement subtask st_1.",
		Subtask:     &vocab.Subtask{ID: "st_1", Description: "Greeting core.", Checkpoint: 1, Files: []string{"greet.go"}},
		Writes:      []string{filepath.Join(taskDir, "agents", "worker_1", "outputs", "st_1.md")},
		DoneMarker:  filepath.Join(taskDir, "agents", "worker_1", "outputs", "st_1.done")}
	b, _ := json.Marshal(a)
	assignment := filepath.Join(taskDir, "assignments", "worker_1.json")
	if err := os.WriteFile(assignment, b, 0o644); err != nil {
		t.Fatal(err)
	}
	api := fakeapi.New(fakeapi.DefaultScript())
	t.Cleanup(api.Close)
	home := t.TempDir()
	c := &cliOffline{Name: name, Bin: bin, API: api, Project: project, Home: home, Assignment: assignment,
		HookLog: filepath.Join(home, "hooks.log")}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, r := range api.Requests() {
			t.Logf("request %s %s agent=%q tools=%v reply=%s tool=%s path=%s results=%v", r.Kind, r.Path, r.Agent, r.HasTools,
				r.Reply, r.Tool, r.ToolPath, r.Results)
		}
		hooks, _ := os.ReadFile(c.HookLog)
		t.Logf("hooks:\n%s", clip(string(hooks), 4000))
	})
	return c
}

// logHooks returns hooks for events that each append the hook's stdin
// JSON as one line to the hook log.
func (c *cliOffline) logHooks(events ...string) []agenttest.Hook {
	var hooks []agenttest.Hook
	for _, ev := range events {
		hooks = append(hooks, agenttest.Hook{Event: ev, Command: "{ tr -d '\\n'; echo; } >> '" + c.HookLog + "'"})
	}
	return hooks
}

// start runs argv in a PTY (120×40) in the project with env.
func (c *cliOffline) start(t *testing.T, argv, env []string) {
	t.Helper()
	spec := ptyagent.Spec{ID: vocab.AgentID(c.Name), Argv: argv, Dir: c.Project, BaseEnv: env, Cols: 120, Rows: 40,
		Kind: ptyagent.ProfileCustom, StopTimeout: 5 * time.Second, LogPath: filepath.Join(c.Home, c.Name+".log")}
	if c.Spec != nil {
		c.Spec(&spec)
	}
	s, err := ptyagent.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	c.Session = s
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s screen:\n%s", c.Name, s.Text())
		}
		s.Stop()
		s.Wait()
		_ = s.Close()
	})
}

// waitScreen waits until the screen contains text.
func (c *cliOffline) waitScreen(t *testing.T, d time.Duration, text string) {
	t.Helper()
	waitFor(t, d, c.Name+" screen showing "+text, func() bool { return strings.Contains(c.Session.Text(), text) })
}

// typeLine types line into the CLI's prompt and submits it with a
// separate Enter once the screen echoes it, then waits up to 20 s for
// submitted to hold. A CLI still probing the terminal can drop early keys
// (the line is retyped, up to three times), and an Enter can be taken by a
// completion popup or paste detection (Enter is resent every 3 s, as
// ptyagent's EnterRetries do).
func (c *cliOffline) typeLine(t *testing.T, line string, submitted func() bool) {
	t.Helper()
	echo := line
	if len(echo) > 24 {
		echo = echo[len(echo)-24:]
	}
	for try := 0; ; try++ {
		if _, err := c.Session.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if pollUntil(5*time.Second, func() bool { return strings.Contains(c.Session.Text(), echo) }) {
			break
		}
		if try == 2 {
			t.Fatalf("%s never echoed the typed line %q", c.Name, line)
		}
		_, _ = c.Session.Write([]byte{0x15}) // Ctrl-U: clear a partial line
	}
	for try := 0; try < 6; try++ {
		if _, err := c.Session.Write([]byte("\r")); err != nil {
			t.Fatal(err)
		}
		if pollUntil(3*time.Second, submitted) {
			if try > 0 {
				t.Logf("%s: %q submitted after %d extra Enter(s)", c.Name, line, try)
			}
			return
		}
	}
	t.Fatalf("%s: %q typed but never submitted", c.Name, line)
}

// pollUntil reports whether cond holds within d.
func pollUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// exited reports whether the CLI process has exited.
func (c *cliOffline) exited() bool {
	select {
	case <-c.Session.Done():
		return true
	default:
		return false
	}
}

// typedTurn types the [HIVEMIND] line once the screen shows ready,
// checks that exactly one submit hook carried it, waits for the turn-end
// hook and checks that exactly one SessionStart hook came: the hook names
// differ per CLI (Codex: UserPromptSubmit/Stop, Gemini: BeforeAgent/
// AfterAgent). It returns the turn-end hook's record.
func (c *cliOffline) typedTurn(t *testing.T, ready, submitHook, endHook string) map[string]any {
	t.Helper()
	c.waitScreen(t, time.Minute, ready)
	line := c.hivemindLine()
	c.typeLine(t, line, func() bool { return len(c.hooks(submitHook)) > 0 })
	if n := len(c.hooks(submitHook)); n != 1 {
		t.Fatalf("%d %s hooks for one typed line, want 1", n, submitHook)
	}
	if p := c.hooks(submitHook)[0]["prompt"]; p != line {
		t.Errorf("%s prompt = %q, want %q", submitHook, p, line)
	}
	waitFor(t, cliTurnDeadline, endHook+" hook", func() bool { return len(c.hooks(endHook)) == 1 })
	if n := len(c.hooks("SessionStart")); n != 1 {
		t.Errorf("%d SessionStart hooks, want 1", n)
	}
	return c.hooks(endHook)[0]
}

// quit types /quit and checks that the CLI exits 0 leaving no process.
func (c *cliOffline) quit(t *testing.T) {
	t.Helper()
	c.typeLine(t, "/quit", c.exited)
	if code := c.Session.ExitCode(); code != 0 {
		t.Errorf("%s exited %d after /quit, want 0", c.Name, code)
	}
	noLeftovers(t, c.Project)
}

// hooks returns the hook log's records of event (hook_event_name).
func (c *cliOffline) hooks(event string) []map[string]any {
	f, err := os.Open(c.HookLog)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["hook_event_name"] == event {
			out = append(out, m)
		}
	}
	return out
}

// checkScriptedWrites asserts that every file the script chose for the
// assignment exists with the scripted content, that each was written by a
// tool call the CLI reported as successful, and returns the main turn
// requests (those offering the write tool).
func (c *cliOffline) checkScriptedWrites(t *testing.T, kind string) []fakeapi.Request {
	t.Helper()
	files := c.API.Files(c.Assignment)
	if len(files) != 3 {
		t.Fatalf("script chose %d files, want 3 (source, output, done marker): %+v", len(files), files)
	}
	var main []fakeapi.Request
	written := map[string]bool{}
	for _, r := range c.API.Requests() {
		if r.Kind != kind || !r.HasTools {
			continue
		}
		main = append(main, r)
		for _, res := range r.Results {
			if res.IsError {
				t.Errorf("%s reported a failed tool call: %q", c.Name, clip(res.Text, 300))
			}
		}
		if r.ToolPath != "" {
			written[r.ToolPath] = true
		}
	}
	for _, fw := range files {
		got, err := os.ReadFile(fw.Path)
		if err != nil {
			t.Errorf("scripted file not written: %v", err)
			continue
		}
		if strings.TrimSuffix(string(got), "\n") != strings.TrimSuffix(fw.Content, "\n") {
			t.Errorf("%s content differs from the script:\n got %q\nwant %q", fw.Path, clip(string(got), 200), clip(fw.Content, 200))
		}
		if !written[fw.Path] {
			t.Errorf("%s was not written through a scripted tool call", fw.Path)
		}
	}
	if n := len(main); n != len(files)+1 {
		t.Errorf("%d main turn requests, want %d (one per write and the final answer)", n, len(files)+1)
	}
	if n := c.API.TurnsEnded(c.Assignment); n != 1 {
		t.Errorf("%d turns ended for the assignment, want 1", n)
	}
	return main
}

// tokenSums adds up the usage the fake reported over reqs.
func tokenSums(reqs []fakeapi.Request) (in, out int) {
	for _, r := range reqs {
		in += r.InputTokens
		out += r.OutputTokens
	}
	return in, out
}

// hivemindLine is the message typed into each CLI.
func (c *cliOffline) hivemindLine() string {
	rel, _ := filepath.Rel(c.Project, c.Assignment)
	return "[HIVEMIND] New assignment: read " + rel
}

// clip shortens s to n bytes for logs.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
