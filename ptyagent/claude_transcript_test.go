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
