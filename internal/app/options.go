package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Exit codes of the CLI contract.
const (
	ExitOK         = 0
	ExitError      = 1 // error or cancelled
	ExitUsage      = 2
	ExitNeedsHuman = 3
)

// ErrUsage marks errors in how hivemind was called (exit 2).
var ErrUsage = errors.New("usage")

// Options say what a run is and where: the command line's flags, or the
// start screen's choices.
type Options struct {
	Project    string // project dir ("": the current directory)
	Workspace  string // workspace dir ("": <project>/.hivemind)
	Workers    int
	WorkersSet bool // Workers was chosen (--workers), not the default
	Agent      string
	AgentSet   bool // Agent was chosen (--agent)
	Budget     float64
	BudgetSet  bool   // Budget was chosen (--budget): budget_usd for this run
	Config     string // config file replacing <workspace>/config.toml
	Resume     bool
	Retry      bool // with Resume: retry what stopped the task (needs_human, error)
	JSON       bool // headless output as JSON lines
	Merge      bool // merge a complete task's branch into the user's branch (git projects)
	// Dirty says what a new task does with the checkout's uncommitted
	// edits (git projects): DirtyInclude commits them on the task branch,
	// DirtyIgnore (and "") starts from HEAD; either way the run says so.
	// A rebase or merge in progress refuses to start unless it is
	// DirtyIgnore.
	Dirty string
	// NoPreflight skips the agent checks before a run (hivemind doctor
	// runs them alone).
	NoPreflight bool
	// PlanApproval is who approves the plan (--plan-approval; "": the
	// config decides).
	PlanApproval string
	// SimArgs are sim-agent flags set by a sub-command (the demo's pace);
	// HIVEMIND_SIM_ARGS comes after.
	SimArgs []string
	// CheckEnv is the world the preflight looks at (nil: the real one;
	// tests swap it).
	CheckEnv func() preflight.Env
	// Placement is --workers n@host (config.ParseWorkers); nil: by config.
	Placement []config.Placement
	// Guard starts the process guard (ptyagent.Guard, this executable's
	// hidden guard sub-command) with the first agents, so what they leave
	// is reaped as soon as Hivemind dies, even by SIGKILL. The command
	// line sets it (a test binary has no such sub-command);
	// HIVEMIND_GUARD=off turns it off.
	Guard bool
	// Web serves the web client from the server (--web; config web).
	Web bool
	// WebRemote allows a web_listen that is not loopback (--web-remote).
	WebRemote bool
}

// ProjectDir returns the absolute project directory.
func (o Options) ProjectDir() (string, error) {
	p := o.Project
	if p == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd
	}
	return absPath(p)
}

func absPath(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	return a, nil
}

// WorkspaceRoot returns the workspace root the options name.
func (o Options) WorkspaceRoot() (string, error) {
	if o.Workspace != "" {
		return absPath(o.Workspace)
	}
	project, err := o.ProjectDir()
	if err != nil {
		return "", err
	}
	return workspace.DefaultRoot(project), nil
}

// LoadConfig builds the effective configuration for the workspace the
// options name.
func (o Options) LoadConfig() (config.Config, config.Sources, error) {
	root, err := o.WorkspaceRoot()
	if err != nil {
		return config.Config{}, nil, err
	}
	ov := config.Overrides{ConfigFile: o.Config}
	if o.WorkersSet {
		w := o.Workers
		ov.Workers = &w
		ov.Placement = o.Placement
	}
	if o.AgentSet {
		a := strings.TrimSpace(o.Agent)
		ov.Agent = &a
	}
	if o.BudgetSet {
		b := o.Budget
		ov.Budget = &b
	}
	if o.PlanApproval != "" {
		ov.PlanApproval = &o.PlanApproval
	}
	return config.Load(root, config.UserDir(os.Getenv), ov)
}

// CurrentTask finds the task the reading commands (status, events, diff)
// show in the workspace the options name (workspace.CurrentTask). A
// missing workspace is an error, not created.
func (o Options) CurrentTask() (workspace.TaskInfo, error) {
	root, err := o.WorkspaceRoot()
	if err != nil {
		return workspace.TaskInfo{}, err
	}
	if _, err := os.Stat(root); err != nil {
		return workspace.TaskInfo{}, fmt.Errorf("no Hivemind workspace at %s (run a task first)", root)
	}
	return workspace.CurrentTask(root)
}

// preflightEnv is the world the preflight of these options looks at.
func (o Options) preflightEnv() preflight.Env {
	if o.CheckEnv != nil {
		return o.CheckEnv()
	}
	return preflight.System()
}

// --dirty values.
const (
	DirtyInclude = "include"
	DirtyIgnore  = "ignore"
)
