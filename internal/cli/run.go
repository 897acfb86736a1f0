package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/vocab"
)

// runTask runs a task (or resumes the unfinished one) to a final state;
// without either, on a terminal, it opens the start screen.
func runTask(o options, task string, stdout, stderr io.Writer) int {
	defer endDemo(o, stderr)
	if ready, ok := app.ServerChild(); ok {
		return serveTask(o, task, ready, stdout, stderr)
	}
	if task == "" && !o.Resume && !o.headless && app.IsTerminal() {
		return app.RunFrontDoor(o.Options)
	}
	a, err := app.New(o.Options, vocab.Task{Description: task}, stdout)
	if err != nil && onlyRootFailed(err) && app.IsTerminal() && confirmSandbox(os.Stdin, stderr) {
		// Nothing was created: wire the run again, now in a sandbox.
		a, err = app.New(o.Options, vocab.Task{Description: task}, stdout)
	}
	if err != nil {
		return reportNewError(stderr, err)
	}
	defer a.Close()
	return a.Run(o.headless)
}

// reportNewError says why a run could not be wired and returns its exit
// code.
func reportNewError(stderr io.Writer, err error) int {
	if printPreflightFailure(stderr, err) {
		return app.ExitError
	}
	fmt.Fprintln(stderr, "hivemind:", err)
	if errors.Is(err, app.ErrUsage) {
		return app.ExitUsage
	}
	return app.ExitError
}

// printPreflightFailure explains a failed preflight on the terminal: each
// check that did not pass, on its own line, then what to do.
func printPreflightFailure(w io.Writer, err error) bool {
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		return false
	}
	fmt.Fprintln(w, "hivemind: the agents cannot start; nothing was started or created:")
	for _, r := range pe.Results {
		if r.Status != preflight.OK {
			fmt.Fprintln(w, "  "+r.String())
		}
	}
	fmt.Fprintln(w, "Run hivemind doctor to see every check; --no-preflight starts the agents anyway.")
	return true
}

// onlyRootFailed reports whether the preflight failed only because Claude
// Code may not bypass permissions as root.
func onlyRootFailed(err error) bool {
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		return false
	}
	for _, r := range pe.Results {
		if r.Status == preflight.Fail && r.Check != preflight.CheckRoot {
			return false
		}
	}
	return true
}

// confirmSandbox asks, on a terminal, whether this root session is a
// sandbox (a container or VM the user can throw away); yes sets
// IS_SANDBOX=1 for this process and its agents.
func confirmSandbox(in io.Reader, out io.Writer) bool {
	fmt.Fprint(out, "hivemind: running as root. Claude Code bypasses permissions as root only in a sandbox.\n"+
		"Is this a container or VM you can throw away? Run the agents with IS_SANDBOX=1 [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(out, "hivemind: not started (IS_SANDBOX=1 hivemind … skips this question)")
		return false
	}
	return os.Setenv("IS_SANDBOX", "1") == nil
}
