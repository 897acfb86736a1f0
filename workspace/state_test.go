package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func sampleState(id string, phase vocab.Phase, n int) vocab.State {
	return vocab.State{
		TaskID: id, Phase: phase, PreviousPhase: vocab.PhasePlanning,
		ActiveAgents: []vocab.AgentID{"lead", "worker_1"},
		Timestamp:    time.Date(2026, 11, 22, 1, 33, n, 0, time.UTC),
		Project:      "/proj", CurrentCheckpoint: 1, TotalCheckpoints: 2,
		RevisionCount: n,
		Subtasks:      map[string]vocab.SubtaskState{"st_1": {Status: vocab.SubtaskInProgress, Worker: "worker_1"}},
		Agents:        map[vocab.AgentID]vocab.AgentState{"lead": {Role: vocab.RoleLead, Status: "idle", PID: 42, Restarts: n}},
		Seq:           n,
	}
}

func corruptFiles(t *testing.T, td *TaskDir) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(td.Dir(), vocab.BackupsDir, corruptPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStateStoreFreshSaveLoad(t *testing.T) {
	_, td := newTask(t)
	s, st, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fresh || res.Restored || !reflect.DeepEqual(st, vocab.State{}) {
		t.Fatalf("fresh open: %+v %+v", st, res)
	}
	want := sampleState(td.ID(), vocab.PhaseExecuting, 1)
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(vocab.State{TaskID: "other"}); err == nil {
		t.Error("Save of another task's state succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(want); !errors.Is(err, ErrClosed) {
		t.Errorf("Save after Close err = %v", err)
	}
	s2, got, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if res != (LoadResult{}) {
		t.Errorf("LoadResult %+v", res)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded %+v\nwant %+v", got, want)
	}
	// An empty task id is filled in.
	if err := s2.Save(vocab.State{Phase: vocab.PhasePlanning}); err != nil {
		t.Fatal(err)
	}
	if st, _, _, _ := readState(td); st == nil || st.TaskID != td.ID() {
		t.Errorf("task id not filled: %+v", st)
	}
}

func TestStateStoreSingleWriter(t *testing.T) {
	w, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := OpenStateStore(td); !errors.Is(err, ErrLocked) {
		t.Fatalf("second store in-process err = %v, want ErrLocked", err)
	}
	s.Close()

	// Another process holding the store.
	h := startHelper(t, "state-store", "WS_ROOT="+w.Root(), "WS_TASK="+td.ID())
	h.waitReady(t)
	_, _, _, err = OpenStateStore(td)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(h.cmd.Process.Pid)) {
		t.Fatalf("store held by another process: err = %v", err)
	}
	h.kill(t)
	s, _, _, err = OpenStateStore(td)
	if err != nil {
		t.Fatalf("after holder died: %v", err)
	}
	s.Close()
}

func TestStateBackupsRolling(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A fixed clock: names must still be unique and ordered.
	s.now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	for i := 1; i <= 15; i++ {
		if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, i)); err != nil {
			t.Fatal(err)
		}
	}
	backups, err := listBackups(filepath.Join(td.Dir(), vocab.BackupsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(backups) != KeepBackups {
		t.Fatalf("%d backups, want %d", len(backups), KeepBackups)
	}
	// Backups hold saves 5..14 in order (15 is the current state.json).
	for i, b := range backups {
		data, _ := os.ReadFile(b)
		st, err := ParseState(data, td.ID())
		if err != nil || st.Seq != i+5 {
			t.Errorf("backup %d (%s): seq %d, %v; want %d", i, filepath.Base(b), st.Seq, err, i+5)
		}
	}
}

// TestStateTruncatedAtEveryOffset simulates a torn state.json at every byte
// offset: each must load as the previous state from the backup (or as the
// current state when only trailing whitespace is missing), and the torn
// bytes must be kept aside.
func TestStateTruncatedAtEveryOffset(t *testing.T) {
	_, td := newTask(t)
	prev := sampleState(td.ID(), vocab.PhaseExecuting, 1)
	cur := sampleState(td.ID(), vocab.PhaseCheckpoint, 2)
	mustSave(t, td, prev)
	mustSave(t, td, cur)
	statePath := filepath.Join(td.Dir(), vocab.StateFile)
	full, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	complete := len(bytes.TrimRight(full, "\n"))
	for off := 0; off < len(full); off++ {
		if err := os.WriteFile(statePath, full[:off], 0o644); err != nil {
			t.Fatal(err)
		}
		s, got, res, err := OpenStateStore(td)
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		s.Close()
		if off >= complete {
			if res.Restored || !reflect.DeepEqual(got, cur) {
				t.Fatalf("offset %d: restored=%v state=%+v; want current", off, res.Restored, got)
			}
			continue
		}
		if !res.Restored || res.From == "" || res.Problem == "" || !reflect.DeepEqual(got, prev) {
			t.Fatalf("offset %d: res=%+v state=%+v; want restored previous", off, res, got)
		}
		// state.json now holds the restored state; the torn bytes are kept.
		if onDisk, _ := os.ReadFile(statePath); !bytes.Equal(onDisk, mustRead(t, res.From)) {
			t.Fatalf("offset %d: state.json not restored", off)
		}
		aside := corruptFiles(t, td)
		if len(aside) != 1 || !bytes.Equal(mustRead(t, aside[0]), full[:off]) {
			t.Fatalf("offset %d: torn file not kept aside: %v", off, aside)
		}
		os.Remove(aside[0])
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStateLoadProblems(t *testing.T) {
	type setup func(t *testing.T, td *TaskDir)
	writeState := func(content string) setup {
		return func(t *testing.T, td *TaskDir) {
			if err := os.WriteFile(filepath.Join(td.Dir(), vocab.StateFile), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeBackup := func(name, content string) setup {
		return func(t *testing.T, td *TaskDir) {
			if err := os.WriteFile(filepath.Join(td.Dir(), vocab.BackupsDir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	good := func(seq int) string {
		return `{"task_id":"TASK","state":"executing","seq":` + strconv.Itoa(seq) + `}`
	}
	tests := []struct {
		name      string
		setups    []setup
		wantErr   error
		wantSeq   int
		wantFresh bool
		restored  bool
		fromName  string
	}{
		{name: "nothing", wantFresh: true},
		{name: "valid", setups: []setup{writeState(good(3))}, wantSeq: 3},
		{name: "empty, no backup", setups: []setup{writeState("")}, wantErr: ErrCorruptState},
		{name: "garbage, no backup", setups: []setup{writeState("\x00\x01garbage")}, wantErr: ErrCorruptState},
		{name: "null", setups: []setup{writeState("null"), writeBackup("state_1.json", good(1))}, restored: true, wantSeq: 1, fromName: "state_1.json"},
		{name: "empty object", setups: []setup{writeState("{}"), writeBackup("state_1.json", good(1))}, restored: true, wantSeq: 1, fromName: "state_1.json"},
		{name: "other task's state", setups: []setup{writeState(`{"task_id":"other"}`), writeBackup("state_1.json", good(1))}, restored: true, wantSeq: 1, fromName: "state_1.json"},
		{name: "missing, backup", setups: []setup{writeBackup("state_1.json", good(1))}, restored: true, wantSeq: 1, fromName: "state_1.json"},
		{name: "newest backup corrupt", setups: []setup{writeState("{"), writeBackup("state_1.json", good(1)), writeBackup("state_2.json", good(2)), writeBackup("state_3.json", "{\"task")}, restored: true, wantSeq: 2, fromName: "state_2.json"},
		{name: "all backups corrupt", setups: []setup{writeState("{"), writeBackup("state_1.json", "{")}, wantErr: ErrCorruptState},
		{name: "missing, backups corrupt", setups: []setup{writeBackup("state_1.json", "")}, wantErr: ErrCorruptState},
		{name: "trailing garbage", setups: []setup{writeState(good(5) + "}"), writeBackup("state_1.json", good(1))}, restored: true, wantSeq: 1, fromName: "state_1.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, td := newTask(t)
			for _, s := range tc.setups {
				s(t, td)
			}
			// Replace the placeholder task id.
			for _, p := range append([]string{filepath.Join(td.Dir(), vocab.StateFile)}, globAll(t, filepath.Join(td.Dir(), vocab.BackupsDir, "*"))...) {
				if b, err := os.ReadFile(p); err == nil {
					_ = os.WriteFile(p, bytes.ReplaceAll(b, []byte("TASK"), []byte(td.ID())), 0o644)
				}
			}
			before, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.StateFile))
			s, st, res, err := OpenStateStore(td)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				after, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.StateFile))
				if !bytes.Equal(before, after) {
					t.Errorf("state.json changed on error: %q -> %q", before, after)
				}
				// The writer lock is released on error.
				if s2, _, _, err := OpenStateStore(td); !errors.Is(err, tc.wantErr) {
					t.Errorf("second open err = %v", err)
					if s2 != nil {
						s2.Close()
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res.Fresh != tc.wantFresh || res.Restored != tc.restored || st.Seq != tc.wantSeq {
				t.Fatalf("res = %+v, seq %d", res, st.Seq)
			}
			if tc.fromName != "" && filepath.Base(res.From) != tc.fromName {
				t.Errorf("From = %s, want %s", res.From, tc.fromName)
			}
			if tc.restored && res.Problem == "" {
				t.Error("restored without a Problem")
			}
		})
	}
}

func globAll(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStateSymlinkPlanted(t *testing.T) {
	_, td := newTask(t)
	outside := filepath.Join(t.TempDir(), "victim.json")
	if err := os.WriteFile(outside, []byte(`{"task_id":"`+td.ID()+`","seq":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSave(t, td, sampleState(td.ID(), vocab.PhaseExecuting, 1))
	statePath := filepath.Join(td.Dir(), vocab.StateFile)
	if err := os.Remove(statePath); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, statePath)
	// Loading does not follow the link: it restores from the backup... of
	// which there is none yet, so it is a corrupt state.
	_, _, _, err := OpenStateStore(td)
	if !errors.Is(err, ErrCorruptState) {
		t.Fatalf("err = %v, want ErrCorruptState", err)
	}
	if got, _ := os.ReadFile(outside); !strings.Contains(string(got), `"seq":9`) {
		t.Errorf("outside file changed: %s", got)
	}
	// With a backup it restores and the link is moved aside, not followed.
	mustSymlinkRemove(t, statePath)
	mustSave(t, td, sampleState(td.ID(), vocab.PhaseExecuting, 2))
	mustSave(t, td, sampleState(td.ID(), vocab.PhaseExecuting, 3))
	os.Remove(statePath)
	mustSymlink(t, outside, statePath)
	s, st, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !res.Restored || st.Seq != 2 {
		t.Errorf("res %+v seq %d", res, st.Seq)
	}
	if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 4)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(outside); !strings.Contains(string(got), `"seq":9`) {
		t.Errorf("outside file changed: %s", got)
	}
}

func mustSymlinkRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// TestStateSaveCorruptCurrent: a state.json corrupted behind the store's
// back is moved aside on the next Save, never rotated into the backups.
func TestStateSaveCorruptCurrent(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 2; i++ {
		if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.Path(), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 3)); err != nil {
		t.Fatal(err)
	}
	backups, _ := listBackups(filepath.Join(td.Dir(), vocab.BackupsDir))
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if aside := corruptFiles(t, td); len(aside) != 1 || string(mustRead(t, aside[0])) != "{torn" {
		t.Errorf("corrupt file not kept: %v", aside)
	}
}

// TestStateSaveDiskFull: a failing write leaves the previous state.json
// intact and loadable.
func TestStateSaveDiskFull(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 1)); err != nil {
		t.Fatal(err)
	}
	orig := writeHook
	writeHook = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/3])
		return n, errors.New("no space left on device")
	}
	err = s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 2))
	writeHook = orig
	if err == nil {
		t.Fatal("Save succeeded on a full disk")
	}
	st, from, _, err := readState(td)
	if err != nil || from != "" || st.Seq != 1 {
		t.Fatalf("after failed save: %+v from=%q err=%v", st, from, err)
	}
	if tmp := tempFiles(t, td.Dir()); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
}

// Temp files a killed atomic write left behind (.state.json.tmp-*, etc.)
// are removed when the state store is opened, and only by the holder of
// its lock; anything not named exactly like the writer's temp files, and
// the directories agents write, are left alone.
func TestStateStoreRemovesStaleTemps(t *testing.T) {
	_, td := newTask(t)
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(sampleState(td.ID(), vocab.PhaseExecuting, 1)); err != nil {
		t.Fatal(err)
	}
	// What a writer killed between create and rename leaves: the same
	// os.CreateTemp pattern writeAtomic uses.
	var stale []string
	for _, p := range []string{vocab.StateFile, filepath.Join(vocab.AssignmentsDir, "lead.json"), filepath.Join(vocab.HeartbeatsDir, "lead"),
		filepath.Join(vocab.BackupsDir, "state_x.json"), filepath.Join(vocab.ReviewsDir, "checkpoint_1_v1-diff.patch")} {
		f, err := os.CreateTemp(filepath.Join(td.Dir(), filepath.Dir(p)), "."+filepath.Base(p)+".tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		stale = append(stale, f.Name())
	}
	keep := []string{
		filepath.Join(td.Dir(), ".state.json.tmp-abc"),                  // not the writer's digits
		filepath.Join(td.Dir(), "state.json.tmp-123"),                   // no leading dot
		filepath.Join(td.Dir(), ".plan.md.swp"),                         // an editor's
		filepath.Join(td.Dir(), vocab.OutputsDir, ".st_1.done.tmp-123"), // agents' directory
		filepath.Join(td.Dir(), vocab.FrictionDir, ".slow.md.tmp-9"),    // agents' directory
	}
	for _, p := range keep {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keepDir := filepath.Join(td.Dir(), ".dir.tmp-1")
	if err := os.Mkdir(keepDir, 0o755); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, keepDir)

	// Another writer holds the lock: nothing is touched.
	if _, _, _, err := OpenStateStore(td); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("removed without holding the lock: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, st, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if res.RemovedTemps != len(stale) || st.RevisionCount != 1 {
		t.Errorf("RemovedTemps %d, want %d (state %+v)", res.RemovedTemps, len(stale), res)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temp %s still there (%v)", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func TestIsAtomicTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".state.json.tmp-1234567": true,
		".lead.tmp-0":             true,
		".x.tmp-12.tmp-34":        true,
		".tmp-123":                false,
		".state.json.tmp-":        false,
		".state.json.tmp-12a":     false,
		"state.json.tmp-12":       false,
		".state.json":             false,
		"":                        false,
	} {
		if got := isAtomicTemp(name); got != want {
			t.Errorf("isAtomicTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// A state.json past the old 64 MB read limit still loads: resume must
// never silently fall back to an older backup and redo work.
func TestLargeStateLoads(t *testing.T) {
	_, td := newTask(t)
	store, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	small := vocab.State{TaskID: td.ID(), Phase: vocab.PhasePlanning}
	if err := store.Save(small); err != nil {
		t.Fatal(err)
	}
	big := vocab.State{TaskID: td.ID(), Phase: vocab.PhaseExecuting,
		Extra: map[string]json.RawMessage{"blob": json.RawMessage(`"` + strings.Repeat("x", 70<<20) + `"`)}}
	if err := store.Save(big); err != nil {
		t.Fatal(err)
	}
	store.Close()
	store, st, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if res.Restored || st.Phase != vocab.PhaseExecuting || len(st.Extra["blob"]) != 70<<20+2 {
		t.Fatalf("restored %v from %s (%s), state %s", res.Restored, res.From, res.Problem, st.Phase)
	}
}

// A state.json written before State.State became State.Phase (and
// PreviousState PreviousPhase) loads, and saves back byte for byte: the
// JSON names are a contract with files already on disk.
func TestStateJSONFromBeforePhaseRename(t *testing.T) {
	old, err := os.ReadFile("testdata/state_before_phase_rename.json")
	if err != nil {
		t.Fatal(err)
	}
	var s vocab.State
	if err := json.Unmarshal(old, &s); err != nil {
		t.Fatal(err)
	}
	if s.Phase != vocab.PhaseComplete || s.PreviousPhase != vocab.PhaseCheckpointReview {
		t.Fatalf("phase %q, previous %q", s.Phase, s.PreviousPhase)
	}
	back, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(back), bytes.TrimSpace(old)) {
		t.Fatalf("re-encoded state differs:\n%s", back)
	}
}

// A state.json an agent edited (here: to complete) is not obeyed: the
// store reports it Lost (the caller rebuilds from events.jsonl), and the
// next Save moves it aside instead of keeping it as a backup.
func TestStateEditedOutsideNotObeyed(t *testing.T) {
	_, td := newTask(t)
	mustSave(t, td, sampleState(td.ID(), vocab.PhaseExecuting, 1))
	mustSave(t, td, sampleState(td.ID(), vocab.PhaseNeedsHuman, 2))
	statePath := filepath.Join(td.Dir(), vocab.StateFile)
	data, _ := os.ReadFile(statePath)
	forged := bytes.Replace(data, []byte(`"state": "needs_human"`), []byte(`"state": "complete"`), 1)
	if bytes.Equal(forged, data) {
		t.Fatal("could not forge")
	}
	if err := os.WriteFile(statePath, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	s, got, res, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost == "" || !strings.Contains(res.Lost, "changed outside Hivemind") || got.Phase != "" {
		t.Fatalf("forged state obeyed: %+v %s", res, got.Phase)
	}
	rebuilt := sampleState(td.ID(), vocab.PhaseNeedsHuman, 2)
	if err := s.Save(rebuilt); err != nil {
		t.Fatal(err)
	}
	s.Close()
	backups, _ := listBackups(filepath.Join(td.Dir(), vocab.BackupsDir))
	for _, b := range backups {
		if d, _ := os.ReadFile(b); bytes.Contains(d, []byte(`"state": "complete"`)) {
			t.Fatalf("the forged state became backup %s", b)
		}
	}
	if aside, _ := filepath.Glob(filepath.Join(td.Dir(), vocab.BackupsDir, corruptPrefix+"*")); len(aside) != 1 {
		t.Fatalf("forged state not kept aside: %v", aside)
	}
	// What the engine wrote loads as it is.
	s, got, res, err = OpenStateStore(td)
	if err != nil || res.Lost != "" || res.Restored || got.Phase != vocab.PhaseNeedsHuman {
		t.Fatalf("engine's own write: %+v %s %v", res, got.Phase, err)
	}
	s.Close()
}
