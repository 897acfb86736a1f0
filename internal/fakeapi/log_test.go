package fakeapi

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// An error rule with For answers every request of its agent for that long
// from its first match, then lets requests through; other agents are not
// affected.
func TestErrorWindow(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	lead := f.assignment(t, vocab.Assignment{Seq: 1, State: vocab.PhasePlanning, Role: "lead", Agent: "lead"})
	sc := DefaultScript()
	sc.Errors = []ErrorRule{{Agent: "worker_1", Status: 429, For: 300 * time.Millisecond}}
	api := New(sc)
	defer api.Close()
	msg := func(path string) map[string]any {
		return map[string]any{"model": "m", "stream": true, "tools": tools,
			"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + path}}}
	}
	start := time.Now()
	n429 := 0
	for {
		resp, _, _ := post(t, api.URL(), msg(p))
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode != 429 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		n429++
		if time.Since(start) > 5*time.Second {
			t.Fatalf("still 429 after %v", time.Since(start))
		}
		if resp, _, _ := post(t, api.URL(), msg(lead)); resp.StatusCode != 200 {
			t.Fatalf("lead got %d during worker_1's window", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); n429 < 2 || took < 300*time.Millisecond {
		t.Errorf("%d answers 429 over %v, want several over ≥ 300ms", n429, took)
	}
}

// The log records the tool call answered (id, content) and the tool
// results, typed prompts, [HIVEMIND] lines and session id of the next
// request.
func TestLogToolResultsAndConversation(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	api := New(DefaultScript())
	defer api.Close()
	line := "[HIVEMIND] Do subtask st_1 — read " + p
	meta := map[string]any{"user_id": `{"device_id":"d","session_id":"0b5c2d9e-1111-4222-8333-444455556666"}`}
	first := map[string]any{"model": "m", "stream": true, "tools": tools, "metadata": meta,
		"messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": line}}}}}
	if resp, _, _ := post(t, api.URL(), first); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r0 := api.Requests()[0]
	if r0.Tool != "Write" || r0.ToolID == "" || r0.ToolContent == "" || r0.SessionID != "0b5c2d9e-1111-4222-8333-444455556666" {
		t.Fatalf("first request logged as %+v", r0)
	}
	second := map[string]any{"model": "m", "stream": true, "tools": tools, "metadata": meta,
		"messages": []map[string]any{
			first["messages"].([]map[string]any)[0],
			{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": r0.ToolID, "name": "Write",
				"input": map[string]any{"file_path": r0.ToolPath, "content": r0.ToolContent}}}},
			{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": r0.ToolID, "is_error": true,
				"content": []map[string]any{{"type": "text", "text": "denied by hook"}}}}},
		}}
	post(t, api.URL(), second)
	r1 := api.Requests()[1]
	if len(r1.Results) != 1 || r1.Results[0].ID != r0.ToolID || !r1.Results[0].IsError || r1.Results[0].Text != "denied by hook" {
		t.Errorf("results %+v", r1.Results)
	}
	if got := r1.HivemindLines(); len(got) != 1 || got[0] != line {
		t.Errorf("HivemindLines %q, want [%q]", got, line)
	}
	if got := r1.UserPrompts(); len(got) != 1 {
		t.Errorf("UserPrompts %q: tool results are not prompts", got)
	}
}

// Project files are written relative to the working directory the system
// prompt states (a worker's git worktree), like a real model would.
func TestWritesInWorkingDirectory(t *testing.T) {
	f := newFixture(t)
	_, p := f.worker(t, "CREATE a.go")
	wt := t.TempDir()
	api := New(DefaultScript())
	defer api.Close()
	post(t, api.URL(), map[string]any{"model": "m", "stream": true, "tools": tools,
		"system":   []map[string]any{{"type": "text", "text": "Environment:\n - Primary working directory: " + wt + "\n - Is a git repository: true"}},
		"messages": []map[string]any{{"role": "user", "content": "[HIVEMIND] " + p}}})
	r := api.Requests()[0]
	if r.Cwd != wt || r.Tool != "Write" || r.ToolPath != filepath.Join(wt, "a.go") {
		t.Errorf("cwd %q, first tool call %s %s; want Write %s", r.Cwd, r.Tool, r.ToolPath, filepath.Join(wt, "a.go"))
	}
}
