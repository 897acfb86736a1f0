package app

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// resumeApp runs New with --resume in project.
func resumeApp(t *testing.T, project string) (*App, error) {
	t.Helper()
	o := simOptions(project)
	o.Resume = true
	a, err := New(o, vocab.Task{}, io.Discard)
	if err == nil {
		t.Cleanup(a.Close)
	}
	return a, err
}

// A resume never silently loses or redoes work: a lost state is rebuilt
// from events.jsonl, an unknown state or a task whose records are all gone
// while its work is on disk is refused with the command to start over.
func TestResumeRecovery(t *testing.T) {
	plan := "# Plan\n\n```json\n" + `{"summary": "s", "checkpoints": [{"id": 1, "name": "c"}],
 "subtasks": [{"id": "st_1", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]}]}` + "\n```\n"

	t.Run("state and backups gone: rebuilt from events", func(t *testing.T) {
		project := t.TempDir()
		plannedTask(t, project, plan, true)
		a, err := resumeApp(t, project)
		if err != nil {
			t.Fatal(err)
		}
		st := a.runner.Snapshot().State
		if _, ok := a.first.(engine.Resumed); !ok || !a.resumed || st.Phase != vocab.PhasePlanReview || st.Versions["plan"] != 1 {
			t.Fatalf("first %T resumed %v state %s versions %v; want plan_review rebuilt", a.first, a.resumed, st.Phase, st.Versions)
		}
	})

	// A state.json whose blob (blobs/, the plan's long description) is
	// gone is not used; the state is rebuilt from events.jsonl, or, with
	// nothing recorded, the resume is refused.
	longPlan := strings.Replace(plan, `"description": "d"`, `"description": "`+strings.Repeat("d", 4*workspace.InlineMax)+`"`, 1)
	t.Run("blob lost: rebuilt from events", func(t *testing.T) {
		project := t.TempDir()
		td := plannedTask(t, project, longPlan, true)
		a, err := resumeApp(t, project)
		if err != nil {
			t.Fatal(err)
		}
		st := a.runner.Snapshot().State
		if !a.resumed || st.Phase != vocab.PhasePlanReview || st.Plan == nil || len(st.Plan.Subtasks[0].Description) != 4*workspace.InlineMax {
			t.Fatalf("resumed %v state %s; want plan_review rebuilt with the whole plan", a.resumed, st.Phase)
		}
		// The rebuild is logged with what was wrong with state.json.
		recs, _, err := workspace.ReadEvents(filepath.Join(td.Dir(), vocab.EventsFile))
		if err != nil {
			t.Fatal(err)
		}
		lost := "state.json references content that is missing or corrupt: blobs/x is missing"
		w := &wiring{td: td, project: project, cfg: config.Default(), lost: lost, history: recs}
		_, _, notes, err := w.recover()
		if err != nil || len(notes) != 1 || notes[0].Type != "state_rebuilt" || notes[0].Details["reason"] != lost {
			t.Fatalf("%v %+v", err, notes)
		}
	})
	t.Run("blob lost, nothing recorded: refused", func(t *testing.T) {
		project := t.TempDir()
		plannedTask(t, project, longPlan, false)
		_, err := resumeApp(t, project)
		if !errors.Is(err, flow.ErrCannotResume) || !strings.Contains(err.Error(), "is missing") || !strings.Contains(err.Error(), "To start the task over") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("retry flag reaches the engine", func(t *testing.T) {
		project := t.TempDir()
		testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "stuck"},
			&vocab.State{Phase: vocab.PhaseNeedsHuman, PreviousPhase: vocab.PhasePlanning, Escalation: "plan_invalid"})
		o := simOptions(project)
		o.Resume, o.Retry = true, true
		a, err := New(o, vocab.Task{}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if r, ok := a.first.(engine.Resumed); !ok || !r.Retry {
			t.Fatalf("first %#v", a.first)
		}
	})

	t.Run("unknown state refused", func(t *testing.T) {
		project := t.TempDir()
		testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "from the future"}, &vocab.State{Phase: "warp_speed"})
		_, err := resumeApp(t, project)
		if !errors.Is(err, flow.ErrCannotResume) || !strings.Contains(err.Error(), `"warp_speed"`) ||
			!strings.Contains(err.Error(), `hivemind --project `+project+` "from the future"`) {
			t.Fatalf("err %v", err)
		}
	})

	// A task of the layout before outboxes (files at the task dir root) is
	// refused, named, with the way out, and left as it was.
	t.Run("task of the root layout refused", func(t *testing.T) {
		project := t.TempDir()
		td := plannedTask(t, project, plan, true)
		if err := os.MkdirAll(filepath.Join(td.Dir(), vocab.OutputsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.EventsFile))
		_, err := resumeApp(t, project)
		if !errors.Is(err, flow.ErrCannotResume) || !strings.Contains(err.Error(), "older Hivemind") ||
			!strings.Contains(err.Error(), "outputs/") || !strings.Contains(err.Error(), "To start the task over") {
			t.Fatalf("err %v", err)
		}
		if after, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.EventsFile)); string(after) != string(before) {
			t.Fatal("events.jsonl changed")
		}
	})

	t.Run("everything gone but work on disk refused", func(t *testing.T) {
		project := t.TempDir()
		root := workspace.DefaultRoot(project)
		id := testkit.NewTask(t, root, vocab.Task{Description: "lost"}, nil)
		dir := filepath.Join(root, "tasks", id, vocab.ReviewsDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plan_v1.md"), []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := resumeApp(t, project)
		if !errors.Is(err, flow.ErrCannotResume) || !strings.Contains(err.Error(), "reviews/plan_v1.md") || !strings.Contains(err.Error(), "To start the task over") {
			t.Fatalf("err %v", err)
		}
	})
}

// plannedTask creates a task in project whose plan (plan.md content) was
// submitted: with record, its events.jsonl holds the inputs; its state.json
// is saved and then the blobs it references are deleted.
func plannedTask(t *testing.T, project, plan string, record bool) *workspace.TaskDir {
	t.Helper()
	root := workspace.DefaultRoot(project)
	id := testkit.NewTask(t, root, vocab.Task{Description: "ran a while"}, nil)
	ws, _ := workspace.Open(root)
	td, err := ws.OpenTask(id)
	if err != nil {
		t.Fatal(err)
	}
	task, _ := td.Task()
	now := time.Now()
	evs := []engine.Event{
		engine.TaskSubmitted{Task: task, TaskDir: td.Dir(), When: engine.When{At: now}},
		engine.TriggerCompleted{Path: "agents/lead/plan.md", Content: []byte(plan), ModTime: now, Inode: 9, When: engine.When{At: now}},
	}
	log, err := workspace.OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := log.Append(flow.EncodeEvent(ev, id)); record && err != nil {
			t.Fatal(err)
		}
	}
	_ = log.Close()
	if !record {
		if err := os.Remove(filepath.Join(td.Dir(), vocab.EventsFile)); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(plan, strings.Repeat("d", workspace.InlineMax)) {
		st := vocab.State{Phase: vocab.PhaseIdle}
		m := engine.Machine{Cfg: engine.NewConfig(config.Default())}
		for _, ev := range evs {
			st, _ = m.Step(st, ev)
		}
		store, _, _, err := workspace.OpenStateStore(td)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Save(st); err != nil {
			t.Fatal(err)
		}
		_ = store.Close()
		blobs, _ := filepath.Glob(filepath.Join(td.Dir(), workspace.BlobsDir, "*"))
		if len(blobs) == 0 {
			t.Fatal("no blobs")
		}
		for _, b := range blobs {
			if err := os.Remove(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	return td
}
