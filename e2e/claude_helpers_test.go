package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/workspace"
)

// claudeRunDeadline bounds one hivemind run with real Claude Code agents.
const claudeRunDeadline = 3 * time.Minute

// ClaudeOffline is everything a test needs to run hivemind with real Claude
// Code agents offline: a git project (one commit), a throwaway HOME whose
// .claude.json skips every dialog, and the scripted fake Messages API the
// agents talk to. The TUI test (tmux) reuses it: start tmux with Env (for
// example `tmux new-session -d -x 160 -y 48 env -i <Env...> <bin> --agent
// claude --project <Project> "task"`) and assert on API and Project.
type ClaudeOffline struct {
	Project string // git repository, the hivemind --project
	Home    string // HOME of hivemind and of every agent
	API     *fakeapi.Server
	// Env is the full environment for the hivemind process (agents inherit
	// it): claudetest.Env(Home, API.URL()) (which keeps PATH) plus
	// XDG_CONFIG_HOME inside Home.
	Env []string
}

// SetupClaudeOffline skips the test when `claude` is not on PATH (or in
// -short mode) and otherwise prepares a ClaudeOffline whose fake API follows
// sc. Everything is removed after the test.
func SetupClaudeOffline(t *testing.T, sc fakeapi.Script) *ClaudeOffline {
	t.Helper()
	if _, ok := claudetest.Binary(); !ok {
		t.Skip("real Claude Code is not on PATH: `npm install -g @anthropic-ai/claude-code` to run this test (.ci/run does)")
	}
	if testing.Short() {
		t.Skip("real Claude Code end-to-end test skipped in -short mode")
	}
	project := t.TempDir()
	gitInit(t, project)
	home := claudetest.Home(t, project)
	api := fakeapi.New(sc)
	t.Cleanup(api.Close)
	env := append(claudetest.Env(home, api.URL()), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	return &ClaudeOffline{Project: project, Home: home, API: api, Env: env}
}

// gitInit makes dir a git repository with one commit.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/demo\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "go.mod"},
		{"-c", "user.name=Hivemind Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "initial commit"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// hmProcess is a running hivemind.
type hmProcess struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan struct{}
	err    error
	start  time.Time
	cancel context.CancelFunc
}

// Start runs hivemind with args (--project is added) in the offline
// environment. The process is killed when the test ends, if still running.
func (c *ClaudeOffline) Start(t *testing.T, args ...string) *hmProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), claudeRunDeadline)
	args = append([]string{"--project", c.Project}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.Env
	cmd.Dir = c.Project
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	p := &hmProcess{cmd: cmd, out: out, done: make(chan struct{}), start: time.Now(), cancel: cancel}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start hivemind: %v", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cancel()
		<-p.done
	})
	return p
}

// exited reports whether the process has ended.
func (p *hmProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns its exit code.
func (p *hmProcess) wait(t *testing.T) int {
	t.Helper()
	<-p.done
	if p.err == nil {
		return 0
	}
	if ee, ok := p.err.(*exec.ExitError); ok && ee.Exited() {
		return ee.ExitCode()
	}
	t.Fatalf("hivemind %v: %v (deadline %v)\n%s", p.cmd.Args[1:], p.err, claudeRunDeadline, p.out.String())
	return -1
}

// taskDirOf returns the task directory once it exists ("" before).
func taskDirOf(project string) string {
	m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*", "task.json"))
	if len(m) != 1 {
		return ""
	}
	return filepath.Dir(m[0])
}

// events reads a task's events.jsonl (nil while it does not exist).
func events(dir string) []workspace.EventRecord {
	recs, _, _ := workspace.ReadEvents(filepath.Join(dir, workspace.EventsFile))
	return recs
}

// waitEvent waits (deadline, or until p exits) for an event in the project's
// task matching ok and returns it.
func waitEvent(t *testing.T, c *ClaudeOffline, p *hmProcess, d time.Duration, what string,
	ok func(workspace.EventRecord) bool) workspace.EventRecord {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if dir := taskDirOf(c.Project); dir != "" {
			for _, r := range events(dir) {
				if ok(r) {
					return r
				}
			}
		}
		if p != nil && p.exited() {
			t.Fatalf("hivemind exited while waiting for %s:\n%s", what, p.out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s:\n%s", d, what, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// detail returns a string detail of an event record.
func detail(r workspace.EventRecord, key string) string {
	switch v := r.Details[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// seqOf returns the "seq" detail of an event record.
func seqOf(r workspace.EventRecord) int {
	f, _ := r.Details["seq"].(float64)
	return int(f)
}

// injection is one assignment_sent with what became of it.
type injection struct {
	agent     string
	seq       int
	line      string // the [HIVEMIND] line typed
	delivered int    // injection_result delivered=true count
	failed    int    // injection_result delivered=false count
	how       string // confirmation detail
}

// injections lists every message the engine injected, in order, with its
// delivery results.
func injections(dir string, recs []workspace.EventRecord) []*injection {
	var out []*injection
	by := map[string]*injection{}
	for _, r := range recs {
		key := fmt.Sprintf("%s/%d", r.Agent, seqOf(r))
		switch r.Type {
		case "assignment_sent":
			in := &injection{agent: r.Agent, seq: seqOf(r),
				line: engine.InjectText(detail(r, "what"), engine.AssignmentFile(dir, r.Agent))}
			out = append(out, in)
			by[key] = in
		case engine.InputPrefix + "injection_result":
			in := by[key]
			if in == nil {
				continue
			}
			if d, _ := r.Details["delivered"].(bool); d {
				in.delivered++
				in.how = detail(r, "detail")
			} else {
				in.failed++
			}
		}
	}
	return out
}

// checkInjections asserts that every injected message was confirmed
// submitted exactly once (events.jsonl) and that each agent's model saw
// exactly those [HIVEMIND] lines, each once, in order (the fake API's
// newest request of that agent carries the whole conversation). sessions
// lists, per agent, the [HIVEMIND] lines of earlier sessions to expect
// first (nil when the conversation started in this run). It returns the
// number of confirmed injections.
func checkInjections(t *testing.T, dir string, recs []workspace.EventRecord, api *fakeapi.Server) int {
	t.Helper()
	ins := injections(dir, recs)
	if len(ins) == 0 {
		t.Fatal("no assignment_sent in events.jsonl")
	}
	want := map[string][]string{}
	confirmed := 0
	for _, in := range ins {
		if in.delivered != 1 || in.failed != 0 {
			t.Errorf("%s seq %d: %d delivered and %d failed injection results, want exactly 1 delivered",
				in.agent, in.seq, in.delivered, in.failed)
		}
		if in.delivered > 0 {
			confirmed++
		}
		want[in.agent] = append(want[in.agent], in.line)
	}
	for agent, lines := range want {
		last, ok := lastMainRequest(api, agent)
		if !ok {
			t.Errorf("%s: the fake API never saw a request of this agent", agent)
			continue
		}
		got := last.HivemindLines()
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("%s: the model saw the [HIVEMIND] lines\n  %s\nwant each injected line exactly once, in order:\n  %s",
				agent, strings.Join(got, "\n  "), strings.Join(lines, "\n  "))
		}
	}
	return confirmed
}

// lastMainRequest returns the newest successful agent turn request (one
// offering tools) of agent.
func lastMainRequest(api *fakeapi.Server, agent string) (fakeapi.Request, bool) {
	reqs := api.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		r := reqs[i]
		if r.Kind == "messages" && r.HasTools && r.Agent == agent && r.Status == 200 {
			return r, true
		}
	}
	return fakeapi.Request{}, false
}

// healthLog returns each agent's health transitions ("health (detail)").
func healthLog(recs []workspace.EventRecord) map[string][]string {
	m := map[string][]string{}
	for _, r := range recs {
		if r.Type == engine.InputPrefix+"agent_health" {
			m[r.Agent] = append(m[r.Agent], detail(r, "health")+" ("+detail(r, "detail")+")")
		}
	}
	return m
}

// checkHealth asserts that every agent became ready after starting and
// that each of its turns ended with a busy → idle transition reported by
// the Stop hook (not by the title fallback). It returns the number of
// busy → idle-by-Stop-hook transitions.
func checkHealth(t *testing.T, recs []workspace.EventRecord, agents []string) int {
	t.Helper()
	log := healthLog(recs)
	total := 0
	for _, a := range agents {
		seq := log[a]
		ready, stops, fallbacks := false, 0, 0
		for i, h := range seq {
			if strings.HasPrefix(h, "ready ") {
				ready = true
			}
			if i > 0 && strings.HasPrefix(seq[i-1], "busy ") && strings.HasPrefix(h, "idle ") {
				if h == "idle (Stop hook)" {
					stops++
				} else {
					fallbacks++
				}
			}
		}
		if !ready {
			t.Errorf("%s never became ready: %v", a, seq)
		}
		if stops == 0 {
			t.Errorf("%s: no busy → idle transition by the Stop hook: %v", a, seq)
		}
		if fallbacks > 0 {
			t.Errorf("%s: %d turn(s) ended without the Stop hook: %v", a, fallbacks, seq)
		}
		total += stops
	}
	return total
}

// write is one Write tool call the fake API asked for.
type write struct {
	agent, path, content string
	at                   time.Time
	ok                   bool // Claude Code's tool result said it succeeded
	denied               bool // the result was an error (e.g. a PreToolUse denial)
	result               string
}

// writes lists every Write tool call the fake API answered, with the tool
// result Claude Code sent back for it.
func writes(api *fakeapi.Server) []*write {
	reqs := api.Requests()
	byID := map[string]*write{}
	var out []*write
	for _, r := range reqs {
		for _, res := range r.Results {
			if w := byID[res.ID]; w != nil {
				w.ok, w.denied, w.result = !res.IsError, res.IsError, res.Text
			}
		}
		if r.Tool == "Write" && r.Status == 200 {
			w := &write{agent: r.Agent, path: r.ToolPath, content: r.ToolContent, at: r.At}
			byID[r.ToolID] = w
			out = append(out, w)
		}
	}
	return out
}

// engineFiles are files under the task dir written by Hivemind itself.
var engineFiles = map[string]bool{
	"state.json": true, "events.jsonl": true, "task.json": true, "task.md": true,
}

// engineDirs are task-dir folders written by Hivemind itself.
var engineDirs = map[string]bool{
	"assignments": true, "backups": true, "heartbeats": true, "locks": true, "logs": true, "settings": true,
}

// checkWrites asserts that every file the run produced was written by
// Claude Code's own Write tool as the fake API decided: each Write call
// succeeded, each project file and output holds the content of the last
// Write to it, each archived trigger holds the content of a Write of that
// trigger, and no other file appeared. It returns the number of writes.
func checkWrites(t *testing.T, c *ClaudeOffline, dir string) int {
	t.Helper()
	ws := writes(c.API)
	last := map[string]*write{}
	byName := map[string][]string{} // trigger base name → contents written
	for _, w := range ws {
		if !w.ok {
			t.Errorf("%s: Write %s did not succeed: %q", w.agent, w.path, w.result)
			continue
		}
		last[w.path] = w
		byName[filepath.Base(w.path)] = append(byName[filepath.Base(w.path)], w.content)
	}
	if len(ws) == 0 {
		t.Fatal("the fake API answered no Write tool call")
	}
	err := filepath.WalkDir(c.Project, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.Project, p)
		if d.IsDir() {
			switch {
			case rel == ".git":
				return filepath.SkipDir
			case filepath.Dir(p) == dir && engineDirs[d.Name()]:
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "go.mod" || strings.HasPrefix(rel, ".hivemind/") && !strings.HasPrefix(p, dir+"/") {
			return nil // committed file; workspace files outside the task
		}
		if filepath.Dir(p) == dir && engineFiles[d.Name()] {
			return nil
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == "reviews" && filepath.Dir(filepath.Dir(p)) == dir {
			// An archived trigger: reviews/plan_v2-feedback.md was plan-feedback.md.
			name := archivedName(d.Name())
			if !contains(byName[name], string(got)) {
				t.Errorf("archived %s (was %s) does not match any Write of %s (%d writes)", rel, name, name, len(byName[name]))
			}
			return nil
		}
		w := last[p]
		if w == nil {
			t.Errorf("%s was not written by a Write tool call the fake API made", rel)
			return nil
		}
		if string(got) != w.content {
			t.Errorf("%s differs from the last Write to it:\n got %q\nwant %q", rel, got, w.content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(ws)
}

// archivedName maps an archived trigger name to the trigger it was:
// plan_v2.md → plan.md, plan_v1-feedback.md → plan-feedback.md,
// checkpoint_1_v1-issues.md → checkpoint-issues.md.
func archivedName(name string) string {
	name = versionRE.ReplaceAllString(name, "")
	if strings.HasPrefix(name, "checkpoint_") {
		rest := strings.TrimLeft(strings.TrimPrefix(name, "checkpoint_"), "0123456789")
		name = "checkpoint" + rest
	}
	return name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// triggersConsumedOnce asserts that no trigger was consumed twice: every
// trigger_consumed names a distinct archive, and no two archives of the
// same kind hold the same content.
func triggersConsumedOnce(t *testing.T, dir string, recs []workspace.EventRecord) int {
	t.Helper()
	archived := map[string]int{}
	n := 0
	for _, r := range recs {
		if r.Type == "trigger_consumed" {
			n++
			archived[detail(r, "archived")]++
		}
	}
	for a, k := range archived {
		if k > 1 {
			t.Errorf("trigger archived as %s %d times", a, k)
		}
	}
	contents := map[string]string{}
	for name := range listDir(t, filepath.Join(dir, "reviews")) {
		b, _ := os.ReadFile(filepath.Join(dir, "reviews", name))
		key := archivedName(name) + "\x00" + string(b)
		if prev, dup := contents[key]; dup {
			t.Errorf("trigger handled twice: %s and %s have the same content", prev, name)
		}
		contents[key] = name
	}
	return n
}

// dumpOnFailure logs what helps to understand a failed run: hivemind's
// output, the health and injection history, the fake API log and the tail
// of each agent's terminal log.
func dumpOnFailure(t *testing.T, c *ClaudeOffline, procs ...*hmProcess) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, p := range procs {
			if p != nil {
				t.Logf("hivemind run %d output:\n%s", i+1, p.out.String())
			}
		}
		reqs := c.API.Requests()
		var b strings.Builder
		for i, r := range reqs {
			fmt.Fprintf(&b, "  %3d +%6.2fs %-12s %-8s tools=%-5v status=%d reply=%s %s %s stop=%s\n", i,
				r.At.Sub(reqs[0].At).Seconds(), r.Kind, r.Agent, r.HasTools, r.Status, r.Reply, r.Tool,
				filepath.Base(r.ToolPath), r.StopReason)
		}
		t.Logf("fake API requests:\n%s", b.String())
		dir := taskDirOf(c.Project)
		if dir == "" {
			return
		}
		recs := events(dir)
		hl := healthLog(recs)
		agents := make([]string, 0, len(hl))
		for a := range hl {
			agents = append(agents, a)
		}
		sort.Strings(agents)
		for _, a := range agents {
			t.Logf("%s health: %s", a, strings.Join(hl[a], " → "))
		}
		for _, a := range agents {
			raw, _ := os.ReadFile(filepath.Join(dir, "logs", "agents", a+".log"))
			if len(raw) > 3000 {
				raw = raw[len(raw)-3000:]
			}
			t.Logf("%s terminal log tail:\n%q", a, raw)
		}
	})
}

// processesWith lists the running processes whose environment names this
// project and whose command line contains sub.
func processesWith(project, sub string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		base := filepath.Join("/proc", e.Name())
		env, err := os.ReadFile(filepath.Join(base, "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00HIVEMIND_PROJECT="+project+"\x00")) &&
			!bytes.HasPrefix(env, []byte("HIVEMIND_PROJECT="+project+"\x00")) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		line := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// readJSON decodes a JSON file.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
