package ptyagent

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/testkit"
)

// Each CLI's session file, cut from real ones (Claude Code 2.1.197, Codex
// 0.169.0, Gemini CLI 0.61.0), sums to the usage the API reported.
func TestReadUsage(t *testing.T) {
	big := `{"type":"user","message":{"content":"` + strings.Repeat("x", maxUsageLine+10) + `"}}`
	cases := []struct {
		name  string
		lines []string
		tail  string // written without a newline: still being written
		want  Usage
	}{
		{"claude", []string{
			`{"type":"user","message":{"content":"hi"}}`,
			big, // a line past the bound is skipped, the next still read
			`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}`,
			`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":7}}}`,
			`{"type":"assistant","message":{"id":"m2","model":"claude-sonnet-4-6","usage":{"input_tokens":5,"cache_creation_input_tokens":20,"output_tokens":3}}}`,
			`not json`,
		}, `{"type":"assistant","message":{"id":"m3","usage":{"input_tokens":99`,
			Usage{Model: "claude-sonnet-4-6", Input: 15, Output: 10, CacheRead: 100, CacheWrite: 20}},
		{"codex", []string{
			`{"timestamp":"2026-11-24T14:20:30.120Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5-codex"}}`,
			`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3768,"cached_input_tokens":0,"output_tokens":224,"total_tokens":3992}}}}`,
			`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5068,"cached_input_tokens":1000,"cache_write_input_tokens":7,"output_tokens":242,"reasoning_output_tokens":0,"total_tokens":5310}}}}`,
			`{"type":"event_msg","payload":{"type":"task_complete","error":null}}`,
		}, "", Usage{Model: "gpt-5-codex", Input: 4068, Output: 242, CacheRead: 1000, CacheWrite: 7}},
		{"codex 429", []string{
			`{"type":"event_msg","payload":{"type":"task_complete","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests","codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}}}`,
		}, "", Usage{RateLimited: true, Detail: `{"message":"exceeded retry limit, last status: 429 Too Many Requests","codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}`}},
		{"codex 429 then a new turn", []string{
			`{"type":"event_msg","payload":{"type":"task_complete","error":{"codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}}}`,
			`{"type":"event_msg","payload":{"type":"task_started"}}`,
		}, "", Usage{}},
		{"gemini", []string{
			`{"sessionId":"1b267acd","projectHash":"7ff8","startTime":"2026-11-24T14:19:28.833Z","kind":"main"}`,
			`{"$set":{"messages":[{"id":"d049","type":"user"}],"lastUpdated":"2026-11-24T14:19:28.833Z"}}`,
			`{"id":"8e12","timestamp":"2026-11-24T14:19:29Z","type":"gemini","content":"","tokens":{"input":1207,"output":154,"cached":0,"thoughts":0,"tool":0,"total":1361},"model":"gemini-3.8-flash"}`,
			`{"id":"8e12","timestamp":"2026-11-24T14:19:29Z","type":"gemini","content":"","tokens":{"input":1207,"output":154,"cached":0,"thoughts":0,"tool":0,"total":1361},"model":"gemini-3.8-flash","toolCalls":[]}`,
			`{"id":"2732","type":"gemini","tokens":{"input":1234,"output":145,"cached":200,"thoughts":5,"tool":0,"total":1379},"model":"gemini-3.8-flash"}`,
		}, "", Usage{Model: "gemini-3.8-flash", Input: 2241, Output: 304, CacheRead: 200}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"+c.tail), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadUsage(path)
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	if _, err := ReadUsage(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Fatal("a missing file reads without error")
	}
}

// A session file followed as it grows reads, after every append (cut
// anywhere, mid-line included), what a whole read of the file so far
// reads; a rewritten (shorter) file is read again from its start. Two
// rounds of random cuts (fixed seed), one with small steps too; make
// test-long runs six. (Each read of the line past the 16 MB bound costs
// seconds of CPU under -race.)
func TestUsageFileFollowsGrowth(t *testing.T) {
	big := `{"type":"user","message":{"content":"` + strings.Repeat("y", maxUsageLine+70<<10) + `"}}`
	lines := []string{
		`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}`,
		big,
		`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":7}}}`,
		`{"type":"turn_context","payload":{"model":"gpt-5-codex"}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3768,"cached_input_tokens":8,"output_tokens":224}}}}`,
		`{"id":"2732","type":"gemini","tokens":{"input":1234,"output":145,"cached":200,"thoughts":5},"model":"gemini-3.8-flash"}`,
		`{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":5,"cache_creation_input_tokens":20,"output_tokens":3}}}`,
	}
	all := []byte(strings.Join(lines, "\n") + "\n")
	rng := rand.New(rand.NewPCG(1, uint64(len(all))))
	rounds := 2
	if testkit.Long() {
		rounds = 6
	}
	for round := range rounds {
		dir := t.TempDir()
		path, prefix := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "prefix.jsonl")
		f := NewUsageFile(path)
		for n := 0; n < len(all); {
			n = min(len(all), n+1+rng.IntN(len(all)/4))
			if round%2 == 1 && rng.IntN(3) == 0 {
				n = min(len(all), n+rng.IntN(200)) // small steps too
			}
			for _, p := range []string{path, prefix} {
				if err := os.WriteFile(p, all[:n], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := f.Read()
			want, werr := ReadUsage(prefix)
			if err != nil || werr != nil || got != want {
				t.Fatalf("round %d after %d bytes: followed %+v (%v), whole %+v (%v)", round, n, got, err, want, werr)
			}
		}
		// Rewritten shorter: read from its start.
		if err := os.WriteFile(path, []byte(lines[0]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Read(); err != nil || got.Output != 1 || got.Input != 10 {
			t.Fatalf("rewritten file: %+v, %v", got, err)
		}
	}
}

// A line type is read by one format: a kind claiming another's type is
// refused at registration.
func TestUsageTypeReadByOneFormat(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"assistant"`) {
			t.Errorf("registered, or refused for another reason: %v", r)
		}
	}()
	RegisterKind("usage-clash-test", Behavior{Usage: &UsageFormat{Name: "clash", Types: []string{"assistant"}, Line: func([]byte, *UsageRecords) {}}})
}
