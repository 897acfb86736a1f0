package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/vocab"
)

type sseEvent struct {
	Name string
	Data map[string]any
}

type fixture struct {
	project, taskDir string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	project := t.TempDir()
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "outputs", "reviews"} {
		if err := os.MkdirAll(filepath.Join(taskDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(project, "go.mod"), "module example.com/x\n")
	writeFile(t, filepath.Join(taskDir, "task.md"), "Add a greeting service\n")
	return fixture{project, taskDir}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) assignment(t *testing.T, a vocab.Assignment) string {
	t.Helper()
	p := filepath.Join(f.taskDir, "assignments", string(a.Agent)+".json")
	b, _ := json.Marshal(a)
	writeFile(t, p, string(b))
	return p
}

func (f fixture) worker(t *testing.T, files ...string) (vocab.Assignment, string) {
	a := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: "worker", Agent: "worker_1",
		Subtask: &vocab.Subtask{ID: "st_1", Description: "Core.", Checkpoint: 1, Files: files},
		Writes:  []string{filepath.Join(f.taskDir, "outputs", "st_1.md")}, DoneMarker: filepath.Join(f.taskDir, "outputs", "st_1.done")}
	return a, f.assignment(t, a)
}

var tools = []map[string]any{{"name": "Read"}, {"name": "Write"}, {"name": "Edit"}}

// post sends a Messages API request and returns the parsed SSE events
// (stream) or the JSON body.
func post(t *testing.T, url string, req map[string]any, hdr ...string) (*http.Response, []sseEvent, map[string]any) {
	t.Helper()
	resp, data, names, obj := postJSON(t, url+"/v1/messages?beta=true", req, hdr...)
	var evs []sseEvent
	for i, d := range data {
		if d["type"] != names[i] {
			t.Fatalf("event %q carries type %v", names[i], d["type"])
		}
		evs = append(evs, sseEvent{names[i], d})
	}
	return resp, evs, obj
}

// assemble rebuilds the message content from SSE events, checking the
// event grammar on the way.
func assemble(t *testing.T, evs []sseEvent) (content []map[string]any, stop string) {
	t.Helper()
	if len(evs) < 3 || evs[0].Name != "message_start" || evs[len(evs)-1].Name != "message_stop" || evs[len(evs)-2].Name != "message_delta" {
		t.Fatalf("bad event sequence: %v", names(evs))
	}
	open := -1
	var partial []string
	for _, e := range evs[1 : len(evs)-2] {
		switch e.Name {
		case "ping":
		case "content_block_start":
			if open != -1 {
				t.Fatalf("block start while %d open", open)
			}
			open = int(e.Data["index"].(float64))
			if open != len(content) {
				t.Fatalf("index %d, want %d", open, len(content))
			}
			cb := e.Data["content_block"].(map[string]any)
			content = append(content, cb)
			partial = append(partial, "")
		case "content_block_delta":
			if int(e.Data["index"].(float64)) != open {
				t.Fatalf("delta for closed block")
			}
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				content[open]["text"] = content[open]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[open] += d["partial_json"].(string)
			default:
				t.Fatalf("delta type %v", d["type"])
			}
		case "content_block_stop":
			if content[open]["type"] == "tool_use" {
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[open]), &in); err != nil {
					t.Fatalf("tool input %q: %v", partial[open], err)
				}
				content[open]["input"] = in
			}
			open = -1
		default:
			t.Fatalf("unexpected event %s", e.Name)
		}
	}
	if open != -1 {
		t.Fatalf("block %d never stopped", open)
	}
	d := evs[len(evs)-2].Data["delta"].(map[string]any)
	return content, d["stop_reason"].(string)
}

func names(evs []sseEvent) []string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return n
}

// drive plays Claude Code: it runs the tool calls for real until end_turn
// and returns the tool calls made and the final text. failWrite makes the
// first Write of that path fail (as a hook denial or a stale read would).
func drive(t *testing.T, url, line string, failWrite func(path string) bool) (calls []string, final string) {
	t.Helper()
	msgs := []map[string]any{{"role": "user", "content": []map[string]any{
		{"type": "text", "text": "<system-reminder>date</system-reminder>"},
		{"type": "text", "text": line}}}}
	for turn := 0; turn < 20; turn++ {
		_, evs, _ := post(t, url, map[string]any{"model": "m", "stream": true, "tools": tools, "messages": msgs})
		content, stop := assemble(t, evs)
		msgs = append(msgs, map[string]any{"role": "assistant", "content": content})
		if stop == "end_turn" {
			for _, c := range content {
				if c["type"] == "text" {
					final = c["text"].(string)
				}
			}
			return calls, final
		}
		if stop != "tool_use" {
			t.Fatalf("stop_reason %s", stop)
		}
		var results []map[string]any
		for _, c := range content {
			if c["type"] != "tool_use" {
				continue
			}
			in := c["input"].(map[string]any)
			p, _ := in["file_path"].(string)
			if c["name"] == "Bash" {
				p = stepLabel(in["command"].(string))
			}
			calls = append(calls, c["name"].(string)+" "+p)
			res := map[string]any{"type": "tool_result", "tool_use_id": c["id"], "content": "ok"}
			switch c["name"] {
			case "Write":
				if failWrite != nil && failWrite(p) {
					res["is_error"], res["content"] = true, "denied"
					break
				}
				writeFile(t, p, in["content"].(string))
			case "Read":
				b, _ := os.ReadFile(p)
				res["content"] = string(b)
			}
			results = append(results, res)
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": results})
	}
	t.Fatal("no end_turn after 20 turns")
	return nil, ""
}

func TestToolCallFlowWorker(t *testing.T) {
	f := newFixture(t)
	a, p := f.worker(t, "CREATE internal/g/g.go", "MODIFY README.md")
	writeFile(t, filepath.Join(f.project, "README.md"), "# Demo\n")
	api := New(DefaultScript())
	defer api.Close()
	calls, final := drive(t, api.URL(), "[HIVEMIND] worker_1: read "+p+" now.", nil)
	want := []string{
		"Write " + filepath.Join(f.project, "internal/g/g.go"),
		"Read " + filepath.Join(f.project, "README.md"), // existing file: Read before Write
		"Write " + filepath.Join(f.project, "README.md"),
		"Write " + filepath.Join(f.taskDir, "outputs/st_1.md"),
		"Write " + a.DoneMarker,
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(final, "st_1 complete") {
		t.Errorf("final text %q", final)
	}
	for _, fw := range api.Files(p) {
		got, _ := os.ReadFile(fw.Path)
		if string(got) != fw.Content {
			t.Errorf("%s differs from the script", fw.Path)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(f.project, "README.md"))
	if !strings.HasPrefix(string(readme), "# Demo\n") || len(readme) == len("# Demo\n") {
		t.Errorf("README not modified: %q", readme)
	}
	reqs := api.Requests()
	if len(reqs) != len(want)+1 {
		t.Errorf("%d requests, want %d", len(reqs), len(want)+1)
	}
	for _, r := range reqs {
		if r.Agent != "worker_1" || r.Assignment != p || !r.HasTools || !r.Stream || r.Kind != "messages" {
			t.Errorf("request log %+v", r)
		}
	}
}

func TestWriteErrorRetriedAfterRead(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE internal/g/g.go")
	api := New(DefaultScript())
	defer api.Close()
	failed := false
	calls, _ := drive(t, api.URL(), "[HIVEMIND] "+p, func(path string) bool {
		if !failed && strings.HasSuffix(path, "g.go") {
			failed = true
			return true
		}
		return false
	})
	g := filepath.Join(f.project, "internal/g/g.go")
	if len(calls) < 3 || calls[0] != "Write "+g || calls[1] != "Read "+g || calls[2] != "Write "+g {
		t.Fatalf("calls %v", calls)
	}
}

func TestForbiddenWriteNotRetried(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.taskDir, "agents", "lead", "plan.md"), "```json\n"+
		`{"summary":"s","checkpoints":[{"id":1,"name":"a"}],"subtasks":[{"id":"st_1","description":"d","checkpoint":1,"dependencies":[],"files":["CREATE src/a.go"]}]}`+"\n```\n")
	p := f.assignment(t, vocab.Assignment{Seq: 2, State: vocab.PhasePlanReview, Role: "reviewer", Agent: "reviewer",
		Writes: []string{filepath.Join(f.taskDir, "plan-approved.md"), filepath.Join(f.taskDir, "plan-feedback.md")}})
	sc := DefaultScript()
	sc.Scenario.ForbiddenWrite = true
	api := New(sc)
	defer api.Close()
	src := filepath.Join(f.project, "src/a.go")
	calls, _ := drive(t, api.URL(), "[HIVEMIND] "+p, func(path string) bool { return path == src })
	want := []string{"Write " + src, "Write " + filepath.Join(f.taskDir, "plan-feedback.md")}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %v, want %v", calls, want)
	}
}

// A scripted shell command (the HostileShell scenario) is answered as a
// Bash call carrying the whole command, once: its result, whatever the
// shell said, moves the turn on to the subtask's own files.
func TestScriptedShellCommand(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	sc := DefaultScript()
	sc.Scenario.HostileShell = true
	api := New(sc)
	defer api.Close()
	calls, _ := drive(t, api.URL(), "[HIVEMIND] "+p, nil)
	label := filepath.Join(f.taskDir, "agents", "worker_1", "hostile")
	if len(calls) < 2 || calls[0] != "Bash "+label || slices.Contains(calls[1:], calls[0]) {
		t.Fatalf("calls %v, want one Bash %s first", calls, label)
	}
	var cmd string
	for _, r := range api.Requests() {
		if r.Tool == "Bash" {
			cmd = r.ToolContent
		}
	}
	for _, target := range script.HostileTargets(f.taskDir) {
		if !strings.Contains(cmd, "'"+target+"'") {
			t.Errorf("the command does not try %s:\n%s", target, cmd)
		}
	}
}

func TestNonStreamingAndSideCalls(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	api := New(DefaultScript())
	defer api.Close()
	// Non-streaming model turn.
	resp, _, body := post(t, api.URL(), map[string]any{"model": "m", "tools": tools,
		"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + p}}})
	if resp.StatusCode != 200 || body["type"] != "message" || body["stop_reason"] != "tool_use" {
		t.Fatalf("non-streaming: %d %v", resp.StatusCode, body)
	}
	c := body["content"].([]any)
	tu := c[len(c)-1].(map[string]any)
	if tu["name"] != "Write" || tu["input"].(map[string]any)["file_path"] != filepath.Join(f.project, "a.go") {
		t.Errorf("tool use %v", tu)
	}
	// Title generation (structured output, no tools) gets JSON text.
	_, evs, _ := post(t, api.URL(), map[string]any{"model": "m", "stream": true,
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
			"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}}}},
		"messages": []map[string]any{{"role": "user", "content": "<session>[HIVEMIND] " + p + "</session> Write the title"}}})
	content, stop := assemble(t, evs)
	var title map[string]string
	if stop != "end_turn" || json.Unmarshal([]byte(content[0]["text"].(string)), &title) != nil || title["title"] == "" {
		t.Errorf("title call: %v %v", stop, content)
	}
	// A plain message gets plain text.
	_, evs, _ = post(t, api.URL(), map[string]any{"model": "m", "stream": true, "tools": tools,
		"messages": []map[string]any{{"role": "user", "content": "hello"}}})
	if content, stop := assemble(t, evs); stop != "end_turn" || content[0]["type"] != "text" {
		t.Errorf("plain: %v %v", stop, content)
	}
	// count_tokens and anything else.
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/v1/messages/count_tokens", `"input_tokens"`},
		{"GET", "/v1/models", `"data":[]`},
		{"HEAD", "/", ""},
		{"POST", "/api/event_logging/batch", "{}"},
	} {
		req, _ := http.NewRequest(tc.method, api.URL()+tc.path, strings.NewReader(`{"messages":[]}`))
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, r.StatusCode, b)
		}
	}
	kinds := map[string]int{}
	for _, r := range api.Requests() {
		kinds[r.Kind]++
	}
	if kinds["messages"] != 3 || kinds["count_tokens"] != 1 || kinds["other"] != 3 {
		t.Errorf("request kinds %v", kinds)
	}
}

func TestErrorsForOneAgent(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	p2 := f.assignment(t, vocab.Assignment{Seq: 1, State: vocab.PhasePlanning, Role: "lead", Agent: "lead",
		Writes: []string{filepath.Join(f.taskDir, "plan.md")}})
	sc := DefaultScript()
	sc.Errors = []ErrorRule{{Agent: "worker_1", Status: 429, Count: 2, RetryAfter: 1500 * time.Millisecond}}
	api := New(sc)
	defer api.Close()
	api.AddError(ErrorRule{Agent: "lead", Status: 529, Count: 1})
	msg := func(path string) map[string]any {
		return map[string]any{"model": "m", "stream": true, "tools": tools,
			"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + path}}}
	}
	for i := 0; i < 2; i++ {
		resp, _, body := post(t, api.URL(), msg(p))
		if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "2" || body["error"].(map[string]any)["type"] != "rate_limit_error" {
			t.Fatalf("request %d: %d %v %v", i, resp.StatusCode, resp.Header, body)
		}
	}
	resp, _, body := post(t, api.URL(), msg(p2))
	if resp.StatusCode != 529 || body["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Fatalf("lead: %d %v", resp.StatusCode, body)
	}
	for _, path := range []string{p, p2} {
		if resp, evs, _ := post(t, api.URL(), msg(path)); resp.StatusCode != 200 || len(evs) == 0 {
			t.Fatalf("after the errors: %d", resp.StatusCode)
		}
	}
	var statuses []int
	for _, r := range api.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{429, 429, 529, 200, 200}; !equalInts(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
}

// An error rule with Turn answers only that turn's requests; a wait rule
// holds its turn's answers until its condition holds, or For has passed.
func TestErrorsAndWaitsForOneTurn(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	sc := DefaultScript()
	sc.Errors = []ErrorRule{{Agent: "worker_1", Turn: "Checkpoint 1 (core) reached", Status: 429, Count: 1}}
	polled, open := make(chan struct{}, 1), make(chan struct{})
	sc.Waits = []WaitRule{
		// "Review checkpoint", not "Review": the 429 turn's line says "the
		// Reviewer is reviewing it", and was held the whole minute.
		{Agent: "worker_1", Turn: "Review checkpoint", For: time.Minute, Until: func() bool {
			select {
			case polled <- struct{}{}:
			default:
			}
			select {
			case <-open:
				return true
			default:
				return false
			}
		}},
		{Agent: "worker_1", Turn: "Slow", For: 300 * time.Millisecond, Until: func() bool { return false }},
	}
	api := New(sc)
	defer api.Close()
	msg := func(line string) map[string]any {
		return map[string]any{"model": "m", "stream": true, "tools": tools,
			"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + line + " — read " + p}}}
	}
	if resp, _, _ := post(t, api.URL(), msg("Do subtask st_1")); resp.StatusCode != 200 {
		t.Fatalf("another turn: %d", resp.StatusCode)
	}
	if resp, _, _ := post(t, api.URL(), msg("Checkpoint 1 (core) reached; the Reviewer is reviewing it")); resp.StatusCode != 429 {
		t.Fatalf("the scripted turn: %d", resp.StatusCode)
	}
	body, _ := json.Marshal(msg("Review checkpoint 1"))
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(api.URL()+"/v1/messages", "application/json", strings.NewReader(string(body)))
		if err != nil {
			answered <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-polled // the request is held: its condition was false
	select {
	case c := <-answered:
		t.Fatalf("answered (%d) before its condition held", c)
	default:
	}
	close(open)
	if c := <-answered; c != 200 {
		t.Fatalf("after the condition: %d", c)
	}
	start := time.Now()
	if resp, _, _ := post(t, api.URL(), msg("Slow turn")); resp.StatusCode != 200 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("bounded wait: %d after %v", resp.StatusCode, time.Since(start))
	}
	for _, r := range api.Requests() {
		if r.Agent != "worker_1" || !strings.Contains(r.Line, "[HIVEMIND]") {
			t.Errorf("request %+v: agent %q, line %q", r.Path, r.Agent, r.Line)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAgentHeaderAndSlowStream(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	sc := Script{Scenario: script.DefaultScenario(), ChunkDelay: 15 * time.Millisecond}
	api := New(sc)
	defer api.Close()
	start := time.Now()
	_, evs, _ := post(t, api.URL(), map[string]any{"model": "m", "stream": true, "tools": tools,
		"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + p}}}, "X-Hivemind-Agent", "custom")
	took := time.Since(start)
	if min := time.Duration(len(evs)) * 15 * time.Millisecond; took < min {
		t.Errorf("slow stream took %v for %d events, want ≥ %v", took, len(evs), min)
	}
	if r := api.Requests(); r[0].Agent != "custom" {
		t.Errorf("agent %q, want the header's", r[0].Agent)
	}
}

func TestChunks(t *testing.T) {
	s := strings.Repeat("é✳a", 50)
	var joined string
	for _, c := range chunks(s, 7) {
		if len(c) > 7 || !isValidUTF8(c) {
			t.Fatalf("bad chunk %q", c)
		}
		joined += c
	}
	if joined != s {
		t.Fatal("chunks lost data")
	}
	if got := chunks("", 5); len(got) != 1 || got[0] != "" {
		t.Errorf("empty: %q", got)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
