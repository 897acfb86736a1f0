package main

import (
	"fmt"
	"io"
	"os"
	"time"
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

// cmdDemo runs the built-in sim agents on a throwaway project in a temp
// directory: the whole workflow, no Claude Code and no network needed.
func cmdDemo(o options, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "hivemind-demo-")
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return exitError
	}
	o.project, o.workspace = dir, ""
	o.agent, o.agentSet = "sim", true
	o.resume = false
	o.simArgs = []string{"--pace", demoPace.String()}
	fmt.Fprintf(stderr, "hivemind demo: project %s\n", dir)
	return cmdRun(o, demoTask, stdout, stderr)
}
