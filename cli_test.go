package main

import (
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    options
		wantErr string
	}{
		{name: "task then flags", args: []string{"build it", "--headless", "--workers", "3"},
			want: options{workers: 3, workersSet: true, headless: true, args: []string{"build it"}}},
		{name: "flags then task", args: []string{"--agent", "sim", "--project", "/p", "--json", "do x"},
			want: options{workers: 2, agent: "sim", agentSet: true, project: "/p", json: true, args: []string{"do x"}}},
		{name: "sub-command with flags", args: []string{"events", "--follow", "--json"},
			want: options{workers: 2, follow: true, json: true, args: []string{"events"}}},
		{name: "dash dash keeps flags as text", args: []string{"--headless", "--", "--not-a-flag", "x"},
			want: options{workers: 2, headless: true, args: []string{"--not-a-flag", "x"}}},
		{name: "resume", args: []string{"--resume", "--headless"},
			want: options{workers: 2, resume: true, headless: true}},
		{name: "retry resumes", args: []string{"--retry", "--headless"},
			want: options{workers: 2, resume: true, retry: true, headless: true}},
		{name: "bad workers", args: []string{"--workers", "0", "x"}, wantErr: "--workers must be between 1 and 16"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.args, tc.want.args) {
				t.Errorf("args %q, want %q", got.args, tc.want.args)
			}
			got.args, tc.want.args = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	for p, want := range map[workspace.Phase]int{
		workspace.PhaseComplete:   0,
		workspace.PhaseNeedsHuman: 3,
		workspace.PhaseError:      1,
		workspace.PhaseCancelled:  1,
		"":                        1,
	} {
		if got := exitCode(p); got != want {
			t.Errorf("exitCode(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestFormatRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	got := formatRecord(workspace.EventRecord{Time: at, Type: "input.trigger_completed", Agent: "lead",
		Details: map[string]any{"path": "plan.md", "content": strings.Repeat("x", 42), "n": 3.0}})
	want := "03:04:05 ← trigger_completed [lead] content=42B n=3 path=plan.md"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	long := formatRecord(workspace.EventRecord{Time: at, Type: "x", Details: map[string]any{"what": strings.Repeat("word ", 60)}})
	if n := len([]rune(long)); n > 160 || strings.Contains(long, "\n") {
		t.Errorf("long value not clipped to one line (%d runes): %q", n, long)
	}
}
