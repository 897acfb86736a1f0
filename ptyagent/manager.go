package ptyagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	// Factory builds the spec of an agent (command, env, log path, profile
	// rules). resume is true on a restart (Claude: --resume).
	Factory func(id vocab.AgentID, role vocab.Role, resume bool) (Spec, error)
	// OnEvent receives every agent's events. It is called from the agents'
	// goroutines (in order per agent, possibly concurrently across agents)
	// and must return quickly.
	OnEvent func(Event)
	// OnHeartbeat is called on an agent's signs of life, at most once every
	// 5 seconds per agent (the runner writes heartbeat files).
	OnHeartbeat func(agent vocab.AgentID, at time.Time)
	// Defaults for specs that leave them zero.
	HangTimeout time.Duration
	StopTimeout time.Duration
	Cols, Rows  int
	// SocketDir holds the hook relay socket (default os.TempDir(); the
	// path must stay under 100 bytes).
	SocketDir string
	// RecordDir, when set, holds a record of each running session's
	// processes (see ReapRecorded). NewManager first reaps the processes
	// named by records a Hivemind that died without cleaning up left there.
	RecordDir string
}

// Manager runs the agents of one Hivemind process and their hook relay.
// Start, Stop and Inject satisfy engine.Agents; they return quickly and
// report outcomes as Events.
type Manager struct {
	cfg     ManagerConfig
	hook    *hookServer
	changed chan struct{}

	mu       sync.Mutex
	agents   map[vocab.AgentID]*agent
	closed   bool
	bg       sync.WaitGroup
	closeErr error
	reaped   int
	reapErr  error
	// gates hold, per kind that starts alone (Behavior.StartAlone), the
	// starts waiting for the one under way.
	gates map[ProfileKind]*startGate
}

// startGate lets one agent of a kind start at a time: busy while one
// starts, waiters in order.
type startGate struct {
	busy    bool
	waiters []chan struct{}
}

type agent struct {
	id   vocab.AgentID
	role vocab.Role
	sess *Session
	// starting is the session whose process Start is starting: its hooks
	// are routed to it before Start returns and it becomes sess.
	starting *Session
	// pending is set while a (re)start waits for the previous process to
	// end; messages injected meanwhile wait in held.
	pending bool
	// dropStart: Stop came while the start was pending; it is dropped
	// (the agent never runs) unless a Start comes after.
	dropStart bool
	held      []message
	// holdDelivery: HoldDelivery(true) stands, for every session the
	// agent gets until it is lifted.
	holdDelivery bool
	// startHangs counts the starts in a row that hung before the agent
	// was ever ready: each doubles the next start's allowance (at most
	// maxStartBackoff times hang_seconds), so a CLI that starts slower
	// than hang_seconds on a busy machine is not restarted into the same
	// wall until the task gives up on it.
	startHangs int
}

// maxStartBackoff bounds the start allowance: 8 × hang_seconds.
const maxStartBackoff = 3

// NewManager starts the hook relay and returns an empty manager.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.Factory == nil {
		return nil, fmt.Errorf("ptyagent: manager needs a Factory")
	}
	m := &Manager{cfg: cfg, agents: map[vocab.AgentID]*agent{}, changed: make(chan struct{}, 1),
		gates: map[ProfileKind]*startGate{}}
	if cfg.RecordDir != "" {
		m.reaped, m.reapErr = ReapRecorded(cfg.RecordDir)
	}
	hs, err := newHookServer(cfg.SocketDir, m.routeHook)
	if err != nil {
		return nil, err
	}
	m.hook = hs
	return m, nil
}

// Reaped returns how many processes left by an earlier run NewManager
// killed (see ManagerConfig.RecordDir), and any error reading its records.
func (m *Manager) Reaped() (int, error) { return m.reaped, m.reapErr }

// Tracking says how the agents' processes are tracked: "cgroup v2", or
// the mark scan and why cgroups are not used.
func Tracking() string {
	if why := cgroupsUnavailable(); why != "" {
		return "session and environment-mark scan (cgroups v2 unavailable: " + why + ")"
	}
	return "cgroup v2"
}

// SocketPath is the hook relay socket (HIVEMIND_HOOK_SOCKET of every agent).
func (m *Manager) SocketPath() string { return m.hook.path }

// Changed delivers at most one pending notice that some agent's screen or
// health changed; the UI redraws at its own frame rate after receiving it.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

func (m *Manager) signal() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// routeHook hands a relayed hook to the agent it names, once the line has
// proved to come from that agent's current session: it carries the
// session's token and, when the session has a cgroup, the process that
// sent it (peer) is in that cgroup — a token read from another agent's
// environment is no use outside that agent.
func (m *Manager) routeHook(h HookMessage, peer int) error {
	m.mu.Lock()
	a := m.agents[vocab.AgentID(h.Agent)] // the hook names its agent by env
	var s *Session
	if a != nil {
		s = a.sess
		if n := a.starting; n != nil && (s == nil || n.tokenMatches(h.Token)) {
			s = n // the process being started (its first hook can come before Start returns)
		}
	}
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("no running agent %q", h.Agent)
	}
	if !s.tokenMatches(h.Token) {
		return fmt.Errorf("the hook token does not match agent %q's session (%s must be this session's own)", h.Agent, EnvHookToken)
	}
	if s.cg != nil && peer > 0 && !slices.Contains(s.cg.procs(), peer) {
		return fmt.Errorf("process %d is not one of agent %q's processes", peer, h.Agent)
	}
	s.HandleHook(h)
	return nil
}

// Session returns the current session of an agent.
func (m *Manager) Session(id vocab.AgentID) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[id]
	if a == nil || a.sess == nil {
		return nil, false
	}
	return a.sess, true
}

// IDs returns the known agent ids, sorted.
func (m *Manager) IDs() []vocab.AgentID {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]vocab.AgentID, 0, len(m.agents))
	for id := range m.agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Start starts the agent. If its previous process is still stopping, the
// start happens as soon as it is gone (errors then arrive as an exited
// Health event). A running agent gives ErrRunning.
func (m *Manager) Start(id vocab.AgentID, role vocab.Role, resume bool) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	a := m.agents[id]
	if a == nil {
		a = &agent{id: id, role: role}
		m.agents[id] = a
	}
	a.role = role
	a.dropStart = false
	if a.pending {
		m.mu.Unlock()
		return nil
	}
	if old := a.sess; old != nil {
		select {
		case <-old.Done():
		default:
			stopping := false
			select {
			case <-old.stopStarted:
				stopping = true
			default:
			}
			if !stopping {
				m.mu.Unlock()
				return fmt.Errorf("%w: %s", ErrRunning, id)
			}
			a.pending = true
			m.bg.Add(1)
			m.mu.Unlock()
			go func() {
				defer m.bg.Done()
				<-old.Done()
				if err := m.launch(a, resume); err != nil {
					m.report(id, err)
				}
			}()
			return nil
		}
	}
	a.pending = true
	m.mu.Unlock()
	return m.launch(a, resume)
}

// report turns an asynchronous start failure into an event.
func (m *Manager) report(id vocab.AgentID, err error) {
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(Event{Agent: id, Kind: EventHealth, Health: vocab.HealthExited, ExitCode: -1,
			Detail: err.Error(), Stopped: errors.Is(err, ErrClosed) || errors.Is(err, errStartDropped), At: time.Now()})
	}
}

// launch builds the spec and starts the process; a.pending is set. A
// kind that starts alone waits for its turn (in the background: messages
// injected meanwhile are held).
func (m *Manager) launch(a *agent, resume bool) error {
	m.mu.Lock()
	drop := a.dropStart
	m.mu.Unlock()
	if drop { // stopped while it waited for its previous process: nothing to build
		return m.run(a, Spec{}, nil)
	}
	spec, err := m.cfg.Factory(a.id, a.role, resume)
	if err == nil {
		spec = m.complete(a, spec)
		if b, _ := KindBehavior(spec.Kind); b.StartAlone {
			if turn := m.startTurn(spec.Kind); turn != nil {
				if m.cfg.OnEvent != nil { // said, so that a slow start is not a silent one
					m.cfg.OnEvent(Event{Agent: a.id, Kind: EventHealth, Health: vocab.HealthStarting, At: time.Now(),
						Detail: fmt.Sprintf("waiting to start: %s agents start one at a time, and another is starting", spec.Kind)})
				}
				m.bg.Add(1)
				go func() {
					defer m.bg.Done()
					<-turn
					if err := m.run(a, m.alone(spec), nil); err != nil {
						m.report(a.id, err)
					}
				}()
				return nil
			}
			spec = m.alone(spec)
		}
	}
	return m.run(a, spec, err)
}

// startTurn takes kind's start gate: nil when it was free (the caller
// starts now), else a channel closed when the caller's turn comes.
func (m *Manager) startTurn(kind ProfileKind) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.gates[kind]
	if g == nil {
		g = &startGate{}
		m.gates[kind] = g
	}
	if !g.busy {
		g.busy = true
		return nil
	}
	ch := make(chan struct{})
	g.waiters = append(g.waiters, ch)
	return ch
}

// passTurn hands kind's start gate to the next waiting start, or frees it.
func (m *Manager) passTurn(kind ProfileKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.gates[kind]
	if len(g.waiters) == 0 {
		g.busy = false
		return
	}
	close(g.waiters[0])
	g.waiters = g.waiters[1:]
}

// alone makes spec pass its kind's start gate on once the agent leaves
// starting (ready, a hang warning, or its exit) or fails to start.
func (m *Manager) alone(spec Spec) Spec {
	var once sync.Once
	pass := func() { once.Do(func() { m.passTurn(spec.Kind) }) }
	onEvent := spec.OnEvent
	spec.OnEvent = func(ev Event) {
		if ev.Kind == EventHealth && ev.Health != vocab.HealthStarting {
			pass()
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	spec.startFailed = pass
	return spec
}

// run starts the process of spec, unless building it failed (err), and
// installs it as a's session.
func (m *Manager) run(a *agent, spec Spec, err error) error {
	var s *Session
	if err == nil {
		m.mu.Lock()
		closed, drop := m.closed, a.dropStart
		m.mu.Unlock()
		switch {
		case closed:
			err = ErrClosed
		case drop:
			err = errStartDropped
		default:
			spec.beforeStart = func(n *Session) {
				m.mu.Lock()
				a.starting = n
				m.mu.Unlock()
			}
			s, err = Start(spec)
		}
		if err != nil && spec.startFailed != nil {
			spec.startFailed()
		}
	}
	m.mu.Lock()
	held, hold, stop := a.held, a.holdDelivery, a.dropStart
	a.pending, a.starting, a.dropStart, a.held = false, nil, false, nil
	if err != nil {
		m.mu.Unlock()
		for _, h := range held {
			m.emitFailed(a.id, h.seq, "agent failed to start")
		}
		if errors.Is(err, errStartDropped) {
			m.report(a.id, err) // said as a stop, whoever started it
			return nil
		}
		return fmt.Errorf("ptyagent: start %s: %w", a.id, err)
	}
	if m.closed {
		m.mu.Unlock()
		_ = s.Close()
		return ErrClosed
	}
	old := a.sess
	a.sess = s
	m.mu.Unlock()
	if old != nil {
		// The old process is gone; free its emulator (x/vt holds ~145
		// bytes per cell, scrollback included).
		_ = old.Close()
	}
	if stop { // Stop came while its process was being started
		s.Stop()
		for _, h := range held {
			m.emitFailed(a.id, h.seq, "agent stopped")
		}
		held = nil
	}
	if hold {
		s.HoldDelivery(true)
	}
	for _, h := range held {
		_ = s.Inject(h.seq, h.text)
	}
	m.signal()
	return nil
}

func (m *Manager) emitFailed(id vocab.AgentID, seq int, detail string) {
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(Event{Agent: id, Kind: EventDeliveryFailed, Seq: seq, Detail: detail, At: time.Now()})
	}
}

// complete adds what the manager owns to a factory's spec.
func (m *Manager) complete(a *agent, spec Spec) Spec {
	spec.ID, spec.Role = a.id, a.role
	spec.HookToken = newSecret()
	spec.RecordDir = m.cfg.RecordDir
	spec.Env = append(append([]string(nil), spec.Env...),
		EnvAgentID+"="+string(a.id), EnvRole+"="+string(a.role), EnvHookSocket+"="+m.hook.path, EnvHookToken+"="+spec.HookToken)
	if spec.Cols == 0 {
		spec.Cols = m.cfg.Cols
	}
	if spec.Rows == 0 {
		spec.Rows = m.cfg.Rows
	}
	if spec.HangTimeout == 0 {
		spec.HangTimeout = m.cfg.HangTimeout
	}
	if spec.StopTimeout == 0 {
		spec.StopTimeout = m.cfg.StopTimeout
	}
	m.mu.Lock()
	spec.StartTimeout = spec.HangTimeout << min(a.startHangs, maxStartBackoff)
	m.mu.Unlock()
	spec.OnEvent = m.countStartHangs(a, m.cfg.OnEvent)
	spec.OnChange = m.signal
	if hb := m.cfg.OnHeartbeat; hb != nil {
		id := a.id
		spec.OnHeartbeat = func(at time.Time) { hb(id, at) }
	}
	return spec
}

// countStartHangs wraps a session's OnEvent to keep a.startHangs: one
// more when it hangs before it was ever ready, none once it was. The
// session calls it from its own goroutine, in order.
func (m *Manager) countStartHangs(a *agent, onEvent func(Event)) func(Event) {
	ready := false
	return func(ev Event) {
		if ev.Kind == EventHealth && !ready {
			switch ev.Health {
			case vocab.HealthHung:
				m.mu.Lock()
				a.startHangs++
				m.mu.Unlock()
			case vocab.HealthStarting, vocab.HealthHangWarning, vocab.HealthExited, vocab.HealthRestarting:
			default:
				ready = true
				m.mu.Lock()
				a.startHangs = 0
				m.mu.Unlock()
			}
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
}

// Stop stops the agent gracefully; it returns at once and the exit arrives
// as a Health event. A (re)start still waiting (for the previous process
// to end, or for its turn) is dropped: the agent does not run again until
// the next Start.
func (m *Manager) Stop(id vocab.AgentID) error {
	m.mu.Lock()
	a := m.agents[id]
	var s *Session
	if a != nil {
		s = a.sess
		a.dropStart = a.pending
	}
	m.mu.Unlock()
	if a == nil {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	if s != nil {
		s.Stop()
	}
	return nil
}

// Restart stops the agent and starts it again with the same id, resuming
// its conversation.
func (m *Manager) Restart(id vocab.AgentID) error {
	m.mu.Lock()
	a := m.agents[id]
	var role vocab.Role
	if a != nil {
		role = a.role
	}
	m.mu.Unlock()
	if a == nil {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	if err := m.Stop(id); err != nil {
		return err
	}
	return m.Start(id, role, true)
}

// Inject queues a message for the agent (held until it is ready and
// idle); the outcome arrives as EventDelivered / EventDeliveryFailed.
func (m *Manager) Inject(id vocab.AgentID, seq int, text string) error {
	m.mu.Lock()
	a := m.agents[id]
	if a == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	if a.pending {
		a.held = append(a.held, message{seq: seq, text: text})
		m.mu.Unlock()
		return nil
	}
	s := a.sess
	m.mu.Unlock()
	if s == nil {
		return &ExitedError{Agent: id, Detail: "it failed to start"}
	}
	if err := s.Inject(seq, text); err != nil {
		var ee *ExitedError
		if errors.As(err, &ee) {
			return err // it names the agent
		}
		return fmt.Errorf("%w: %s", err, id)
	}
	return nil
}

// HoldDelivery stops (hold) or lets the agent's queued messages be typed
// (Session.HoldDelivery); it stands across the agent's restarts.
func (m *Manager) HoldDelivery(id vocab.AgentID, hold bool) {
	m.mu.Lock()
	a := m.agents[id]
	var s *Session
	if a != nil {
		a.holdDelivery = hold
		s = a.sess
	}
	m.mu.Unlock()
	if s != nil {
		s.HoldDelivery(hold)
	}
}

// Withdraw takes back the agent's messages with a seq below before that
// are not being typed (waiting for a start, or in its session's queue)
// and returns their seqs; no delivery event comes for them.
func (m *Manager) Withdraw(id vocab.AgentID, before int) []int {
	m.mu.Lock()
	a := m.agents[id]
	if a == nil {
		m.mu.Unlock()
		return nil
	}
	var out []int
	a.held = slices.DeleteFunc(a.held, func(h message) bool {
		if h.seq < before {
			out = append(out, h.seq)
			return true
		}
		return false
	})
	s := a.sess
	m.mu.Unlock()
	if s != nil {
		out = append(out, s.Withdraw(before)...)
	}
	return out
}

// StopAll stops every agent and waits until all are gone or ctx ends.
func (m *Manager) StopAll(ctx context.Context) error {
	m.mu.Lock()
	var ss []*Session
	for _, a := range m.agents {
		if a.sess != nil {
			ss = append(ss, a.sess)
		}
	}
	m.mu.Unlock()
	for _, s := range ss {
		s.Stop()
	}
	for _, s := range ss {
		select {
		case <-s.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops every agent (killing what does not stop within StopTimeout
// plus a margin), releases their screens and removes the relay socket.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return m.closeErr
	}
	m.closed = true
	for _, g := range m.gates { // starts waiting for their turn see closed
		for _, ch := range g.waiters {
			close(ch)
		}
		g.waiters = nil
	}
	m.mu.Unlock()
	st := m.cfg.StopTimeout
	if st <= 0 {
		st = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), st+5*time.Second)
	err := m.StopAll(ctx)
	cancel()
	m.bg.Wait() // pending starts see closed and close their session
	m.mu.Lock()
	var ss []*Session
	for _, a := range m.agents {
		if a.sess != nil {
			ss = append(ss, a.sess)
		}
	}
	m.mu.Unlock()
	for _, s := range ss {
		_ = s.Close()
	}
	m.hook.close()
	m.closeErr = err
	return err
}
