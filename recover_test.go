package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/workspace"
)

// resumeApp runs newApp with --resume in project.
func resumeApp(t *testing.T, project string) (*app, error) {
	t.Helper()
	o := simOptions(project)
	o.resume = true
	a, err := newApp(o, workspace.Task{}, io.Discard)
	if err == nil {
		t.Cleanup(a.close)
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
		root := workspace.DefaultRoot(project)
		id := newTestTask(t, root, workspace.Task{Description: "ran a while"}, nil)
		ws, _ := workspace.Open(root)
		td, err := ws.OpenTask(id)
		if err != nil {
			t.Fatal(err)
		}
		task, _ := td.Task()
		log, err := workspace.OpenEventLog(td)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for _, ev := range []engine.Event{
			engine.TaskSubmitted{Task: task, TaskDir: td.Dir(), At: now},
			engine.TriggerCompleted{Path: "plan.md", Content: []byte(plan), ModTime: now, Inode: 9, At: now},
		} {
			if err := log.Append(engine.EncodeEvent(ev, id)); err != nil {
				t.Fatal(err)
			}
		}
		_ = log.Close()
		a, err := resumeApp(t, project)
		if err != nil {
			t.Fatal(err)
		}
		st := a.runner.Snapshot().State
		if _, ok := a.first.(engine.Resumed); !ok || !a.resumed || st.Phase != workspace.PhasePlanReview || st.Versions["plan"] != 1 {
			t.Fatalf("first %T resumed %v state %s versions %v; want plan_review rebuilt", a.first, a.resumed, st.Phase, st.Versions)
		}
	})

	t.Run("retry flag reaches the engine", func(t *testing.T) {
		project := t.TempDir()
		newTestTask(t, workspace.DefaultRoot(project), workspace.Task{Description: "stuck"},
			&workspace.State{Phase: workspace.PhaseNeedsHuman, PreviousPhase: workspace.PhasePlanning, Escalation: "plan_invalid"})
		o := simOptions(project)
		o.resume, o.retry = true, true
		a, err := newApp(o, workspace.Task{}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		if r, ok := a.first.(engine.Resumed); !ok || !r.Retry {
			t.Fatalf("first %#v", a.first)
		}
	})

	t.Run("unknown state refused", func(t *testing.T) {
		project := t.TempDir()
		newTestTask(t, workspace.DefaultRoot(project), workspace.Task{Description: "from the future"}, &workspace.State{Phase: "warp_speed"})
		_, err := resumeApp(t, project)
		if !errors.Is(err, engine.ErrCannotResume) || !strings.Contains(err.Error(), `"warp_speed"`) ||
			!strings.Contains(err.Error(), `hivemind --project `+project+` "from the future"`) {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("everything gone but work on disk refused", func(t *testing.T) {
		project := t.TempDir()
		root := workspace.DefaultRoot(project)
		id := newTestTask(t, root, workspace.Task{Description: "lost"}, nil)
		dir := filepath.Join(root, "tasks", id, workspace.ReviewsDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plan_v1.md"), []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := resumeApp(t, project)
		if !errors.Is(err, engine.ErrCannotResume) || !strings.Contains(err.Error(), "reviews/plan_v1.md") || !strings.Contains(err.Error(), "To start the task over") {
			t.Fatalf("err %v", err)
		}
	})
}
