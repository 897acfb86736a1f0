package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/internal/web"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Limits of a server: every client and message is bounded.
const (
	maxClients      = 32
	maxNoticeQueue  = 64
	maxInputBytes   = 1 << 20
	maxPaneCells    = 1000 // cols and rows a client may ask for
	maxDiffReply    = proto.MaxLine / 2
	helloDeadline   = 5 * time.Second
	clientWriteTime = 10 * time.Second // a client that takes longer to read is dropped
)

// server serves one App to clients over the project's socket (proto).
type server struct {
	a      *App
	binary string
	paths  serverPaths
	ln     net.Listener
	start  time.Time
	log    io.Writer // its log (bounded: serverLog)

	mu      sync.Mutex
	clients map[*client]struct{}
	snap    engine.Snapshot
	snapGen uint64
	gens    map[vocab.AgentID]paneGen     // each agent's terminal and its generation
	sized   map[vocab.AgentID]sizedScreen // the size each terminal was given last
	lastGen uint64
	// sizing is held (a one-slot semaphore: a test waits on it) from
	// the fit of a terminal's size to its resize, so that resizes are
	// made in the order their sizes were fitted (fitSize).
	sizing chan struct{}

	changed chan struct{} // the client count or the state changed (lifetime)
	stopReq chan string   // a client asked to stop the team

	// The agents' screens, the frame rate and what the server says of
	// itself: the App's (Serve), a test's otherwise.
	src      paneSource
	fps      int
	describe func() proto.Info

	webMu sync.Mutex
	web   *web.Server // the web client, once started (webserver.go)
}

// paneSource is where the server reads the agents' screens.
type paneSource interface {
	IDs() []vocab.AgentID
	Screen(id vocab.AgentID) (proto.Screen, bool)
	Resize(id vocab.AgentID, cols, rows int) error
}

// managerPanes are the screens of the App's agents.
type managerPanes struct{ a *App }

func (m managerPanes) IDs() []vocab.AgentID { return m.a.agents.IDs() }

func (m managerPanes) Screen(id vocab.AgentID) (proto.Screen, bool) {
	t, ok := m.a.agents.Session(id)
	if !ok || t == nil {
		return nil, false // never a typed nil inside the interface
	}
	return t, true
}

func (m managerPanes) Resize(id vocab.AgentID, cols, rows int) error {
	t, ok := m.a.agents.Session(id)
	if !ok || t == nil {
		return nil
	}
	return t.Resize(cols, rows)
}

func newServer() *server {
	return &server{start: time.Now(), clients: map[*client]struct{}{}, gens: map[vocab.AgentID]paneGen{}, sized: map[vocab.AgentID]sizedScreen{},
		sizing: make(chan struct{}, 1), changed: make(chan struct{}, 1), stopReq: make(chan string, 1)}
}

// paneSize is a terminal size in cells.
type paneSize struct{ cols, rows int }

// sizedScreen is the size a terminal was given (a restarted agent's new
// terminal is sized again).
type sizedScreen struct {
	t    proto.Screen
	size paneSize
}

type paneGen struct {
	term proto.Screen
	gen  uint64
}

// client is one connection after its hello.
type client struct {
	c        *proto.Conn
	kind     string
	readOnly bool
	kick     chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	want    []proto.Want
	notices []proto.Msg
	senders map[vocab.AgentID]*proto.Sender
	// sizes are the pane sizes this client's layout asks for (under the
	// server's mu).
	sizes map[vocab.AgentID]paneSize
}

func (cl *client) poke() {
	select {
	case cl.kick <- struct{}{}:
	default:
	}
}

// Serve runs the App as the project's server until the task is over and
// no client is attached (or it waits on a human with no client for
// server_idle_seconds, or a client stops the team, or SIGTERM/SIGINT); it
// returns the exit code of the task as headless mode would. ready, when
// not nil, is told "ok" once clients can connect (StartServer waits for
// it) and closed.
func (a *App) Serve(binary string, ready io.WriteCloser) int {
	say := func(s string) {
		if ready != nil {
			_, _ = io.WriteString(ready, s)
			_ = ready.Close()
			ready = nil
		}
	}
	defer say("hivemind: the server stopped before it was ready\n")
	root, err := a.opts.WorkspaceRoot()
	if err != nil {
		say("hivemind: " + err.Error() + "\n")
		return ExitError
	}
	s := newServer()
	s.a, s.binary, s.src, s.fps = a, binary, managerPanes{a}, a.cfg.FPS
	s.describe = s.info
	if s.paths, err = pathsOf(root); err != nil {
		say("hivemind: " + err.Error() + "\n")
		return ExitError
	}
	if err := s.listen(); err != nil {
		say("hivemind: " + err.Error() + "\n")
		return ExitError
	}
	defer s.unlisten()
	if a.cfg.Web || a.opts.Web {
		if _, err := s.startWeb(); err != nil {
			say("hivemind: " + err.Error() + "\n")
			return ExitError
		}
	}

	// SIGHUP is not a stop: the server has no terminal (caught and
	// dropped, not ignored: agents would inherit an ignored SIGHUP), nor
	// is SIGPIPE. SIGTERM and SIGINT stop the team (resumable), as q then
	// s does in a client.
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(hups)
	go func() {
		for range hups {
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)

	s.log = &serverLog{path: s.paths.log, max: maxServerLog}
	a.out.redirect(s.log, func(level, msg string) {
		fmt.Fprintf(s.log, "%s %s %s\n", time.Now().Format("15:04:05"), level, msg)
		s.notice(level, msg)
	})
	a.warnUnpriced()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- a.runner.Run(ctx) }()
	s.setSnap(a.runner.Snapshot())
	go s.forward(ctx)
	go s.accept()
	a.runner.Send(a.first)
	say("ok\n")
	fmt.Fprintf(s.log, "server %d: task %s in %s, socket %s\n", os.Getpid(), a.td.ID(), a.project, s.paths.sock)

	why := s.wait(sigs, runDone)
	fmt.Fprintf(s.log, "server %d stopping: %s\n", os.Getpid(), why)
	_ = s.ln.Close() // no new client while the team stops (wait then reads the workspace)
	final := a.outcome.finalPhase()
	a.shutdown(cancel, runDone)
	s.bye(why)
	return exitCode(final)
}

// wait blocks until the server should stop and says why.
func (s *server) wait(sigs <-chan os.Signal, runDone chan error) string {
	idle := time.Duration(s.a.cfg.ServerIdleSeconds) * time.Second
	var timer <-chan time.Time
	for {
		n, st := s.lifetime()
		switch {
		case n == 0 && st.Over():
			return "the task is over and no client is attached"
		case n == 0 && st.Phase.Terminal() && timer == nil:
			timer = time.After(idle)
		case n > 0 || !st.Phase.Terminal():
			timer = nil
		}
		select {
		case <-s.changed:
		case why := <-s.stopReq:
			return why
		case sig := <-sigs:
			return sig.String()
		case err := <-runDone:
			runDone <- err
			return fmt.Sprintf("the engine stopped: %v", err)
		case <-timer:
			return fmt.Sprintf("the task waits on a human (%s) and no client attached for %s", st.Phase, idle)
		}
	}
}

// lifetime is the number of attached UI clients and the newest state.
func (s *server) lifetime() (int, vocab.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for cl := range s.clients {
		if cl.kind == proto.KindUI {
			n++
		}
	}
	return n, s.snap.State
}

func (s *server) signalChanged() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// listen opens the socket (mode 0600; a socket left by a server that
// died is replaced: the workspace lock, held, says none runs) and writes
// the pid file and the registry entry.
func (s *server) listen() error {
	_ = os.Remove(s.paths.sock)
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", s.paths.sock)
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("server socket: %w", err)
	}
	if err := os.Chmod(s.paths.sock, 0o600); err != nil {
		_ = ln.Close()
		return err
	}
	s.ln = ln
	if err := workspace.WriteFileAtomic(s.paths.pid, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	e, _ := json.Marshal(registryEntry{Root: s.paths.root, Project: s.a.project, Sock: s.paths.sock, PID: os.Getpid(), Started: s.start})
	return workspace.WriteFileAtomic(s.paths.entry, e, 0o600)
}

// unlisten removes what listen made.
func (s *server) unlisten() {
	if s.ln != nil {
		_ = s.ln.Close()
	}
	_ = os.Remove(s.paths.sock)
	_ = os.Remove(s.paths.pid)
	_ = os.Remove(s.paths.entry)
	s.stopWeb()
}

// forward takes the runner's snapshots and screen changes to the clients.
func (s *server) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case snap := <-s.a.outcome.latest:
			s.setSnap(snap)
		case <-s.a.agents.Changed():
			s.pokeAll()
		}
	}
}

func (s *server) setSnap(snap engine.Snapshot) {
	s.mu.Lock()
	was := s.snap.State.Phase
	s.snap = snap
	s.snapGen++
	s.mu.Unlock()
	if p := snap.State.Phase; p.Terminal() && p != was && s.a != nil {
		go s.notifyCommand(snap.State)
	}
	s.signalChanged()
	s.pokeAll()
}

func (s *server) pokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl := range s.clients {
		cl.poke()
	}
}

// notifyTimeout bounds notify_command.
const notifyTimeout = 30 * time.Second

// notifyCommand runs notify_command for a task that needs a human or
// ended, with the reason in its environment; what it did is logged.
func (s *server) notifyCommand(st vocab.State) {
	line := s.a.cfg.NotifyCommand
	if line == "" {
		return
	}
	n, _ := s.lifetime()
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = s.a.project
	cmd.Env = append(os.Environ(), "HIVEMIND_PHASE="+string(st.Phase), "HIVEMIND_REASON="+st.EndReason(),
		"HIVEMIND_TASK="+s.a.td.ID(), "HIVEMIND_PROJECT="+s.a.project, "HIVEMIND_CLIENTS="+strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.WaitDelay = time.Second
	d := map[string]any{"phase": string(st.Phase)}
	if err := cmd.Run(); err != nil {
		d["error"] = err.Error()
	}
	s.a.runner.Log(vocab.RecordNotifyCommand, "", d)
}

// notice queues a notice for every UI client (the oldest is dropped when a
// client does not read).
func (s *server) notice(level, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl := range s.clients {
		if cl.kind == proto.KindUI {
			cl.tell(level, msg)
		}
	}
}

func (cl *client) tell(level, msg string) {
	cl.mu.Lock()
	if len(cl.notices) >= maxNoticeQueue {
		cl.notices = cl.notices[1:]
	}
	cl.notices = append(cl.notices, proto.Msg{T: proto.TNotice, Level: level, Text: msg})
	cl.mu.Unlock()
	cl.poke()
}

// bye tells every client the server stops, and hangs up.
func (s *server) bye(why string) {
	s.mu.Lock()
	cls := make([]*client, 0, len(s.clients))
	for cl := range s.clients {
		cls = append(cls, cl)
	}
	s.mu.Unlock()
	for _, cl := range cls {
		_ = cl.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_ = cl.c.Send(proto.Msg{T: proto.TBye, Text: why, Info: ptr(s.describe())})
		_ = cl.c.Close()
	}
}

func ptr[T any](v T) *T { return &v }

// info is what the server says of itself.
func (s *server) info() proto.Info {
	s.mu.Lock()
	st := s.snap.State
	s.mu.Unlock()
	n, _ := s.lifetime()
	a := s.a
	in := proto.Info{Version: proto.Version, Binary: s.binary, PID: os.Getpid(), Project: a.project, Root: s.paths.root, Socket: s.paths.sock,
		TaskID: a.td.ID(), Title: a.title(), Phase: string(st.Phase), Clients: n, Started: s.start, FPS: a.cfg.FPS}
	if st.Phase == "" {
		in.Phase = "starting"
	}
	if st.Phase.Terminal() {
		in.Why = st.EndReason()
	}
	if a.cfg.Mixed() {
		in.Team, in.WorkerTeam = a.cfg.Team(), a.cfg.WorkerTeam()
	}
	if a.git != nil {
		in.Branch, in.HasDiff = a.git.repo.TaskBranch(), true
	}
	in.Web = s.webBase()
	return in
}

func (s *server) accept() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(nc)
	}
}

// handle runs one connection: the hello, then the client's messages until
// it goes (detach: the team keeps working).
func (s *server) handle(nc net.Conn) {
	c := proto.NewConn(nc)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(helloDeadline))
	m, err := c.Recv()
	if err != nil {
		return
	}
	if err := proto.CheckHello(m, s.binary); err != nil {
		_ = c.Send(proto.Msg{T: proto.TError, Err: err.Error()})
		return
	}
	cl := &client{c: c, kind: m.Kind, readOnly: m.ReadOnly || m.Kind != proto.KindUI,
		kick: make(chan struct{}, 1), done: make(chan struct{}), senders: map[vocab.AgentID]*proto.Sender{},
		sizes: map[vocab.AgentID]paneSize{}}
	s.mu.Lock()
	full := len(s.clients) >= maxClients
	if !full && cl.kind != proto.KindInfo {
		s.clients[cl] = struct{}{}
	}
	s.mu.Unlock()
	if full {
		_ = c.Send(proto.Msg{T: proto.TError, Err: fmt.Sprintf("the server has %d clients already (at most %d)", maxClients, maxClients)})
		return
	}
	if err := c.Send(proto.Msg{T: proto.TWelcome, Info: ptr(s.describe())}); err != nil || cl.kind == proto.KindInfo {
		s.drop(cl)
		return
	}
	_ = c.SetDeadline(time.Time{})
	s.signalChanged()
	go s.writer(cl)
	cl.poke()
	for {
		m, err := c.Recv()
		if err != nil {
			break
		}
		s.command(cl, m)
	}
	s.drop(cl)
}

// drop forgets a client that went.
func (s *server) drop(cl *client) {
	s.mu.Lock()
	_, was := s.clients[cl]
	delete(s.clients, cl)
	var ids []vocab.AgentID
	for id := range cl.sizes {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if was {
		close(cl.done)
		s.signalChanged()
	}
	for _, id := range ids {
		s.fitSize(id) // the panes it sized may grow again
	}
}

// resizeTo records the size a client's layout gives a pane and fits the
// terminal to its clients.
func (s *server) resizeTo(cl *client, id vocab.AgentID, cols, rows int) {
	if cols < 1 || rows < 1 || cols > maxPaneCells || rows > maxPaneCells {
		return
	}
	s.mu.Lock()
	cl.sizes[id] = paneSize{cols, rows}
	s.mu.Unlock()
	s.fitSize(id)
}

// fitSize gives an agent's terminal the smallest size its attached
// clients ask for (as tmux does), so that every client sees it whole.
// Clients resize and go concurrently: without sizing, a fit made first
// but resized last would leave the terminal at a size no client asks
// for, and later fits, finding that size recorded, would not correct it.
func (s *server) fitSize(id vocab.AgentID) {
	s.sizing <- struct{}{}
	defer func() { <-s.sizing }()
	s.mu.Lock()
	var fit paneSize
	for c := range s.clients {
		if z, ok := c.sizes[id]; ok {
			if fit.cols == 0 || z.cols < fit.cols {
				fit.cols = z.cols
			}
			if fit.rows == 0 || z.rows < fit.rows {
				fit.rows = z.rows
			}
		}
	}
	t, _ := s.src.Screen(id)
	now := sizedScreen{t: t, size: fit}
	same := fit == paneSize{} || t == nil || s.sized[id] == now
	if !same {
		s.sized[id] = now
	}
	s.mu.Unlock()
	if !same {
		_ = s.src.Resize(id, fit.cols, fit.rows)
	}
}

// command carries out one client message.
func (s *server) command(cl *client, m proto.Msg) {
	switch m.T {
	case proto.TView:
		cl.mu.Lock()
		cl.want = slices.Clone(m.View)
		cl.mu.Unlock()
		cl.poke()
		return
	case proto.TResize:
		// A watcher's size counts too: every client sees the panes whole.
		s.resizeTo(cl, m.Agent, m.Cols, m.Rows)
		return
	case proto.TInput, proto.TCmd:
	default:
		cl.tell("error", fmt.Sprintf("the server does not know the message %q", m.T))
		return
	}
	if cl.readOnly && (m.T != proto.TCmd || m.Cmd != proto.CmdDiff) { // a diff only reads
		cl.tell("warn", "read-only client: keys and commands are not sent (attach without --read-only to act)")
		return
	}
	r := s.a.runner
	switch m.T {
	case proto.TInput:
		if t, ok := s.a.agents.Session(m.Agent); ok && len(m.Data) <= maxInputBytes {
			_, _ = t.Write(m.Data)
		}
	case proto.TCmd:
		switch m.Cmd {
		case proto.CmdPause:
			r.Pause()
		case proto.CmdResume:
			r.Resume()
		case proto.CmdCancel:
			r.Cancel()
		case proto.CmdRetry:
			r.Retry()
		case proto.CmdAbandon:
			r.Abandon()
		case proto.CmdPauseAgent:
			r.PauseAgent(m.Agent)
		case proto.CmdStop:
			select {
			case s.stopReq <- "a client stopped the team":
			default:
			}
		case proto.CmdPlan:
			reply := proto.Msg{T: proto.TCmd, Cmd: proto.CmdReply, ID: m.ID}
			if err := r.DecidePlan(m.Approve, m.Feedback); err != nil {
				reply.Err = err.Error()
			}
			_ = cl.c.Send(reply)
		case proto.CmdDiff:
			go s.diff(cl, m)
		case proto.CmdWeb:
			reply := proto.Msg{T: proto.TCmd, Cmd: proto.CmdReply, ID: m.ID}
			if u, err := s.startWeb(); err != nil {
				reply.Err = err.Error()
			} else {
				reply.Text = u
			}
			_ = cl.c.Send(reply)
		default:
			cl.tell("error", fmt.Sprintf("the server does not know the command %q", m.Cmd))
		}
	}
}

// diffCut ends a diff cut to fit a reply.
const diffCut = "\n… (cut: hivemind diff shows all of it)\n"

// diff answers a worker's diff, or the task's for no agent (it runs git:
// off the reading goroutine).
func (s *server) diff(cl *client, m proto.Msg) {
	reply := proto.Msg{T: proto.TCmd, Cmd: proto.CmdReply, ID: m.ID}
	var d string
	var err error
	switch {
	case s.a.git == nil:
		err = errors.New("the project is not a git repository")
	case m.Agent == "":
		d, err = s.a.git.repo.TaskDiff()
	default:
		d, err = s.a.git.repo.Diff(string(m.Agent))
	}
	if err != nil {
		reply.Err = err.Error()
	} else {
		if len(d) > maxDiffReply {
			d = d[:maxDiffReply] + diffCut
		}
		reply.Text = d
	}
	_ = cl.c.Send(reply)
}

// panes are the agents with a live terminal and its generation.
func (s *server) panes() []proto.PaneID {
	ids := s.src.IDs()
	vocab.SortAgents(ids)
	out := make([]proto.PaneID, 0, len(ids))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		t, ok := s.src.Screen(id)
		if !ok {
			continue
		}
		g := s.gens[id]
		if g.term != t {
			s.lastGen++
			g = paneGen{term: t, gen: s.lastGen}
			s.gens[id] = g
		}
		out = append(out, proto.PaneID{Agent: id, Gen: g.gen})
	}
	return out
}

// writer sends a client what changed: the panes, the state, the notices,
// then the shown panes' rows, at most FPS screen updates a second (a pane
// the client asks slower, at its Want.FPS: held, and sent when due).
func (s *server) writer(cl *client) {
	interval := time.Second / time.Duration(max(s.fps, 1))
	var sentPanes []proto.PaneID
	var snapGen uint64
	var last time.Time
	held := time.NewTimer(time.Hour)
	held.Stop()
	defer held.Stop()
	for {
		select {
		case <-cl.kick:
		case <-held.C:
		case <-cl.done:
			return
		}
		if wait := time.Until(last.Add(interval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-cl.done:
				return
			}
		}
		last = time.Now()
		var msgs []proto.Msg
		panes := s.panes()
		if cl.kind == proto.KindUI && !slices.Equal(panes, sentPanes) {
			sentPanes = panes
			msgs = append(msgs, proto.Msg{T: proto.TPanes, Panes: panes})
		}
		s.mu.Lock()
		if s.snapGen != snapGen {
			snapGen = s.snapGen
			msgs = append(msgs, proto.Msg{T: proto.TSnapshot, Snapshot: &proto.Snapshot{
				State: s.snap.State, Events: s.snap.Events, Knowledge: s.snap.Knowledge}})
		}
		s.mu.Unlock()
		cl.mu.Lock()
		msgs = append(msgs, cl.notices...)
		cl.notices = nil
		want := cl.want
		cl.mu.Unlock()
		hold := time.Hour
		for _, w := range want {
			i := slices.IndexFunc(panes, func(p proto.PaneID) bool { return p.Agent == w.Agent })
			t, ok := s.src.Screen(w.Agent)
			if i < 0 || !ok {
				continue
			}
			snd := cl.senders[w.Agent]
			if snd == nil {
				snd = &proto.Sender{}
				cl.senders[w.Agent] = snd
			}
			if d := snd.Hold(t, panes[i].Gen, max(w.Scroll, 0), w.FPS, last); d > 0 {
				hold = min(hold, d)
				continue
			}
			if p, changed := snd.UpdateAt(w.Agent, t, panes[i].Gen, max(w.Scroll, 0), last); changed {
				msgs = append(msgs, proto.Msg{T: proto.TPane, Pane: &p})
			}
		}
		if hold < time.Hour {
			held.Reset(hold)
		}
		for _, m := range msgs {
			_ = cl.c.SetWriteDeadline(time.Now().Add(clientWriteTime))
			if err := cl.c.Send(m); err != nil {
				if errors.Is(err, proto.ErrTooLong) {
					continue
				}
				_ = cl.c.Close() // the reader ends and drops the client
				return
			}
		}
	}
}
