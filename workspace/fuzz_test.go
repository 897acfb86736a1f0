package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// FuzzLoadState writes arbitrary bytes as state.json and opens the store,
// once with a valid backup and once without. With a backup it must never
// fail: it loads state.json if that is valid, else restores the backup.
// Without one, an invalid file is ErrCorruptState and stays untouched.
// Seed corpus: testdata/fuzz/FuzzLoadState.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"task_id":"t1","state":"executing","seq":3}`))
	// fsync is not what is fuzzed here; without it the target runs ~100x
	// faster. (Tests in this package do not run in parallel.)
	origSync, origSyncDir := syncHook, syncDir
	syncHook, syncDir = func(*os.File) error { return nil }, func(string) error { return nil }
	f.Cleanup(func() { syncHook, syncDir = origSync, origSyncDir })
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		backup := vocab.State{TaskID: "t1", Phase: vocab.PhasePlanning, Seq: 1}
		for _, withBackup := range []bool{true, false} {
			id := "t1"
			if !withBackup {
				id = "t2"
				backup.TaskID = "t2"
			}
			td, err := w.CreateTask(vocab.Task{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			if withBackup {
				b, _ := json.Marshal(backup)
				if err := os.WriteFile(filepath.Join(td.Dir(), vocab.BackupsDir, "state_20200101T000000.000000000Z.json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			statePath := filepath.Join(td.Dir(), vocab.StateFile)
			if err := os.WriteFile(statePath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			parsed, perr := ParseState(data, id)
			s, st, res, err := OpenStateStore(td)
			switch {
			case perr == nil:
				if err != nil || res.Restored || res.Fresh {
					t.Fatalf("valid state: res=%+v err=%v", res, err)
				}
				if !reflect.DeepEqual(st, parsed) {
					t.Fatalf("loaded %+v, parsed %+v", st, parsed)
				}
			case withBackup:
				if err != nil || !res.Restored || st.Seq != 1 || st.TaskID != id {
					t.Fatalf("invalid state with backup: st=%+v res=%+v err=%v", st, res, err)
				}
				if _, err := ParseState(mustRead(t, statePath), id); err != nil {
					t.Fatalf("restored state.json invalid: %v", err)
				}
			default:
				if !errors.Is(err, ErrCorruptState) {
					t.Fatalf("invalid state without backup: err=%v", err)
				}
				if got := mustRead(t, statePath); !bytes.Equal(got, data) {
					t.Fatal("corrupt state.json changed")
				}
			}
			if s != nil {
				// The store saves what it loaded, and loads it back.
				if err := s.Save(st); err != nil {
					t.Fatal(err)
				}
				s.Close()
				s2, st2, _, err := OpenStateStore(td)
				if err != nil {
					t.Fatal(err)
				}
				s2.Close()
				if st2.TaskID != id {
					t.Fatalf("reloaded task id %q", st2.TaskID)
				}
			}
		}
	})
}

// FuzzReadEvents checks the events reader on arbitrary bytes: no panic; a
// file without any newline is never an error (at most a torn line); and if
// a file reads without error then so does every prefix of it (a crash can
// cut the file anywhere), with no more records. Seed corpus:
// testdata/fuzz/FuzzReadEvents.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","type":"a","task":"t"}` + "\n" + `{"type":"b"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, torn, err := ParseEvents(data)
		if !bytes.Contains(data, []byte{'\n'}) && err != nil {
			t.Fatalf("single line is an error: %v", err)
		}
		if err != nil {
			if !errors.Is(err, ErrBadEvents) {
				t.Fatalf("error does not wrap ErrBadEvents: %v", err)
			}
			return
		}
		for _, cut := range []int{len(data) / 2, len(data) - 1, len(data) / 3} {
			if cut < 0 {
				continue
			}
			prec, _, perr := ParseEvents(data[:cut])
			if perr != nil {
				t.Fatalf("prefix %d of a valid file: %v", cut, perr)
			}
			// A cut can turn a torn last line into a complete record, no more.
			if len(prec) > len(recs)+1 {
				t.Fatalf("prefix has %d records, whole file %d", len(prec), len(recs))
			}
		}
		// What was read survives a write/read round trip as a clean log.
		var buf bytes.Buffer
		for _, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				return // e.g. details that do not re-encode identically
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		again, torn2, err := ParseEvents(buf.Bytes())
		if err != nil || torn2 || len(again) != len(recs) {
			t.Fatalf("round trip: %d→%d records, torn=%v err=%v (orig torn=%v)", len(recs), len(again), torn2, err, torn)
		}
	})
}
