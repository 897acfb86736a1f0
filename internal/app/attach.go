package app

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// replyTimeout bounds a request to the server (a diff, a plan decision).
const replyTimeout = 30 * time.Second

// serverLink is a client's connection: the mirrors of the panes it shows, the
// requests waiting for their replies. It implements tui.Terminals,
// tui.PaneViewer, tui.Engine and tui.PlanDecider over the socket.
type serverLink struct {
	c        *proto.Conn
	readOnly bool
	changed  chan struct{}

	mu      sync.Mutex
	terms   map[vocab.AgentID]*remoteTerm
	showing tui.Shown
	laidOut bool // the UI said what it shows (before: every pane is asked for)
	pending map[uint64]chan proto.Msg
	nextID  uint64
	stopped atomic.Bool // the user stopped the team (q, s)
	viewSeq uint64      // views built (under mu)

	// sendMu orders the views sent: one built before another that was
	// sent already is dropped (sendView).
	sendMu   sync.Mutex
	viewSent uint64
}

func newServerLink(c *proto.Conn, readOnly bool) *serverLink {
	return &serverLink{c: c, readOnly: readOnly, changed: make(chan struct{}, 1),
		terms: map[vocab.AgentID]*remoteTerm{}, pending: map[uint64]chan proto.Msg{}}
}

func (r *serverLink) send(m proto.Msg) { _ = r.c.Send(m) }

func (r *serverLink) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Terminal implements tui.Terminals.
func (r *serverLink) Terminal(id vocab.AgentID) (tui.Terminal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.terms[id]
	if !ok {
		return nil, false
	}
	return t, true
}

// Changed implements tui.Terminals.
func (r *serverLink) Changed() <-chan struct{} { return r.changed }

// Showing implements tui.PaneViewer: the server streams these panes only,
// the ones the UI draws slowly at its rate.
func (r *serverLink) Showing(s tui.Shown) {
	r.mu.Lock()
	r.showing, r.laidOut = s, true
	r.mu.Unlock()
	r.sendView()
}

func (r *serverLink) sendView() {
	r.mu.Lock()
	showing := r.showing.Panes
	if !r.laidOut {
		// Until the UI has laid out its panes, every pane: their rows
		// arrive while the UI starts, in time for its first frame.
		showing = slices.Collect(maps.Keys(r.terms))
		vocab.SortAgents(showing)
	}
	view := make([]proto.Want, 0, len(showing))
	for _, id := range showing {
		w := proto.Want{Agent: id}
		if r.laidOut && id != r.showing.Fast {
			w.FPS = r.showing.SlowFPS
		}
		if t := r.terms[id]; t != nil {
			t.mu.Lock()
			w.Scroll = t.scroll
			t.mu.Unlock()
		}
		view = append(view, w)
	}
	r.viewSeq++
	seq := r.viewSeq
	r.mu.Unlock()
	if testViewBuilt != nil {
		testViewBuilt(view)
	}
	// Callers race (the receiving goroutine on a new pane list, the UI on
	// a new layout or scroll): the server keeps the last view it gets, so
	// that must be the last one built, from the newest state.
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	if seq < r.viewSent {
		return
	}
	r.viewSent = seq
	r.send(proto.Msg{T: proto.TView, View: view})
}

// testViewBuilt, when set by a test, runs between building a view and
// sending it.
var testViewBuilt func([]proto.Want)

// panes takes the server's list of agents with a terminal: a new
// generation is a new Terminal value (the TUI notices a restart by it).
func (r *serverLink) panes(ps []proto.PaneID) {
	r.mu.Lock()
	next := map[vocab.AgentID]*remoteTerm{}
	for _, p := range ps {
		if t := r.terms[p.Agent]; t != nil && t.gen == p.Gen {
			next[p.Agent] = t
			continue
		}
		next[p.Agent] = &remoteTerm{r: r, id: p.Agent, gen: p.Gen}
	}
	r.terms = next
	r.mu.Unlock()
	r.sendView()
	r.signal()
}

// pane applies a screen update.
func (r *serverLink) pane(p proto.Pane) {
	r.mu.Lock()
	t := r.terms[p.Agent]
	r.mu.Unlock()
	if t == nil || t.gen != p.Gen {
		return
	}
	t.mu.Lock()
	t.m.Apply(p)
	t.ver++
	t.mu.Unlock()
	r.signal()
}

// receive takes one message of the server: screens into the mirrors,
// state and notices to the UI (ui: program.Send). It reports a bye.
func (r *serverLink) receive(m proto.Msg, ui func(tea.Msg)) bool {
	switch m.T {
	case proto.TPanes:
		r.panes(m.Panes)
	case proto.TPane:
		if m.Pane != nil {
			r.pane(*m.Pane)
		}
	case proto.TSnapshot:
		if s := m.Snapshot; s != nil {
			ui(tui.SnapshotMsg{State: s.State, Events: s.Events, Health: s.Health, Knowledge: s.Knowledge})
		}
	case proto.TNotice:
		ui(tui.NotifyMsg{Level: m.Level, Message: m.Text})
	case proto.TCmd:
		r.reply(m)
	case proto.TBye:
		return true
	}
	return false
}

// request sends m and waits for its reply.
func (r *serverLink) request(m proto.Msg) (proto.Msg, error) {
	r.mu.Lock()
	r.nextID++
	m.ID = r.nextID
	ch := make(chan proto.Msg, 1)
	r.pending[m.ID] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, m.ID)
		r.mu.Unlock()
	}()
	if err := r.c.Send(m); err != nil {
		return proto.Msg{}, err
	}
	select {
	case rep := <-ch:
		if rep.Err != "" {
			return rep, errors.New(rep.Err)
		}
		return rep, nil
	case <-time.After(replyTimeout):
		return proto.Msg{}, fmt.Errorf("the server did not answer in %s", replyTimeout)
	}
}

func (r *serverLink) reply(m proto.Msg) {
	r.mu.Lock()
	ch := r.pending[m.ID]
	r.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

func (r *serverLink) cmd(c string) { r.send(proto.Msg{T: proto.TCmd, Cmd: c}) }

// The tui.Engine commands.
func (r *serverLink) Pause()   { r.cmd(proto.CmdPause) }
func (r *serverLink) Resume()  { r.cmd(proto.CmdResume) }
func (r *serverLink) Cancel()  { r.cmd(proto.CmdCancel) }
func (r *serverLink) Retry()   { r.cmd(proto.CmdRetry) }
func (r *serverLink) Abandon() { r.cmd(proto.CmdAbandon) }
func (r *serverLink) PauseAgent(id vocab.AgentID) {
	r.send(proto.Msg{T: proto.TCmd, Cmd: proto.CmdPauseAgent, Agent: id})
}

// DecidePlan implements tui.PlanDecider.
func (r *serverLink) DecidePlan(approve bool, feedback string) error {
	_, err := r.request(proto.Msg{T: proto.TCmd, Cmd: proto.CmdPlan, Approve: approve, Feedback: feedback})
	return err
}

func (r *serverLink) diff(agentID string) (string, error) {
	rep, err := r.request(proto.Msg{T: proto.TCmd, Cmd: proto.CmdDiff, Agent: vocab.AgentID(agentID)})
	return rep.Text, err
}

func (r *serverLink) stop() {
	r.stopped.Store(true)
	r.cmd(proto.CmdStop)
}

// remoteTerm is one agent's screen as the server last sent it.
type remoteTerm struct {
	r   *serverLink
	id  vocab.AgentID
	gen uint64

	mu     sync.Mutex
	m      proto.Mirror
	ver    uint64
	scroll int // the scroll the UI asked for last
}

// Lines implements tui.Terminal: the rows last received; a new scroll
// position is asked of the server (its rows follow).
func (t *remoteTerm) Lines(scroll int) []string {
	t.mu.Lock()
	rows := append([]string(nil), t.m.Rows...)
	ask := scroll != t.scroll
	t.scroll = scroll
	t.mu.Unlock()
	if ask {
		t.r.sendView()
	}
	return rows
}

func (t *remoteTerm) Version() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ver
}

func (t *remoteTerm) Resize(cols, rows int) error {
	t.r.send(proto.Msg{T: proto.TResize, Agent: t.id, Cols: cols, Rows: rows})
	return nil
}

func (t *remoteTerm) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := min(len(p), maxInputBytes)
		if err := t.r.c.Send(proto.Msg{T: proto.TInput, Agent: t.id, Data: p[:n]}); err != nil {
			return 0, err
		}
		p = p[n:]
	}
	return total, nil
}

func (t *remoteTerm) Modes() screen.Modes {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m.Modes
}

func (t *remoteTerm) ScrollbackLen() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m.Back
}

// AttachOptions say how to attach.
type AttachOptions struct {
	Binary   string // this hivemind's version, for the hello
	ReadOnly bool   // watch only: the server refuses keys and commands
	// Project is the project (a directory, or the name of a project a
	// server runs, as hivemind ls lists it); "" is o's.
	Project string
}

// findServer finds the socket of the project's server: the project's
// workspace, else a running server whose project has that name.
func findServer(o Options, project string) (string, error) {
	if project != "" {
		if fi, err := os.Stat(project); err == nil && fi.IsDir() {
			o.Project, o.Workspace = project, ""
		} else {
			es, _ := registered()
			var found []registryEntry
			for _, e := range es {
				if filepath.Base(e.Project) == project || e.Project == project {
					found = append(found, e)
				}
			}
			switch len(found) {
			case 0:
				return "", fmt.Errorf("%w: %s is not a directory nor the project of a running server (hivemind ls lists them)", errNoServer, project)
			case 1:
				return found[0].Sock, nil
			default:
				return "", fmt.Errorf("%d running servers have a project named %s: give its directory", len(found), project)
			}
		}
	}
	root, err := o.WorkspaceRoot()
	if err != nil {
		return "", err
	}
	p, err := pathsOf(root)
	return p.sock, err
}

// Attach runs the full-screen UI as a client of the project's server until
// the user detaches (D, q; closing the terminal, SIGHUP and SIGTERM detach
// too) or the server stops; the team keeps working after a detach.
func Attach(o Options, ao AttachOptions, stderr io.Writer) int {
	sock, err := findServer(o, ao.Project)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return ExitError
	}
	c, info, err := dialServer(sock, proto.KindUI, ao.Binary, ao.ReadOnly)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		if errors.Is(err, errNoServer) {
			fmt.Fprintln(stderr, `hivemind: hivemind --server "task" starts one; hivemind --server --resume resumes the unfinished task in one; hivemind ls lists the running ones`)
		}
		return ExitError
	}
	defer c.Close()
	if !IsTerminal() {
		fmt.Fprintln(stderr, "hivemind: attach needs a terminal (stdin and stdout); hivemind wait follows a server without one")
		return ExitUsage
	}
	r := newServerLink(c, ao.ReadOnly)
	opts := tui.Options{Engine: r, Terminals: r, FPS: max(info.FPS, 1), Title: info.Title,
		Team: info.Team, WorkerTeam: info.WorkerTeam, Branch: info.Branch, Remote: &tui.Remote{Stop: r.stop}}
	if ao.ReadOnly {
		opts.Title = "[read-only] " + info.Title
	}
	if info.HasDiff {
		opts.Diff = r.diff
	}
	if path := os.Getenv(frameLogEnv); path != "" { // the product benchmark's View times
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			opts.FrameLog = f
		}
	}
	// One owner of signals: bubbletea's own handler can block sending
	// its quit while the program shuts down (a SIGTERM then hangs).
	// The colour profile is the one lipgloss detected for stdout at
	// start: detecting it again runs `tmux info` once more inside tmux
	// (10–25 ms of an attach on a busy machine).
	p := tui.NewProgram(opts, tea.WithoutSignalHandler(), tea.WithColorProfile(lipgloss.Writer.Profile))

	var bye atomic.Pointer[proto.Msg]
	go func() {
		for {
			m, err := c.Recv()
			if err != nil {
				p.Quit()
				return
			}
			if r.receive(m, p.Send) {
				bye.Store(&m)
				p.Quit()
				return
			}
		}
	}()

	// Closing the terminal (SIGHUP), SIGTERM or SIGINT detaches: the team
	// stays.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt)
	defer signal.Stop(sigs)
	defer quitOn(sigs, p)()

	_, err = p.Run()
	_ = c.Close()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintln(stderr, "hivemind:", err)
		return ExitError
	}
	switch b := bye.Load(); {
	case b != nil:
		fmt.Fprintf(stderr, "hivemind: the server stopped: %s\n", b.Text)
		if b.Info != nil && vocab.Phase(b.Info.Phase).Terminal() {
			return exitCode(vocab.Phase(b.Info.Phase))
		}
	case r.stopped.Load():
		fmt.Fprintf(stderr, "hivemind: the team of task %s is stopping; resume it with: hivemind --resume --project %s\n", info.TaskID, info.Project)
	default:
		fmt.Fprintf(stderr, "hivemind: detached from task %s; the team keeps working (hivemind attach --project %s comes back, hivemind wait waits for it)\n", info.TaskID, info.Project)
	}
	return ExitOK
}
