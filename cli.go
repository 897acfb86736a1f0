package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes of the CLI contract.
const (
	exitOK         = 0
	exitError      = 1 // error or cancelled
	exitUsage      = 2
	exitNeedsHuman = 3
)

// options are the parsed command line.
type options struct {
	project    string
	workspace  string
	workers    int
	workersSet bool
	agent      string
	agentSet   bool
	config     string
	resume     bool
	retry      bool // with --resume: retry what stopped the task (needs_human, error)
	headless   bool
	json       bool
	follow     bool
	merge      bool     // merge a complete task's branch into the user's branch (git projects)
	args       []string // positional arguments (sub-command and its words, or the task)
	simArgs    []string // sim-agent flags set by a sub-command (the demo's pace); HIVEMIND_SIM_ARGS comes after
}

const usage = `Usage:
  hivemind [flags] "task text"        run a task (full screen; --headless for no TUI)
  hivemind [flags]                    start screen: choose the project, type a task or resume
                                      (without a terminal: resume the unfinished task, if any)
  hivemind tasks [--json]             the tasks of this project: state, start, duration
  hivemind demo                       built-in simulated agents, throwaway project
  hivemind status [--json]            the current task's state.json
  hivemind events [--follow] [--json] the event log
  hivemind roles                      effective per-role permissions
  hivemind config                     effective config and where each value came from
  hivemind context [--json]           the shared decisions, constraints and glossary
  hivemind context rm ID              remove one entry (not while hivemind runs here)
  hivemind diff [agent]               git projects: the task's changes, or one worker's

Flags:
`

// parseFlags parses flags anywhere on the line (flags after the task text
// are honoured too); "--" ends flag parsing.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("hivemind", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.project, "project", "", "project `dir` (default: current directory)")
	fs.StringVar(&o.workspace, "workspace", "", "workspace `dir` (default: <project>/.hivemind)")
	fs.IntVar(&o.workers, "workers", 2, "number of worker agents")
	fs.StringVar(&o.agent, "agent", "", "agent profile: claude, sim, a [profiles.<name>] from config, or a command line")
	fs.StringVar(&o.config, "config", "", "config `file` (replaces <workspace>/config.toml)")
	fs.BoolVar(&o.resume, "resume", false, "resume the unfinished task of this workspace")
	fs.BoolVar(&o.retry, "retry", false, "resume the unfinished task and retry what stopped it (needs_human or error; like R in the TUI)")
	fs.BoolVar(&o.headless, "headless", false, "no TUI: one line per event on stdout")
	fs.BoolVar(&o.json, "json", false, "JSON output (headless lines, status, events)")
	fs.BoolVar(&o.follow, "follow", false, "events: keep printing new events")
	fs.BoolVar(&o.merge, "merge", false, "git projects: merge the task branch into your branch when the task completes (only if your working tree is clean)")
	cur := args
	for len(cur) > 0 {
		if err := fs.Parse(cur); err != nil {
			return o, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// A "--" consumed by Parse leaves everything after it positional.
		if i := len(cur) - len(rest) - 1; i >= 0 && cur[i] == "--" {
			o.args = append(o.args, rest...)
			break
		}
		o.args = append(o.args, rest[0])
		cur = rest[1:]
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "workers":
			o.workersSet = true
		case "agent":
			o.agentSet = true
		}
	})
	if o.retry {
		o.resume = true
	}
	if o.workersSet && (o.workers < 1 || o.workers > 16) {
		return o, fmt.Errorf("--workers must be between 1 and 16, got %d", o.workers)
	}
	return o, nil
}

// run is the whole program; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Hidden sub-commands run by Hivemind itself take their arguments
	// verbatim: they must be fast and never trip over global flags.
	if len(args) > 0 {
		switch args[0] {
		case "sim-agent":
			return cmdSimAgent(args[1:], stdin, stdout)
		case "hook":
			return cmdHook(args[1:], stdin, stdout, stderr)
		}
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "hivemind:", err)
		return exitUsage
	}
	cmd := ""
	if len(o.args) > 0 {
		cmd = o.args[0]
	}
	switch cmd {
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
		return report(stderr, cmdDiff(o, stdout))
	case "demo":
		return cmdDemo(o, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	task := strings.TrimSpace(strings.Join(o.args, " "))
	return cmdRun(o, task, stdout, stderr)
}

// report prints err (if any) and returns the exit code for it.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "hivemind:", err)
	return exitError
}

// projectDir returns the absolute project directory.
func (o options) projectDir() (string, error) {
	p := o.project
	if p == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd
	}
	return absPath(p)
}
