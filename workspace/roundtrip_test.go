package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// task.json, state.json, an assignment and events.jsonl read from a fixture
// and written back through the writers the engine uses come out byte for
// byte: the typed vocabulary (Role, Health, Phase) changes no file format.
// The fixture was written before roles were typed.
func TestFilesRoundTripByteIdentical(t *testing.T) {
	fixture := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "roundtrip", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	same := func(name string, want []byte, gotPath string) {
		t.Helper()
		got, err := os.ReadFile(gotPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s written back differs:\n got %s\nwant %s", name, got, want)
		}
	}

	var task vocab.Task
	if err := json.Unmarshal(fixture("task.json"), &task); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(task)
	if err != nil {
		t.Fatal(err)
	}
	same("task.json", fixture("task.json"), filepath.Join(td.Dir(), vocab.TaskFile))

	var asg vocab.Assignment
	if err := json.Unmarshal(fixture("assignments/worker_1.json"), &asg); err != nil {
		t.Fatal(err)
	}
	if err := td.WriteAssignment(asg); err != nil {
		t.Fatal(err)
	}
	same("assignment", fixture("assignments/worker_1.json"), filepath.Join(td.Dir(), vocab.AssignmentsDir, "worker_1.json"))

	st, err := ParseState(fixture("state.json"), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	store, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Save(st); err != nil {
		t.Fatal(err)
	}
	same("state.json", fixture("state.json"), store.Path())

	recs, torn, err := ParseEvents(fixture("events.jsonl"))
	if err != nil || torn {
		t.Fatalf("events: torn %v, %v", torn, err)
	}
	log, err := OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range recs {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	same("events.jsonl", fixture("events.jsonl"), log.Path())
}
