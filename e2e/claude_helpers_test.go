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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// claudeRunDeadline bounds one hivemind run with real Claude Code agents.
const claudeRunDeadline = 5 * time.Minute

// ClaudeOffline is everything a test needs to run hivemind with real Claude
// Code agents offline: a git project (one commit), a throwaway HOME whose
// .claude.json skips every dialog, and the scripted fake Messages API the
// agents talk to. The TUI test (tmux 160×48) reuses it: SetupClaudeOffline,
// then startTUI(t, c.TUIOptions("--agent", "claude", …)), and assert on the
// screen, on c.API (requests, Write calls) and on the task dir
// (taskDirOf(c.Project)), reusing checkInjections, checkHealth and
// checkWrites.
type ClaudeOffline struct {
	Project string // git repository, the hivemind --project
	Home    string // HOME of hivemind and of every agent
	API     *fakeapi.Server
	// Env is the full environment for the hivemind process (agents inherit
	// it): claudetest.Env(Home, API.URL()) (which keeps PATH) plus
	// XDG_CONFIG_HOME inside Home.
	Env []string
	// Slow multiplies the run's deadline and the tests' waits (0 or 1:
	// as given), for a CLI that is slow to start (opencode).
	Slow int

	mu    sync.Mutex
	procs []*hmProcess // every hivemind started, for the failure dump
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
	return newOffline(t, sc)
}

// newOffline prepares the git project, the home set up for Claude Code
// and the fake API of a ClaudeOffline.
func newOffline(t *testing.T, sc fakeapi.Script) *ClaudeOffline {
	t.Helper()
	realCLISlot(t)
	project := t.TempDir()
	gitInit(t, project)
	home := claudetest.Home(t, project)
	api := fakeapi.New(sc)
	t.Cleanup(api.Close)
	env := append(claudetest.Env(home, api.URL()), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	c := &ClaudeOffline{Project: project, Home: home, API: api, Env: env}
	c.dumpOnFailure(t)
	return c
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

// TUIOptions returns the startTUI options (tmux_helpers_test.go) that run
// hivemind with args in this offline setup: --project is this project, and
// the environment is Env without the terminal variables (the pane's TERM
// stays tmux's) — for the TUI variant of these tests:
//
//	c := SetupClaudeOffline(t, fakeapi.DefaultScript())
//	r := startTUI(t, c.TUIOptions("--agent", "claude", "--workers", "2", "add a greeting service"))
func (c *ClaudeOffline) TUIOptions(args ...string) tuiOptions {
	var env []string
	for _, kv := range c.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TERM", "COLORTERM", "TMUX", "TMUX_PANE", "HIVEMIND_SIM_ARGS":
			continue
		}
		env = append(env, kv)
	}
	return tuiOptions{args: append([]string{"--project", c.Project}, args...), env: env}
}

// hmProcess is a running hivemind.
type hmProcess struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan struct{}
	err    error
	start  time.Time
	cancel context.CancelFunc
	// deadline is the run's (claudeRunDeadline scaled by Slow).
	deadline time.Duration
}

// Start runs hivemind with args (--project is added) in the offline
// environment. The process is killed when the test ends, if still running.
func (c *ClaudeOffline) Start(t *testing.T, args ...string) *hmProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.wait(claudeRunDeadline))
	args = append([]string{"--project", c.Project}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.Env
	cmd.Dir = c.Project
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	p := &hmProcess{cmd: cmd, out: out, done: make(chan struct{}), start: time.Now(), cancel: cancel, deadline: c.wait(claudeRunDeadline)}
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
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
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
	t.Fatalf("hivemind %v: %v (deadline %v)\n%s", p.cmd.Args[1:], p.err, p.deadline, p.out.String())
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
func readEventLog(dir string) []vocab.EventRecord {
	recs, _, _ := workspace.ReadEvents(filepath.Join(dir, vocab.EventsFile))
	return recs
}

// waitEvent waits (deadline, or until p exits) for an event in the project's
// task matching ok and returns it.
func waitEvent(t *testing.T, c *ClaudeOffline, p *hmProcess, d time.Duration, what string,
	ok func(vocab.EventRecord) bool) vocab.EventRecord {
	t.Helper()
	d = c.wait(d)
	deadline := time.Now().Add(d)
	for {
		if dir := taskDirOf(c.Project); dir != "" {
			for _, r := range readEventLog(dir) {
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
func recDetail(r vocab.EventRecord, key string) string {
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
func seqOf(r vocab.EventRecord) int {
	f, _ := r.Details["seq"].(float64)
	return int(f)
}

// injection is one assignment_sent with what became of it.
type injection struct {
	idx       int // index of its assignment_sent record
	doneIdx   int // index of its delivered injection_result record
	failIdx   int // index of its last failed injection_result record
	agent     string
	seq       int
	line      string // the [HIVEMIND] line typed
	delivered int    // injection_result delivered=true count
	failed    int    // injection_result delivered=false count
	how       string // confirmation detail
	withdrawn bool   // taken back before it was typed (superseded, the task ended)
}

// injections lists every message the engine injected, in order, with its
// delivery results.
func injections(dir string, recs []vocab.EventRecord) []*injection {
	var out []*injection
	by := map[string]*injection{}
	for i, r := range recs {
		key := fmt.Sprintf("%s/%d", r.Agent, seqOf(r))
		switch r.Type {
		case "assignment_sent":
			in := &injection{idx: i, agent: string(r.Agent), seq: seqOf(r),
				line: flow.InjectText(recDetail(r, "what"), flow.AssignmentFile(dir, r.Agent, seqOf(r)))}
			if text := recDetail(r, "text"); text != "" {
				in.line = text // a notice carries its content
			}
			out = append(out, in)
			by[key] = in
		case vocab.InputPrefix + "injection_result":
			in := by[key]
			if in == nil {
				continue
			}
			if c, _ := r.Details["cancelled"].(bool); c && strings.HasPrefix(recDetail(r, "detail"), "withdrawn") {
				in.withdrawn = true // taken back before it was typed
				continue
			}
			if d, _ := r.Details["delivered"].(bool); d {
				in.delivered++
				in.doneIdx = i
				in.how = recDetail(r, "detail")
			} else {
				in.failed++
				in.failIdx = i
			}
		}
	}
	return slices.DeleteFunc(out, func(in *injection) bool { return in.withdrawn })
}

// checkInjections asserts that every injected message was confirmed
// submitted exactly once, by Claude's UserPromptSubmit hook or its busy
// title (events.jsonl), and that each agent's model saw exactly those
// [HIVEMIND] lines, each once, in order (the fake API's newest request of
// that agent carries the whole conversation). It returns the number of
// confirmed injections and how many of them the UserPromptSubmit hook
// confirmed.
func checkInjections(t *testing.T, dir string, recs []vocab.EventRecord, api *fakeapi.Server) (confirmed, byHook int) {
	t.Helper()
	return checkInjectionsSeen(t, dir, recs, api, nil)
}

// checkInjectionsSeen is checkInjections where seen (when not nil) maps
// an injected line to what the agent's model sees: a remote worker's
// lines name the host's paths.
func checkInjectionsSeen(t *testing.T, dir string, recs []vocab.EventRecord, api *fakeapi.Server,
	seen func(agent, line string) string) (confirmed, byHook int) {
	t.Helper()
	ins := injections(dir, recs)
	if len(ins) == 0 {
		t.Fatal("no assignment_sent in events.jsonl")
	}
	want := map[string][]*injection{}
	end := terminalIndex(recs)
	for _, in := range ins {
		if (in.delivered != 1 || in.failed != 0 || !strings.HasPrefix(in.how, "confirmed by")) && !stoppedAtEnd(in, end) {
			t.Errorf("%s seq %d: %d delivered (%q) and %d failed injection results, want exactly 1 confirmed",
				in.agent, in.seq, in.delivered, in.how, in.failed)
		}
		if in.delivered > 0 {
			confirmed++
		}
		if strings.Contains(in.how, "UserPromptSubmit") {
			byHook++
		}
		want[in.agent] = append(want[in.agent], in)
	}
	for agent, list := range want {
		last, ok := lastMainRequest(api, agent)
		if !ok {
			t.Errorf("%s: the fake API never saw a request of this agent", agent)
			continue
		}
		got := last.HivemindLines()
		var lines []string
		for _, in := range list {
			if seen != nil {
				lines = append(lines, seen(agent, in.line))
			} else {
				lines = append(lines, in.line)
			}
		}
		// The run may end (and stop the agents) while a last, read-only
		// notice is being answered: a turn that never ended may be
		// missing from the model's log, one that ended may not.
		n := len(got)
		for n < len(lines) && cutShort(recs, list[n], end) {
			n++
		}
		if len(got) > len(lines) || strings.Join(got, "\n") != strings.Join(lines[:len(got)], "\n") || n != len(lines) {
			t.Errorf("%s: the model saw the [HIVEMIND] lines\n  %s\nwant each injected line exactly once, in order:\n  %s",
				agent, strings.Join(got, "\n  "), strings.Join(lines, "\n  "))
		}
	}
	return confirmed, byHook
}

// checkResumedInjections is checkInjections for a run killed and resumed:
// resumed is the index of the resume record in recs and before maps each
// agent to the [HIVEMIND] lines its model had seen before the kill. Every
// message injected after the resume must be confirmed exactly once; one
// injected before the kill at most once. Each agent's final conversation
// must start with what it had before the kill (the resumed session), then
// hold only lines injected before the kill (an injection under way at the
// kill may or may not have been submitted), each at most once and in order,
// and end with exactly the lines injected after the resume. It returns the
// number of injections confirmed after the resume.
func checkResumedInjections(t *testing.T, dir string, recs []vocab.EventRecord, resumed int,
	api *fakeapi.Server, before map[string][]string) int {
	t.Helper()
	oldLines, newLines := map[string][]string{}, map[string][]string{}
	newIns := map[string][]*injection{}
	end := terminalIndex(recs)
	confirmed := 0
	for _, in := range injections(dir, recs) {
		if in.idx < resumed {
			if in.delivered > 1 || in.failed > 0 {
				t.Errorf("%s seq %d (before the kill): %d delivered, %d failed", in.agent, in.seq, in.delivered, in.failed)
			}
			oldLines[in.agent] = append(oldLines[in.agent], in.line)
			continue
		}
		if (in.delivered != 1 || in.failed != 0 || !strings.HasPrefix(in.how, "confirmed by")) && !stoppedAtEnd(in, end) {
			t.Errorf("%s seq %d: %d delivered (%q) and %d failed injection results, want exactly 1 confirmed",
				in.agent, in.seq, in.delivered, in.how, in.failed)
		}
		if in.delivered > 0 {
			confirmed++
		}
		newLines[in.agent] = append(newLines[in.agent], in.line)
		newIns[in.agent] = append(newIns[in.agent], in)
	}
	for _, agent := range claudeAgents {
		last, ok := lastMainRequest(api, agent)
		if !ok {
			t.Errorf("%s: no request", agent)
			continue
		}
		got := last.HivemindLines()
		bad := func(why string) {
			t.Errorf("%s: %s; the model saw\n  %s\nbefore the kill it had seen\n  %s\ninjected before the kill\n  %s\ninjected after the resume\n  %s",
				agent, why, strings.Join(got, "\n  "), strings.Join(before[agent], "\n  "),
				strings.Join(oldLines[agent], "\n  "), strings.Join(newLines[agent], "\n  "))
		}
		// As in checkInjections, the last lines' turns may have been cut
		// short by the end of the run.
		nl := newLines[agent]
		for len(nl) > 0 && !endsWith(got, nl) && cutShort(recs, newIns[agent][len(nl)-1], end) {
			nl = nl[:len(nl)-1]
		}
		if !endsWith(got, nl) {
			bad("the conversation does not end with the lines injected after the resume, each once")
			continue
		}
		prefix := got[:len(got)-len(nl)]
		if len(prefix) < len(before[agent]) || strings.Join(prefix[:len(before[agent])], "\n") != strings.Join(before[agent], "\n") {
			bad("the resumed conversation does not start with the one before the kill")
			continue
		}
		old, j := oldLines[agent], 0
		for _, l := range prefix {
			for j < len(old) && old[j] != l {
				j++
			}
			if j == len(old) {
				bad("a line before the resumed ones was not injected before the kill, or was seen twice")
				break
			}
			j++
		}
	}
	return confirmed
}

// terminalIndex returns the index of the record where the task reached a
// final state (len(recs) if it never did).
func terminalIndex(recs []vocab.EventRecord) int {
	for i, r := range recs {
		if r.Type == "state_changed" && vocab.Phase(recDetail(r, "to")).Terminal() {
			return i
		}
	}
	return len(recs)
}

// stoppedAtEnd reports whether an injection failed only because the run
// had ended and its agent was being stopped (a last read-only notice).
func stoppedAtEnd(in *injection, end int) bool {
	return in.delivered == 0 && in.failed > 0 && in.failIdx > end
}

// cutShort reports whether the end of the run cut an injection's turn
// short: not delivered because the run had ended, or delivered but its
// turn never ended. Its line may be missing from the model's log.
func cutShort(recs []vocab.EventRecord, in *injection, end int) bool {
	if stoppedAtEnd(in, end) {
		return true
	}
	return in.delivered == 1 && !turnEnded(recs, in.agent, in.doneIdx)
}

// endsWith reports whether list ends with tail.
func endsWith(list, tail []string) bool {
	return len(list) >= len(tail) && strings.Join(list[len(list)-len(tail):], "\n") == strings.Join(tail, "\n")
}

// turnEnded reports whether agent's turn started by the injection
// confirmed at record from ended through the Stop hook.
func turnEnded(recs []vocab.EventRecord, agent string, from int) bool {
	for _, r := range recs[from+1:] {
		if string(r.Agent) == agent && r.Type == vocab.InputPrefix+"agent_health" {
			switch recDetail(r, "health") {
			case "idle":
				return true
			case "exited":
				return false
			}
		}
	}
	return false
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
func healthLog(recs []vocab.EventRecord) map[string][]string {
	m := map[string][]string{}
	for _, r := range recs {
		if r.Type == vocab.InputPrefix+"agent_health" {
			m[string(r.Agent)] = append(m[string(r.Agent)], recDetail(r, "health")+" ("+recDetail(r, "detail")+")")
		}
	}
	return m
}

// checkHealth asserts that every agent became ready after starting and
// that each of its turns ended with a busy → idle transition reported by
// the Stop hook (not by the title fallback). It returns the number of
// busy → idle-by-Stop-hook transitions.
func checkHealth(t *testing.T, recs []vocab.EventRecord, agents []string) int {
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
type apiWrite struct {
	agent, path, content string
	at                   time.Time
	ok                   bool // Claude Code's tool result said it succeeded
	denied               bool // the result was an error (e.g. a PreToolUse denial)
	result               string
}

// writes lists every Write tool call the fake API answered, with the tool
// result Claude Code sent back for it.
func apiWrites(api *fakeapi.Server) []*apiWrite {
	reqs := api.Requests()
	byID := map[string]*apiWrite{}
	var out []*apiWrite
	for _, r := range reqs {
		for _, res := range r.Results {
			if w := byID[res.ID]; w != nil {
				w.ok, w.denied, w.result = !res.IsError, res.IsError, res.Text
			}
		}
		if r.Tool == "Write" && r.Status == 200 {
			w := &apiWrite{agent: r.Agent, path: r.ToolPath, content: r.ToolContent, at: r.At}
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

// claudeTempRE matches the temp file name of Claude Code's atomic Write.
var claudeTempRE = regexp.MustCompile(`\.tmp\.[0-9]+\.[0-9a-f]+$`)

// engineReview reports whether a reviews/ file is written by Hivemind
// itself (a git project's checkpoint diff and check output), not by an
// agent.
func engineReview(name string) bool {
	return strings.HasSuffix(name, "-diff.patch") || strings.HasSuffix(name, "-check.txt")
}

// engineDirs are task-dir folders written by Hivemind itself.
var engineDirs = map[string]bool{
	"assignments": true, "backups": true, "blobs": true, "heartbeats": true, "locks": true, "logs": true, "settings": true, "procs": true,
}

// checkWrites asserts that every file the run produced was written by
// Claude Code's own Write tool as the fake API decided: each Write call
// succeeded, each project file and output holds the content of the last
// Write to it, each archived trigger holds the content of a Write of that
// trigger, and no other file appeared. It returns the number of writes.
//
// killedAt is when hivemind (and so its agents) was killed, zero if never:
// a Write answered before it may have no tool result (the agent died
// before sending it) and may or may not have happened.
func checkWrites(t *testing.T, c *ClaudeOffline, dir string, killedAt time.Time) int {
	t.Helper()
	ws := apiWrites(c.API)
	// An agent's last Write may have no tool result at all: the Write that
	// completed the task, answered just before its agent was stopped. What
	// it wrote is checked below like every other Write.
	lastOf := map[string]*apiWrite{}
	for _, w := range ws {
		lastOf[w.agent] = w
	}
	last := map[string]*apiWrite{}
	byName := map[string][]string{} // trigger base name → contents written
	for _, w := range ws {
		stoppedAfter := lastOf[w.agent] == w && !w.ok && !w.denied && w.result == ""
		if !w.ok && !stoppedAfter && (w.denied || killedAt.IsZero() || w.at.After(killedAt)) {
			t.Errorf("%s: Write %s did not succeed: %q", w.agent, w.path, w.result)
			continue
		}
		last[w.path] = w
		if rel, ok := worktreeRel(c.Project, w.path); ok {
			// A worker in its git worktree: the project gets the file
			// by merge.
			last[filepath.Join(c.Project, rel)] = w
		}
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
		if !killedAt.IsZero() && (filepath.Dir(p) == dir && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") ||
			claudeTempRE.MatchString(d.Name())) {
			// A temp file of an atomic write cut short by the SIGKILL:
			// Hivemind's (.state.json.tmp-N) or Claude's Write tool's
			// (<file>.tmp.<pid>.<hex>).
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == "reviews" && engineReview(d.Name()) {
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == "reviews" && filepath.Dir(filepath.Dir(p)) == dir {
			// An archived trigger: reviews/plan_v2-feedback.md was plan-feedback.md.
			name := archivedName(d.Name())
			if !hasString(byName[name], string(got)) {
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

// worktreeRel returns the project-relative path of a file written in a
// worker's git worktree (<project>/.hivemind/worktrees/<agent>/<rel>).
func worktreeRel(project, path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, filepath.Join(project, ".hivemind", "worktrees")+"/")
	if !ok {
		return "", false
	}
	_, rel, ok := strings.Cut(rest, "/")
	return rel, ok && rel != ""
}

// archivedName maps an archived trigger name to the trigger it was:
// plan_v2.md → plan.md, plan_v1-feedback.md → plan-feedback.md,
// checkpoint_1_v1-issues.md → checkpoint-issues.md,
// ignored_v1-checkpoint-approved.md → checkpoint-approved.md.
func archivedName(name string) string {
	name = versionRE.ReplaceAllString(name, "")
	// A trigger that meant nothing in its state: ignored_v1-<name>.
	name = strings.TrimPrefix(name, "ignored-")
	name = strings.TrimPrefix(name, "refused-")
	// Archived from an outbox: agents_<id>_<name>.
	if rest, ok := strings.CutPrefix(name, vocab.OutboxesDir+"_"); ok {
		for _, id := range []string{"lead_", "reviewer_", "worker_1_", "worker_2_", "worker_3_"} {
			if r, ok := strings.CutPrefix(rest, id); ok {
				name = r
				break
			}
		}
	}
	if strings.HasPrefix(name, "checkpoint_") {
		rest := strings.TrimLeft(strings.TrimPrefix(name, "checkpoint_"), "0123456789")
		name = "checkpoint" + rest
	}
	return name
}

func hasString(list []string, s string) bool {
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
func triggersConsumedOnce(t *testing.T, dir string, recs []vocab.EventRecord) int {
	t.Helper()
	archived := map[string]int{}
	n := 0
	for _, r := range recs {
		if r.Type == "trigger_consumed" {
			n++
			archived[recDetail(r, "archived")]++
		}
	}
	for a, k := range archived {
		if k > 1 {
			t.Errorf("trigger archived as %s %d times", a, k)
		}
	}
	contents := map[string]string{}
	for name := range listDir(t, filepath.Join(dir, "reviews")) {
		if engineReview(name) || strings.HasPrefix(name, "ignored_") {
			continue // not a consumed trigger
		}
		b, _ := os.ReadFile(filepath.Join(dir, "reviews", name))
		key := archivedName(name) + "\x00" + string(b)
		if prev, dup := contents[key]; dup {
			t.Errorf("trigger handled twice: %s and %s have the same content", prev, name)
		}
		contents[key] = name
	}
	return n
}

// dumpOnFailure logs, when the test failed, what helps to understand the
// run: hivemind's output, each agent's health history, the fake API log
// and the tail of each agent's terminal log. Registered before the
// processes' own cleanups, it runs after them.
func (c *ClaudeOffline) dumpOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		c.mu.Lock()
		procs := c.procs
		c.mu.Unlock()
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
		// Claude Code's saved conversations (what --resume needs).
		transcripts, _ := filepath.Glob(filepath.Join(c.Home, ".claude", "projects", "*", "*.jsonl"))
		for _, tr := range transcripts {
			b, _ := os.ReadFile(tr)
			types := map[string]int{}
			for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
				var e struct {
					Type string `json:"type"`
				}
				_ = json.Unmarshal(line, &e)
				types[e.Type]++
			}
			t.Logf("transcript %s: %d bytes, entries %v", strings.TrimPrefix(tr, c.Home+"/"), len(b), types)
		}
		dir := taskDirOf(c.Project)
		if dir == "" {
			return
		}
		recs := readEventLog(dir)
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

// procWatch records, while a run goes on, how each agent's Claude Code
// process was told its session: "--session-id <id>" or "--resume <id>".
type procWatch struct {
	mu   sync.Mutex
	seen map[string][]string // agent → distinct session flags
	stop chan struct{}
	done chan struct{}
}

// watchAgents polls /proc every 50 ms until result is called.
func watchAgents(project string) *procWatch {
	w := &procWatch{seen: map[string][]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			for agent, line := range agentProcesses(project) {
				// Claude rewrites its process title (and so its
				// /proc cmdline) while it runs; the session flags come
				// first and survive, or are gone entirely.
				var flag string
				if id := flagValue(line, "--session-id"); id != "" {
					flag = "--session-id " + id
				} else if id := flagValue(line, "--resume"); id != "" {
					flag = "--resume " + id
				} else {
					continue
				}
				w.mu.Lock()
				if !hasString(w.seen[agent], flag) {
					w.seen[agent] = append(w.seen[agent], flag)
				}
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

// result stops the watch and returns the session flags seen per agent.
func (w *procWatch) result() map[string][]string {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// agentProcesses returns the command line of each running claude agent of
// a project, by agent id.
func agentProcesses(project string) map[string]string {
	out := map[string]string{}
	eachAgentProcess(project, func(agent string, _ string, argv []string) { out[agent] = strings.Join(argv, " ") })
	return out
}

// agentsRSS is the resident memory of the running claude agents of a
// project, in MB, and how many there are.
func agentsRSS(project string) (mb, n int) {
	kb := 0
	eachAgentProcess(project, func(_ string, dir string, _ []string) {
		status, _ := os.ReadFile(filepath.Join(dir, "status"))
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				k, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				kb += k
				n++
			}
		}
	})
	return kb >> 10, n
}

// eachAgentProcess calls f with the agent id, /proc directory and command
// line of each running claude agent of a project.
func eachAgentProcess(project string, f func(agent, dir string, argv []string)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		base := filepath.Join("/proc", e.Name())
		env, err := os.ReadFile(filepath.Join(base, "environ"))
		if err != nil {
			continue
		}
		agent, mine := "", false
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("HIVEMIND_AGENT_ID=")); ok {
				agent = string(v)
			}
			// The task dir is inside the project (a worker in a git
			// worktree has another HIVEMIND_PROJECT).
			if v, ok := bytes.CutPrefix(kv, []byte("HIVEMIND_TASK_DIR=")); ok && strings.HasPrefix(string(v), project+"/") {
				mine = true
			}
		}
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if agent == "" || !mine || !strings.HasPrefix(filepath.Base(argv[0]), "claude") {
			continue
		}
		f(agent, base, argv)
	}
}

// flagValue returns the value after flag in a command line ("" if absent).
func flagValue(cmdline, flag string) string {
	f := strings.Fields(cmdline)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == flag {
			return f[i+1]
		}
	}
	return ""
}

// wait is d scaled by c.Slow.
func (c *ClaudeOffline) wait(d time.Duration) time.Duration {
	if c != nil && c.Slow > 1 {
		return d * time.Duration(c.Slow)
	}
	return d
}
