package ptyagent

import "github.com/hivemind-dev/hivemind/internal/sandbox"

// Sandbox confines an agent and every process it starts to writing only
// beneath Writable (package internal/sandbox, Linux Landlock). When Helper
// is set — a binary with the `sandbox-exec` sub-command, the light
// hivemind-hook — Start runs the command line through it; the pid stays
// the agent's (the wrapper execs in place). Reads stay open everywhere.
type Sandbox struct {
	Helper   string
	Writable []string
}

// argv is the command line Start runs: spec's, confined when asked.
func (s Spec) argv() []string {
	if s.Sandbox.Helper == "" {
		return s.Argv
	}
	return sandbox.Wrap(s.Sandbox.Helper, s.Sandbox.Writable, s.Argv)
}
