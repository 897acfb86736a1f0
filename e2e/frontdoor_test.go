package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The front door, in one run: `hivemind` with no task opens the start
// screen (project, not-a-git-repo note); a task typed there with a
// constraint starts with ctrl+s and its panes appear; the sim team runs it
// to complete and the summary shows what was built; enter leaves it for the
// start screen (agents stopped, the task listed as complete); `hivemind
// tasks` lists it in the shell; q quits with nothing left running.
func TestFrontDoor(t *testing.T) {
	parallel(t)
	start := time.Now()
	r := startTUI(t, tuiOptions{simArgs: "--pace 2ms", args: []string{"--agent", "sim", "--workers", "2"}})

	// The project is read (idle → project_selected): it has no tasks and
	// is not a git repository.
	s := r.waitScreen(tuiWait, "the start screen with the project read", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseProjectSelected)
	})
	if !s.contains(r.project) || !s.contains("New task") || !s.contains("Past tasks (0)") {
		t.Errorf("start screen without the project %s, the task field or the empty past tasks:\n%s", r.project, s)
	}
	if !s.contains("not a git repository") {
		t.Errorf("no note that the temp project is not a git repository:\n%s", s)
	}

	// Type the task (the task field has the focus), a constraint, start.
	const task = "build a tiny calculator"
	r.typeText(task)
	r.keys("Tab")
	r.typeText("no new dependencies")
	r.waitText(tuiWait, task, "no new dependencies")
	r.keys("C-s")

	// The panes appear as the agents start.
	r.waitScreen(tuiWait, "four agent panes", func(s tuiScreen) bool { return len(s.panes()) == 4 })
	dir := r.taskDir()
	tj := readTask(t, dir)
	if tj.Description != task || len(tj.Constraints) != 1 || tj.Constraints[0] != "no new dependencies" ||
		tj.SubmittedBy != "tui" || tj.Project != r.project {
		t.Errorf("task.json %+v: want the typed task, its constraint, submitted_by tui", tj)
	}

	// Complete: the summary replaces the panes.
	s = r.waitText(2*tuiWait, "summary", "COMPLETE", "What was built (", "Review rounds", "Agents: tokens and cost",
		"the built-in sim agent uses no model")
	st := checkComplete(t, dir)
	for id := range st.Subtasks {
		if !s.contains(id + "  (worker_") {
			t.Errorf("summary does not list subtask %s:\n%s", id, s)
		}
	}
	if st.Plan != nil && len(st.Plan.Subtasks) > 0 {
		_, path := splitPlanEntry(st.Plan.Subtasks[0].Files[0])
		if !s.contains(path) {
			t.Errorf("summary does not name %s, a file of %s:\n%s", path, st.Plan.Subtasks[0].ID, s)
		}
	}
	if !s.contains("the built-in sim agent uses no model") {
		t.Errorf("summary does not say the sim agents report no tokens:\n%s", s)
	}

	// enter: back to the start screen for a new task (complete → idle).
	r.keys("Enter")
	s = r.waitText(tuiWait, "New task", "Past tasks (1)", "complete")
	if s.phase() != string(vocab.PhaseProjectSelected) || !s.contains(filepath.Base(dir)) {
		t.Errorf("start screen after the task: header %q, want the task %s listed:\n%s", s.header(), filepath.Base(dir), s)
	}
	// The agents were stopped on the way (hivemind itself still runs).
	waitFor(t, tuiWait, "the agents to stop", func() bool { return len(agentLeftovers(r.project)) == 0 })

	// The shell lists the task too.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, out := hivemind(t, ctx, r.home, "tasks", "--project", r.project)
	if code := exitCode(t, cmd); code != 0 || !strings.Contains(out.String(), filepath.Base(dir)) ||
		!strings.Contains(out.String(), "complete") || !strings.Contains(out.String(), task) {
		t.Errorf("hivemind tasks: exit %d\n%s", code, out.String())
	}
	cmd, out = hivemind(t, ctx, r.home, "tasks", "--json", "--project", r.project)
	var rows []struct{ ID, State string }
	if code := exitCode(t, cmd); code != 0 || json.Unmarshal([]byte(out.String()), &rows) != nil ||
		len(rows) != 1 || rows[0].ID != filepath.Base(dir) || rows[0].State != "complete" {
		t.Errorf("hivemind tasks --json: exit %d\n%s", code, out.String())
	}

	// esc leaves the task field (a separate key: ESC then q at once reads
	// as alt+q); q then quits at once (nothing runs).
	r.keys("Escape")
	r.waitText(tuiWait, "▸ Past tasks")
	r.keys("q")
	if code := r.waitExit(tuiWait); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	noLeftovers(t, r.project)
	t.Logf("wall time %v", time.Since(start).Round(time.Millisecond))
}

// readTask parses a task's task.json.
func readTask(t *testing.T, dir string) vocab.Task {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "task.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj vocab.Task
	if err := json.Unmarshal(b, &tj); err != nil {
		t.Fatal(err)
	}
	return tj
}

// splitPlanEntry splits a plan file entry "CREATE path".
func splitPlanEntry(f string) (verb, path string) {
	verb, path, ok := strings.Cut(strings.TrimSpace(f), " ")
	if !ok {
		return "MODIFY", f
	}
	return verb, strings.TrimSpace(path)
}

// agentLeftovers is leftovers without the hivemind process itself (whose
// working directory is the project): agent processes only.
func agentLeftovers(project string) []string {
	var out []string
	for _, l := range leftovers(project) {
		if !strings.Contains(l, `agent=""`) {
			out = append(out, l)
		}
	}
	return out
}
