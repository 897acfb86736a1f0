package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// bigState is a state with agent-written content of every kind state.json
// holds: plan text, an assignment's copy of a subtask, a review summary, a
// deferred event, a rejection reason.
func bigState(id string) vocab.State {
	desc := strings.Repeat("description é ", 4000) // multi-byte runes across the preview cut
	st := sampleState(id, vocab.PhaseExecuting, 3)
	sub := vocab.Subtask{ID: "st_1", Description: desc, Checkpoint: 1, Dependencies: []string{}, Files: []string{"CREATE a.go"}}
	st.Plan = &vocab.Plan{Summary: strings.Repeat("summary <&> \\ \"q\" ", 200), Checkpoints: []vocab.Checkpoint{{ID: 1, Name: "one"}}, Subtasks: []vocab.Subtask{sub}}
	st.Assignments = map[vocab.AgentID]vocab.Assignment{"worker_1": {Seq: 3, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "do it", Subtask: &sub, Reads: []string{}, Writes: []string{}, Rejected: strings.Repeat("why ", 240)}}
	st.Rounds = []vocab.Round{{Kind: "plan", Number: 1, Verdict: "approved", Summary: strings.Repeat("round ", 400)}}
	st.Deferred = []json.RawMessage{json.RawMessage(`{"type":"trigger_completed","content":"` + strings.Repeat("QUJD", 3000) + `"}`)}
	return st
}

func blobFiles(t *testing.T, td *TaskDir) []string {
	t.Helper()
	return globAll(t, filepath.Join(td.Dir(), BlobsDir, "*"))
}

// Every long string is stored once in blobs/ (the plan's and the
// assignment's copy of a description are one blob), state.json holds
// references only, and the state loads back exactly.
func TestStateBlobsRoundTrip(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	want := bigState(td.ID())
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(want); err != nil { // the same blobs again: nothing new
		t.Fatal(err)
	}
	s.Close()
	data := mustRead(t, filepath.Join(td.Dir(), vocab.StateFile))
	if len(data) > 8<<10 || bytes.Contains(data, []byte(strings.Repeat("description é ", 10))) || !bytes.Contains(data, []byte(`"$blob": "sha256:`)) {
		t.Fatalf("state.json of %d bytes holds copies", len(data))
	}
	// description, summary, round summary, deferred content; the
	// 1,000-byte rejection stays inline.
	if got := blobFiles(t, td); len(got) != 4 {
		t.Fatalf("blobs %v, want 4", got)
	}
	if !bytes.Contains(data, []byte("why")) {
		t.Error("a short string was moved out of state.json")
	}
	// The second save kept the first state.json as a backup: a state with
	// references is a good state, not one to move aside as corrupt.
	aside, _ := filepath.Glob(filepath.Join(td.Dir(), vocab.BackupsDir, corruptPrefix+"*"))
	backups, _ := listBackups(filepath.Join(td.Dir(), vocab.BackupsDir))
	if len(aside) != 0 || len(backups) != 1 {
		t.Fatalf("after two saves: backups %v, moved aside as corrupt %v; want one backup", backups, aside)
	}
	s2, got, res, err := OpenStateStore(td)
	if err != nil || res != (LoadResult{}) {
		t.Fatalf("reload: %v %+v", err, res)
	}
	defer s2.Close()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded state differs")
	}
	// The listing (status, tasks) resolves references too.
	infos, err := td.ws.Tasks()
	if err != nil || len(infos) != 1 || infos[0].State == nil || !reflect.DeepEqual(*infos[0].State, want) || infos[0].Problem != "" {
		t.Fatalf("Tasks: %v %+v", err, infos)
	}
}

// A string an agent wrote that looks like a reference stays a string.
func TestStateBlobLookalikeStaysContent(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fake := `{"$blob": "sha256:` + strings.Repeat("0", 64) + `", "size": 1}`
	want := sampleState(td.ID(), vocab.PhaseExecuting, 1)
	want.Reason = fake
	want.Error = fake + strings.Repeat(" ", InlineMax)
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, _, problem, err := readState(td)
	if err != nil || problem != "" || !reflect.DeepEqual(*got, want) {
		t.Fatalf("%v %q %+v", err, problem, got)
	}
}

// A state.json whose blob is missing or changed is never used and never
// replaced by an older backup (that would silently redo work): the load
// says which blob and why (LoadResult.Lost), changes nothing on disk, and
// the caller rebuilds from events.jsonl (TestResumeRebuildsLostBlob).
func TestStateBlobLost(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		damage     func(t *testing.T, p string)
	}{
		{"missing", "is missing", func(t *testing.T, p string) { must(t, os.Remove(p)) }},
		{"same size, other bytes", "does not match its hash", func(t *testing.T, p string) {
			b := mustRead(t, p)
			b[len(b)/2] ^= 1
			must(t, os.WriteFile(p, b, 0o644))
		}},
		{"truncated", "does not match its hash", func(t *testing.T, p string) { must(t, os.Truncate(p, 10)) }},
		{"grown", "is larger than", func(t *testing.T, p string) {
			must(t, os.WriteFile(p, append(mustRead(t, p), 'x'), 0o644))
		}},
		{"symlink", "symlink", func(t *testing.T, p string) {
			must(t, os.Rename(p, p+".real"))
			must(t, os.Symlink(p+".real", p))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, td := newTask(t)
			s, _, _, err := OpenStateStore(td)
			if err != nil {
				t.Fatal(err)
			}
			// A valid backup without references exists.
			must(t, s.Save(sampleState(td.ID(), vocab.PhasePlanning, 1)))
			st := bigState(td.ID())
			st.Plan.Summary = "short"
			st.Rounds, st.Deferred = nil, nil
			st.Assignments = nil
			must(t, s.Save(st))
			s.Close()
			blobs := blobFiles(t, td)
			if len(blobs) != 1 {
				t.Fatalf("blobs %v", blobs)
			}
			tc.damage(t, blobs[0])
			before := mustRead(t, filepath.Join(td.Dir(), vocab.StateFile))

			s2, got, res, err := OpenStateStore(td)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if !strings.Contains(res.Lost, filepath.Join(BlobsDir, filepath.Base(blobs[0]))) || !strings.Contains(res.Lost, tc.want) ||
				res.Restored || res.Fresh || !reflect.DeepEqual(got, vocab.State{}) {
				t.Fatalf("Lost %q (want %q), result %+v, state %+v", res.Lost, tc.want, res, got.Phase)
			}
			if after := mustRead(t, filepath.Join(td.Dir(), vocab.StateFile)); !bytes.Equal(before, after) {
				t.Fatal("state.json changed")
			}
			infos, err := td.ws.Tasks()
			if err != nil || len(infos) != 1 || infos[0].State != nil || !strings.Contains(infos[0].Problem, tc.want) {
				t.Fatalf("Tasks: %v %+v", err, infos)
			}
		})
	}
}

// Write-ahead: when a blob cannot be written, Save fails and state.json
// keeps its old content; no state.json on disk ever references a blob
// that is not there.
func TestStateBlobWriteAhead(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must(t, s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 1)))
	orig := writeHook
	writeHook = func(f *os.File, b []byte) (int, error) {
		if strings.Contains(f.Name(), string(filepath.Separator)+BlobsDir+string(filepath.Separator)) {
			return 0, errors.New("no space left on device")
		}
		return f.Write(b)
	}
	err = s.Save(bigState(td.ID()))
	writeHook = orig
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Save: %v", err)
	}
	st, from, _, err := readState(td)
	if err != nil || from != "" || st.Seq != 1 {
		t.Fatalf("after failed save: %+v from=%q err=%v", st, from, err)
	}
	if b := blobFiles(t, td); len(b) != 0 {
		t.Fatalf("blobs left: %v", b)
	}
	// The next save writes them.
	must(t, s.Save(bigState(td.ID())))
	if _, _, problem, err := readState(td); err != nil || problem != "" {
		t.Fatal(err, problem)
	}
}

// A state.json written by the previous version (every agent-written string
// inline: a 16 KiB description in the plan and the assignment, a deferred
// trigger) loads; the next save moves the content to blobs/.
func TestStateInlineFixtureLoads(t *testing.T) {
	_, td := newTask(t)
	fixture := mustRead(t, filepath.Join("testdata", "state_v0_inline.json"))
	fixture = bytes.ReplaceAll(fixture, []byte("20261124-135941-5e2d"), []byte(td.ID()))
	must(t, os.WriteFile(filepath.Join(td.Dir(), vocab.StateFile), fixture, 0o644))
	s, st, res, err := OpenStateStore(td)
	if err != nil || res != (LoadResult{}) {
		t.Fatalf("%v %+v", err, res)
	}
	if st.Phase != vocab.PhasePaused || st.Plan == nil || len(st.Plan.Subtasks[0].Description) != 16<<10 ||
		!strings.HasPrefix(st.Plan.Subtasks[0].Description, "FIXTURE-DESC ") || len(st.Deferred) != 1 {
		t.Fatalf("fixture loaded as %s, plan %v", st.Phase, st.Plan != nil)
	}
	must(t, s.Save(st))
	s.Close()
	if n := len(mustRead(t, filepath.Join(td.Dir(), vocab.StateFile))); n > len(fixture)/4 {
		t.Fatalf("state.json %d bytes after save (fixture %d)", n, len(fixture))
	}
	// Deferred events were indented in the old file and are compact now:
	// compare as JSON.
	got, _, problem, err := readState(td)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(st)
	if err != nil || problem != "" || !bytes.Equal(a, b) {
		t.Fatalf("%v %q", err, problem)
	}
}

// A task reduced to its summary keeps the blobs its state.json references.
func TestCleanupKeepsBlobs(t *testing.T) {
	w, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	st := bigState(td.ID())
	st.Phase = vocab.PhaseComplete
	st.FinishedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	must(t, s.Save(st))
	s.Close()
	rep, err := w.Cleanup(st.FinishedAt.Add(10*24*time.Hour), 7, 30)
	if err != nil || len(rep.Summarized) != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	got, _, problem, err := readState(td)
	if err != nil || problem != "" || !reflect.DeepEqual(*got, st) {
		t.Fatalf("summarised task: %v %q", err, problem)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
