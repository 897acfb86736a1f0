// Command hivemind runs a team of AI coding agents (one Lead, one Reviewer,
// N Workers) side by side in terminals and drives them through plan →
// review → build → checkpoint review off trigger files in a shared
// workspace. See README.md and `hivemind --help`.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
