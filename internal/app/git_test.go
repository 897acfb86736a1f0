package app

import (
	"fmt"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/workspace"
)

// A worker's project paths point into its worktree; task files and other
// paths stay.
func TestGitRemap(t *testing.T) {
	g := &gitWire{project: "/p", root: "/p/.hivemind"}
	wd := "/p/.hivemind/worktrees/worker_1"
	in := []string{"/p/src/a.go", "/p/.hivemind/tasks/t/outputs/st_1.md", "/elsewhere/x", "/p", "/p/../q/y.go", "/pp/z.go"}
	want := []string{wd + "/src/a.go", "/p/.hivemind/tasks/t/outputs/st_1.md", "/elsewhere/x", "/p", "/p/../q/y.go", "/pp/z.go"}
	if got := g.remap(in, wd); !slices.Equal(got, want) {
		t.Fatalf("remap\n got %q\nwant %q", got, want)
	}
	// A workspace outside the project.
	g.root = "/ws"
	if got := g.remap([]string{"/p/a.go", "/ws/tasks/t/plan.md"}, wd); !slices.Equal(got, []string{wd + "/a.go", "/ws/tasks/t/plan.md"}) {
		t.Fatalf("remap with outside workspace: %q", got)
	}
}

// The counts go into a copy of the snapshot's agents: the runner's map is
// shared with other readers.
func TestGitDecorateCopies(t *testing.T) {
	agents := map[vocab.AgentID]vocab.AgentState{"worker_1": {Role: "worker"}, "lead": {Role: "lead"}}
	s := engine.Snapshot{State: vocab.State{Agents: agents}}
	var nilWire *gitWire
	if got := nilWire.decorate(s); got.State.Agents["worker_1"].ChangedFiles != 0 {
		t.Fatal("nil wire changed the snapshot")
	}
	g := &gitWire{changed: map[string]int{"worker_1": 4}}
	got := g.decorate(s)
	if got.State.Agents["worker_1"].ChangedFiles != 4 || got.State.Agents["lead"].Role != "lead" {
		t.Fatalf("decorated %+v", got.State.Agents)
	}
	if agents["worker_1"].ChangedFiles != 0 {
		t.Fatal("the runner's map was changed")
	}
}

// A new task in a checkout with uncommitted edits says so before anything
// starts and, with --dirty include, starts its branch from them; a merge
// in progress refuses to start unless --dirty ignore.
func TestNewTaskDirtyCheckout(t *testing.T) {
	project := t.TempDir()
	testkit.InitRepo(t, project, "a.txt", "a\n")
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", DirtyInclude} {
		o := simOptions(project)
		o.Dirty = mode
		a, err := New(o, vocab.Task{Description: "use the edits " + mode}, io.Discard)
		if err != nil {
			t.Fatalf("--dirty %q: %v", mode, err)
		}
		branch := "hivemind/" + a.td.ID()
		a.Close()
		got, _ := exec.Command("git", "-C", project, "show", branch+":a.txt").Output()
		if want := map[string]string{"": "a\n", DirtyInclude: "edited\n"}[mode]; string(got) != want {
			t.Errorf("--dirty %q: task branch a.txt = %q, want %q", mode, got, want)
		}
		// What the run says, before anything starts.
		repo, err := gitwork.Open(project, workspace.DefaultRoot(project), "t-note", gitwork.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := &wiring{o: o, project: project}
		if _, err := w.checkDirty(repo); err != nil || len(w.notes) != 1 || w.notes[0].Type != "checkout_dirty" ||
			!strings.Contains(fmt.Sprint(w.notes[0].Details["files"]), "a.txt") {
			t.Errorf("--dirty %q: notes %+v, %v", mode, w.notes, err)
		}
	}
	head, _ := exec.Command("git", "-C", project, "rev-parse", "HEAD").Output()
	if err := os.WriteFile(filepath.Join(project, ".git", "MERGE_HEAD"), head, 0o644); err != nil {
		t.Fatal(err)
	}
	o := simOptions(project)
	if a, err := New(o, vocab.Task{Description: "during a merge"}, io.Discard); err == nil || !strings.Contains(err.Error(), "a merge is in progress") {
		if err == nil {
			a.Close()
		}
		t.Fatalf("a merge in progress: %v, want a refusal naming it", err)
	}
	o.Dirty = DirtyIgnore
	a, err := New(o, vocab.Task{Description: "during a merge anyway"}, io.Discard)
	if err != nil {
		t.Fatalf("--dirty ignore during a merge: %v", err)
	}
	a.Close()
}
