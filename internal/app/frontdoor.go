package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/vocab"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/workspace"
)

// IsTerminal reports whether stdin and stdout are a terminal (the
// full-screen UI can run).
func IsTerminal() bool {
	return term.IsTerminal(os.Stdout.Fd()) && term.IsTerminal(os.Stdin.Fd())
}

// launcher implements tui.Launcher: the start screen's requests become
// apps wired by New and run by start, the same wiring `hivemind "task"`
// uses. It also owns the runs, so whatever is still running when the UI
// ends is stopped.
type launcher struct {
	o       Options
	project string // the project of the command line (--project or cwd)

	mu   sync.Mutex
	send func(tea.Msg) // program.Send, set before any run starts
	cur  *liveRun      // the run the UI shows, if any
	// notes are the closed runs' end notices for the terminal (a git
	// task's branch and how to merge it), printed when the UI has exited.
	notes []notice
}

// liveRun is one app running under the UI.
type liveRun struct {
	l            *launcher
	a            *App
	stopForward  context.CancelFunc
	cancelRunner context.CancelFunc
	runDone      chan error

	once  sync.Once
	final vocab.Phase // set by close
}

func newLauncher(o Options) (*launcher, error) {
	project, err := o.ProjectDir()
	if err != nil {
		return nil, err
	}
	return &launcher{o: o, project: project}, nil
}

func (l *launcher) post(msg tea.Msg) {
	l.mu.Lock()
	send := l.send
	l.mu.Unlock()
	if send != nil {
		send(msg)
	}
}

// optionsFor returns the command-line options for a run in project: the
// same flags, but --workspace only for the project it was given with.
func (l *launcher) optionsFor(project string) Options {
	o := l.o
	o.Project, o.Resume = project, false
	if project != l.project {
		o.Workspace = ""
	}
	return o
}

// prepare makes the UI session of a wired-up app without starting it.
func (l *launcher) prepare(a *App) (*liveRun, tui.Session) {
	r := &liveRun{l: l, a: a, runDone: make(chan error, 1)}
	terms := tui.TerminalsFunc(func(id vocab.AgentID) (tui.Terminal, bool) {
		s, ok := a.agents.Session(id)
		if !ok || s == nil {
			return nil, false // never a typed nil inside the interface
		}
		return s, true
	}, a.agents.Changed())
	s := tui.Session{TaskID: a.td.ID(), Title: a.title(), Engine: a.runner, Terminals: terms, Close: r.close}
	if a.cfg.Mixed() {
		// Which CLI runs each pane matters when they differ; one CLI for
		// all keeps the titles short.
		s.Team, s.WorkerTeam = a.cfg.Team(), a.cfg.WorkerTeam()
	}
	if a.git != nil {
		// The TUI names the task branch and shows a worker's diff (key d).
		s.Branch, s.Diff = a.git.repo.TaskBranch(), a.git.repo.Diff
	}
	return r, s
}

// start runs a prepared app: notices and snapshots go to the UI, the
// engine runner starts and gets its first event.
func (l *launcher) start(r *liveRun) {
	a := r.a
	// The terminal belongs to the UI: notices go to the UI, records only
	// to events.jsonl (which the UI shows).
	a.out.redirect(io.Discard, func(level, msg string) { l.post(tui.NotifyMsg{Level: level, Message: msg}) })
	a.warnUnpriced()

	// Forward snapshots without ever blocking the engine on the UI: the
	// outcome keeps only the newest pending one.
	ctx, cancel := context.WithCancel(context.Background())
	r.stopForward = cancel
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-a.outcome.latest:
				l.post(snapshotMsg(s))
			}
		}
	}()

	runCtx, cancelRunner := context.WithCancel(context.Background())
	r.cancelRunner = cancelRunner
	go func() { r.runDone <- a.runner.Run(runCtx) }()
	a.runner.Send(a.first)

	l.mu.Lock()
	l.cur = r
	l.mu.Unlock()
}

// close stops the run's agents and engine and releases the workspace. It
// may be called more than once and from several goroutines.
func (r *liveRun) close() error {
	r.l.mu.Lock()
	if r.l.cur == r {
		r.l.cur = nil // the user left it: its outcome is not the exit code
	}
	r.l.mu.Unlock()
	r.once.Do(func() {
		if r.stopForward != nil {
			r.stopForward()
		}
		if r.cancelRunner != nil {
			// The outcome once the runner has handled what was queued
			// before the quit: a cancel confirmed just before q is the
			// task's end, not a task left unfinished.
			r.a.shutdown(r.cancelRunner, r.runDone)
			r.final = finalOf(r.a.runner.Snapshot().State.Phase)
			r.l.mu.Lock()
			r.l.notes = append(r.l.notes, r.a.gitNotes...)
			r.l.mu.Unlock()
		}
		r.a.Close()
	})
	return nil
}

// startCLIs are the CLIs the start screen offers for every role: the
// registered profiles marked Offered. The sim agent is offered only where
// it is configured already (hivemind --agent sim, a config that uses it):
// it is a demo, not a team member.
var startCLIs = profiles.Offered()

// agentChoices are the agents the start screen offers for each role: the
// built-in CLIs, the [profiles], then whatever else the configured team
// runs (sim, a command line). Each is marked when its program is not on
// PATH (the preflight's first check alone: no command runs, so the screen
// opens at once).
func agentChoices(cfg config.Config, env preflight.Env) []tui.AgentChoice {
	var out []tui.AgentChoice
	seen := map[string]bool{}
	names := slices.Concat(startCLIs, cfg.ProfileNames())
	for _, r := range vocab.Roles() {
		names = append(names, cfg.AgentOf(r))
	}
	for _, name := range names {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, tui.AgentChoice{Name: name, Missing: preflight.NotFound(env, preflightAgent(cfg, name, ""))})
	}
	return out
}

// agentFlag is the --agent value that runs the start screen's pick: t.Agent
// for every role but those t.Agents names (without t.Agent, t.Agents names
// every role). It is the agent alone when every role runs it, else the
// role=agent list.
func agentFlag(t vocab.Task) string {
	c := config.Config{Agent: cmp.Or(t.Agent, t.Agents[vocab.RoleLead])}
	return c.WithAgents(config.AgentFlag{PerRole: t.Agents, PerWorker: t.WorkerAgents}).TeamString()
}

// finalOf is p when the task is over or waits on the user, else "".
func finalOf(p vocab.Phase) vocab.Phase {
	if p.Terminal() || p == vocab.PhaseIdle {
		return p
	}
	return ""
}

// Start implements tui.Launcher: it is `hivemind "task"` in project, with
// the task's context and constraints from the form.
func (l *launcher) Start(project string, t vocab.Task) (tui.Session, error) {
	o, t, err := l.startOptions(project, t)
	if err != nil {
		return tui.Session{}, err
	}
	if q := l.checkoutQuestion(o, t); q != nil {
		return tui.Session{}, q
	}
	return l.run(o, t)
}

// checkoutQuestion asks, before anything starts, what a new task does with
// what the user's checkout holds beyond HEAD, unless --dirty said it: its
// uncommitted edits become a commit on the task branch or are left out
// (the task starts from HEAD); with a rebase or merge in progress the task
// can only start from HEAD. nil when there is nothing to ask (clean, not
// git, or the check itself failed: New says why).
func (l *launcher) checkoutQuestion(o Options, t vocab.Task) *tui.StartQuestion {
	if o.Dirty != "" {
		return nil
	}
	d, err := checkoutState(o)
	if err != nil || d.Clean() {
		return nil
	}
	with := func(mode string) func() (tui.Session, error) {
		return func() (tui.Session, error) {
			o := o
			o.Dirty = mode
			return l.run(o, t)
		}
	}
	q := &tui.StartQuestion{Err: fmt.Errorf("your checkout: %s", d), No: "not started (nothing was created)"}
	fromHead := tui.StartAnswer{Key: "h", Label: "start from HEAD without them", Start: with(DirtyIgnore)}
	if d.Operation != "" {
		q.Question = fmt.Sprintf("A %s is in progress: the task can only start from HEAD (finish or abort the %s first to start from its result).", d.Operation, d.Operation)
		fromHead.Label = "start from HEAD anyway (the " + d.Operation + " stays as it is)"
		q.Answers = []tui.StartAnswer{fromHead}
		return q
	}
	q.Question = "A task starts from a commit: these edits are not part of it unless you include them (your checkout stays as it is either way)."
	q.Answers = []tui.StartAnswer{
		{Key: "i", Label: "include them as a commit on the task branch", Start: with(DirtyInclude)},
		fromHead,
	}
	return q
}

// checkoutState is what o's project checkout holds beyond HEAD (the zero
// Dirty when it is not a git repository or git is off).
func checkoutState(o Options) (gitwork.Dirty, error) {
	project, err := o.ProjectDir()
	if err != nil || !gitwork.IsRepo(project) {
		return gitwork.Dirty{}, err
	}
	root, err := o.WorkspaceRoot()
	if err != nil {
		return gitwork.Dirty{}, err
	}
	repo, err := gitwork.Open(project, root, "checkout-check", gitwork.Options{})
	if err != nil {
		return gitwork.Dirty{}, err
	}
	return repo.CheckDirty()
}

// startOptions are the options and task of Start: the start screen's
// choices as the flags that make them (--agent, --workers,
// --plan-approval) over the command line's.
func (l *launcher) startOptions(project string, t vocab.Task) (Options, vocab.Task, error) {
	if strings.TrimSpace(t.Description) == "" {
		// New would take a task without description for --resume.
		return Options{}, t, errors.New("the task has no description")
	}
	if t.SubmittedBy == "" {
		t.SubmittedBy = "tui"
	}
	o := l.optionsFor(project)
	if a := agentFlag(t); a != "" {
		o.Agent, o.AgentSet = a, true
	}
	// New writes the agents and worker count the config ends with.
	t.Agent, t.Agents, t.WorkerAgents = "", nil, nil
	if t.Workers > 0 {
		o.Workers, o.WorkersSet = t.Workers, true
	}
	if t.PlanApproval != "" {
		o.PlanApproval = t.PlanApproval
	}
	return o, t, nil
}

// Resume implements tui.Launcher: it is `hivemind --resume` in project.
func (l *launcher) Resume(project string) (tui.Session, error) {
	o := l.optionsFor(project)
	o.Resume = true
	return l.run(o, vocab.Task{})
}

// run wires a run with New (a new task, or the zero task to resume) and
// starts it under the UI.
func (l *launcher) run(o Options, t vocab.Task) (tui.Session, error) {
	a, err := New(o, t, io.Discard)
	if err != nil {
		return tui.Session{}, startError(err, func() (tui.Session, error) {
			if err := os.Setenv("IS_SANDBOX", "1"); err != nil {
				return tui.Session{}, err
			}
			return l.run(o, t)
		})
	}
	r, s := l.prepare(a)
	l.start(r)
	return s, nil
}

// Scan implements tui.Launcher. It never creates a workspace: a project
// without one simply has no tasks.
func (l *launcher) Scan(project string) (tui.Project, error) {
	p := tui.Project{Dir: project}
	fi, err := os.Stat(project)
	if err != nil {
		return p, err
	}
	if !fi.IsDir() {
		return p, fmt.Errorf("%s is not a directory", project)
	}
	p.Git = gitwork.IsRepo(project)
	p.WriteScopes = WriteScopeStatus("")
	if d, err := checkoutState(l.optionsFor(project)); err == nil {
		p.Checkout = d.String()
	}
	root, err := l.optionsFor(project).WorkspaceRoot()
	if err != nil {
		return p, err
	}
	ws, infos, err := workspace.ReadTasks(root)
	if err != nil || ws == nil {
		return p, err
	}
	if lock, _, err := workspace.AcquireWorkspaceLock(root); err != nil {
		p.LockedBy = err.Error()
	} else {
		_ = lock.Release()
	}
	p.Tasks = pastTasks(infos)
	if id, ok, err := ws.Unfinished(); err == nil && ok {
		for i := range p.Tasks {
			if t := p.Tasks[i]; t.ID == id {
				p.Unfinished = &t
			}
		}
	}
	return p, nil
}

// pastTasks turns a workspace listing into the start screen's, newest first.
func pastTasks(infos []workspace.TaskInfo) []tui.PastTask {
	out := make([]tui.PastTask, 0, len(infos))
	for _, in := range workspace.NewestFirst(infos) {
		pt := tui.PastTask{ID: in.ID, Description: in.Title(), Created: in.Task.CreatedAt, Dir: in.Dir}
		if st := in.State; st != nil {
			pt.Phase, pt.Started, pt.Finished = st.Phase, st.StartedAt, st.EndedAt()
			c := st.Clone()
			if c.TaskDir == "" {
				c.TaskDir = in.Dir
			}
			pt.State = &c
		}
		out = append(out, pt)
	}
	return out
}

// Usage implements tui.Launcher: what the run recorded of each agent's
// usage (AgentUsage, from its CLI's session file, priced); for a task
// without it, Claude Code's transcript (tokens, no price).
func (l *launcher) Usage(st vocab.State) []tui.AgentUsage {
	profile := ""
	if st.TaskDir != "" {
		if b, err := os.ReadFile(filepath.Join(st.TaskDir, vocab.TaskFile)); err == nil {
			var t vocab.Task
			if json.Unmarshal(b, &t) == nil {
				profile = t.Agent
			}
		}
	}
	var out []tui.AgentUsage
	for id := range st.Agents {
		u := tui.AgentUsage{Agent: id}
		if su := st.Agents[id].Usage; su.Tokens() > 0 {
			u.InputTokens, u.OutputTokens = su.Input+su.CacheRead+su.CacheWrite, su.Output
			u.CostUSD, u.CostKnown = su.CostUSD, su.CostKnown
			u.Note = su.Model
			if !su.CostKnown {
				u.Note += ": no price in the pricing table"
			}
		} else if path := ptyagent.ClaudeTranscript(ptyagent.ClaudeSessionID(st.TaskID, string(id))); path != "" {
			in, outTok, err := ptyagent.TranscriptUsage(path)
			if err != nil {
				u.Note = "transcript unreadable: " + err.Error()
			} else {
				u.InputTokens, u.OutputTokens = in, outTok
				u.Note = "Claude Code transcript"
			}
		} else {
			switch profile {
			case "sim":
				u.Note = "the built-in sim agent uses no model"
			case "claude":
				u.Note = "no Claude Code transcript found"
			default:
				u.Note = "the " + profile + " profile reports no usage"
			}
		}
		out = append(out, u)
	}
	return out
}

// closeCurrent stops the run the UI showed last, if it is still open, and
// returns it.
func (l *launcher) closeCurrent() *liveRun {
	l.mu.Lock()
	r := l.cur
	l.cur = nil
	l.mu.Unlock()
	if r != nil {
		_ = r.close()
	}
	return r
}

// printNotes writes the end notices of the runs closed so far on the
// terminal (the UI showed them on its notice line only while it ran).
func (l *launcher) printNotes(w io.Writer) {
	l.mu.Lock()
	notes := l.notes
	l.notes = nil
	l.mu.Unlock()
	for _, n := range notes {
		if n.level == "warn" || n.level == "error" {
			fmt.Fprintf(w, "hivemind: %s\n", n.msg)
			continue
		}
		fmt.Fprintln(w, n.msg)
	}
}

// frameLogEnv names a file that receives the duration of every View (the
// product benchmark, bench/product, reads it).
const frameLogEnv = "HIVEMIND_FRAME_LOG"

// runFrontDoor runs the full-screen UI until the user quits and returns
// the exit code. initial, if not nil, is a task already wired up (a task on
// the command line, or --resume) shown first; without it the UI opens on
// the start screen. When the user leaves a task for the start screen its
// run is closed; whatever runs when the UI ends is stopped here, and stays
// resumable unless it was over.
func runFrontDoor(o Options, initial *App) int {
	// This is the one owner of the signals (tui.NewProgram installs no
	// handler of bubbletea's): SIGINT, SIGTERM and SIGHUP quit the UI,
	// leaving the task resumable. Subscribed before any agent starts, so
	// none of them kills Hivemind with its agents still running; one that
	// comes before the UI runs quits it as soon as it does.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	l, err := newLauncher(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hivemind:", err)
		return ExitError
	}
	// A config that does not load is reported when a run starts; until
	// then the front door draws at the default rate.
	opts := tui.Options{Launcher: l, Project: l.project, FPS: config.Default().FPS}
	var first *liveRun
	if cfg, _, err := o.LoadConfig(); err == nil {
		opts.FPS = cfg.FPS
		opts.Agents, opts.StartTeam, opts.Workers = agentChoices(cfg, o.preflightEnv()), cfg.Team(), cfg.Workers
		opts.StartWorkers = cfg.WorkerTeam()
		opts.HumanPlanApproval = cfg.PlanApproval == "human"
	}
	if initial != nil {
		r, s := l.prepare(initial)
		first, opts.Session, opts.Project = r, &s, initial.project
		opts.FPS = initial.cfg.FPS
	}
	if path := os.Getenv(frameLogEnv); path != "" {
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			opts.FrameLog = f
		}
	}
	p := tui.NewProgram(opts)
	l.mu.Lock()
	l.send = p.Send
	l.mu.Unlock()
	if first != nil {
		l.start(first)
	}

	defer quitOn(sigs, p)()

	_, err = p.Run()
	r := l.closeCurrent()
	// The task branches of the git tasks that ended, and how to merge
	// them, as headless mode prints them.
	l.printNotes(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hivemind:", err)
		return ExitError
	}
	if r == nil {
		return ExitOK
	}
	id, project := r.a.td.ID(), r.a.project
	switch r.final {
	case "":
		fmt.Fprintf(os.Stderr, "hivemind: task %s left unfinished; resume it with: hivemind --resume --project %s\n", id, project)
		return ExitOK
	case vocab.PhaseError, vocab.PhaseNeedsHuman:
		fmt.Fprintf(os.Stderr, "hivemind: task %s: %s (resumable: hivemind --resume --project %s)\n", id, r.final, project)
	case vocab.PhaseIdle:
		fmt.Fprintf(os.Stderr, "hivemind: task %s: abandoned\n", id)
	default:
		fmt.Fprintf(os.Stderr, "hivemind: task %s: %s\n", id, r.final)
	}
	return exitCode(r.final)
}

// RunFrontDoor runs the full-screen UI on its start screen (no task given)
// and returns the exit code.
func RunFrontDoor(o Options) int { return runFrontDoor(o, nil) }

// snapshotMsg is the UI's copy of a runner snapshot: the state, the event
// tail and the shared knowledge (decisions, constraints, glossary) that the
// runner keeps loaded off the UI goroutine.
func snapshotMsg(s engine.Snapshot) tui.SnapshotMsg {
	return tui.SnapshotMsg{State: s.State, Events: s.Events, Knowledge: s.Knowledge}
}

var _ tui.Launcher = (*launcher)(nil)

// title is the header text of the UI: the task's first line.
func (a *App) title() string {
	t, err := a.td.Task()
	if err != nil {
		return a.td.ID()
	}
	return vocab.Headline(t.Description)
}

// startError is a run that could not start, as the start screen shows it:
// a failed preflight lists every failed check on its own line with its
// fix (the screen wraps them, cutting nothing); when the only failure is
// Claude Code refusing to bypass permissions as root, it asks the
// question the command line asks (README, "Preflight"), and yes runs
// sandboxed (IS_SANDBOX=1 for this process and its agents).
func startError(err error, sandboxed func() (tui.Session, error)) error {
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		return err
	}
	var b strings.Builder
	b.WriteString("the agents cannot start; nothing was started or created:")
	onlyRoot := true
	for _, r := range pe.Results {
		if r.Status != preflight.Fail {
			continue
		}
		onlyRoot = onlyRoot && r.Check == preflight.CheckRoot
		fmt.Fprintf(&b, "\n%s: %s", r.Check, r.Msg)
		if r.Fix != "" {
			b.WriteString("\nfix: " + r.Fix)
		}
	}
	full := errors.New(b.String())
	if !onlyRoot || os.Getenv("IS_SANDBOX") == "1" {
		return full
	}
	return &tui.StartQuestion{Err: full,
		Question: "Running as root: Claude Code bypasses permissions as root only in a sandbox. Is this a container or VM you can throw away? Run the agents with IS_SANDBOX=1",
		No:       "not started (IS_SANDBOX=1 hivemind … skips this question)",
		Yes:      sandboxed}
}

// quitOn quits p when a signal arrives on sigs (Hivemind's one owner of
// signals: the program's own handler is off), until the returned func is
// called.
func quitOn(sigs <-chan os.Signal, p interface{ Quit() }) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			p.Quit()
		case <-done:
		}
	}()
	return func() { close(done) }
}
