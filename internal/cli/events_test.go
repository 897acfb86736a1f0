package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// hivemind events prints the milestones and says how to see the rest;
// --verbose prints every record and marks a graceful stop as one.
func TestCmdEventsMilestones(t *testing.T) {
	project := t.TempDir()
	root := workspace.DefaultRoot(project)
	id := testkit.NewTask(t, root, vocab.Task{Description: "calc"}, &vocab.State{Phase: vocab.PhaseCancelled})
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.OpenTask(id)
	if err != nil {
		t.Fatal(err)
	}
	log, err := workspace.OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	for _, r := range []vocab.EventRecord{
		{Time: at, Type: "state_changed", Details: map[string]any{"from": "executing", "to": "cancelled"}},
		{Time: at, Type: "input.injection_result", Agent: "lead", Details: map[string]any{"delivered": true}},
		{Time: at, Type: "cancelled"},
		{Time: at, Type: "input.agent_health", Agent: "lead", Details: map[string]any{"health": "exited", "exit_code": 143}},
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	_ = log.Close()

	var out bytes.Buffer
	if err := cmdEvents(options{Options: app.Options{Project: project}}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "injection_result") || strings.Contains(got, "agent_health") ||
		!strings.Contains(got, "state_changed") || !strings.Contains(got, " cancelled") || !strings.Contains(got, "--verbose") {
		t.Errorf("milestones:\n%s", got)
	}
	out.Reset()
	if err := cmdEvents(options{Options: app.Options{Project: project}, verbose: true}, &out); err != nil {
		t.Fatal(err)
	}
	got = out.String()
	if !strings.Contains(got, "injection_result") || !strings.Contains(got, "exit_code=143 health=exited (stopped (SIGTERM), not a failure)") {
		t.Errorf("--verbose:\n%s", got)
	}
	out.Reset()
	if err := cmdEvents(options{Options: app.Options{Project: project, JSON: true}}, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("--json printed %d records, want all 4:\n%s", n, out.String())
	}
}

// The server's tail adds to events.jsonl exactly the records the file
// lacks: none twice, none of the file lost.
func TestWithNewest(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(i int) vocab.EventRecord {
		return vocab.EventRecord{Time: at.Add(time.Duration(i) * time.Second), Type: "state_changed", Details: map[string]any{"n": float64(i)}}
	}
	log := func(from, to int) []vocab.EventRecord {
		var out []vocab.EventRecord
		for i := from; i < to; i++ {
			out = append(out, rec(i))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		file, tail []vocab.EventRecord
		want       []vocab.EventRecord
	}{
		{"file behind", log(0, 10), log(5, 13), log(0, 13)},
		{"file up to date", log(0, 10), log(5, 10), log(0, 10)},
		{"file ahead", log(0, 12), log(5, 10), log(0, 12)},
		{"file more than a tail behind", log(0, 3), log(5, 10), append(log(0, 3), log(5, 10)...)},
		{"no file yet", nil, log(0, 4), log(0, 4)},
		{"no tail", log(0, 4), nil, log(0, 4)},
	} {
		got := withNewest(tc.file, tc.tail)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d records, want %d", tc.name, len(got), len(tc.want))
			continue
		}
		for i := range got {
			if recordKey(got[i]) != recordKey(tc.want[i]) {
				t.Errorf("%s: record %d is %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}
