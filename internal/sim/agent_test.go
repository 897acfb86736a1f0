package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

type simFixture struct {
	project, taskDir, asgPath string
	asg                       vocab.Assignment
}

func newSimFixture(t *testing.T) simFixture {
	t.Helper()
	project := t.TempDir()
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "outputs", "reviews"} {
		if err := os.MkdirAll(filepath.Join(taskDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(project, "go.mod"), []byte("module example.com/x\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(taskDir, "task.md"), []byte("Add a greeting service\n"), 0o644))
	a := vocab.Assignment{Seq: 3, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Do st_1.",
		Subtask: &vocab.Subtask{ID: "st_1", Description: "Greeting core.", Checkpoint: 1,
			Files: []string{"CREATE internal/greeting/greeting.go", "CREATE internal/greeting/config.go"}},
		Writes:     []string{filepath.Join(taskDir, "outputs", "st_1.md"), filepath.Join(taskDir, "outputs", "st_1.done")},
		DoneMarker: filepath.Join(taskDir, "outputs", "st_1.done")}
	p := filepath.Join(taskDir, "assignments", "worker_1.json")
	b, _ := json.Marshal(a)
	must(t, os.WriteFile(p, b, 0o644))
	return simFixture{project, taskDir, p, a}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f simFixture) env(extra map[string]string) func(string) string {
	m := map[string]string{
		"HIVEMIND_AGENT_ID": "worker_1", "HIVEMIND_ROLE": "worker",
		"HIVEMIND_TASK_DIR": f.taskDir, "HIVEMIND_PROJECT": f.project,
	}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// hookSink is a unix-socket relay server collecting hook lines.
type hookSink struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []map[string]any
	wg   sync.WaitGroup
}

func newHookSink(t *testing.T) *hookSink {
	t.Helper()
	dir, err := os.MkdirTemp("", "simhook")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "h.sock"))
	must(t, err)
	h := &hookSink{ln: ln}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m map[string]any
				if json.Unmarshal(sc.Bytes(), &m) == nil {
					h.mu.Lock()
					h.msgs = append(h.msgs, m)
					h.mu.Unlock()
				}
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); h.wg.Wait() })
	return h
}

// waitEvents waits until n hook lines arrived (the relay is asynchronous).
func (h *hookSink) waitEvents(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(h.events()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return h.events()
}

func (h *hookSink) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.msgs {
		out = append(out, m["agent"].(string)+":"+m["event"].(string))
	}
	return out
}

func run(t *testing.T, f simFixture, input string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := Main(append([]string{"--pace=0"}, args...), strings.NewReader(input), &out, f.env(env))
	return out.String(), code
}

func TestMainFollowsAssignment(t *testing.T) {
	f := newSimFixture(t)
	sink := newHookSink(t)
	// What the script decides on the fresh fixture (paths and order).
	want, _ := DefaultScenario().Respond(f.asg, f.taskDir, f.project, rand.New(rand.NewPCG(1, 1)))
	line := "\x1b[200~[HIVEMIND] worker_1: assignment seq 3 — read " + f.asgPath + " now\x1b[201~\r"
	out, code := run(t, f, line+"/exit\r\n", map[string]string{"HIVEMIND_HOOK_SOCKET": sink.ln.Addr().String()}, "--seed=5")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	// The files the script decided, in order, done marker last.
	if len(want) != 4 || want[3].Path != f.asg.DoneMarker {
		t.Fatalf("script: %+v", want)
	}
	var prev time.Time
	lastIdx := -1
	for _, w := range want {
		st, err := os.Stat(w.Path)
		if err != nil {
			t.Fatalf("%s not written: %v", w.Path, err)
		}
		if st.ModTime().Before(prev) {
			t.Errorf("%s written before the previous file", w.Path)
		}
		prev = st.ModTime()
		got, _ := os.ReadFile(w.Path)
		if len(got) == 0 || (strings.HasSuffix(w.Path, ".go") && !strings.HasPrefix(string(got), "package greeting") && !strings.HasPrefix(string(got), "// Package greeting")) {
			t.Errorf("%s content: %q", w.Path, got)
		}
		rel, _ := filepath.Rel(f.project, w.Path)
		idx := strings.Index(out, "("+filepath.ToSlash(rel)+")")
		if idx < 0 || idx < lastIdx {
			t.Errorf("write of %s not shown in order", rel)
		}
		lastIdx = idx
	}
	var m vocab.DoneMarker
	b, _ := os.ReadFile(f.asg.DoneMarker)
	if err := json.Unmarshal(b, &m); err != nil || m.AgentID != "worker_1" || m.OutputFile != want[2].Path {
		t.Errorf("done marker %s: %v", b, err)
	}
	// No temp files left behind.
	matches, _ := filepath.Glob(filepath.Join(f.taskDir, "outputs", ".*tmp*"))
	if len(matches) > 0 {
		t.Errorf("temp files left: %v", matches)
	}
	for _, s := range []string{"Hivemind sim agent", "\x1b[", "❯ ", "\r\x1b[K", "Subtask st_1 complete", "Bye!"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	wantEvents := []string{"worker_1:SessionStart", "worker_1:UserPromptSubmit", "worker_1:Stop", "worker_1:SessionEnd"}
	if got := sink.waitEvents(t, len(wantEvents)); !reflect.DeepEqual(got, wantEvents) {
		t.Errorf("hooks %v, want %v", got, wantEvents)
	}
	sink.mu.Lock()
	p := sink.msgs[1]["payload"].(map[string]any)
	sink.mu.Unlock()
	if !strings.Contains(p["prompt"].(string), f.asgPath) || strings.Contains(p["prompt"].(string), "\x1b") {
		t.Errorf("UserPromptSubmit prompt %q", p["prompt"])
	}
}

func TestMainDeterministic(t *testing.T) {
	outputs := map[string]int{}
	for i := 0; i < 3; i++ {
		seed := "--seed=11"
		if i == 2 {
			seed = "--seed=12"
		}
		f := newSimFixture(t)
		out, code := run(t, f, "[HIVEMIND] go "+f.asgPath+"\n", nil, seed)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		outputs[out]++
	}
	if len(outputs) != 2 {
		t.Fatalf("want seed 11 twice identical and seed 12 different: %d distinct outputs", len(outputs))
	}
}

func TestMainLines(t *testing.T) {
	f := newSimFixture(t)
	sink := newHookSink(t)
	// Empty lines and a lone \r do nothing; other text gets a reply and a
	// full turn; a missing assignment is reported; EOF exits 0.
	in := "\r\n\r\nhello there\r" + "[HIVEMIND] read /nope/assignments/x.json\n"
	out, code := run(t, f, in, map[string]string{"HIVEMIND_HOOK_SOCKET": sink.ln.Addr().String()})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "I follow Hivemind assignments") || !strings.Contains(out, "Cannot read assignment /nope/assignments/x.json") {
		t.Errorf("output:\n%s", out)
	}
	want := []string{"worker_1:SessionStart", "worker_1:UserPromptSubmit", "worker_1:Stop", "worker_1:UserPromptSubmit", "worker_1:Stop"}
	if got := sink.waitEvents(t, len(want)); !reflect.DeepEqual(got, want) {
		t.Errorf("hooks %v, want %v", got, want)
	}
}

func TestMainReadOnlyAndFlags(t *testing.T) {
	f := newSimFixture(t)
	f.asg.ReadOnly = true
	b, _ := json.Marshal(f.asg)
	must(t, os.WriteFile(f.asgPath, b, 0o644))
	out, code := run(t, f, "[HIVEMIND] "+f.asgPath+"\n/exit\n", nil)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(f.asg.DoneMarker); err == nil {
		t.Errorf("read-only assignment wrote files")
	}
	if !strings.Contains(out, "Nothing for me to write") {
		t.Errorf("output:\n%s", out)
	}
	if _, code := run(t, f, "", nil, "--no-such-flag"); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
}

func TestMainForbiddenWriteSkipped(t *testing.T) {
	f := newSimFixture(t)
	mustWriteFile(t, filepath.Join(f.taskDir, "plan.md"), "# Plan\n\n```json\n"+
		`{"summary":"s","checkpoints":[{"id":1,"name":"a"}],"subtasks":[{"id":"st_1","description":"d","checkpoint":1,"dependencies":[],"files":["CREATE src/a.go"]}]}`+"\n```\n")
	a := vocab.Assignment{Seq: 1, State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
		Writes: []string{filepath.Join(f.taskDir, "plan-approved.md"), filepath.Join(f.taskDir, "plan-feedback.md")}}
	p := filepath.Join(f.taskDir, "assignments", "reviewer.json")
	b, _ := json.Marshal(a)
	must(t, os.WriteFile(p, b, 0o644))
	out, _ := run(t, f, "[HIVEMIND] "+p+"\n", map[string]string{"HIVEMIND_AGENT_ID": "reviewer", "HIVEMIND_ROLE": "reviewer"}, "--forbidden-write", "--reject-plans=0")
	if _, err := os.Stat(filepath.Join(f.project, "src", "a.go")); err == nil {
		t.Errorf("forbidden write happened")
	}
	if _, err := os.Stat(filepath.Join(f.taskDir, "plan-approved.md")); err != nil {
		t.Errorf("approval not written: %v", err)
	}
	if !strings.Contains(out, "write denied") {
		t.Errorf("output:\n%s", out)
	}
}

func mustWriteFile(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func TestAssignmentRE(t *testing.T) {
	for in, want := range map[string]string{
		"[HIVEMIND] lead: read /a/b/.hivemind/tasks/t/assignments/lead.json now":      "/a/b/.hivemind/tasks/t/assignments/lead.json",
		"[HIVEMIND] see assignments/worker_2.json":                                    "assignments/worker_2.json",
		"[HIVEMIND] Do st_1 — read /p/.hivemind/tasks/t/assignments/worker_2-17.json": "/p/.hivemind/tasks/t/assignments/worker_2-17.json",
		"nothing here": "",
	} {
		if got := AssignmentRE.FindString(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}
