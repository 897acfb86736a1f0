package main

import (
	"fmt"
	"io"
	"os"
)

// demoTask is the task the demo's simulated team builds.
const demoTask = "build a tiny calculator: add, subtract, multiply and divide, with tests"

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
	fmt.Fprintf(stderr, "hivemind demo: project %s\n", dir)
	return cmdRun(o, demoTask, stdout, stderr)
}
