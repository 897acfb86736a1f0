package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/web"
)

// cmdWeb is hivemind web: the running team's server serves the web
// client (from now on, if it did not) and its URLs are printed; with no
// team running here, the unfinished task is resumed in a server with the
// web client on (hivemind --web "task" starts a new one).
func cmdWeb(o options, args []string, stdout, stderr io.Writer) int {
	f, err := app.ServeWeb(o.Options, argAt(o, 1), binaryVersion())
	if err == nil {
		printWeb(stdout, f)
		return app.ExitOK
	}
	if !app.IsNoServer(err) || argAt(o, 1) != "" {
		fmt.Fprintln(stderr, "hivemind:", err)
		return app.ExitError
	}
	// No server: resume the unfinished task in one, with the web client:
	// the same command line without the word web (not a flag's value
	// that reads "web", as in --project web).
	var sargs []string
	for i, a := range args {
		if a != "web" {
			continue
		}
		rest := append(slices.Clone(args[:i]), args[i+1:]...)
		if p, err := parseFlags(rest); err == nil && len(p.args) == 0 && p.Project == o.Project && p.Workspace == o.Workspace && p.Config == o.Config {
			sargs = append(rest, "--resume", "--web")
			break
		}
	}
	if sargs == nil {
		fmt.Fprintln(stderr, `hivemind: no team runs here to serve; hivemind --web "task" starts one with the web client`)
		return app.ExitError
	}
	o.Web = true
	if _, code := checkWeb(o, stderr); code != app.ExitOK {
		return code
	}
	if _, code := app.StartServer(o.Options, sargs, stderr, sandboxQuestion(stderr)); code != app.ExitOK {
		fmt.Fprintln(stderr, `hivemind: no team runs here to serve; hivemind --web "task" starts one with the web client`)
		return code
	}
	return printWebOf(o, stdout, stderr)
}

// printWebOf prints the URLs of the server just started in o's workspace.
func printWebOf(o options, stdout, stderr io.Writer) int {
	root, err := o.WorkspaceRoot()
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return app.ExitError
	}
	f, err := app.WebFile(root)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind: the server runs but its web client's URL is not there:", err)
		return app.ExitError
	}
	printWeb(stdout, f)
	return app.ExitOK
}

func printWeb(w io.Writer, f web.File) {
	fmt.Fprintln(w, "web client:", f.URL)
	if f.ReadOnlyURL != "" {
		fmt.Fprintln(w, "watch only:", f.ReadOnlyURL)
	}
}

// checkWeb says whether the server to start serves the web client (--web
// or config web), and refuses, before it starts (and creates a task), a
// web_listen the web client may not use; a remote one is warned about.
func checkWeb(o options, stderr io.Writer) (bool, int) {
	cfg, _, err := o.LoadConfig()
	if err != nil {
		return o.Web, app.ExitOK // the server reports a bad config itself
	}
	if !o.Web && !cfg.Web {
		return false, app.ExitOK
	}
	host, err := web.CheckListen(cfg.WebListen, o.WebRemote)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return true, app.ExitUsage
	}
	if !web.Loopback(host) {
		fmt.Fprintln(stderr, web.RemoteWarning(cfg.WebListen))
	}
	return true, app.ExitOK
}
