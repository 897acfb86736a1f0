package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Files that cannot be read as a trigger (a symlink, a directory, too
// large) are reported with a Problem that tells the writer what to fix,
// instead of being skipped until a timeout.
func TestWatcherReportsUnreadableTriggers(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		path  string
		want  string
	}{
		{"plan.md symlink", func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "plan.md")
			if err := os.WriteFile(target, validPlan, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, mkParent(filepath.Join(dir, ob("plan.md")))); err != nil {
				t.Fatal(err)
			}
		}, "plan.md", "is a symbolic link"},
		{"plan.md directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(mkParent(filepath.Join(dir, ob("plan.md"))), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "plan.md", "is a directory"},
		{"oversized review", func(t *testing.T, dir string) {
			big := strings.Repeat("x", flow.MaxTriggerBytes+1)
			if err := os.WriteFile(mkParent(filepath.Join(dir, ob("plan-feedback.md"))), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "plan-feedback.md", "too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := wtStart(t, 50*time.Millisecond, func(dir string) { c.setup(t, dir) })
			evs := h.until(10*time.Second, wtIsTrigger(c.path, ""))
			tc := wtTriggersFor(evs, c.path)[0]
			if !strings.Contains(tc.Problem, c.want) || len(tc.Content) != 0 {
				t.Fatalf("problem %q (content %d bytes), want %q", tc.Problem, len(tc.Content), c.want)
			}
		})
	}
}

// A trigger written again with the same bytes and the same mtime as one
// already reported is a new instance (a new inode), not a duplicate.
func TestWatcherSameBytesSameMtimeIsNew(t *testing.T) {
	h := wtStart(t, 50*time.Millisecond, nil)
	mt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := mkParent(filepath.Join(h.dir, ob("plan-feedback.md")))
	write := func() {
		h.write("plan-feedback.md", "no")
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	write()
	first := wtTriggersFor(h.until(10*time.Second, wtIsTrigger("plan-feedback.md", "no")), "plan-feedback.md")[0]
	// Archived (moved away, the inode lives on in reviews/), then written anew.
	if err := os.Mkdir(filepath.Join(h.dir, "reviews"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p, filepath.Join(h.dir, "reviews", "x.md")); err != nil {
		t.Fatal(err)
	}
	write()
	second := wtTriggersFor(h.until(10*time.Second, wtIsTrigger("plan-feedback.md", "no")), "plan-feedback.md")[0]
	if first.Inode == 0 || first.Inode == second.Inode || !first.ModTime.Equal(second.ModTime) {
		t.Fatalf("inodes %d, %d; mtimes %v, %v", first.Inode, second.Inode, first.ModTime, second.ModTime)
	}
	k1, k2 := mustTriggerKey(first), mustTriggerKey(second)
	if k1 == k2 {
		t.Fatalf("same key for two instances: %s", k1)
	}
}

// mustTriggerKey is the Consumed key Step gives the trigger.
func mustTriggerKey(e TriggerCompleted) string {
	sc := State{TaskID: "t1", Phase: "planning"}
	n, _ := testMachine.Step(sc, e)
	for k := range n.Consumed {
		return k
	}
	return ""
}

// A done marker written in two pieces, far apart, by an agent that gives
// no turn-ended signal (and even with one) is never reported half-written.
func TestWatcherHalfWrittenMarkerWaits(t *testing.T) {
	h := wtStart(t, 20*time.Millisecond, nil)
	h.write("outputs/st_1.md", "did it")
	h.write("outputs/st_1.done", `{"agent_id": "worker_1", `)
	// Well past the quiet period and MaxWait (20 × quiet), and a flush.
	deadline := time.Now().Add(4 * h.w.cfg.MaxWait)
	for time.Now().Before(deadline) {
		h.w.Flush()
		select {
		case e := <-h.events:
			if d, ok := e.(SubtaskDone); ok {
				t.Fatalf("half-written marker reported: %+v", d)
			}
		case <-time.After(h.w.cfg.QuietPeriod):
		}
	}
	h.appendTo("outputs/st_1.done", `"output_file": "outputs/st_1.md"}`)
	evs := h.until(10*time.Second, func(e Event) bool { _, ok := e.(SubtaskDone); return ok })
	if d := evs[len(evs)-1].(SubtaskDone); !d.OK || d.Subtask != "st_1" {
		t.Fatalf("complete marker: %+v", d)
	}
}

// A plan whose file path goes through an in-project symlink to outside
// the project is rejected (before, it was accepted).
func TestPlanPathThroughSymlinkRejected(t *testing.T) {
	project := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(project, "link")); err != nil {
		t.Fatal(err)
	}
	plan := func(file string) TriggerCompleted {
		return TriggerCompleted{Path: ob("plan.md"), Content: planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "c"}],
 "subtasks": [{"id": "st_1", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE ` + file + `"]}]}`)}
	}
	if got := vetPlanPaths(plan("link/evil.go"), project); !strings.Contains(got.Problem, `"link/evil.go" leads outside the project`) {
		t.Fatalf("problem %q", got.Problem)
	}
	if got := vetPlanPaths(plan("src/new.go"), project); got.Problem != "" {
		t.Fatalf("plain path rejected: %q", got.Problem)
	}
	// The engine tells the Lead and stays in planning.
	at := time.Now()
	s, _ := testMachine.Step(State{Phase: vocab.PhaseIdle},
		TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Workers: 2, Description: "do it"}, TaskDir: "/ws/tasks/t1", When: When{At: at}})
	bad := vetPlanPaths(plan("link/evil.go"), project)
	bad.ModTime, bad.At = at, at
	s, eff := testMachine.Step(s, bad)
	told := false
	for _, e := range eff {
		if w, ok := e.(WriteAssignment); ok && w.Assignment.Agent == "lead" {
			told = strings.Contains(w.Assignment.Instruction, "leads outside the project")
		}
	}
	if s.Phase != vocab.PhasePlanning || !told {
		t.Fatalf("phase %s, lead told %v: %v", s.Phase, told, eff)
	}
}

// A trigger-named directory created while the watcher runs (not found by
// the start scan) is reported too, without a turn-ended signal.
func TestWatcherReportsDirectoryCreatedLater(t *testing.T) {
	h := wtStart(t, 50*time.Millisecond, nil)
	if err := os.Mkdir(mkParent(filepath.Join(h.dir, ob("plan.md"))), 0o755); err != nil {
		t.Fatal(err)
	}
	evs := h.until(10*time.Second, wtIsTrigger("plan.md", ""))
	if tc := wtTriggersFor(evs, "plan.md")[0]; !strings.Contains(tc.Problem, "is a directory") {
		t.Fatalf("problem %q", tc.Problem)
	}
}
