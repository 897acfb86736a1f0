// Command hivemind runs a team of AI coding agents (one Lead, one Reviewer,
// N Workers) side by side in terminals and drives them through plan →
// review → build → checkpoint review off trigger files in a shared
// workspace. See README.md and `hivemind --help`; the command line is
// internal/cli, the wiring of a run internal/app.
package main

import (
	"os"

	"github.com/hivemind-dev/hivemind/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
