package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// cmdHook is `hivemind hook <event>`, run by Claude Code (and the sim
// agent) for each hook. For PreToolUse it decides locally, by the agent's
// role, and prints Claude's hook JSON; every event is then relayed to the
// running Hivemind. It must be fast and never disturb the agent: it exits 0
// even when Hivemind is unreachable.
func cmdHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: hivemind hook <HookEventName>")
		return exitOK
	}
	event := args[0]
	payload, err := io.ReadAll(io.LimitReader(stdin, 8<<20))
	if err != nil {
		return exitOK
	}
	payload = bytes.TrimSpace(payload)
	decision, reason := "", ""
	if event == ptyagent.HookPreToolUse {
		var out []byte
		out, decision, reason = preToolUse(payload, os.Getenv)
		if len(out) > 0 {
			_, _ = stdout.Write(out)
		}
	}
	_ = ptyagent.RelayHook(event, payload, decision, reason, os.Getenv)
	return exitOK
}

// preToolUse decides a PreToolUse call by the agent's role (roles package)
// and returns Claude's hook output plus the decision to relay.
func preToolUse(payload []byte, env func(string) string) (out []byte, decision, reason string) {
	out, denied, reason := roles.PreToolUse(payload, env)
	if denied {
		decision = "deny"
	}
	return out, decision, reason
}
