package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// postJSON sends body to url with the header pairs hdr and returns the
// response with its SSE data lines and event names parsed (when
// streamed) or its JSON body.
func postJSON(t *testing.T, url string, body any, hdr ...string) (resp *http.Response, events []map[string]any, names []string, obj map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	hr, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	hr.Header.Set("content-type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		_ = json.NewDecoder(resp.Body).Decode(&obj)
		return resp, nil, nil, obj
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	name := ""
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			name = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", l, err)
			}
			events, names = append(events, d), append(names, name)
			name = ""
		case l == "":
		default:
			t.Fatalf("unexpected SSE line %q", l)
		}
	}
	return resp, events, names, nil
}

// applyAddPatch runs an apply_patch envelope of Add File hunks the way
// Codex does: each file gets its + lines, newline-terminated.
func applyAddPatch(t *testing.T, patch string) []string {
	t.Helper()
	if !strings.HasPrefix(patch, "*** Begin Patch\n") || !strings.HasSuffix(patch, "*** End Patch\n") {
		t.Fatalf("not an apply_patch envelope: %q", patch)
	}
	var paths []string
	var cur string
	var body strings.Builder
	flush := func() {
		if cur != "" {
			writeFile(t, cur, body.String())
			paths = append(paths, cur)
		}
		body.Reset()
	}
	for _, l := range strings.Split(strings.TrimSuffix(patch, "\n"), "\n")[1:] {
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			cur = strings.TrimPrefix(l, "*** Add File: ")
		case l == "*** End Patch":
			flush()
		case strings.HasPrefix(l, "+"):
			body.WriteString(l[1:] + "\n")
		default:
			t.Fatalf("unexpected patch line %q", l)
		}
	}
	return paths
}

var heredocRE = regexp.MustCompile(`(?s)^apply_patch <<'PATCH'\n(.*)PATCH\n$`)

// codexTurn plays Codex: it posts the conversation to /v1/responses,
// checks the event grammar, runs each write call (fail decides a call's
// outcome by path) and loops until an answer without calls. It returns the
// written paths in order and the final text.
func codexTurn(t *testing.T, url, cwd string, tools []map[string]any, line string, fail func(path string) bool) (calls []string, final string) {
	t.Helper()
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []map[string]any{{"type": "input_text", "text": "You are Codex."}}},
		map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text",
			"text": "<environment_context>\n  <cwd>" + cwd + "</cwd>\n</environment_context>"}}},
		map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": line}}},
	}
	for turn := 0; turn < 20; turn++ {
		_, evs, names, _ := postJSON(t, url+"/v1/responses", map[string]any{"model": "gpt-test", "stream": true,
			"tools": tools, "input": input, "prompt_cache_key": "thread-1"})
		if len(evs) < 2 || names[0] != "response.created" || names[len(names)-1] != "response.completed" {
			t.Fatalf("bad event sequence %v", names)
		}
		for i, e := range evs {
			if e["type"] != names[i] {
				t.Fatalf("event %q carries type %v", names[i], e["type"])
			}
		}
		resp := evs[len(evs)-1]["response"].(map[string]any)
		if u := resp["usage"].(map[string]any); u["input_tokens"].(float64) < 1 || u["output_tokens"].(float64) < 1 ||
			u["total_tokens"].(float64) != u["input_tokens"].(float64)+u["output_tokens"].(float64) {
			t.Fatalf("usage %v", u)
		}
		var done []map[string]any
		for i, e := range evs {
			if names[i] == "response.output_item.done" {
				done = append(done, e["item"].(map[string]any))
			}
		}
		called := false
		for _, item := range done {
			b, _ := json.Marshal(item)
			var raw any
			_ = json.Unmarshal(b, &raw)
			input = append(input, raw)
			var patch string
			switch item["type"] {
			case "message":
				final = item["content"].([]any)[0].(map[string]any)["text"].(string)
				continue
			case "function_call":
				var args map[string]any
				if err := json.Unmarshal([]byte(item["arguments"].(string)), &args); err != nil {
					t.Fatalf("arguments: %v", err)
				}
				switch item["name"] {
				case "exec_command":
					m := heredocRE.FindStringSubmatch(args["cmd"].(string))
					if m == nil {
						t.Fatalf("exec_command %q is not an apply_patch heredoc", args["cmd"])
					}
					patch = m[1]
				case "apply_patch":
					patch = args["input"].(string)
				}
			case "custom_tool_call":
				patch = item["input"].(string)
			default:
				t.Fatalf("item type %v", item["type"])
			}
			called = true
			path := patchPath(patch)
			calls = append(calls, item["name"].(string)+" "+path)
			out := "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nA " + path + "\n"
			if fail != nil && fail(path) {
				out = "Exit code: 1\nOutput:\npatch rejected by hook"
			} else {
				applyAddPatch(t, patch)
			}
			typ := "function_call_output"
			if item["type"] == "custom_tool_call" {
				typ = "custom_tool_call_output"
			}
			input = append(input, map[string]any{"type": typ, "call_id": item["call_id"], "output": out})
		}
		if !called {
			return calls, final
		}
	}
	t.Fatal("no final answer after 20 turns")
	return nil, ""
}

func TestResponsesWritesThroughCodexTools(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []map[string]any
		tool  string
	}{
		{"exec_command heredoc", []map[string]any{{"type": "function", "name": "exec_command"}, {"type": "function", "name": "write_stdin"}}, "exec_command"},
		{"apply_patch function", []map[string]any{{"type": "function", "name": "exec_command"}, {"type": "function", "name": "apply_patch"}}, "apply_patch"},
		{"apply_patch custom", []map[string]any{{"type": "custom", "name": "apply_patch"}}, "apply_patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			a, p := f.worker(t, "CREATE internal/g/g.go")
			api := New(DefaultScript())
			defer api.Close()
			calls, final := codexTurn(t, api.URL(), f.project, tc.tools, "[HIVEMIND] worker_1: read "+p+" now.", nil)
			want := []string{
				tc.tool + " " + filepath.Join(f.project, "internal/g/g.go"),
				tc.tool + " " + filepath.Join(f.taskDir, "outputs/st_1.md"),
				tc.tool + " " + a.DoneMarker,
			}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
			if !strings.Contains(final, "st_1 complete") {
				t.Errorf("final text %q", final)
			}
			for _, fw := range api.Files(p) {
				got := readFile(t, fw.Path)
				if strings.TrimSuffix(got, "\n") != strings.TrimSuffix(fw.Content, "\n") {
					t.Errorf("%s differs from the script", fw.Path)
				}
			}
			reqs := api.Requests()
			if len(reqs) != len(want)+1 {
				t.Fatalf("%d requests, want %d", len(reqs), len(want)+1)
			}
			for i, r := range reqs {
				if r.Cwd != f.project {
					t.Errorf("request cwd %q, want %q", r.Cwd, f.project)
				}
				if r.Kind != "responses" || r.Agent != "worker_1" || r.Assignment != p || !r.HasTools || !r.Stream ||
					r.SessionID != "thread-1" || r.InputTokens < 1 || r.OutputTokens < 1 {
					t.Errorf("request log %+v", r)
				}
				if i > 0 && (len(r.Results) != 1 || r.Results[0].IsError) {
					t.Errorf("request %d results %+v", i, r.Results)
				}
			}
			if api.TurnsEnded(p) != 1 {
				t.Errorf("TurnsEnded = %d", api.TurnsEnded(p))
			}
		})
	}
}

// turnFunc plays one CLI through a [HIVEMIND] turn (codexTurn,
// geminiTurn): fail decides which write calls fail.
type turnFunc func(t *testing.T, url, cwd, line string, fail func(path string) bool) (calls []string, final string)

// checkRetries asserts the script's answer to failed writes on a wire
// whose write tool is tool: a failed write is retried once, then the
// script moves on (and the failure is logged as an error result); a
// forbidden write (the reviewer's scripted source edit) is never retried.
func checkRetries(t *testing.T, turn turnFunc, tool string) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE internal/g/g.go")
	api := New(DefaultScript())
	defer api.Close()
	g := filepath.Join(f.project, "internal/g/g.go")
	failed := 0
	calls, _ := turn(t, api.URL(), f.project, "[HIVEMIND] "+p, func(path string) bool {
		if path == g && failed < 2 {
			failed++
			return true
		}
		return false
	})
	if len(calls) != 4 || calls[0] != calls[1] || calls[0] != tool+" "+g || calls[2] == calls[1] {
		t.Fatalf("calls %v", calls)
	}
	if r := api.Requests()[1]; len(r.Results) != 1 || !r.Results[0].IsError {
		t.Errorf("a failed write was not logged as an error: %+v", r.Results)
	}

	writeFile(t, filepath.Join(f.taskDir, "agents", "lead", "plan.md"), "```json\n"+
		`{"summary":"s","checkpoints":[{"id":1,"name":"a"}],"subtasks":[{"id":"st_1","description":"d","checkpoint":1,"dependencies":[],"files":["CREATE src/a.go"]}]}`+"\n```\n")
	rp := f.reviewerPlanReview(t)
	sc := DefaultScript()
	sc.Scenario.ForbiddenWrite = true
	api2 := New(sc)
	defer api2.Close()
	src := filepath.Join(f.project, "src/a.go")
	calls, _ = turn(t, api2.URL(), f.project, "[HIVEMIND] "+rp, func(path string) bool { return path == src })
	want := []string{tool + " " + src, tool + " " + filepath.Join(f.taskDir, "plan-feedback.md")}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %v, want %v", calls, want)
	}
}

func TestResponsesFailedWriteRetriedOnceForbiddenNot(t *testing.T) {
	checkRetries(t, func(t *testing.T, url, cwd, line string, fail func(string) bool) ([]string, string) {
		return codexTurn(t, url, cwd, []map[string]any{{"type": "function", "name": "exec_command"}}, line, fail)
	}, "exec_command")
}

func TestResponsesSideCallsAndErrors(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	api := New(Script{Scenario: DefaultScript().Scenario, Seed: 1,
		Errors: []ErrorRule{{Agent: "worker_1", Status: 429, Count: 1, RetryAfter: 1500 * time.Millisecond}}})
	defer api.Close()
	line := map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": "[HIVEMIND] " + p}}}

	resp, _, _, body := postJSON(t, api.URL()+"/v1/responses", map[string]any{"model": "m", "stream": true,
		"tools": []map[string]any{{"type": "function", "name": "exec_command"}}, "input": []any{line}})
	if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "2" {
		t.Fatalf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("retry-after"))
	}
	if e := body["error"].(map[string]any); e["type"] != "rate_limit_exceeded" {
		t.Errorf("error body %v", body)
	}

	// A side call without tools asking for structured output (a title).
	resp, _, _, body = postJSON(t, api.URL()+"/v1/responses", map[string]any{"model": "m", "input": []any{line},
		"text": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
			"properties": map[string]any{"title": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}}}}}})
	if resp.StatusCode != 200 || body["status"] != "completed" {
		t.Fatalf("side call: %d %v", resp.StatusCode, body)
	}
	out := body["output"].([]any)
	text := out[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj["title"] == nil || obj["n"] == nil {
		t.Errorf("structured side answer %q: %v", text, err)
	}
	if r := api.Requests()[1]; r.HasTools || r.Reply != "text" || r.Stream {
		t.Errorf("side call logged as %+v", r)
	}
}

func TestPatchEnvelope(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x", "a.md")
	patch := addFilePatch(p, "# A\n\nline two\n")
	if got := patchPath(heredoc(patch)); got != p {
		t.Errorf("patchPath(heredoc) = %q, want %q", got, p)
	}
	if paths := applyAddPatch(t, patch); len(paths) != 1 || paths[0] != p {
		t.Fatalf("applied %v", paths)
	}
	if got := readFile(t, p); got != "# A\n\nline two\n" {
		t.Errorf("content %q", got)
	}
	for out, failed := range map[string]bool{
		"Exit code: 0\nOutput:\nSuccess. Updated the following files:\nA x": false,
		"Process exited with code 2\nOutput:\nerror":                        true,
		"apply_patch verification failed: no such file":                     true,
		"Successfully created and wrote to new file: /x":                    false,
		"Exit code: 0\nOutput:\nA /tmp/TestDeniedFailedError/a.go":          false,
		"Command blocked by PreToolUse hook: reviewers do not edit source":  true,
	} {
		if toolFailed(out) != failed {
			t.Errorf("toolFailed(%q) = %v", out, !failed)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reviewerPlanReview writes the reviewer's plan review assignment.
func (f fixture) reviewerPlanReview(t *testing.T) string {
	return f.assignment(t, vocab.Assignment{Seq: 2, State: vocab.PhasePlanReview, Role: "reviewer", Agent: "reviewer",
		Writes: []string{filepath.Join(f.taskDir, "plan-approved.md"), filepath.Join(f.taskDir, "plan-feedback.md")}})
}
