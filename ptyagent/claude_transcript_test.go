package ptyagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTranscriptUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lines := []string{
		`{"type":"user","message":{"content":"hi"}}`,
		// One message streamed as two lines: counted once (the last).
		`{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}`,
		`{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":7}}}`,
		`{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":5,"cache_creation_input_tokens":20,"output_tokens":3}}}`,
		`not json`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, out, err := TranscriptUsage(path)
	if err != nil || in != 135 || out != 10 {
		t.Fatalf("in %d out %d err %v; want 135, 10", in, out, err)
	}
}

// A transcript without a message (Claude killed in its first turn) cannot
// be resumed and is moved aside, so the session starts afresh under its
// id; one with a message can, and is where the usage is read.
func TestClaudeResumable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	sid := ClaudeSessionID("task1", "lead")
	if sid != ClaudeSessionID("task1", "lead") || sid == ClaudeSessionID("task1", "reviewer") {
		t.Fatalf("session ids not derived per task and agent: %s", sid)
	}
	if ClaudeResumable(sid) || ClaudeTranscript(sid) != "" {
		t.Fatal("resumable without a transcript")
	}
	dir := filepath.Join(home, ".claude", "projects", "-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sid+".jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"summary"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ClaudeResumable(sid) {
		t.Error("a transcript without a message is resumable")
	}
	if _, err := os.Stat(path + ".empty"); err != nil {
		t.Errorf("the empty transcript was not moved aside: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"type":"summary"}`+"\n"+`{"type":"user","message":{"content":"hi"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !ClaudeResumable(sid) || ClaudeTranscript(sid) != path {
		t.Errorf("a transcript with a message: resumable %v, path %q", ClaudeResumable(sid), ClaudeTranscript(sid))
	}
}
