package app

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// simOptions are the options of a run with the sim agents in project.
func simOptions(project string) Options {
	return Options{Project: project, Agent: "sim", AgentSet: true, Workers: 2, WorkersSet: true}
}

// A new task is written by New itself with every field the caller gave
// (the start screen's context, constraints and submitter) and submitted as
// new, not taken up by the resume path.
func TestNewAppNewTask(t *testing.T) {
	project := t.TempDir()
	in := vocab.Task{Description: "build a tiny calculator", Context: "a CLI for people",
		Constraints: []string{"no new dependencies"}, SubmittedBy: "tui"}
	a, err := New(simOptions(project), in, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.resumed {
		t.Error("a new task wired as resumed")
	}
	sub, ok := a.first.(engine.TaskSubmitted)
	if !ok {
		t.Fatalf("first event %T, want TaskSubmitted", a.first)
	}
	want := in
	want.ID, want.CreatedAt, want.Project, want.Workers, want.Agent = a.td.ID(), sub.Task.CreatedAt, project, 2, "sim"
	if !reflect.DeepEqual(sub.Task, want) || sub.TaskDir != a.td.Dir() {
		t.Errorf("submitted %+v in %s\nwant %+v in %s", sub.Task, sub.TaskDir, want, a.td.Dir())
	}
	if disk, err := a.td.Task(); err != nil || !reflect.DeepEqual(disk, want) {
		t.Errorf("task.json %+v %v\nwant %+v", disk, err, want)
	}

	// From the command line: submitted by cli.
	project2 := t.TempDir()
	b, err := New(simOptions(project2), vocab.Task{Description: "x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if tk := b.first.(engine.TaskSubmitted).Task; tk.SubmittedBy != "cli" || tk.Project != project2 {
		t.Errorf("command-line task %+v", tk)
	}
}

// A task that crashed before its first state write starts over from
// task.json on --resume; a task with state resumes.
func TestNewAppResumeCrashedTask(t *testing.T) {
	project := t.TempDir()
	root := workspace.DefaultRoot(project)
	id := testkit.NewTask(t, root, vocab.Task{Description: "crashed early", Context: "ctx", SubmittedBy: "tui"}, nil)
	o := simOptions(project)
	o.Resume = true
	a, err := New(o, vocab.Task{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := a.first.(engine.TaskSubmitted)
	a.Close()
	if !ok || a.resumed || sub.Task.ID != id || sub.Task.Context != "ctx" {
		t.Fatalf("first %#v resumed %v; want task %s submitted again", a.first, a.resumed, id)
	}

	id2 := testkit.NewTask(t, root, vocab.Task{Description: "ran a while"},
		&vocab.State{Phase: vocab.PhaseExecuting})
	a, err = New(o, vocab.Task{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, ok := a.first.(engine.Resumed); !ok || !a.resumed || a.td.ID() != id2 {
		t.Fatalf("first %#v resumed %v task %s; want %s resumed", a.first, a.resumed, a.td.ID(), id2)
	}
}

// An abandoned task is over: --resume has nothing to resume.
func TestNewAppResumeAbandoned(t *testing.T) {
	project := t.TempDir()
	testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "given up"},
		&vocab.State{Phase: vocab.PhaseIdle, PreviousPhase: vocab.PhaseNeedsHuman})
	o := simOptions(project)
	o.Resume = true
	a, err := New(o, vocab.Task{}, io.Discard)
	if err == nil {
		a.Close()
		t.Fatalf("resumed the abandoned task %s", a.td.ID())
	}
	if !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("error %v, want nothing to resume", err)
	}
}

// When wiring fails after the task was written, the task is removed:
// nothing ran, and --resume must not pick it up later. A shared knowledge dir
// that cannot be opened fails before any task is written.
func TestNewAppFailureLeavesNoTask(t *testing.T) {
	noTasks := func(project, when string) {
		t.Helper()
		tasks := filepath.Join(workspace.DefaultRoot(project), vocab.TasksDir)
		if entries, err := os.ReadDir(tasks); err != nil || len(entries) != 0 {
			t.Errorf("%s: tasks left behind: %v %v", when, entries, err)
		}
	}
	// A symlinked shared knowledge dir is refused.
	project := t.TempDir()
	if err := os.MkdirAll(workspace.DefaultRoot(project), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(workspace.DefaultRoot(project), vocab.KnowledgeDir)); err != nil {
		t.Fatal(err)
	}
	if a, err := New(simOptions(project), vocab.Task{Description: "x"}, io.Discard); err == nil {
		a.Close()
		t.Fatal("no error with a symlinked context directory")
	}
	noTasks(project, "context refused")

	// The agents' hook relay cannot listen (after the task is created).
	project = t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(project, "missing"))
	if a, err := New(simOptions(project), vocab.Task{Description: "x"}, io.Discard); err == nil {
		a.Close()
		t.Fatal("no error without a directory for the hook socket")
	} else if !strings.Contains(err.Error(), "hook") {
		t.Errorf("error %v, want the hook relay's", err)
	}
	noTasks(project, "hook relay failed")
}

// A task whose task.json is corrupt cannot be resumed, and --resume says
// which file it is rather than only "nothing to resume".
func TestNewAppResumeNamesCorruptTaskJSON(t *testing.T) {
	project := t.TempDir()
	td := testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "half done"},
		&vocab.State{Phase: vocab.PhaseExecuting})
	bad := filepath.Join(workspace.DefaultRoot(project), vocab.TasksDir, td, vocab.TaskFile)
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := simOptions(project)
	o.Resume = true
	a, err := New(o, vocab.Task{}, io.Discard)
	if err == nil {
		a.Close()
		t.Fatal("resumed a task with a corrupt task.json")
	}
	if !strings.Contains(err.Error(), "nothing to resume") || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %q does not name %s", err, bad)
	}
}
