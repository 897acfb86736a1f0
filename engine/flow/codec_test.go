package flow

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Every input event survives both encodings: MarshalEvent/UnmarshalEvent
// (deferred events, replay) and EncodeEvent/DecodeEvent (events.jsonl).
func TestEventCodecsRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	mod := at.Add(-time.Second)
	events := []Event{
		TaskSubmitted{Task: vocab.Task{ID: "t1", CreatedAt: at, Description: "d", Context: "c",
			Constraints: []string{"x"}, SubmittedBy: "tui", Project: "/p", Workers: 2, Agent: "sim"}, TaskDir: "/p/t1", When: When{At: at}},
		ProjectSelected{Project: "/p", When: When{At: at}},
		Resumed{When: When{At: at}},
		Resumed{When: When{At: at}, Retry: true},
		TriggerCompleted{Path: "plan.md", Content: []byte("# plan\n"), Agent: "lead", ModTime: mod, When: When{At: at}},
		TriggerCompleted{Path: "plan.md", Content: []byte{}, Agent: "lead", ModTime: mod, Inode: 42, Problem: "plan.md is a directory", When: When{At: at}},
		TriggerCompleted{Path: "plan.md", Content: []byte{}, When: When{At: at}},
		SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, Problem: "p", When: When{At: at}},
		AgentHealth{Agent: "lead", Health: "exited", ExitCode: 3, PID: 42, Detail: "d", When: When{At: at}},
		AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 255, Detail: "d", Cause: "host box down", When: When{At: at}},
		AgentHealth{Agent: "worker_2", Health: "exited", ExitCode: 143, PID: 9, Stopped: true, When: When{At: at}},
		InjectionResult{Agent: "lead", Seq: 4, Delivered: true, Detail: "d", When: When{At: at}},
		InjectionResult{Agent: "lead", Seq: 5, Cancelled: true, Detail: "cancelled", When: When{At: at}},
		TimerFired{ID: "timeout:lead", When: When{At: at}},
		KeyPressed{Action: KeyAbandon, When: When{At: at}},
		KeyPressed{Action: KeyPauseAgent, Agent: "worker_2", When: When{At: at}},
		AgentUsage{Agent: "worker_1", Usage: vocab.Usage{Model: "m", Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, CostUSD: 0.5, CostKnown: true}, Files: []string{"/s/a.jsonl", "/s/b.jsonl"}, When: When{At: at}},
		StateNotSaved{Error: "no space left on device", When: When{At: at}},
		KnowledgeSubmitted{Path: "agents/lead/knowledge/1.md", Content: []byte("decision"), Agent: "lead", ModTime: mod, When: When{At: at}},
		CheckpointMerged{Checkpoint: 1, Round: 2, Attempt: 1, Merged: true, DiffFile: "reviews/d.patch",
			Conflicts: []MergeConflict{{Worker: "worker_1", With: []vocab.AgentID{"worker_2"}, Files: []string{"a.go"}, HunksFile: "h.md"}}, At: at},
	}
	seen := map[string]bool{}
	for _, e := range events {
		raw, err := MarshalEvent(e)
		if err != nil {
			t.Fatalf("marshal %T: %v", e, err)
		}
		back, err := UnmarshalEvent(raw)
		if err != nil || !reflect.DeepEqual(back, e) {
			t.Errorf("MarshalEvent round trip of %T:\n got %#v %v\nwant %#v", e, back, err, e)
		}
		seen[kindName(e)] = true
		dec, ok, err := DecodeEvent(EncodeEvent(e, "t1"))
		if err != nil || !ok || !reflect.DeepEqual(dec, e) {
			t.Errorf("EncodeEvent round trip of %T:\n got %#v %v %v\nwant %#v", e, dec, ok, err, e)
		}
	}
	for k := range eventKinds {
		if !seen[k] {
			t.Errorf("registered event %q has no case here", k)
		}
	}
	for _, name := range eventTypesDeclared(t) {
		if !slices.ContainsFunc(events, func(e Event) bool { return reflect.TypeOf(e).Name() == name }) {
			t.Errorf("event type %s is not tested here (and registered in eventKinds?)", name)
		}
	}
	for _, e := range events {
		if !registered(e) {
			t.Errorf("%T is not registered in eventKinds", e)
		}
	}
	if _, err := UnmarshalEvent([]byte(`{"type":"dance","event":{}}`)); err == nil {
		t.Error("unknown event type decoded")
	}
	if _, err := UnmarshalEvent([]byte(`{"type":"timer_fired","event":{"ID":3}}`)); err == nil {
		t.Error("a malformed body decoded")
	}
}

// eventTypesDeclared lists the types of this package with a toWire
// method: every Event, registered or not.
func eventTypesDeclared(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "toWire" {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
		}
	}
	if len(names) < len(eventKinds) {
		t.Fatalf("found %d event types, fewer than the %d registered", len(names), len(eventKinds))
	}
	return names
}

// The input record workspace reads back (StopNote explains an agent's exit
// from it) is the one EncodeEvent writes.
func TestInputRecordTypesReadBack(t *testing.T) {
	if got := EncodeEvent(AgentHealth{Agent: "lead", Health: vocab.HealthExited}, "t").Type; got != vocab.RecordInputAgentHealth {
		t.Errorf("AgentHealth is logged as %q, workspace reads %q", got, vocab.RecordInputAgentHealth)
	}
}

// The time an event embeds (When) is encoded as its own field "At", where
// the event's fields are: the bytes on disk are as before When existed.
// CheckpointMerged keeps its "at", left out of its events.jsonl details.
func TestEventJSONKeepsItsBytes(t *testing.T) {
	at := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		e              Event
		envelope, wire string
	}{
		{TimerFired{ID: "x", When: When{At: at}},
			`{"type":"timer_fired","event":{"ID":"x","At":"2026-03-14T10:00:00Z"}}`,
			`{"time":"2026-03-14T10:00:00Z","type":"input.timer_fired","task":"t","details":{"id":"x"}}`},
		{Resumed{When: When{At: at}, Retry: true},
			`{"type":"resumed","event":{"At":"2026-03-14T10:00:00Z","Retry":true}}`,
			`{"time":"2026-03-14T10:00:00Z","type":"input.resumed","task":"t","details":{"action":"retry"}}`},
		{CheckpointMerged{Checkpoint: 1, At: at},
			`{"type":"checkpoint_merged","event":{"checkpoint":1,"round":0,"attempt":0,"at":"2026-03-14T10:00:00Z"}}`,
			`{"time":"2026-03-14T10:00:00Z","type":"input.checkpoint_merged","task":"t","details":{"merge":{"attempt":0,"checkpoint":1,"round":0}}}`},
	} {
		b, err := MarshalEvent(c.e)
		if err != nil || string(b) != c.envelope {
			t.Errorf("MarshalEvent(%T):\n got %s %v\nwant %s", c.e, b, err, c.envelope)
		}
		w, err := json.Marshal(EncodeEvent(c.e, "t"))
		if err != nil || string(w) != c.wire {
			t.Errorf("EncodeEvent(%T):\n got %s %v\nwant %s", c.e, w, err, c.wire)
		}
	}
}
