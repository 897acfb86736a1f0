package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestCleanup(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	outside := t.TempDir()
	precious := filepath.Join(outside, "precious")
	if err := os.WriteFile(precious, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		id      string
		phase   vocab.Phase // "" = no state
		ageDays float64
		want    string // kept, summarized, deleted, skipped
	}
	cases := []tc{
		{"a_complete_1d", vocab.PhaseComplete, 1, "kept"},
		{"b_complete_7d", vocab.PhaseComplete, 7, "summarized"},
		{"c_cancelled_10d", vocab.PhaseCancelled, 10, "summarized"},
		{"d_complete_29d", vocab.PhaseComplete, 29.9, "summarized"},
		{"e_complete_30d", vocab.PhaseComplete, 30, "deleted"},
		{"f_executing_90d", vocab.PhaseExecuting, 90, "kept"},
		{"g_needs_human_90d", vocab.PhaseNeedsHuman, 90, "kept"},
		{"h_error_90d", vocab.PhaseError, 90, "kept"},
		{"i_nostate", "", 0, "kept"},
		{"j_corrupt_state", "corrupt", 0, "skipped"},
		{"k_complete_6d", vocab.PhaseComplete, 6.9, "kept"},
		// Abandoned (back to idle) is over like complete; paused is not.
		{"l_abandoned_10d", vocab.PhaseIdle, 10, "summarized"},
		{"m_abandoned_legacy_40d", "abandoned-legacy", 40, "deleted"},
		{"n_paused_90d", vocab.PhasePaused, 90, "kept"},
	}
	for _, c := range cases {
		td, err := w.CreateTask(vocab.Task{ID: c.id, Description: c.id})
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{vocab.EventsFile, "plan.md", "outputs/st_1.md", "friction/slow.md", "logs/agents/lead.log"} {
			_ = os.MkdirAll(filepath.Dir(filepath.Join(td.Dir(), rel)), 0o755)
			if err := os.WriteFile(filepath.Join(td.Dir(), rel), []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mustSymlink(t, precious, filepath.Join(td.Dir(), "outputs", "link"))
		switch c.phase {
		case "":
		case "corrupt":
			if err := os.WriteFile(filepath.Join(td.Dir(), vocab.StateFile), []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
		case "abandoned-legacy":
			// An older engine cleared finished_at on abandon: the last
			// state write is when the task ended.
			ended := now.Add(-time.Duration(c.ageDays * float64(day)))
			mustSave(t, td, vocab.State{Phase: vocab.PhaseIdle, Timestamp: ended})
		default:
			finished := now.Add(-time.Duration(c.ageDays * float64(day)))
			mustSave(t, td, vocab.State{Phase: c.phase, Timestamp: finished, FinishedAt: finished})
		}
	}
	if _, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionTimeout, Description: "slow", AffectedTasks: []string{"e_complete_30d"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Cleanup(now, 10, 5); err == nil {
		t.Error("summary period shorter than full period accepted")
	}
	rep, err := w.Cleanup(now, 7, 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var got string
		switch {
		case slices.Contains(rep.Deleted, c.id):
			got = "deleted"
		case slices.Contains(rep.Summarized, c.id):
			got = "summarized"
		case slices.Contains(rep.Kept, c.id):
			got = "kept"
		case rep.Skipped[c.id] != "":
			got = "skipped"
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.id, got, c.want)
		}
		dir := filepath.Join(w.Root(), vocab.TasksDir, c.id)
		entries, err := os.ReadDir(dir)
		switch c.want {
		case "deleted":
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: still exists", c.id)
			}
		case "summarized":
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			if !slices.Equal(names, []string{vocab.FrictionDir, vocab.StateFile, vocab.TaskFile, vocab.TaskMarkdown}) {
				t.Errorf("%s: summary holds %v", c.id, names)
			}
			if st, _, _, err := readState(&TaskDir{id: c.id, dir: dir, real: dir}); err != nil || st.Phase != c.phase {
				t.Errorf("%s: final state lost: %v %v", c.id, st, err)
			}
		default:
			if _, err := os.Stat(filepath.Join(dir, vocab.EventsFile)); err != nil {
				t.Errorf("%s: touched: %v", c.id, err)
			}
		}
	}
	if rep.FreedBytes <= 0 {
		t.Errorf("FreedBytes %d", rep.FreedBytes)
	}
	if got := mustRead(t, precious); string(got) != "keep" {
		t.Error("cleanup followed a symlink out of the workspace")
	}
	if all, _ := w.Friction(); len(all) != 1 {
		t.Errorf("friction entries %v", all)
	}
	// Idempotent: a second run changes nothing; defaults for zero values.
	rep2, err := w.Cleanup(now, 0, 0)
	if err != nil || len(rep2.Deleted) != 0 || len(rep2.Summarized) != 0 {
		t.Errorf("second run %+v %v", rep2, err)
	}
	// A month later the summaries go too.
	rep3, _ := w.Cleanup(now.Add(31*day), 7, 30)
	for _, id := range []string{"a_complete_1d", "b_complete_7d", "c_cancelled_10d", "d_complete_29d", "k_complete_6d"} {
		if !slices.Contains(rep3.Deleted, id) {
			t.Errorf("%s not deleted after the summary period: %+v", id, rep3)
		}
	}
}
