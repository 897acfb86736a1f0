// Package e2e_test runs the built hivemind binary end to end, headless,
// with the built-in sim agents.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// bin is the hivemind binary built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(chaosModeEnv); mode != "" && os.Getenv("HIVEMIND_AGENT_ID") != "" {
		// Run by hivemind as a custom agent (chaos_test.go).
		os.Exit(chaosAgent(mode))
	}
	if control := os.Getenv(seqAgentEnv); control != "" && os.Getenv("HIVEMIND_AGENT_ID") != "" {
		os.Exit(seqAgent(control)) // run by hivemind as a custom agent (detach_test.go)
	}
	dir, err := os.MkdirTemp("", "hivemind-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "hivemind")
	// hivemind-hook next to hivemind: agents' hooks run it, as installed.
	// One go build for both: the packages they share compile once, and
	// the two link at once.
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "..", "../cmd/hivemind-hook")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build hivemind and hivemind-hook:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	defaultParallel()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runDeadline bounds one hivemind run.
const runDeadline = 4 * time.Minute

// syncBuffer is a bytes.Buffer safe for the process writer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hivemind prepares a run of the binary in a sandbox (own HOME and config
// dir, fast sim pace).
func hivemind(t *testing.T, ctx context.Context, home string, args ...string) (*exec.Cmd, *syncBuffer) {
	return hivemindPaced(t, ctx, home, 2*time.Millisecond, args...)
}

// hivemindPaced is hivemind with the sim agents' delay per output line.
func hivemindPaced(t *testing.T, ctx context.Context, home string, pace time.Duration, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"HIVEMIND_SIM_ARGS=--pace "+pace.String(),
	)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}

// exitCode runs cmd to the end and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("run %v: %v", cmd.Args, err)
	return -1
}

// taskDir returns the only task directory of a project.
func taskDir(t *testing.T, project string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*"))
	if len(m) != 1 {
		t.Fatalf("task dirs: %v", m)
	}
	return m[0]
}

// readState parses a task's state.json.
func readState(t *testing.T, dir string) vocab.State {
	t.Helper()
	st, err := workspace.ReadStateFile(dir)
	if err != nil {
		t.Fatalf("state.json: %v", err)
	}
	return st
}

// waitFor is testkit.WaitFor under the name these tests use.
var waitFor = testkit.WaitFor

// leftovers lists processes that belong to a run in project: agents (their
// environment names the project) or anything whose cwd is inside it.
func leftovers(project string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		base := filepath.Join("/proc", e.Name())
		env, _ := os.ReadFile(filepath.Join(base, "environ"))
		agent := ""
		mine := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			s := string(kv)
			if v, ok := strings.CutPrefix(s, "HIVEMIND_AGENT_ID="); ok {
				agent = v
			}
			if v, ok := strings.CutPrefix(s, "HIVEMIND_PROJECT="); ok && v == project {
				mine = true
			}
		}
		cwd, _ := os.Readlink(filepath.Join(base, "cwd"))
		if (agent != "" && mine) || cwd == project || strings.HasPrefix(cwd, project+"/") {
			if stat, err := os.ReadFile(filepath.Join(base, "stat")); err == nil && isZombie(stat) {
				continue // exited, only waiting to be reaped
			}
			cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
			found = append(found, fmt.Sprintf("pid %d agent=%q cmd=%q", pid, agent, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return found
}

func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func noLeftovers(t *testing.T, project string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := leftovers(project)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkComplete asserts a finished, consistent task.
func checkComplete(t *testing.T, dir string) vocab.State {
	t.Helper()
	st := readState(t, dir)
	if st.Phase != vocab.PhaseComplete {
		t.Fatalf("state %s, want complete (reason %q, error %q)", st.Phase, st.Reason, st.Error)
	}
	if len(st.Subtasks) == 0 {
		t.Fatal("no subtasks in state.json")
	}
	for id, s := range st.Subtasks {
		if s.Status != vocab.SubtaskDone {
			t.Errorf("subtask %s is %s", id, s.Status)
		}
		if _, err := os.Stat(filepath.Join(dir, vocab.OutboxesDir, string(s.Worker), "outputs", id+".done")); err != nil {
			t.Errorf("subtask %s: %v", id, err)
		}
	}
	archived := map[string]bool{}
	for _, r := range st.Rounds {
		if r.Archived != "" && archived[r.Archived] {
			t.Errorf("round archived twice as %s", r.Archived)
		}
		archived[r.Archived] = true
	}
	recs, torn, err := workspace.ReadEvents(filepath.Join(dir, "events.jsonl"))
	if err != nil || torn {
		t.Fatalf("events.jsonl: torn=%v err=%v", torn, err)
	}
	if len(recs) == 0 {
		t.Fatal("events.jsonl is empty")
	}
	return st
}

// The whole workflow runs headless with sim agents to complete (exit 0):
// plan, review with one rejection, execution by two workers, checkpoint
// review; nothing is left running afterwards.
func TestHeadlessSimComplete(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	start := time.Now()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--workers", "2", "--project", project,
		"build a tiny calculator")
	code := exitCode(t, cmd)
	t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out.String())
	}
	dir := taskDir(t, project)
	st := checkComplete(t, dir)
	if st.RevisionCount < 1 {
		t.Errorf("revision_count %d: the sim reviewer rejects the first plan", st.RevisionCount)
	}
	if !strings.Contains(out.String(), "trigger_completed") {
		t.Errorf("headless output has no trigger events:\n%s", out.String())
	}
	noLeftovers(t, project)

	// status and events read the finished task.
	status, sout := hivemind(t, ctx, home, "status", "--json", "--project", project)
	if c := exitCode(t, status); c != 0 {
		t.Fatalf("status exit %d: %s", c, sout.String())
	}
	var got vocab.State
	if err := json.Unmarshal([]byte(sout.String()), &got); err != nil || got.Phase != vocab.PhaseComplete {
		t.Errorf("status --json: %v %q", err, sout.String())
	}
	events, eout := hivemind(t, ctx, home, "events", "--json", "--project", project)
	if c := exitCode(t, events); c != 0 {
		t.Fatalf("events exit %d: %s", c, eout.String())
	}
	lines := strings.Split(strings.TrimSpace(eout.String()), "\n")
	recs, _, _ := workspace.ReadEvents(filepath.Join(dir, "events.jsonl"))
	if len(lines) != len(recs) {
		t.Errorf("events printed %d lines, log has %d records", len(lines), len(recs))
	}
}

// SIGKILL in the middle of execution, then --resume: the run completes
// with the same revision_count, consumed triggers are not handled again,
// and no process of either run is left.
func TestKillAndResume(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	// Paced like a real agent, so the kill lands while subtasks are in
	// progress.
	cmd, out := hivemindPaced(t, ctx, home, 30*time.Millisecond, "--headless", "--agent", "sim", "--workers", "2",
		"--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	dir, atKill := waitRunState(t, project, exited, out, "state.json to say executing", func(st vocab.State) bool {
		return st.Phase == vocab.PhaseExecuting
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	inProgress := 0
	for _, s := range readState(t, dir).Subtasks {
		if s.Status == vocab.SubtaskInProgress {
			inProgress++
		}
	}
	t.Logf("killed at %s, revision_count %d, %d subtask(s) in progress", atKill.Phase, atKill.RevisionCount, inProgress)
	// The agents die with their parent (parent-death signal).
	noLeftovers(t, project)
	archivedBefore := listDir(t, filepath.Join(dir, "reviews"))

	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--agent", "sim", "--workers", "2",
		"--project", project)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume exit %d, want 0; output:\n%s", code, out2.String())
	}
	st := checkComplete(t, dir)
	if st.RevisionCount != atKill.RevisionCount {
		t.Errorf("revision_count %d after resume, %d before the kill", st.RevisionCount, atKill.RevisionCount)
	}
	// Everything archived before the kill is still there, and nothing
	// consumed before it was archived again under another version.
	after := listDir(t, filepath.Join(dir, "reviews"))
	for name := range archivedBefore {
		if !after[name] {
			t.Errorf("archived trigger %s lost", name)
		}
	}
	contents := map[string]string{}
	for name := range after {
		b, _ := os.ReadFile(filepath.Join(dir, "reviews", name))
		kind := versionRE.ReplaceAllString(name, "")
		key := kind + "\x00" + string(b)
		if prev, dup := contents[key]; dup {
			t.Errorf("trigger handled twice: %s and %s have the same content", prev, name)
		}
		contents[key] = name
	}
	if !strings.Contains(out2.String(), "resum") {
		t.Errorf("resume output does not say it resumed:\n%s", out2.String())
	}
	noLeftovers(t, project)
}

// versionRE matches the version part of an archived trigger's name.
var versionRE = regexp.MustCompile(`_v[0-9]+`)

func listDir(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, e := range entries {
		m[e.Name()] = true
	}
	return m
}

// A second hivemind on the same workspace is refused with the PID of the
// one holding it.
func TestWorkspaceLockNamesHolder(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	lock, _, err := workspace.AcquireWorkspaceLock(filepath.Join(project, ".hivemind"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--project", project, "--", "x")
	if code := exitCode(t, cmd); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, out.String())
	}
	if !strings.Contains(out.String(), strconv.Itoa(os.Getpid())) {
		t.Errorf("error does not name the holder's pid %d: %s", os.Getpid(), out.String())
	}
}

// interruptWhen starts cmd, sends it SIGINT once its output satisfies
// ready, and waits (a minute at most) for it to exit.
func interruptWhen(t *testing.T, cmd *exec.Cmd, out *syncBuffer, what string, ready func(out string) bool) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitFor(t, runDeadline, what, func() bool { return ready(out.String()) })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("no exit within a minute of SIGINT:\n%s", out.String())
	}
}

// SIGINT mid-run cancels gracefully: every agent is stopped, the state
// ends in cancelled, the exit code is 1 and nothing is left running.
func TestSigintCancels(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, home, 30*time.Millisecond, "--headless", "--json", "--agent", "sim",
		"--project", project, "build a tiny calculator")
	interruptWhen(t, cmd, out, "an agent to be busy", func(o string) bool { return strings.Contains(o, `"health":"busy"`) })
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d after SIGINT, want 1:\n%s", code, out.String())
	}
	if st := readState(t, taskDir(t, project)); st.Phase != vocab.PhaseCancelled {
		t.Errorf("state %s after SIGINT, want cancelled", st.Phase)
	}
	// --json: every stdout line is a JSON object.
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("not a JSON line: %q", line)
		}
	}
	noLeftovers(t, project)
}

// A reviewer that never approves exhausts max_revision_cycles: the run
// stops in needs_human with exit code 3.
func TestNeedsHumanExitCode(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--project", project, "build a tiny calculator")
	cmd.Env = append(cmd.Env, "HIVEMIND_SIM_ARGS=--pace 2ms --reject-plans 99")
	if code := exitCode(t, cmd); code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out.String())
	}
	st := readState(t, taskDir(t, project))
	if st.Phase != vocab.PhaseNeedsHuman || st.Reason == "" {
		t.Errorf("state %s reason %q, want needs_human with a reason", st.Phase, st.Reason)
	}
	noLeftovers(t, project)
}

// waitRunState waits until the one task of the run in project has a
// state.json for which ok holds, and returns its task dir and that state;
// the run exiting first (exited) fails the test with what it printed.
func waitRunState(t *testing.T, project string, exited <-chan error, out fmt.Stringer, what string, ok func(vocab.State) bool) (string, vocab.State) {
	t.Helper()
	var dir string
	var got vocab.State
	waitFor(t, runDeadline, what, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("hivemind exited first (waiting for %s): %v\n%s", what, err, out)
		default:
		}
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*", "state.json"))
		if len(m) != 1 {
			return false
		}
		st, err := workspace.ReadStateFile(filepath.Dir(m[0]))
		if err != nil || !ok(st) {
			return false
		}
		dir, got = filepath.Dir(m[0]), st
		return true
	})
	return dir, got
}
