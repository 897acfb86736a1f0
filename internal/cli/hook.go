package cli

import (
	"io"
	"os"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/roles"
)

// cmdHook is `hivemind hook <event>`, run by Claude Code (and the sim
// agent) for each hook when no `hivemind-hook` executable is installed
// (see ptyagent.HookCommand). It runs exactly what cmd/hivemind-hook runs: for
// PreToolUse it decides locally, by the agent's role, and prints Claude's
// hook JSON; every event is then relayed to the running Hivemind. It must
// be fast and never disturb the agent: it exits 0 even when Hivemind is
// unreachable.
func cmdHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return hookrelay.Command(args, stdin, stdout, stderr, os.Getenv, roles.PreToolUse)
}
