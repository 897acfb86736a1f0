package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
)

// options are the parsed command line: what a run is (app.Options) and
// what the command line alone says.
type options struct {
	app.Options
	headless bool
	server   bool // --server: the team runs in a background server (server.go)
	readOnly bool // attach --read-only
	follow   bool
	verbose  bool     // events: every record, not only the milestones
	help     bool     // --help / -h
	version  bool     // --version
	args     []string // positional arguments (sub-command and its words, or the task)
	// dashAt is how many positional arguments came before "--" (-1: no
	// "--"). Words after "--" are always task text.
	dashAt int
	set    []string // the flags the command line set, by name
}

// checkEnv is the world the preflight looks at (tests swap it).
var checkEnv = preflight.System

const usageHead = `Usage:
  hivemind [flags] "task text"        run a task (full screen; --headless for no TUI)
  hivemind [flags] -- task text       the same: everything after -- is the task
  hivemind [flags]                    start screen: choose the project, type a task or resume
                                      (without a terminal: resume the unfinished task, if any)
  hivemind --resume [flags]           resume the unfinished task with the agents it started with
  hivemind --server [flags] "task"    the team runs in a background server of the project that outlives
                                      the terminal; this terminal attaches (D detaches, q asks)
  hivemind attach [project] [--read-only]  attach to the project's server (--read-only: watch only)
  hivemind ls [--json]                the teams running on this machine: project, task, state, clients, age, web URL
  hivemind web [project]              serve the running team's web client and print its URL (no team running:
                                      resume the unfinished task in a server with it); hivemind --web "task" starts one
  hivemind wait [project]             block until the server's task needs you or ends (exit codes as --headless)
  hivemind demo                       built-in simulated agents, throwaway project
  hivemind doctor [--agent A]         check the agents' setup (command, version, login, root, network;
                                      a custom command is started and run to its first prompt)
  hivemind tasks [--json]             the tasks of this project: state, start, duration
  hivemind status [--json]            the current task's state.json
  hivemind events [--follow] [--json] the event log: milestones; --verbose adds every record
  hivemind roles                      effective per-role permissions
  hivemind config                     effective config and where each value came from
  hivemind hosts                      check every [hosts.<name>]: ssh, git, the agent CLI, work dir
  hivemind context [--json]           the shared knowledge: decisions, constraints, glossary
  hivemind context rm ID              remove one entry (not while hivemind runs here)
  hivemind diff [agent]               git projects: the task's changes, or one worker's
  hivemind version                    the version of this binary (also --version)
  hivemind help                       this help (also --help, -h)

A task is text of more than one word: quote it ("fix the login bug") or put
it after --. A single word is never taken for a task, so a mistyped command
starts nothing.

Flags (anywhere on the line):
`

// commands are the sub-commands a user types (sim-agent, hook and guard
// are run by Hivemind itself and not listed).
var commands = []string{"attach", "config", "context", "demo", "diff", "doctor", "events", "help", "hosts", "ls", "roles", "status", "tasks", "version", "wait", "web"}

// maxArgs is how many words each sub-command takes after its name; more
// is a usage error (exit 2), so nothing typed is silently dropped.
// context checks its own ("rm ID").
var maxArgs = map[string]int{"attach": 1, "ls": 0, "wait": 1, "config": 0, "context": 2, "demo": 0, "diff": 1, "doctor": 0, "events": 0,
	"help": 1, "hosts": 0, "roles": 0, "status": 0, "tasks": 0, "version": 0, "web": 1}

// onlyFor are the flags that mean something to one sub-command alone:
// given without it they are a usage error, never a run (hivemind --verbose
// once resumed an unfinished task).
var onlyFor = map[string]string{"follow": "events", "verbose": "events", "read-only": "attach"}

// shortFlags are the one-letter spellings of flags (-w 3 is --workers 3).
var shortFlags = map[string]string{"h": "help", "w": "workers"}

// newFlagSet declares the flags into o. The flag package prints nothing:
// run reports errors in one line and prints help itself.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("hivemind", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.Project, "project", "", "project `dir` (default: current directory)")
	fs.StringVar(&o.Workspace, "workspace", "", "workspace `dir` (default: <project>/.hivemind)")
	o.Workers = config.DefaultWorkers
	fs.Var(workersFlag{o}, "w", "")
	fs.Var(workersFlag{o}, "workers", fmt.Sprintf("number of worker agents, `n` = %d–%d; n@host places them on a [hosts.<name>] (2,3@buildbox: two here, three there)", config.MinWorkers, config.MaxWorkers))
	fs.StringVar(&o.Agent, "agent", "", "agent `profile` of every role: "+strings.Join(profiles.Names(), ", ")+", a [profiles.<name>] from config, or a command line; or per role: lead=claude,reviewer=codex,worker=gemini")
	fs.Float64Var(&o.Budget, "budget", 0, "stop at needs_human once the task's estimated spend reaches `usd` (budget_usd; with --retry, a raised budget continues)")
	fs.StringVar(&o.PlanApproval, "plan-approval", "", "who approves the plan before the build: `who` = reviewer, or human (you approve or send feedback after the Reviewer)")
	fs.StringVar(&o.Config, "config", "", "config `file` (replaces <workspace>/config.toml)")
	fs.BoolVar(&o.Resume, "resume", false, "resume the unfinished task of this workspace")
	fs.BoolVar(&o.Retry, "retry", false, "resume the unfinished task and retry what stopped it (needs_human or error; like R in the TUI)")
	fs.BoolVar(&o.headless, "headless", false, "no TUI: one line per event on stdout (exit 0 complete, 1 error or cancelled, 3 needs_human)")
	fs.BoolVar(&o.server, "server", false, "run the team in a background server of the project: it outlives the terminal (close it, or D, to detach; hivemind attach comes back, hivemind wait waits); without a terminal it starts the server and returns")
	fs.BoolVar(&o.Web, "web", false, "run the team in a server (as --server) that also serves the web client: a page on 127.0.0.1 (web_listen) whose URL, with its token, is printed")
	fs.BoolVar(&o.WebRemote, "web-remote", false, "allow a web_listen that is not loopback (put TLS or an SSH tunnel in front: the page is plain HTTP)")
	fs.BoolVar(&o.readOnly, "read-only", false, "attach: watch only (the server refuses keys and commands)")
	fs.BoolVar(&o.JSON, "json", false, "JSON output (headless lines, status, events, tasks, context)")
	fs.BoolVar(&o.follow, "follow", false, "events: keep printing new events")
	fs.BoolVar(&o.verbose, "verbose", false, "events: every record (agent health, injections, timers), not only the milestones")
	fs.BoolVar(&o.Merge, "merge", false, "git projects: merge the task branch into your branch when the task completes (only if your working tree is clean)")
	fs.StringVar(&o.Dirty, "dirty", "", "git projects, a new task: `what` to do with your checkout's uncommitted edits: include (commit them on the task branch) or ignore (start from HEAD, the default); ignore also starts during a rebase or merge")
	fs.BoolVar(&o.NoPreflight, "no-preflight", false, "start agents without checking their setup first (see hivemind doctor)")
	fs.BoolVar(&o.help, "help", false, "this help")
	fs.BoolVar(&o.help, "h", false, "")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	return fs
}

// usageText is the full help: the commands and every flag as --flag.
func usageText() string {
	var b strings.Builder
	b.WriteString(usageHead)
	var o options
	fs := newFlagSet(&o)
	fs.VisitAll(func(f *flag.Flag) {
		if _, short := shortFlags[f.Name]; short {
			return
		}
		arg, help := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if arg != "" && arg != "value" {
			left += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			help += " (default " + f.DefValue + ")"
		}
		for short, long := range shortFlags {
			if long == f.Name {
				help += " (also -" + short + ")"
			}
		}
		fmt.Fprintf(&b, "  %-22s %s\n", left, help)
	})
	return b.String()
}

// parseFlags parses flags anywhere on the line (flags after the task text
// are honoured too); "--" ends flag parsing.
func parseFlags(args []string) (options, error) {
	o := options{dashAt: -1}
	fs := newFlagSet(&o)
	cur := args
	for len(cur) > 0 {
		if err := fs.Parse(cur); err != nil {
			return o, flagError(err, fs)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// A "--" consumed by Parse leaves everything after it positional.
		if i := len(cur) - len(rest) - 1; i >= 0 && cur[i] == "--" {
			o.dashAt = len(o.args)
			o.args = append(o.args, rest...)
			break
		}
		o.args = append(o.args, rest[0])
		cur = rest[1:]
	}
	fs.Visit(func(f *flag.Flag) {
		o.set = append(o.set, f.Name)
		switch f.Name {
		case "workers", "w":
			o.WorkersSet = true
		case "agent":
			o.AgentSet = true
		case "budget":
			o.BudgetSet = true
		}
	})
	if o.Retry {
		o.Resume = true
	}
	if o.WorkersSet && (o.Workers < config.MinWorkers || o.Workers > config.MaxWorkers) {
		return o, fmt.Errorf("--workers must be between %d and %d, got %d", config.MinWorkers, config.MaxWorkers, o.Workers)
	}
	return o, nil
}

// flagName matches a flag as the flag package names it in errors ("-x").
var flagName = regexp.MustCompile(`(^|[ :])-([A-Za-z][\w-]*)`)

// flagError rewrites a flag package error in the --flag spelling, with a
// "did you mean" for an unknown flag.
func flagError(err error, fs *flag.FlagSet) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		var names []string
		fs.VisitAll(func(f *flag.Flag) {
			if _, short := shortFlags[f.Name]; !short {
				names = append(names, f.Name)
			}
		})
		if s := suggest(strings.TrimLeft(name, "-"), names, 2); s != "" {
			msg += " (did you mean --" + s + "?)"
		}
		return errors.New(msg)
	}
	return errors.New(flagName.ReplaceAllString(msg, "$1--$2"))
}

// Run is the whole program: args are the command line without the
// program name. It returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Hidden sub-commands run by Hivemind itself take their arguments
	// verbatim: they must be fast and never trip over global flags.
	if len(args) > 0 {
		switch args[0] {
		case "sim-agent":
			return cmdSimAgent(args[1:], stdin, stdout)
		case "hook":
			return cmdHook(args[1:], stdin, stdout, stderr)
		case ptyagent.GuardCommand:
			return ptyagent.RunGuard(args[1:], stdin, stderr)
		}
	}
	o, err := parseFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "hivemind: %v\nRun hivemind --help for usage.\n", err)
		return app.ExitUsage
	}
	o.CheckEnv = checkEnv
	o.Guard = true
	if o.help {
		fmt.Fprint(stdout, usageText())
		return app.ExitOK
	}
	if o.version {
		fmt.Fprint(stdout, versionText())
		return app.ExitOK
	}
	cmd := ""
	if len(o.args) > 0 && o.dashAt != 0 {
		cmd = o.args[0]
	}
	if err := checkCommandLine(o, cmd); err != nil {
		fmt.Fprintf(stderr, "hivemind: %v\nRun hivemind --help for usage.\n", err)
		return app.ExitUsage
	}
	switch cmd {
	case "attach":
		return app.Attach(o.Options, app.AttachOptions{Binary: binaryVersion(), ReadOnly: o.readOnly, Project: argAt(o, 1)}, stderr)
	case "ls":
		return report(stderr, app.ListServers(binaryVersion(), o.JSON, stdout))
	case "wait":
		return app.Wait(o.Options, argAt(o, 1), binaryVersion(), stdout, stderr)
	case "web":
		return cmdWeb(o, args, stdout, stderr)
	case "status":
		return report(stderr, cmdStatus(o, stdout))
	case "tasks":
		return report(stderr, cmdTasks(o, stdout))
	case "events":
		return report(stderr, cmdEvents(o, stdout))
	case "roles":
		return report(stderr, cmdRoles(o, stdout))
	case "config":
		return report(stderr, cmdConfig(o, stdout))
	case "context":
		return report(stderr, cmdContext(o, stdout))
	case "diff":
		return report(stderr, cmdDiff(o, stdout, stderr))
	case "doctor":
		return cmdDoctor(o, stdout, stderr)
	case "hosts":
		return cmdHosts(o, stdout, stderr)
	case "demo":
		return cmdDemo(o, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usageText())
		return app.ExitOK
	case "version":
		fmt.Fprint(stdout, versionText())
		return app.ExitOK
	}
	task, err := taskText(o.args, o.dashAt)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return app.ExitUsage
	}
	if o.server || o.Web {
		if _, child := os.LookupEnv(app.ServeEnv); !child {
			return startServer(o, args, task, stdout, stderr)
		}
	}
	return runTask(o, task, stdout, stderr)
}

// argAt is the positional word i (0 is the sub-command), "" if none.
func argAt(o options, i int) string {
	if i < len(o.args) {
		return o.args[i]
	}
	return ""
}

// checkCommandLine refuses what a sub-command would silently ignore: words
// after a command that takes none (or fewer), and a flag meant for another
// command. cmd is the sub-command, or "" for a run.
func checkCommandLine(o options, cmd string) error {
	if n, ok := maxArgs[cmd]; ok && len(o.args)-1 > n {
		extra := o.args[1+n:]
		takes := "takes no arguments"
		if n > 0 {
			takes = fmt.Sprintf("takes at most %d", n)
		}
		return fmt.Errorf("hivemind %s %s: unexpected %q", cmd, takes, strings.Join(extra, " "))
	}
	for _, name := range o.set {
		if want, ok := onlyFor[name]; ok && want != cmd {
			return fmt.Errorf("--%s is a flag of hivemind %s only (did you mean hivemind %s --%s?)", name, want, want, name)
		}
	}
	return nil
}

// taskText returns the task the positional words give ("" for none), or an
// error when they could be a mistyped command. The rule: words after "--",
// an argument with spaces in it (a quoted task), or several words whose
// first is not one edit away from a command are a task; a single word is
// not (a task is described in more than one word), so `hivemind stauts`
// starts nothing.
func taskText(words []string, dashAt int) (string, error) {
	task := strings.TrimSpace(strings.Join(words, " "))
	if task == "" || dashAt >= 0 {
		return task, nil
	}
	for _, w := range words {
		if strings.ContainsAny(strings.TrimSpace(w), " \t\n") {
			return task, nil
		}
	}
	first := words[0]
	if len(words) == 1 {
		if s := suggest(first, commands, 2); s != "" {
			return "", fmt.Errorf("unknown command %q: did you mean %q?\n(to start a task, quote it: hivemind \"%s …\", or put it after --: hivemind -- %s)",
				first, "hivemind "+s, first, first)
		}
		return "", fmt.Errorf("%q is not a command, and a task needs more than one word: quote it (hivemind \"%s …\"), or put it after -- (hivemind -- %s).\nRun hivemind --help for the commands",
			first, first, first)
	}
	if s := suggest(first, commands, 1); s != "" && len(first) >= 3 {
		return "", fmt.Errorf("unknown command %q: did you mean %q?\n(to start the task %q, quote it or put it after --: hivemind -- %s)",
			first, "hivemind "+s, task, task)
	}
	return task, nil
}

// suggest is config.Suggest for what a user typed, in any case.
func suggest(s string, known []string, max int) string {
	return config.Suggest(strings.ToLower(s), known, max)
}

// report prints err (if any) and returns the exit code for it.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return app.ExitOK
	}
	fmt.Fprintln(stderr, "hivemind:", err)
	if errors.Is(err, app.ErrUsage) {
		return app.ExitUsage
	}
	return app.ExitError
}
