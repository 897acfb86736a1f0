// Command hivemind-hook is the hook command Claude Code runs for each hook
// of a Hivemind agent: `hivemind-hook <HookEventName>` with the hook JSON
// on stdin. It does what the hidden `hivemind hook <event>` sub-command
// does (both run hookrelay.Command): PreToolUse is decided locally by the
// agent's role and Claude's hook JSON printed on stdout; every event is
// relayed to the running Hivemind over $HIVEMIND_HOOK_SOCKET. It always
// exits 0.
//
// It exists because a hook runs on every turn of every agent and Claude
// waits for it: the main binary links the whole TUI and terminal emulator
// stack, whose package initialisation alone takes tens of milliseconds.
// This binary's import graph is kept small (see TestLightImports).
//
// It also confines agents' writes: `hivemind-hook sandbox-exec --rw DIR …
// -- argv…` (package sandbox) restricts itself with Landlock and executes
// the agent.
//
// On a remote host it is also Hivemind's helper (installed there over ssh):
// `hivemind-hook remote-launch|remote-run|remote-reap|remote-ping`, see
// package internal/remote.
package main

import (
	"os"

	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/internal/sim"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/roles"
)

func main() {
	// The same binary is Hivemind's helper on remote hosts (package remote).
	if code, ok := remote.Main(os.Args[1:], os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	// Agents are confined through this light binary (package sandbox):
	// `hivemind-hook sandbox-exec --rw DIR … -- argv…`.
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	// The sim agent runs on remote hosts through the helper (the main
	// binary is not copied there).
	if len(os.Args) > 1 && os.Args[1] == "sim-agent" {
		os.Exit(sim.Main(os.Args[2:], os.Stdin, os.Stdout, os.Getenv))
	}
	os.Exit(hookrelay.Command(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, roles.PreToolUse))
}
