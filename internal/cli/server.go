package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/vocab"
)

// startServer is hivemind --server: it starts the project's server with
// this command line and attaches to it on a terminal; without one (or with
// --headless, which then waits for the task like hivemind wait) it says
// how to reach the team.
func startServer(o options, args []string, task string, stdout, stderr io.Writer) int {
	if task == "" && !o.Resume {
		fmt.Fprintln(stderr, "hivemind: --server (and --web) needs a task or --resume (hivemind attach attaches to a running server)")
		return app.ExitUsage
	}
	withWeb, code := checkWeb(o, stderr)
	if code != app.ExitOK {
		return code
	}
	if _, code := app.StartServer(o.Options, args, stderr, sandboxQuestion(stderr)); code != app.ExitOK {
		return code
	}
	if withWeb {
		if code := printWebOf(o, stdout, stderr); code != app.ExitOK {
			return code
		}
	}
	if o.headless || !app.IsTerminal() {
		fmt.Fprintln(stdout, "the team runs in a Hivemind server: hivemind attach shows it, hivemind wait waits for it, hivemind ls lists the servers")
		if o.headless {
			return app.Wait(o.Options, "", binaryVersion(), stdout, stderr)
		}
		return app.ExitOK
	}
	return app.Attach(o.Options, app.AttachOptions{Binary: binaryVersion()}, stderr)
}

// serveTask is the server StartServer started: the run is wired as
// hivemind "task" wires it (what stops it is said on the readiness pipe,
// which the starting hivemind prints; root without IS_SANDBOX=1 alone is
// asked there first), then served to clients.
func serveTask(o options, task string, ready io.WriteCloser, stdout, stderr io.Writer) int {
	errw := io.MultiWriter(stderr, ready)
	a, err := app.New(o.Options, vocab.Task{Description: task}, stdout)
	if err != nil {
		if onlyRootFailed(err) {
			_, _ = io.WriteString(ready, app.AskSandbox)
		}
		code := reportNewError(errw, err)
		_ = ready.Close()
		return code
	}
	defer a.Close()
	return a.Serve(binaryVersion(), ready)
}

// sandboxQuestion asks, on a terminal, the root question (Claude Code as
// root without IS_SANDBOX=1) before a server detaches; nil without one.
func sandboxQuestion(stderr io.Writer) func() bool {
	if !app.IsTerminal() {
		return nil
	}
	return func() bool { return confirmSandbox(os.Stdin, stderr) }
}
