package fakeapi

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// geminiTurn plays Gemini CLI: it streams the conversation from
// :streamGenerateContent, checks the chunks (finish reason and usage in
// the last one only), runs each write_file call (fail decides its outcome)
// and loops until an answer without calls. It returns the calls made and
// the final text.
func geminiTurn(t *testing.T, url, cwd, line string, fail func(path string) bool) (calls []string, final string) {
	t.Helper()
	contents := []any{
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"text": "<session_context>\n- **Workspace Directories:**\n  - " + cwd + "\n</session_context>"},
			map[string]any{"text": line}}},
	}
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "read_file"}, map[string]any{"name": "write_file"}}}}
	for turn := 0; turn < 20; turn++ {
		_, evs, names, _ := postJSON(t, url+"/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
			map[string]any{"contents": contents, "tools": tools})
		if len(evs) == 0 {
			t.Fatal("no chunks")
		}
		var parts []any
		text := ""
		for i, e := range evs {
			if names[i] != "" {
				t.Fatalf("named SSE event %q: the Gemini API sends data lines only", names[i])
			}
			cand := e["candidates"].([]any)[0].(map[string]any)
			last := i == len(evs)-1
			if _, ok := cand["finishReason"]; ok != last {
				t.Fatalf("chunk %d/%d finishReason present=%v", i, len(evs), ok)
			}
			if _, ok := e["usageMetadata"]; ok != last {
				t.Fatalf("chunk %d/%d usageMetadata present=%v", i, len(evs), ok)
			}
			if last {
				u := e["usageMetadata"].(map[string]any)
				if u["promptTokenCount"].(float64) < 1 || u["totalTokenCount"].(float64) != u["promptTokenCount"].(float64)+u["candidatesTokenCount"].(float64) {
					t.Fatalf("usage %v", u)
				}
			}
			for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
				pm := p.(map[string]any)
				if s, ok := pm["text"].(string); ok {
					text += s
				}
				parts = append(parts, p)
			}
		}
		contents = append(contents, map[string]any{"role": "model", "parts": parts})
		var responses []any
		for _, p := range parts {
			fc, ok := p.(map[string]any)["functionCall"].(map[string]any)
			if !ok {
				continue
			}
			args := fc["args"].(map[string]any)
			path := args["file_path"].(string)
			calls = append(calls, fc["name"].(string)+" "+path)
			resp := map[string]any{"output": "Successfully created and wrote to new file: " + path + "."}
			if fail != nil && fail(path) {
				resp = map[string]any{"error": "Tool execution denied by policy."}
			} else {
				writeFile(t, path, args["content"].(string))
			}
			responses = append(responses, map[string]any{"functionResponse": map[string]any{"id": fc["id"], "name": fc["name"], "response": resp}})
		}
		if len(responses) == 0 {
			return calls, text
		}
		contents = append(contents, map[string]any{"role": "user", "parts": responses})
	}
	t.Fatal("no final answer after 20 turns")
	return nil, ""
}

func TestGeminiWritesThroughWriteFile(t *testing.T) {
	f := newFixture(t)
	a, p := f.worker(t, "CREATE internal/g/g.go")
	api := New(DefaultScript())
	defer api.Close()
	calls, final := geminiTurn(t, api.URL(), f.project, "[HIVEMIND] worker_1: read "+p+" now.", nil)
	want := []string{
		"write_file " + filepath.Join(f.project, "internal/g/g.go"),
		"write_file " + filepath.Join(f.taskDir, "outputs/st_1.md"),
		"write_file " + a.DoneMarker,
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(final, "st_1 complete") {
		t.Errorf("final text %q", final)
	}
	for _, fw := range api.Files(p) {
		if got := readFile(t, fw.Path); got != fw.Content {
			t.Errorf("%s differs from the script", fw.Path)
		}
	}
	reqs := api.Requests()
	if len(reqs) != len(want)+1 {
		t.Fatalf("%d requests, want %d", len(reqs), len(want)+1)
	}
	for i, r := range reqs {
		if r.Kind != "gemini" || r.Model != "gemini-test" || r.Agent != "worker_1" || r.Assignment != p || !r.HasTools ||
			!r.Stream || r.Cwd != f.project || r.InputTokens < 1 || r.OutputTokens < 1 {
			t.Errorf("request log %+v", r)
		}
		if i > 0 && (len(r.Results) != 1 || r.Results[0].IsError) {
			t.Errorf("request %d results %+v", i, r.Results)
		}
		if !strings.HasPrefix(r.Prompt, "[HIVEMIND]") && len(r.Results) == 0 {
			t.Errorf("request %d prompt %q, want the typed line", i, r.Prompt)
		}
	}
	if api.TurnsEnded(p) != 1 {
		t.Errorf("TurnsEnded = %d", api.TurnsEnded(p))
	}
}

func TestGeminiDeniedWriteRetriedOnceForbiddenNot(t *testing.T) {
	checkRetries(t, geminiTurn, "write_file")
}

func TestGeminiSideCallsAndErrors(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	api := New(Script{Scenario: DefaultScript().Scenario, Seed: 1,
		Errors: []ErrorRule{{Agent: "worker_1", Status: 429, Count: 1, RetryAfter: time.Second}}})
	defer api.Close()
	line := map[string]any{"role": "user", "parts": []any{map[string]any{"text": "[HIVEMIND] " + p}}}
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "write_file"}}}}

	resp, _, _, body := postJSON(t, api.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", map[string]any{"contents": []any{line}, "tools": tools})
	if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "1" {
		t.Fatalf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("retry-after"))
	}
	if e := body["error"].(map[string]any); e["status"] != "RESOURCE_EXHAUSTED" || e["code"].(float64) != 429 {
		t.Errorf("error body %v", body)
	}

	// Gemini CLI's model router asks generateContent for a JSON verdict.
	resp, _, _, body = postJSON(t, api.URL()+"/v1beta/models/flash-lite:generateContent", map[string]any{"contents": []any{line},
		"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
			"type": "object", "properties": map[string]any{"complexity_reasoning": map[string]any{"type": "string"},
				"complexity_score": map[string]any{"type": "integer"}}}}})
	if resp.StatusCode != 200 {
		t.Fatalf("side call: %d %v", resp.StatusCode, body)
	}
	cand := body["candidates"].([]any)[0].(map[string]any)
	text := cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"].(string)
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj["complexity_score"] != float64(1) || obj["complexity_reasoning"] == nil {
		t.Errorf("router answer %q: %v", text, err)
	}
	if cand["finishReason"] != "STOP" || body["usageMetadata"] == nil {
		t.Errorf("non-streamed answer lacks finishReason or usage: %v", body)
	}

	resp, _, _, body = postJSON(t, api.URL()+"/v1beta/models/m:countTokens", map[string]any{"contents": []any{line}})
	if resp.StatusCode != 200 || body["totalTokens"].(float64) < 1 {
		t.Errorf("countTokens: %d %v", resp.StatusCode, body)
	}
	reqs := api.Requests()
	if reqs[1].HasTools || reqs[1].Stream || reqs[1].Model != "flash-lite" || reqs[2].Kind != "count_tokens" {
		t.Errorf("request log %+v / %+v", reqs[1], reqs[2])
	}
}
