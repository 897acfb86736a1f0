package flow

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// TestStateSizeBoundedByReferences: a plan of many subtasks with
// descriptions at the size limit, run through Step to completion (a plan
// feedback round, every subtask done, every checkpoint approved) with the
// state encoded after every step as the runner saves it
// (workspace.EncodeState, in memory): state.json stays under a fixed bound
// that does not depend on how much the agents wrote, because what they
// wrote is stored once in blobs/ and state.json references it. The same
// run with descriptions a quarter as long gives the same bound. The final
// state is saved to disk once and loaded back.
func TestStateSizeBoundedByReferences(t *testing.T) {
	const subtasks = 10
	const bound = 16<<10 + subtasks*1<<10
	for _, descLen := range []int{maxDescription, maxDescription / 4} {
		t.Run(fmt.Sprint(descLen), func(t *testing.T) {
			biggest, written, final := runToCompletion(t, subtasks, descLen)
			t.Logf("state.json at most %d bytes; %d bytes of descriptions", biggest, written)
			if biggest > bound {
				t.Fatalf("state.json reached %d bytes (bound %d) with %d-byte descriptions", biggest, bound, descLen)
			}
			// The test would fail with copies: the descriptions alone
			// exceed the bound.
			if written <= bound {
				t.Fatalf("agents wrote only %d bytes; the test proves nothing", written)
			}
			if final.Phase != vocab.PhaseComplete {
				t.Fatalf("ended in %s", final.Phase)
			}
		})
	}
}

// runToCompletion drives a task with n subtasks (descriptions of descLen
// bytes) to complete, encoding the state after every step and saving and
// reloading the final one. It returns the largest state.json seen, the
// bytes of agent content the plan carried, and the final state as loaded
// back.
func runToCompletion(t *testing.T, n, descLen int) (biggest, written int, final State) {
	root := t.TempDir()
	ws, err := workspace.Open(filepath.Join(root, ".hivemind"))
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "size", Project: root, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	store, _, _, err := workspace.OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	var subs []string
	for i := range n {
		desc := fmt.Sprintf("%03d", i) + strings.Repeat("d", descLen-3)
		written += len(desc)
		subs = append(subs, fmt.Sprintf(`{"id": "st_%d", "description": %q, "checkpoint": %d, "dependencies": [], "files": ["CREATE f%d.go"]}`,
			i, desc, 1+i%2, i))
	}
	plan := planMD(`{"summary": "` + strings.Repeat("s", maxDescription) + `", "checkpoints": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}], "subtasks": [` +
		strings.Join(subs, ",") + `]}`)
	if len(plan) > MaxTriggerBytes {
		t.Fatalf("plan of %d bytes is over the trigger limit", len(plan))
	}

	sc := newScenario(t)
	save := func() {
		t.Helper()
		st := sc.s.Clone()
		st.TaskID = td.ID()
		data, _, err := workspace.EncodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, len(data))
	}
	sc.submit(4)
	save()
	for _, e := range []TriggerCompleted{
		{Path: "plan.md", Content: plan, Agent: "lead"},
		{Path: "plan-feedback.md", Content: []byte(strings.Repeat("f", 200<<10))},
		{Path: "plan.md", Content: plan, Agent: "lead"},
		{Path: "plan-approved.md", Content: []byte("ok")},
	} {
		sc.do(e)
		save()
	}
	sc.expect(vocab.PhaseExecuting)
	for steps := 0; sc.s.Phase != vocab.PhaseComplete; steps++ {
		if steps > 10*n {
			t.Fatalf("no completion after %d steps: %s", steps, sc.s.Phase)
		}
		switch sc.s.Phase {
		case vocab.PhaseExecuting:
			for _, id := range slices.Sorted(maps.Keys(sc.s.Agents)) {
				if a := sc.s.Agents[id]; a.Pending && a.Subtask != "" {
					sc.do(SubtaskDone{Subtask: a.Subtask, Agent: id, OK: true})
					save()
				}
			}
		case vocab.PhaseCheckpointReview:
			sc.trig("checkpoint-approved.md", strings.Repeat("r", 300<<10))
			save()
		default:
			t.Fatalf("unexpected state %s: %s", sc.s.Phase, describe(sc.eff))
		}
	}
	final = sc.s.Clone()
	final.TaskID = td.ID()
	if err := store.Save(final); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(store.Path()); err != nil || int(fi.Size()) > biggest {
		t.Fatalf("state.json on disk: %v, %v (encoded at most %d bytes)", fi, err, biggest)
	}
	store.Close()
	store2, loaded, res, err := workspace.OpenStateStore(td)
	if err != nil || res.Lost != "" || res.Restored {
		t.Fatalf("reload: %v %+v", err, res)
	}
	defer store2.Close()
	want := sc.s.Clone()
	want.TaskID = td.ID()
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(loaded)
	if string(a) != string(b) {
		t.Fatal("the state loaded back is not the state saved")
	}
	if !reflect.DeepEqual(loaded.Plan, want.Plan) {
		t.Fatal("plan differs after reload")
	}
	return biggest, written, loaded
}
