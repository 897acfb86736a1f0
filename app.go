package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/workspace"
)

// app is one wired-up run: workspace lock, task, state store, event log,
// agents and the engine runner.
type app struct {
	opts    options
	cfg     config.Config
	project string
	root    string
	lock    *workspace.Lock
	ws      *workspace.Workspace
	td      *workspace.TaskDir
	store   *workspace.StateStore
	log     *workspace.EventLog
	agents  *ptyagent.Manager
	runner  *engine.Runner
	out     *printer
	resumed bool
	first   engine.Event // TaskSubmitted or Resumed

	// terminal is closed when the state first reaches a terminal phase.
	terminal     chan struct{}
	terminalOnce sync.Once
	finalMu      sync.Mutex
	final        workspace.Phase

	// onSnapshot, when set, also receives every snapshot (the TUI).
	onSnapshot func(engine.Snapshot)

	// git is the git integration (gitwire.go); nil when the project is not
	// a git repository.
	git *gitWire
	// gitNotes are the notices finishGit gave at the end of the task (where
	// the result is, how to look at it and merge it): the full-screen UI
	// prints them on the terminal once it has exited.
	gitNotes []notice
}

// notice is one message of Hivemind itself to the user.
type notice struct{ level, msg string }

// errUsage marks errors in how hivemind was called (exit 2).
var errUsage = errors.New("usage")

// loadConfig builds the effective configuration for the workspace the
// options name.
func loadConfig(o options) (config.Config, config.Sources, error) {
	root, err := o.workspaceRoot()
	if err != nil {
		return config.Config{}, nil, err
	}
	ov := config.Overrides{ConfigFile: o.config}
	if o.workersSet {
		w := o.workers
		ov.Workers = &w
	}
	if o.agentSet {
		a := strings.TrimSpace(o.agent)
		ov.Agent = &a
	}
	if o.planBy != "" {
		ov.PlanApproval = &o.planBy
	}
	return config.Load(root, config.UserDir(os.Getenv), ov)
}

// newApp wires a run. A task with a description is a new task: its
// task.json is written (description, context, constraints, submitted_by as
// given; project, workers and agent from the options and config) under the
// workspace lock. A zero task resumes the unfinished task (--resume).
func newApp(o options, task workspace.Task, stdout io.Writer) (*app, error) {
	project, err := o.projectDir()
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("project %s is not a directory", project)
	}
	root, err := o.workspaceRoot()
	if err != nil {
		return nil, err
	}
	cfg, _, err := loadConfig(o)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var notes []workspace.EventRecord
	if task.Description != "" && !o.noPreflight {
		// Before anything is created: a run whose agents cannot start
		// stops here with the reason and the fix.
		rs, err := preflightCheck(cfg)
		if err != nil {
			return nil, err
		}
		notes = preflightNotes(rs)
	}
	a := &app{opts: o, cfg: cfg, project: project, root: root, out: newPrinter(stdout, o.json),
		terminal: make(chan struct{})}
	ok := false
	created := "" // the directory of a new task, removed if wiring fails
	defer func() {
		if !ok {
			if created != "" {
				// Nothing ran: leave no task behind that --resume would
				// pick up (the workspace lock is still held).
				_ = os.RemoveAll(created)
			}
			a.close()
		}
	}()

	lock, stale, err := workspace.AcquireWorkspaceLock(root)
	if err != nil {
		if errors.Is(err, workspace.ErrLocked) {
			return nil, fmt.Errorf("another hivemind is running on this workspace: %w", err)
		}
		return nil, err
	}
	a.lock = lock
	if a.ws, err = workspace.Open(root); err != nil {
		return nil, err
	}
	// The shared context (decisions, constraints, glossary) outlives
	// tasks; the runner merges agents' inbox entries into it.
	ctxStore, err := workspace.OpenContext(root)
	if err != nil {
		return nil, fmt.Errorf("shared context: %w", err)
	}

	if stale {
		notes = append(notes, workspace.EventRecord{Type: "lock_taken_over",
			Details: map[string]any{"lock": lock.Path()}})
	}
	var st engine.State
	var history []workspace.EventRecord
	switch {
	case task.Description != "" && o.resume:
		return nil, fmt.Errorf("%w: give a task or --resume, not both", errUsage)
	case task.Description != "":
		task.Project, task.Workers, task.Agent = project, cfg.Workers, cfg.Agent
		task.AgentArgs = o.simArgs
		if cfg.PlanApproval != config.PlanApprovalReviewer {
			task.PlanApproval = cfg.PlanApproval // the default is not written
		}
		if task.SubmittedBy == "" {
			task.SubmittedBy = "cli"
		}
		if a.td, err = a.ws.CreateTask(task); err != nil {
			return nil, err
		}
		created = a.td.Dir()
		if task, err = a.td.Task(); err != nil {
			return nil, err
		}
		a.first = engine.TaskSubmitted{Task: task, TaskDir: a.td.Dir()}
	default:
		id, found, err := a.ws.Unfinished()
		if err != nil {
			return nil, err
		}
		if !found {
			if o.resume {
				return nil, fmt.Errorf("nothing to resume: no unfinished task in %s", root)
			}
			return nil, fmt.Errorf("%w: no task given and no unfinished task to resume", errUsage)
		}
		if a.td, err = a.ws.OpenTask(id); err != nil {
			return nil, err
		}
		t, err := a.td.Task()
		if err != nil {
			return nil, err
		}
		// The task keeps the agents it started with; --agent overrides.
		var changed []workspace.EventRecord
		cfg, changed = resumeAgents(o, cfg, t)
		if len(o.simArgs) == 0 {
			o.simArgs = t.AgentArgs // the demo's pace
		}
		notes = append(notes, changed...)
		if !o.noPreflight {
			rs, err := preflightCheck(cfg)
			if err != nil {
				return nil, err
			}
			notes = append(notes, preflightNotes(rs)...)
		}
		a.cfg = cfg
		a.resumed = true
		a.first = engine.Resumed{}
		recs, _, err := workspace.ReadEvents(filepath.Join(a.td.Dir(), workspace.EventsFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			notes = append(notes, workspace.EventRecord{Type: "events_unreadable",
				Details: map[string]any{"error": err.Error()}})
		}
		history = recs
	}

	store, loaded, res, err := workspace.OpenStateStore(a.td)
	if err != nil {
		return nil, err
	}
	a.store = store
	if res.Restored {
		notes = append(notes, workspace.EventRecord{Type: "state_restored",
			Details: map[string]any{"from": res.From, "problem": res.Problem}})
	}
	if res.RemovedTemps > 0 {
		notes = append(notes, workspace.EventRecord{Type: "temp_files_removed",
			Details: map[string]any{"count": res.RemovedTemps}})
	}
	if a.log, err = workspace.OpenEventLog(a.td); err != nil {
		return nil, err
	}
	var gitNotes []workspace.EventRecord
	a.git, gitNotes = a.setupGit(history)
	notes = append(notes, gitNotes...)
	if a.resumed {
		var rebuilt []workspace.EventRecord
		if st, a.first, rebuilt, err = a.recoverState(loaded, res, history); err != nil {
			return nil, err
		}
		a.resumed = st.TaskID != ""
		notes = append(notes, rebuilt...)
	}

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	factory := &agentFactory{cfg: cfg, profile: cfg.Agent, project: project, td: a.td, self: self,
		seed: 1, simArgs: append(append([]string(nil), o.simArgs...), simArgsFromEnv()...), git: a.git}
	br := &bridge{td: a.td}
	a.agents, err = ptyagent.NewManager(ptyagent.ManagerConfig{
		Factory:     factory.spec,
		OnEvent:     br.onEvent,
		OnHeartbeat: br.onHeartbeat,
		HangTimeout: cfg.HangTimeout(),
		// What a run killed with SIGKILL leaves is reaped by the next.
		RecordDir: filepath.Join(a.td.Dir(), workspace.ProcsDir),
	})
	if err != nil {
		return nil, err
	}
	reaped, reapErr := a.agents.Reaped()
	// What runs of the workspace's other tasks killed with SIGKILL left
	// (the workspace lock says no other Hivemind runs here).
	others, _ := filepath.Glob(filepath.Join(root, workspace.TasksDir, "*", workspace.ProcsDir))
	for _, d := range others {
		if d != filepath.Join(a.td.Dir(), workspace.ProcsDir) {
			n, err := ptyagent.ReapRecorded(d)
			reaped, reapErr = reaped+n, errors.Join(reapErr, err)
		}
	}
	if reaped > 0 || reapErr != nil {
		d := map[string]any{"processes": reaped, "tracking": ptyagent.Tracking()}
		if reapErr != nil {
			d["error"] = reapErr.Error()
		}
		notes = append(notes, workspace.EventRecord{Type: "leftovers_reaped", Details: d})
	}
	a.runner = engine.NewRunner(engine.RunnerConfig{
		Machine:     a.machine(),
		TaskDir:     a.taskFiles(),
		Git:         a.gitWork(),
		Store:       a.store,
		Log:         a.log,
		Agents:      a.agents,
		Context:     ctxStore,
		OnSnapshot:  a.snapshot,
		OnNotify:    a.out.notice,
		OnRecord:    a.out.record,
		State:       st,
		History:     history,
		QuietPeriod: cfg.QuietPeriod(),
	})
	br.runner = a.runner
	if a.git != nil {
		a.git.log = a.runner.Log
		a.git.watchCounts(a.workerIDs, a.runner.Republish)
	}
	for _, n := range notes {
		a.runner.Log(n.Type, n.Agent, n.Details)
	}
	ok = true
	return a, nil
}

// simArgsFromEnv returns extra sim-agent flags from HIVEMIND_SIM_ARGS
// (space separated), used by tests and demos to change pace or scenario.
func simArgsFromEnv() []string {
	v := os.Getenv("HIVEMIND_SIM_ARGS")
	if v == "" {
		return nil
	}
	return splitFields(v)
}

// snapshot is the runner's OnSnapshot.
func (a *app) snapshot(s engine.Snapshot) {
	s = a.git.decorate(s)
	if s.State.State.Terminal() && s.Stepped {
		a.terminalOnce.Do(func() {
			a.finalMu.Lock()
			a.final = s.State.State
			a.finalMu.Unlock()
			close(a.terminal)
		})
	}
	if a.onSnapshot != nil {
		a.onSnapshot(s)
	}
}

// finalPhase is the first terminal phase reached ("" if none).
func (a *app) finalPhase() workspace.Phase {
	a.finalMu.Lock()
	defer a.finalMu.Unlock()
	return a.final
}

// exitCode maps the final phase to the CLI contract.
func exitCode(p workspace.Phase) int {
	switch p {
	case workspace.PhaseComplete:
		return exitOK
	case workspace.PhaseNeedsHuman:
		return exitNeedsHuman
	default:
		return exitError
	}
}

// shutdown stops every agent (graceful, escalating to SIGKILL), lets the
// runner record their exits, then stops the runner.
func (a *app) shutdown(cancelRunner context.CancelFunc, runDone <-chan error) {
	if a.agents != nil {
		_ = a.agents.Close()
	}
	// Let the runner record the exits already queued before it stops.
	a.runner.Log("hivemind_stopped", "", map[string]any{"pid": os.Getpid()})
	select {
	case <-a.runner.Barrier():
	case <-time.After(5 * time.Second):
	}
	cancelRunner()
	<-runDone
	a.finishGit()
}

// close releases everything newApp acquired (idempotent).
func (a *app) close() {
	a.git.stop()
	if a.agents != nil {
		_ = a.agents.Close()
	}
	if a.log != nil {
		_ = a.log.Close()
		a.log = nil
	}
	if a.store != nil {
		_ = a.store.Close()
		a.store = nil
	}
	if a.lock != nil {
		_ = a.lock.Release()
		a.lock = nil
	}
}
