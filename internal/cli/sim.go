package cli

import (
	"io"
	"os"

	"github.com/hivemind-dev/hivemind/internal/sim"
)

// cmdSimAgent runs the built-in scripted agent (hidden: Hivemind starts it
// in each PTY for --agent sim).
func cmdSimAgent(args []string, stdin io.Reader, stdout io.Writer) int {
	return sim.Main(args, stdin, stdout, os.Getenv)
}
