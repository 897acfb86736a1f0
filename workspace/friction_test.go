package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestFriction(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return now }
	if got, err := w.Friction(); err != nil || len(got) != 0 {
		t.Fatalf("empty log: %v %v", got, err)
	}
	e1, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionRepeatedRevision, Description: "Plans miss tests", AffectedTasks: []string{"t1", "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	if e1.ID != "friction_001" || e1.Occurrences != 1 || e1.Status != FrictionPending || !e1.Timestamp.Equal(now) || len(e1.AffectedTasks) != 1 {
		t.Errorf("first entry %+v", e1)
	}
	e2, _ := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionTimeout, Description: "slow"})
	if e2.ID != "friction_002" || e2.AffectedTasks == nil {
		t.Errorf("second entry %+v", e2)
	}
	// Same type and description (modulo case/spacing) merges.
	m, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionRepeatedRevision, Description: "  plans   MISS tests", AffectedTasks: []string{"t2", "t1"}, SuggestedAction: "add a checklist", Occurrences: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "friction_001" || m.Occurrences != 3 || len(m.AffectedTasks) != 2 || m.SuggestedAction != "add a checklist" {
		t.Errorf("merged %+v", m)
	}
	// Same description, other type: a new entry.
	if e, _ := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionReviewerPattern, Description: "Plans miss tests"}); e.ID != "friction_003" {
		t.Errorf("other type merged: %+v", e)
	}
	for _, bad := range []vocab.FrictionEntry{{Type: "bogus", Description: "x"}, {Type: vocab.FrictionTimeout, Description: "  "}} {
		if _, err := w.AddFriction(bad); err == nil {
			t.Errorf("AddFriction(%+v) accepted", bad)
		}
	}
	if err := w.UpdateFriction("friction_002", func(e *vocab.FrictionEntry) { e.Status = FrictionApplied; e.ID = "hijack" }); err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateFriction("friction_999", func(*vocab.FrictionEntry) {}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id err = %v", err)
	}
	all, err := w.Friction()
	if err != nil || len(all) != 3 {
		t.Fatalf("Friction = %v, %v", all, err)
	}
	if all[1].ID != "friction_002" || all[1].Status != FrictionApplied {
		t.Errorf("updated entry %+v", all[1])
	}
	// Reopened workspace sees the same log; the next id continues.
	w2, _ := Open(w.Root())
	if e, _ := w2.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionEscalation, Description: "human needed"}); e.ID != "friction_004" {
		t.Errorf("id after reopen %s", e.ID)
	}
}

func TestFrictionCorrupt(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(w.Root(), vocab.FrictionFile)
	if err := os.WriteFile(p, []byte(`{"entries":[{"id":"friction_001"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionTimeout, Description: "x"}); err == nil {
		t.Fatal("AddFriction on a corrupt log succeeded")
	}
	if _, err := w.Friction(); err == nil {
		t.Error("Friction on a corrupt log succeeded")
	}
	if got := mustRead(t, p); string(got) != `{"entries":[{"id":"friction_001"` {
		t.Errorf("corrupt log overwritten: %s", got)
	}
}

func TestFrictionConcurrent(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			w, err := Open(root) // separate Workspace values: only the flock protects them
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 5 {
				if _, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionWorkerFailure, Description: "d" + strconv.Itoa(i), AffectedTasks: []string{"t" + strconv.Itoa(g)}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w, _ := Open(root)
	all, err := w.Friction()
	if err != nil || len(all) != 5 {
		t.Fatalf("entries %d, %v", len(all), err)
	}
	for _, e := range all {
		if e.Occurrences != 8 || len(e.AffectedTasks) != 8 {
			t.Errorf("entry %s: occurrences %d tasks %d", e.ID, e.Occurrences, len(e.AffectedTasks))
		}
	}
}
