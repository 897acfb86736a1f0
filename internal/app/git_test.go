package app

import (
	"slices"
	"testing"

	"github.com/hivemind-dev/hivemind/engine"
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
	agents := map[workspace.AgentID]workspace.AgentState{"worker_1": {Role: "worker"}, "lead": {Role: "lead"}}
	s := engine.Snapshot{State: workspace.State{Agents: agents}}
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
