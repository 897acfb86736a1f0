package tui

import (
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Engine receives the user's workflow commands. Each method must return
// quickly (it only hands a key event to the engine runner); the TUI calls
// them on its own goroutine so that their order is kept.
type Engine interface {
	Pause()
	Resume()
	Cancel()
	Retry()
	Abandon()
	// PauseAgent pauses one agent, or resumes it when it is paused.
	PauseAgent(id vocab.AgentID)
}

// Terminal is one agent's live screen (implemented by *ptyagent.Session).
// Implementations must be comparable (a pointer), because the TUI notices a
// restarted agent by a new Terminal value.
type Terminal interface {
	// Lines renders the visible rows, scrolled scroll lines back into the
	// scrollback; every row is exactly the terminal's columns wide.
	Lines(scroll int) []string
	// Version changes whenever the screen content changed.
	Version() uint64
	// Resize sets the terminal (PTY and emulator) size. It is called on the
	// UI goroutine and must not block for long.
	Resize(cols, rows int) error
	// Write sends raw input bytes to the agent.
	Write(p []byte) (int, error)
	// Modes reports the private modes the application set.
	Modes() screen.Modes
	// ScrollbackLen is the number of lines held above the screen.
	ScrollbackLen() int
}

// Terminals looks up agent terminals and signals screen changes.
type Terminals interface {
	// Terminal returns the live terminal of an agent, if it has one.
	Terminal(agentID vocab.AgentID) (Terminal, bool)
	// Changed delivers a value (coalesced: a buffered channel of size 1 is
	// enough) whenever any terminal's screen changed.
	Changed() <-chan struct{}
}

// TerminalsFunc adapts a lookup function and a change channel to Terminals,
// e.g. for *ptyagent.Manager:
//
//	tui.TerminalsFunc(func(id vocab.AgentID) (tui.Terminal, bool) {
//		s, ok := mgr.Session(id)
//		if !ok || s == nil {
//			return nil, false // never a typed nil inside the interface
//		}
//		return s, true
//	}, mgr.Changed())
func TerminalsFunc(lookup func(agentID vocab.AgentID) (Terminal, bool), changed <-chan struct{}) Terminals {
	return funcTerminals{lookup: lookup, changed: changed}
}

type funcTerminals struct {
	lookup  func(vocab.AgentID) (Terminal, bool)
	changed <-chan struct{}
}

func (f funcTerminals) Terminal(id vocab.AgentID) (Terminal, bool) { return f.lookup(id) }
func (f funcTerminals) Changed() <-chan struct{}                   { return f.changed }

// Options configure a Model.
type Options struct {
	Engine    Engine    // may be nil (keys then only change the view)
	Terminals Terminals // may be nil (panes show placeholders)
	// FPS caps how often agent screen changes are drawn: config's fps,
	// at least 1 (New panics otherwise; internal/config owns the default).
	FPS int
	// UnfocusedFPS caps how often the panes other than the attached one
	// (the pane keystrokes go to, which follows FPS) take new screen
	// content; default 10. They share one slot: however many of them
	// stream, they cost UnfocusedFPS frames a second. Every frame costs
	// bubbletea's renderer a parse and diff of the whole screen, so this is
	// what most of the TUI's CPU scales with while agents stream.
	UnfocusedFPS int
	// Title is shown in the header (e.g. the task text).
	Title string
	// Team is the agent of each role (role → agent, e.g. "codex"), shown
	// in the pane titles; nil shows none.
	Team map[vocab.Role]string
	// WorkerTeam are the workers that run another agent than their role's
	// (worker id → agent), shown in their pane titles instead.
	WorkerTeam map[vocab.AgentID]string
	// Branch is the task's git branch, named in the header and summary
	// ("" when the project is not a git repository).
	Branch string
	// Diff returns one worker's changes (a unified diff) for the diff view
	// (key d). It may block (it runs git); the TUI calls it only from a
	// tea.Cmd. nil: the diff view says the run has none.
	Diff func(agentID string) (string, error)
	// Now is the clock (default time.Now); tests set a fixed one.
	Now func() time.Time
	// EventLines is the height of the event-log strip (default 8).
	EventLines int

	// Launcher, when set, turns on the front door (start.go): a start
	// screen to choose the project and type a task, and a summary when a
	// task ends. Without it the model is the run view of one task.
	Launcher Launcher
	// Project is the start screen's project directory.
	Project string
	// Agents are the agents the start screen offers for each role, and
	// StartTeam the agent each role starts with there (role → agent: the
	// configured team; a role it does not name starts on the first
	// agent). Workers is the default worker count. Without them the start
	// screen lets the launcher decide (its config and flags).
	Agents    []AgentChoice
	StartTeam map[vocab.Role]string
	Workers   int

	// StartWorkers are the configured workers of their own agent (worker
	// id → agent, [agents.<worker>]): the Team row starts with one slot
	// per worker when there are any.
	StartWorkers map[vocab.AgentID]string
	// HumanPlanApproval is the start screen's initial plan approval (the
	// config's plan_approval is "human"); p on the Team row switches it.
	HumanPlanApproval bool
	// Session is a task already running when the program starts (it
	// replaces Engine, Terminals and Title); with a Launcher, the user can
	// go on to a new task when it ends.
	Session *Session
	// Remote, when set, makes the model a client of a Hivemind server
	// (remote.go): q asks detach or stop, D detaches.
	Remote *Remote
	// FrameLog, when set, receives one line per View with its duration
	// (for the product benchmark).
	FrameLog io.Writer
}

type confirmKind int

const (
	confirmNone confirmKind = iota
	confirmCancel
	confirmQuit
	confirmAbandon
	confirmDraft // on detach: the prompt holds text the user typed (needs.go)
	confirmLeave // a server's client: detach or stop the team (remote.go)
)

type notice struct {
	level, text string
}

// Model is the root bubbletea model: a router between the screens. The
// front door's (start screen, folder picker, summary) are in fd, the run
// view (the agent panes and the layers over them) is run; screen says
// which has the keys, and Update and View hand each message and the frame
// to it; the front door's requests of the run view go through apply.
// Create it with New.
type Model struct {
	width, height int

	fd     frontDoor // start screen, folder picker and summary (start.go)
	run    runView   // the agent panes and the layers over them (runview.go)
	frames *frameLog // nil unless Options.FrameLog
}

// New returns a Model ready to run in a tea.Program. Feed it engine
// snapshots with program.Send(tui.SnapshotMsg{...}) and notices with
// program.Send(tui.NotifyMsg{...}).
func New(opts Options) Model {
	if opts.FPS < 1 {
		panic(fmt.Sprintf("tui: Options.FPS is %d; pass config's fps (at least 1)", opts.FPS))
	}
	if opts.UnfocusedFPS <= 0 {
		opts.UnfocusedFPS = min(opts.FPS, 10)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EventLines <= 0 {
		opts.EventLines = 8
	}
	opts = sessionOptions(opts)
	m := Model{run: newRunView(opts), fd: newFrontDoor(opts), frames: newFrameLog(opts.FrameLog)}
	m.run.keys.Summary.SetEnabled(m.fd.on)
	return m
}

// Init starts the run view (waiting for screen changes) and the front
// door (reading the project).
func (m Model) Init() tea.Cmd {
	return batch(m.run.Init(), m.fd.Init())
}

// frontCtx is what the front door's Update sees of the Model: the
// screen's size and the run view's live task.
func (m Model) frontCtx() frontCtx {
	r := &m.run
	return frontCtx{w: m.width, h: m.height, st: r.st, haveState: r.haveState,
		title: r.opts.Title, asking: r.confirm != confirmNone}
}

// frontViewCtx is what the front door's View sees besides: the clock and
// the run view's live task, question, spinner and notice.
func (m Model) frontViewCtx() frontViewCtx {
	r := &m.run
	c := frontViewCtx{frontCtx: m.frontCtx(), now: r.now(), branch: r.opts.Branch,
		spin: r.spin.View(), notice: r.notice}
	if c.haveState {
		c.elapsed = r.elapsed()
	}
	if c.asking {
		c.question = r.confirmLine(m.width)
	}
	return c
}

// apply does what the front door asked (a) to the run view, and returns
// the commands of both.
func (m *Model) apply(a frontAsk) tea.Cmd {
	if a.notice != nil {
		m.run.notice = *a.notice
	}
	r := &m.run
	switch a.act {
	case actQuit:
		return batch(a.cmd, r.quit())
	case actQuitLive:
		if r.quitAsks() {
			r.confirm = confirmQuit
			return a.cmd
		}
		return batch(a.cmd, r.quit())
	case actRetry:
		if r.opts.Engine != nil {
			r.opts.Engine.Retry()
		}
	case actAbandon:
		r.confirm = confirmAbandon
	case actBegin:
		return batch(a.cmd, r.begin(m.fd.sess))
	case actEnd:
		r.end()
	case actCover:
		r.cover()
	case actNone:
	}
	return a.cmd
}

// agentOf is the agent pane id (of role) runs, for its title: its own
// (WorkerTeam), else its role's (Team); "" when neither is known.
func (o Options) agentOf(id vocab.AgentID, role vocab.Role) string {
	if a := o.WorkerTeam[id]; a != "" {
		return a
	}
	return o.Team[role]
}
