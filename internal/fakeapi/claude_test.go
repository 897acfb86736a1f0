package fakeapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/internal/sim/script"
)

// claudeSession is real Claude Code in a PTY, with its output kept raw (for
// ready detection) and rendered by Hivemind's emulator (for logs only).
type claudeSession struct {
	t       *testing.T
	cmd     *exec.Cmd
	ptmx    *os.File
	started time.Time

	mu      sync.Mutex
	raw     bytes.Buffer
	emu     screen.Screen
	lastOut time.Time

	readerDone chan struct{}
	exited     chan struct{}
	waitErr    error
}

func startClaude(t *testing.T, bin, dir string, env []string, args ...string) *claudeSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	s := &claudeSession{t: t, cmd: cmd, readerDone: make(chan struct{}), exited: make(chan struct{})}
	s.started = time.Now()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatalf("start claude: %v", err)
	}
	s.ptmx = ptmx
	// The emulator's answers to terminal queries (DA1 …) go back to Claude.
	s.emu = screen.New(screen.Options{Cols: 120, Rows: 40, Reply: ptmx})
	go func() {
		defer close(s.readerDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.raw.Write(buf[:n])
				s.lastOut = time.Now()
				_, _ = s.emu.Write(buf[:n])
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *claudeSession) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Text()
}

func (s *claudeSession) rawContains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.raw.Bytes(), []byte(sub))
}

func (s *claudeSession) quietFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastOut)
}

func (s *claudeSession) stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	_ = s.ptmx.Close()
	<-s.readerDone
	_ = s.emu.Close()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// claudeProject is a temp project with a task dir and a test HOME.
type claudeProject struct {
	project, taskDir, home string
}

func newClaudeProject(t *testing.T) (string, claudeProject) {
	t.Helper()
	bin, ok := claudetest.Binary()
	if !ok {
		t.Skip("claude not on PATH: install with `npm install -g @anthropic-ai/claude-code` to run the real Claude Code tests")
	}
	if testing.Short() {
		t.Skip("real Claude Code test skipped in -short mode")
	}
	project := t.TempDir()
	mustWrite(t, filepath.Join(project, "go.mod"), "module example.com/demo\n\ngo 1.26\n")
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "outputs", "reviews"} {
		if err := os.MkdirAll(filepath.Join(taskDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(taskDir, "task.md"), "Add a greeting service\n")
	return bin, claudeProject{project: project, taskDir: taskDir, home: claudetest.Home(t, project)}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (c claudeProject) writeAssignment(t *testing.T, a vocab.Assignment) string {
	t.Helper()
	p := filepath.Join(c.taskDir, "assignments", string(a.Agent)+".json")
	b, _ := json.MarshalIndent(a, "", "  ")
	mustWrite(t, p, string(b))
	return p
}

func (c claudeProject) start(t *testing.T, bin string, api *fakeapi.Server, agent string) *claudeSession {
	t.Helper()
	env := append(claudetest.Env(c.home, api.URL()),
		"HIVEMIND_AGENT_ID="+agent, "HIVEMIND_TASK_DIR="+c.taskDir, "HIVEMIND_PROJECT="+c.project)
	s := startClaude(t, bin, c.project, env, "--dangerously-skip-permissions")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s", s.screen())
			logRequests(t, api.Requests())
		}
	})
	return s
}

func logRequests(t *testing.T, reqs []fakeapi.Request) {
	t.Helper()
	for i, r := range reqs {
		t.Logf("request %d +%v: %s %s kind=%s stream=%v model=%s agent=%s tools=%v status=%d reply=%s %s stop=%s",
			i, r.At.Sub(reqs[0].At).Round(time.Millisecond), r.Method, r.Path, r.Kind, r.Stream, r.Model, r.Agent, r.HasTools,
			r.Status, r.Reply, r.Tool, r.StopReason)
	}
}

// waitReady waits for Claude's ready signs: the ✳ title (only after every
// dialog), the prompt, then 500 ms of quiet.
func (s *claudeSession) waitReady(t *testing.T) time.Duration {
	t.Helper()
	if !waitFor(t, 60*time.Second, "ready", func() bool {
		return s.rawContains("\x1b]0;✳") && strings.Contains(s.screen(), "❯") && s.quietFor() >= 500*time.Millisecond
	}) {
		t.Fatalf("claude not ready after 60s")
	}
	return time.Since(s.started)
}

// inject types one line the way NOTES.md says works (bracketed paste,
// ~80 ms, Enter) and confirms it reached the model (a new main request for
// that assignment), resending Enter if not. It returns the Enters sent.
func (s *claudeSession) inject(t *testing.T, api *fakeapi.Server, line, asgPath string) int {
	t.Helper()
	before := len(api.Requests())
	submitted := func() bool {
		for _, r := range api.Requests()[before:] {
			if r.Kind == "messages" && r.HasTools && r.Assignment == asgPath {
				return true
			}
		}
		return false
	}
	if _, err := s.ptmx.Write([]byte("\x1b[200~" + line + "\x1b[201~")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond) // Claude needs a pause between a paste and its Enter.
	enters := 0
	for !submitted() && enters < 3 {
		if _, err := s.ptmx.Write([]byte("\r")); err != nil {
			t.Fatal(err)
		}
		enters++
		waitFor(t, 3*time.Second, "submit", submitted)
	}
	if !submitted() {
		t.Fatalf("the [HIVEMIND] line never reached the API after %d Enters", enters)
	}
	return enters
}

// waitTurnEnd waits for the n-th end_turn answer for that assignment.
func waitTurnEnd(t *testing.T, api *fakeapi.Server, asgPath string, n int, d time.Duration) {
	t.Helper()
	if !waitFor(t, d, "end of turn", func() bool { return api.TurnsEnded(asgPath) >= n }) {
		t.Fatalf("turn %d never ended", n)
	}
}

func (s *claudeSession) exit(t *testing.T) time.Duration {
	t.Helper()
	waitFor(t, 10*time.Second, "idle", func() bool { return s.quietFor() >= 500*time.Millisecond })
	at := time.Now()
	if _, err := s.ptmx.Write([]byte("/exit\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Errorf("claude did not exit after /exit")
	}
	var ee *exec.ExitError
	if s.waitErr != nil && !errors.As(s.waitErr, &ee) {
		t.Errorf("wait: %v", s.waitErr)
	}
	return time.Since(at)
}

func checkFiles(t *testing.T, want []script.FileWrite) {
	t.Helper()
	for _, w := range want {
		got, err := os.ReadFile(w.Path)
		if err != nil {
			t.Errorf("file %s not created: %v", w.Path, err)
			continue
		}
		if string(got) != w.Content {
			t.Errorf("file %s content differs:\n got %q\nwant %q", w.Path, got, w.Content)
		}
	}
}

// TestRealClaudeWritesScriptedFiles runs real Claude Code against the fake
// API, injects a [HIVEMIND] line for a worker and checks that Claude's own
// Write tool created exactly the files the script decided; then a
// checkpoint fix turn in the same session modifies an existing file (Read,
// then Write, as Claude requires).
func TestRealClaudeWritesScriptedFiles(t *testing.T) {
	bin, c := newClaudeProject(t)
	st := &vocab.Subtask{ID: "st_1", Description: "Implement the greeting service core.", Checkpoint: 1,
		Dependencies: []string{}, Files: []string{"CREATE internal/greeting/greeting.go"}}
	asg := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Do subtask st_1: " + st.Description, Subtask: st,
		Reads:      []string{filepath.Join(c.taskDir, "plan.md")},
		Writes:     []string{filepath.Join(c.taskDir, "outputs", "st_1.md"), filepath.Join(c.taskDir, "outputs", "st_1.done")},
		DoneMarker: filepath.Join(c.taskDir, "outputs", "st_1.done")}
	asgPath := c.writeAssignment(t, asg)

	api := fakeapi.New(fakeapi.DefaultScript())
	defer api.Close()
	s := c.start(t, bin, api, "worker_1")
	ready := s.waitReady(t)
	before := len(api.Requests())

	injectAt := time.Now()
	enters := s.inject(t, api, "[HIVEMIND] worker_1: new assignment seq 1 (executing) — read "+asgPath+" and do exactly what it says.", asgPath)
	firstReq := time.Since(injectAt)
	waitTurnEnd(t, api, asgPath, 1, 90*time.Second)
	turn := time.Since(injectAt)

	want := api.Files(asgPath)
	if len(want) != 3 || want[2].Path != asg.DoneMarker {
		t.Fatalf("script decided %+v, want code, output, marker last", want)
	}
	checkFiles(t, want)
	var m vocab.DoneMarker
	if b, err := os.ReadFile(asg.DoneMarker); err != nil || json.Unmarshal(b, &m) != nil || m.AgentID != "worker_1" || m.OutputFile == "" {
		t.Errorf("bad done marker %q: %v", b, err)
	}

	// Turn 2: checkpoint fix of the existing file.
	code := filepath.Join(c.project, "internal", "greeting", "greeting.go")
	mustWrite(t, filepath.Join(c.taskDir, "reviews", "checkpoint_1_v1-issues.md"), "- **Location:** internal/greeting/greeting.go\n")
	fix := vocab.Assignment{Seq: 2, State: vocab.PhaseCheckpointFix, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Fix the checkpoint 1 issues in your files, then write checkpoint.md.", Subtask: st,
		Writes: []string{code, filepath.Join(c.taskDir, "checkpoint.md")}}
	c.writeAssignment(t, fix)
	n0 := len(api.Requests())
	fixAt := time.Now()
	enters2 := s.inject(t, api, "[HIVEMIND] worker_1: new assignment seq 2 (checkpoint_fix) — read "+asgPath+" and do exactly what it says.", asgPath)
	waitTurnEnd(t, api, asgPath, 2, 90*time.Second)
	fixTurn := time.Since(fixAt)
	want2 := api.Files(asgPath)
	if len(want2) != 2 || want2[0].Path != code || !strings.HasPrefix(want2[0].Content, want[0].Content) {
		t.Fatalf("fix decided %+v", want2)
	}
	checkFiles(t, want2)
	var tools []string
	for _, r := range api.Requests()[n0:] {
		if r.Tool != "" {
			tools = append(tools, r.Tool+" "+filepath.Base(r.ToolPath))
		}
	}
	if strings.Join(tools, ",") != "Read greeting.go,Write greeting.go,Write checkpoint.md" {
		t.Errorf("fix tool calls %v", tools)
	}

	exitTook := s.exit(t)
	reqs := api.Requests()
	t.Logf("timings: ready %v; turn 1: inject→first model request %v (Enters %d), inject→end_turn %v; turn 2 (Read+2 Writes): %v (Enters %d); /exit→exit %v",
		ready.Round(time.Millisecond), firstReq.Round(time.Millisecond), enters, turn.Round(time.Millisecond),
		fixTurn.Round(time.Millisecond), enters2, exitTook.Round(time.Millisecond))
	t.Logf("requests before the first injection: %d; total %d", before, len(reqs))
	logRequests(t, reqs)
	if os.Getenv("FAKEAPI_DUMP") != "" {
		for i, r := range reqs {
			_ = os.WriteFile(filepath.Join(os.Getenv("FAKEAPI_DUMP"), fmt.Sprintf("req%02d.json", i)), r.Body, 0o644)
		}
	}
}

// TestRealClaudeRateLimited: the fake API answers the worker's first model
// requests with 429; Claude Code retries on its own and the turn completes.
func TestRealClaudeRateLimited(t *testing.T) {
	bin, c := newClaudeProject(t)
	st := &vocab.Subtask{ID: "st_2", Description: "Add the configuration.", Checkpoint: 1,
		Dependencies: []string{}, Files: []string{"CREATE internal/greeting/config.go"}}
	asg := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_2", Subtask: st,
		Writes: []string{filepath.Join(c.taskDir, "outputs", "st_2.md")}, DoneMarker: filepath.Join(c.taskDir, "outputs", "st_2.done")}
	asgPath := c.writeAssignment(t, asg)
	sc := fakeapi.DefaultScript()
	sc.Errors = []fakeapi.ErrorRule{{Agent: "worker_2", Status: 429, Count: 2, RetryAfter: time.Second}}
	api := fakeapi.New(sc)
	defer api.Close()
	s := c.start(t, bin, api, "worker_2")
	s.waitReady(t)
	at := time.Now()
	s.inject(t, api, "[HIVEMIND] worker_2: read "+asgPath, asgPath)
	sawRetry := false
	waitFor(t, 30*time.Second, "retry shown", func() bool {
		sc := s.screen()
		sawRetry = sawRetry || strings.Contains(sc, "etrying") || strings.Contains(sc, "429") || strings.Contains(sc, "ate limit")
		return sawRetry
	})
	waitTurnEnd(t, api, asgPath, 1, 120*time.Second)
	took := time.Since(at)
	checkFiles(t, api.Files(asgPath))
	var statuses []string
	var times []string
	var first time.Time
	for _, r := range api.Requests() {
		if r.Agent == "worker_2" && r.Kind == "messages" {
			if first.IsZero() {
				first = r.At
			}
			statuses = append(statuses, fmt.Sprint(r.Status))
			times = append(times, r.At.Sub(first).Round(10*time.Millisecond).String())
		}
	}
	if len(statuses) < 3 || statuses[0] != "429" || statuses[1] != "429" {
		t.Errorf("worker_2 statuses %v", statuses)
	}
	t.Logf("429×2 (retry-after 1s): turn took %v; retry notice on screen: %v; worker_2 request statuses %v at %v",
		took.Round(time.Millisecond), sawRetry, statuses, times)
	s.exit(t)
}
