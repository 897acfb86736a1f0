package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/workspace"
)

// demoTask is the task the demo's simulated team builds.
const demoTask = "build a tiny calculator: add, subtract, multiply and divide, with tests"

// demoPace is the sim agents' delay per output line in the demo. The sim's
// default scenario already rejects the first plan and reports issues at the
// first checkpoint once; at this pace the whole workflow, with that plan
// revision and that checkpoint fix, takes about a minute in the full-screen
// UI (measured in tmux 160×48: docs/TUI-PERFORMANCE.md). HIVEMIND_SIM_ARGS
// still overrides it (e.g. "--pace 10ms" for a quick look).
const demoPace = 200 * time.Millisecond

// demoMarker, in a demo project's workspace, says the project is the
// demo's throwaway one: whichever run ends its task (the demo itself, or
// a later --resume) removes it.
const demoMarker = "demo-project"

// cmdDemo runs the built-in sim agents on a throwaway project in a temp
// directory: the whole workflow, no Claude Code and no network needed.
// The project is removed at the end unless its task can be resumed (then
// the run that resumes it to its end removes it: runTask).
func cmdDemo(o options, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "hivemind-demo-")
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, ".hivemind"), 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ".hivemind", demoMarker),
			[]byte("hivemind demo's throwaway project: removed when its task is over\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return app.ExitError
	}
	o.Project, o.Workspace = dir, ""
	o.Agent, o.AgentSet = "sim", true
	o.Resume = false
	o.SimArgs = []string{"--pace", demoPace.String()}
	fmt.Fprintf(stderr, "hivemind demo: project %s\n", dir)
	return runTask(o, demoTask, stdout, stderr)
}

// endDemo removes a demo project whose task is over, after any run in it
// (the demo, or a resume of its task); other projects are not touched.
func endDemo(o options, stderr io.Writer) {
	dir, err := o.ProjectDir()
	if err != nil || o.Workspace != "" {
		return
	}
	if _, err := os.Stat(filepath.Join(dir, ".hivemind", demoMarker)); err != nil {
		return
	}
	o.Project = dir
	fmt.Fprintln(stderr, "hivemind demo:", demoCleanup(o))
}

// demoCleanup removes the demo's throwaway project once its task is over
// (complete, cancelled or abandoned); an unfinished task keeps it, so the
// printed resume command works. It returns what it did, for the user.
func demoCleanup(o options) string {
	dir := o.Project
	root, err := o.WorkspaceRoot()
	if err != nil {
		return fmt.Sprintf("the demo project stays in %s (%v)", dir, err)
	}
	if ws, _, err := workspace.ReadTasks(root); err != nil {
		return fmt.Sprintf("the demo project stays in %s (%v); remove it with: rm -rf %s", dir, err, dir)
	} else if ws != nil {
		if _, unfinished, err := ws.Unfinished(); err != nil || unfinished {
			return fmt.Sprintf("the task can be resumed, so the demo project stays in %s (rm -rf %s removes it)", dir, dir)
		}
	}
	if wd, err := os.Getwd(); err == nil && (wd == dir || strings.HasPrefix(wd, dir+string(filepath.Separator))) {
		return fmt.Sprintf("the task is over; the demo project %s is your current directory, so it stays (rm -rf %s removes it)", dir, dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Sprintf("could not remove the demo project %s: %v", dir, err)
	}
	return "removed the demo project " + dir
}
