package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// App is one wired-up run: workspace lock, task, state store, event log,
// agents and the engine runner.
type App struct {
	held
	opts    Options
	cfg     config.Config
	project string
	td      *workspace.TaskDir
	runner  *engine.Runner
	out     *Printer
	outcome *outcome
	resumed bool
	first   engine.Event // TaskSubmitted or Resumed

	// gitNotes are the notices finishGit gave at the end of the task (where
	// the result is, how to look at it and merge it): the full-screen UI
	// prints them on the terminal once it has exited.
	gitNotes []notice
}

// held is what a run acquires and close releases.
type held struct {
	lock   *workspace.Lock
	store  *workspace.StateStore
	log    *workspace.EventLog
	agents *ptyagent.Manager
	// usage follows the agents' session files (usage.go).
	usage *usageReader
	// git is the git integration (git.go); nil when the project is not a
	// git repository.
	git *gitWire
}

// notice is one message of Hivemind itself to the user.
type notice struct{ level, msg string }

// New wires a run. A task with a description is a new task: its task.json
// is written (description, context, constraints, submitted_by as given;
// project, workers and agent from the options and config) under the
// workspace lock. A zero task resumes the unfinished task (--resume).
// stdout receives the headless output.
func New(o Options, task vocab.Task, stdout io.Writer) (*App, error) {
	w, err := resolve(o, task)
	if err != nil {
		return nil, err
	}
	w.stdout = stdout
	for _, step := range []func() error{w.lockWorkspace, w.openTask, w.openState, w.setupGit, w.setupRemote, w.recoverState, w.newAgents} {
		if err := step(); err != nil {
			w.undo()
			return nil, err
		}
	}
	return w.assemble(NewPrinter(stdout, o.JSON)), nil
}

// wiring is a run being wired: each step of New fills in its part, and
// assemble makes the App of them.
type wiring struct {
	held
	o       Options
	task    vocab.Task // the new task, or zero to resume
	project string
	root    string
	cfg     config.Config
	notes   []vocab.EventRecord // records for the event log once it runs
	stdout  io.Writer           // where a long resume says how far it is

	ws       *workspace.Workspace
	shared   *workspace.KnowledgeStore
	td       *workspace.TaskDir
	created  string // the directory of a new task, removed if wiring fails
	resumed  bool
	first    engine.Event
	history  []vocab.EventRecord
	loaded   engine.State
	fresh    bool   // no state.json, no backup: the task never wrote its state
	lost     string // why state.json cannot be used (a blob it references is missing or corrupt)
	st       engine.State
	toRunner *runnerLink
}

// resolve finds the project, the workspace and the config of a run and,
// for a new task, checks that its agents can start. It creates nothing:
// a run whose agents cannot start stops here with the reason and the fix.
func resolve(o Options, task vocab.Task) (*wiring, error) {
	w := &wiring{o: o, task: task, toRunner: &runnerLink{}}
	if o.Dirty != "" && o.Dirty != DirtyInclude && o.Dirty != DirtyIgnore {
		return nil, fmt.Errorf("%w: --dirty %q: want include or ignore", ErrUsage, o.Dirty)
	}
	var err error
	if w.project, err = o.ProjectDir(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(w.project); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("project %s is not a directory", w.project)
	}
	if w.root, err = o.WorkspaceRoot(); err != nil {
		return nil, err
	}
	if w.cfg, _, err = o.LoadConfig(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if task.Description != "" {
		if err := w.preflight(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// unreadableTasks names the task directories whose task.json cannot be
// read and whose state is not finished — tasks --resume cannot take up
// until task.json is repaired — as text to append to "nothing to resume".
func unreadableTasks(ws *workspace.Workspace) string {
	infos, _ := ws.Tasks()
	var b strings.Builder
	for _, in := range infos {
		if in.Task.ID != "" || (in.State != nil && in.State.Over()) {
			continue
		}
		fmt.Fprintf(&b, "; task %s cannot be resumed: %s is unreadable (%s): restore it from a copy, or remove %s",
			in.ID, filepath.Join(in.Dir, vocab.TaskFile), in.Problem, in.Dir)
	}
	return b.String()
}

// preflight checks the agents of w.cfg unless told not to, noting its
// warnings.
func (w *wiring) preflight() error {
	if w.o.NoPreflight {
		return nil
	}
	rs, err := w.o.Preflight(w.cfg)
	if err != nil {
		return err
	}
	w.notes = append(w.notes, preflightNotes(rs)...)
	return nil
}

// lockWorkspace takes the workspace lock and opens the workspace and its
// shared knowledge (decisions, constraints, glossary), which outlives tasks.
func (w *wiring) lockWorkspace() error {
	lock, stale, err := workspace.AcquireWorkspaceLock(w.root)
	if err != nil {
		if errors.Is(err, workspace.ErrLocked) {
			if p, perr := pathsOf(w.root); perr == nil {
				if c, info, derr := dialServer(p.sock, proto.KindInfo, "", false); derr == nil {
					_ = c.Close()
					return fmt.Errorf("a Hivemind server runs task %s (%s) on this workspace: hivemind attach shows its team, hivemind wait waits for it", info.TaskID, info.Phase)
				}
			}
			// The error names the holder and the lock file once.
			return fmt.Errorf("another hivemind is running on this workspace: %w; wait for it to end, or quit it (q in its window)", err)
		}
		return err
	}
	w.lock = lock
	if w.ws, err = workspace.Open(w.root); err != nil {
		return err
	}
	if w.shared, err = workspace.OpenKnowledge(w.root); err != nil {
		return fmt.Errorf("shared knowledge: %w", err)
	}
	if stale {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordLockTakenOver,
			Details: map[string]any{"lock": lock.Path()}})
	}
	return nil
}

// openTask writes the new task, or opens the unfinished one to resume with
// the agents it started with and its event history.
func (w *wiring) openTask() error {
	if w.task.Description != "" && w.o.Resume {
		return fmt.Errorf("%w: give a task or --resume, not both", ErrUsage)
	}
	if t := w.task; t.Description != "" {
		t.Project, t.Workers, t.Agent = w.project, w.cfg.Workers, w.cfg.Agent
		if w.cfg.Mixed() {
			t.Agents, t.WorkerAgents = w.cfg.Team(), w.cfg.WorkerTeam()
		}
		t.AgentArgs = w.o.SimArgs
		if w.cfg.PlanApproval != config.PlanApprovalReviewer {
			t.PlanApproval = w.cfg.PlanApproval // the default is not written
		}
		if t.SubmittedBy == "" {
			t.SubmittedBy = "cli"
		}
		td, err := w.ws.CreateTask(t)
		if err != nil {
			return err
		}
		w.td, w.created = td, td.Dir()
		if t, err = td.Task(); err != nil {
			return err
		}
		w.first = engine.TaskSubmitted{Task: t, TaskDir: td.Dir()}
		return nil
	}
	id, found, err := w.ws.Unfinished()
	if err != nil {
		return err
	}
	if !found {
		if w.o.Resume {
			return fmt.Errorf("nothing to resume: no unfinished task in %s%s", w.root, unreadableTasks(w.ws))
		}
		return fmt.Errorf("%w: no task given and no unfinished task to resume", ErrUsage)
	}
	if w.td, err = w.ws.OpenTask(id); err != nil {
		return err
	}
	t, err := w.td.Task()
	if err != nil {
		return err
	}
	// The task keeps the agents it started with; --agent overrides.
	var changed []vocab.EventRecord
	w.cfg, changed = ResumeAgents(w.o, w.cfg, t)
	if len(w.o.SimArgs) == 0 {
		w.o.SimArgs = t.AgentArgs // the demo's pace
	}
	w.notes = append(w.notes, changed...)
	if err := w.preflight(); err != nil {
		return err
	}
	w.resumed, w.first = true, engine.Resumed{}
	// A large log takes long to read: say how far it is (a line per 64 MB).
	progress := func(done, total int64) {
		if w.stdout != nil {
			fmt.Fprintf(w.stdout, "reading %s: %d of %d MB\n", vocab.EventsFile, done>>20, total>>20)
		}
	}
	recs, _, err := workspace.ReadEventsProgress(filepath.Join(w.td.Dir(), vocab.EventsFile), progress)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordEventsUnreadable,
			Details: map[string]any{"error": err.Error()}})
	}
	w.history = recs
	return nil
}

// openState opens the task's state store (restoring a backup if need be)
// and its event log.
func (w *wiring) openState() error {
	store, loaded, res, err := workspace.OpenStateStore(w.td)
	if err != nil {
		return err
	}
	w.store, w.loaded, w.fresh, w.lost = store, loaded, res.Fresh, res.Lost
	if res.Restored {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordStateRestored,
			Details: map[string]any{"from": res.From, "problem": res.Problem}})
	}
	if res.RemovedTemps > 0 {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordTempFilesRemoved,
			Details: map[string]any{"count": res.RemovedTemps}})
	}
	w.log, err = workspace.OpenEventLog(w.td)
	return err
}

// recoverState decides what a resumed task starts from (recover.go).
func (w *wiring) recoverState() error {
	if !w.resumed {
		return nil
	}
	st, first, rebuilt, err := w.recover()
	if err != nil {
		return err
	}
	w.st, w.first, w.resumed = st, first, st.TaskID != ""
	w.notes = append(w.notes, rebuilt...)
	return nil
}

// newAgents makes the agent manager, and reaps what runs of this
// workspace killed with SIGKILL left.
func (w *wiring) newAgents() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Said at the start of every run (headless line, TUI event strip):
	// whether the kernel confines the agents' writes, never silently.
	scopes := map[string]any{"status": WriteScopeStatus(self)}
	if c := scopeCaveats(w.git); len(c) > 0 && sandbox.Available() {
		scopes["caveats"] = c
	}
	w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordWriteScopes, Details: scopes})
	factory := &agentFactory{cfg: w.cfg, project: w.project, td: w.td, self: self,
		seed: 1, simArgs: append(append([]string(nil), w.o.SimArgs...), simArgsFromEnv()...), git: w.git}
	br := &bridge{runner: w.toRunner, td: w.td, usage: newUsageReader(w.cfg.Prices(), w.toRunner.Send)}
	if w.git != nil && w.git.remote != nil {
		br.usage.local = newRemoteTranscripts(w.git.remote).local
		br.usage.remote = w.git.remote.has
	}
	w.usage = br.usage
	w.agents, err = ptyagent.NewManager(ptyagent.ManagerConfig{
		Factory: factory.spec,
		OnEvent: w.remoteEvents(func(ev ptyagent.Event) {
			br.onEvent(ev)
			br.usage.onEvent(ev)
		}),
		OnHeartbeat: br.onHeartbeat,
		HangTimeout: w.cfg.HangTimeout(),
		// What a run killed with SIGKILL leaves is reaped by the next.
		RecordDir: filepath.Join(w.td.Dir(), vocab.ProcsDir),
	})
	if err != nil {
		return err
	}
	w.guard(self)
	reaped, reapErr := w.agents.Reaped()
	// What runs of the workspace's other tasks killed with SIGKILL left
	// (the workspace lock says no other Hivemind runs here).
	others, _ := filepath.Glob(filepath.Join(w.root, vocab.TasksDir, "*", vocab.ProcsDir))
	for _, d := range others {
		if d != filepath.Join(w.td.Dir(), vocab.ProcsDir) {
			n, err := ptyagent.ReapRecorded(d)
			reaped, reapErr = reaped+n, errors.Join(reapErr, err)
		}
	}
	if reaped > 0 || reapErr != nil {
		d := map[string]any{"processes": reaped, "tracking": ptyagent.Tracking()}
		if reapErr != nil {
			d["error"] = reapErr.Error()
		}
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordLeftoversReaped, Details: d})
	}
	return nil
}

// EnvGuard set to "off" runs without the process guard (Options.Guard):
// what a run killed with SIGKILL leaves is then reaped by the next run.
const EnvGuard = "HIVEMIND_GUARD"

// guard makes this process the subreaper of what its agents leave
// (ptyagent.BecomeSubreaper) and has this run's process records, and the
// orphans it adopts, reaped the moment it dies (ptyagent.Guard). Either
// failing is said in the event log; the next run still reaps the records.
func (w *wiring) guard(self string) {
	if !w.o.Guard || strings.EqualFold(os.Getenv(EnvGuard), "off") {
		return
	}
	var errs []error
	if runtime.GOOS == "linux" {
		errs = append(errs, ptyagent.BecomeSubreaper())
	}
	errs = append(errs, ptyagent.Guard([]string{self, ptyagent.GuardCommand}, filepath.Join(w.td.Dir(), vocab.ProcsDir)))
	if err := errors.Join(errs...); err != nil {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordProcessGuard, Details: map[string]any{"error": err.Error()}})
	}
}

// assemble makes the App: the engine runner over the parts wired, linked
// to the agents and git that report to it, with the notes of the wiring
// as its first records.
func (w *wiring) assemble(out *Printer) *App {
	oc := newOutcome(w.git)
	var gw engine.GitWork
	var files engine.TaskFiles = w.td
	if w.git != nil {
		gw, files = w.git, gitTaskFiles{TaskDir: w.td, g: w.git}
	}
	runner := engine.NewRunner(engine.RunnerConfig{
		Machine:     newMachine(w.cfg, w.git != nil),
		TaskDir:     files,
		Git:         gw,
		Store:       w.store,
		Log:         w.log,
		Agents:      w.runnerAgents(),
		Knowledge:   w.shared,
		OnSnapshot:  oc.put,
		OnNotify:    out.notice,
		OnRecord:    out.Record,
		State:       w.st,
		History:     w.history,
		QuietPeriod: w.cfg.QuietPeriod(),
		Heartbeat:   stateHeartbeat,
	})
	// The agents' events and git's records reach the runner from now on:
	// agents start, and merges run, only once the runner runs.
	w.toRunner.r = runner
	w.usage.resume(w.st) // its reads go to the runner
	if w.git != nil {
		w.git.watchCounts(func() []string { return workerIDs(runner) }, runner.Republish)
		w.git.remote.startSync()
	}
	for _, n := range w.notes {
		runner.Log(n.Type, n.Agent, n.Details)
	}
	return &App{held: w.held, opts: w.o, cfg: w.cfg, project: w.project, td: w.td, runner: runner,
		out: out, outcome: oc, resumed: w.resumed, first: w.first}
}

// stateHeartbeat bounds the elapsed time a run killed without a word
// loses: state.json is at most this old while the clock runs
// (engine.RunnerConfig.Heartbeat), one small write when nothing else
// wrote it.
const stateHeartbeat = 5 * time.Second

// undo releases what a failed wiring acquired. Nothing ran: a new task is
// removed so that --resume never picks it up (the workspace lock is still
// held while it goes).
func (w *wiring) undo() {
	if w.created != "" {
		_ = os.RemoveAll(w.created)
	}
	w.release()
}

// runnerLink lets the parts built before the runner (the agents' event
// bridge, git's records) reach it once it exists.
type runnerLink struct{ r *engine.Runner }

func (l *runnerLink) Send(ev engine.Event) { l.r.Send(ev) }

// Log takes the agent id as the git and remote wiring have it, a string.
func (l *runnerLink) Log(typ vocab.RecordType, agent string, details map[string]any) {
	l.r.Log(typ, vocab.AgentID(agent), details)
}

// simArgsFromEnv returns extra sim-agent flags from HIVEMIND_SIM_ARGS
// (space separated), used by tests and demos to change pace or scenario.
func simArgsFromEnv() []string {
	return strings.Fields(os.Getenv("HIVEMIND_SIM_ARGS"))
}

// outcome watches the runner's snapshots: it notes the first terminal
// phase (a headless run waits for it) and keeps the newest snapshot for
// the UI, never blocking the runner.
type outcome struct {
	git *gitWire
	// terminal is closed when the state first reaches a terminal phase.
	terminal     chan struct{}
	terminalOnce sync.Once
	mu           sync.Mutex
	final        vocab.Phase
	// latest holds the newest snapshot nobody took yet.
	latest chan engine.Snapshot
}

func newOutcome(git *gitWire) *outcome {
	return &outcome{git: git, terminal: make(chan struct{}), latest: make(chan engine.Snapshot, 1)}
}

// put is the runner's OnSnapshot.
func (o *outcome) put(s engine.Snapshot) {
	s = o.git.decorate(s)
	if s.State.Phase.Terminal() && s.Stepped {
		o.terminalOnce.Do(func() {
			o.mu.Lock()
			o.final = s.State.Phase
			o.mu.Unlock()
			close(o.terminal)
		})
	}
	// Keep only the newest pending snapshot.
	select {
	case <-o.latest:
	default:
	}
	select {
	case o.latest <- s:
	default:
	}
}

// finalPhase is the first terminal phase reached ("" if none).
func (o *outcome) finalPhase() vocab.Phase {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.final
}

// exitCode maps the final phase to the CLI contract.
func exitCode(p vocab.Phase) int {
	switch p {
	case vocab.PhaseComplete:
		return ExitOK
	case vocab.PhaseNeedsHuman:
		return ExitNeedsHuman
	default:
		return ExitError
	}
}

// shutdown stops every agent (graceful, escalating to SIGKILL), lets the
// runner record their exits, then stops the runner.
func (a *App) shutdown(cancelRunner context.CancelFunc, runDone <-chan error) {
	if a.agents != nil {
		a.runner.Closing()
		_ = a.agents.Close()
	}
	if a.usage != nil {
		// The agents are gone: what they recorded last is read now.
		a.usage.finish(10 * time.Second)
	}
	// Let the runner record the exits already queued before it stops.
	a.runner.Log(vocab.RecordHivemindStopped, "", map[string]any{"pid": os.Getpid()})
	select {
	case <-a.runner.Barrier():
	case <-time.After(5 * time.Second):
	}
	cancelRunner()
	<-runDone //nolint:errcheck // only waits for Run to end: an error it ended with early was shown where it was first received (headless.go)
	a.finishGit()
	if a.runner.Snapshot().State.Over() {
		removeAgentTempDirs(a.td) // a resumable task keeps them
	}
}

// Close releases everything New acquired (idempotent).
func (a *App) Close() { a.release() }

// release releases what is held (idempotent).
func (h *held) release() {
	h.git.stop()
	if h.usage != nil {
		h.usage.close()
	}
	if h.agents != nil {
		_ = h.agents.Close()
	}
	if h.log != nil {
		_ = h.log.Close()
		h.log = nil
	}
	if h.store != nil {
		_ = h.store.Close()
		h.store = nil
	}
	if h.lock != nil {
		_ = h.lock.Release()
		h.lock = nil
	}
}
