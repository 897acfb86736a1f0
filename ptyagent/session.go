package ptyagent

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Sentinel errors callers branch on.
var (
	ErrExited       = errors.New("ptyagent: agent has exited")
	ErrUnknownAgent = errors.New("ptyagent: unknown agent")
	ErrRunning      = errors.New("ptyagent: agent already running")
	ErrClosed       = errors.New("ptyagent: manager closed")
)

// errStartDropped is a pending start that a Stop dropped: said as a stop.
var errStartDropped = errors.New("stopped before it started")

// ExitedError is a message refused because its agent is not running: the
// agent and why, as its exit said it (exit code, last output), so the
// user reads the cause rather than "agent has exited". It is ErrExited.
type ExitedError struct {
	Agent  vocab.AgentID
	Detail string // "exit code 3; last output: …", or why it is not running
}

func (e *ExitedError) Error() string {
	return fmt.Sprintf("%s is not running: %s", e.Agent, e.Detail)
}

// Is makes an ExitedError ErrExited.
func (e *ExitedError) Is(target error) bool { return target == ErrExited }

// NewScreen builds the emulator of each session; tests may replace it.
var NewScreen = screen.New

// screenScrollback is Spec.Scrollback in screen.Options' terms, where 0
// asks for the emulator's default and a negative size keeps none.
func screenScrollback(lines int) int {
	if lines == 0 {
		return -1
	}
	return lines
}

// message is one queued injection.
type message struct {
	seq  int
	text string
}

// inputReq is one write to the PTY, done by the writer goroutine so
// replies, injections and user keys never interleave mid-write.
type inputReq struct {
	data []byte
	done chan error // nil for fire-and-forget (terminal replies)
}

// Session is one agent process in a PTY with its emulated screen, health
// and injection queue. All methods are safe for concurrent use.
//
// Goroutines: reader (PTY → log → screen), writer (input → PTY), monitor
// (hooks, output activity, deadlines → health), deliverer (queue → PTY with
// confirmation) and waiter (process exit → cleanup). The reader waits for
// nothing but the emulator lock, so a slow UI cannot stall an agent.
type Session struct {
	spec    Spec
	readyRe *regexp.Regexp
	cmd     *exec.Cmd
	ptmx    *os.File
	pid     int
	started time.Time
	log     *rawLog

	version atomic.Uint64 // reads processed into the screen
	userIn  atomic.Int64  // unix nanos of the last user keystroke (Write)
	drains  atomic.Uint64 // the reader's drains of the PTY
	pauses  atomic.Uint64 // of which followed by a coalescing pause

	mu        sync.Mutex // guards everything below
	scr       screen.Screen
	scrClosed bool
	health    vocab.Health
	detail    string
	base      vocab.Health // health underneath hang_warning/hung (starting or busy)
	changedAt time.Time
	busySince time.Time
	limitedAt time.Time
	// retrying: rate_limited because the screen shows the CLI retrying a
	// failed call itself (Behavior.Retrying), not after a failed turn.
	retrying    bool
	retryGoneAt time.Time // when its line was first seen gone
	lastOutput  time.Time
	lastLife    time.Time
	lastHook    time.Time
	lastBeat    time.Time
	lastScan    time.Time
	permSince   time.Time
	sawStart    bool
	loadWaitAt  time.Time // when the ready rules first held but Ready.Loaded did not
	transcript  string    // the CLI's session file, from its hooks (Codex: its failed turns)
	wantOutput  bool      // the monitor waits for the next output (see check)
	exitCode    int
	exitDetail  string // the exit as the health event says it (ExitedError)
	stopping    bool
	dead        bool
	gone        bool // the process has exited: its health can only become exited (waiter)
	queue       []message
	draft       draft  // the user's unsent text in the agent's prompt (draft.go)
	queueHeld   bool   // HoldDelivery: queued messages wait (deliver.go)
	typing      int    // seq of the message the deliverer is typing (0: none)
	awaiting    bool   // the deliverer waits for a confirmation
	awaitVer    uint64 // screen version when the wait was armed
	sids        map[int]bool
	sidStarts   map[int]uint64 // start time of each recorded session's leader
	cg          *cgroup        // the session's cgroup; nil: mark scan only
	mark        string         // value of markEnv in the agent's environment
	leftover    int            // processes still alive after the final kill
	emitMu      sync.Mutex
	stopOnce    sync.Once
	closeOnce   sync.Once
	input       chan inputReq
	hooks       chan HookMessage
	activity    chan struct{}
	kick        chan struct{}
	confirm     chan string
	exited      chan struct{}
	readerDone  chan struct{}
	quit        chan struct{}
	done        chan struct{}
	workers     sync.WaitGroup
	stopStarted chan struct{}

	// transcriptSize and progressAt (guarded by mu): the session file's
	// size when last looked at, and when it last grew (turn progress,
	// Behavior.ProgressByHooks).
	transcriptSize int64
	progressAt     time.Time
}

// Start starts spec's command in a new PTY and returns the running session.
func Start(spec Spec) (*Session, error) {
	spec, re, err := spec.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("ptyagent: %s: %w", spec.ID, err)
	}
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("ptyagent: %s: empty command", spec.ID)
	}
	s := &Session{
		spec:        spec,
		readyRe:     re,
		health:      vocab.HealthStarting,
		base:        vocab.HealthStarting,
		exitCode:    -1,
		sids:        map[int]bool{},
		sidStarts:   map[int]uint64{},
		input:       make(chan inputReq, 256),
		hooks:       make(chan HookMessage, 16),
		activity:    make(chan struct{}, 1),
		kick:        make(chan struct{}, 1),
		confirm:     make(chan string, 1),
		exited:      make(chan struct{}),
		readerDone:  make(chan struct{}),
		quit:        make(chan struct{}),
		done:        make(chan struct{}),
		stopStarted: make(chan struct{}),
	}
	if spec.LogPath != "" {
		l, err := openRawLog(spec.LogPath, spec.LogMaxBytes)
		if err != nil {
			return nil, fmt.Errorf("ptyagent: %s: %w", spec.ID, err)
		}
		s.log = l
	}
	s.scr = NewScreen(screen.Options{Cols: spec.Cols, Rows: spec.Rows, Scrollback: screenScrollback(spec.Scrollback), Reply: replyWriter{s}})

	base := spec.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	s.mark = newMark()
	env := append(buildEnv(base, spec), markEnv+"="+s.mark)
	start := func(attr *syscall.SysProcAttr) (*exec.Cmd, *os.File, error) {
		argv := spec.argv()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = spec.Dir, env
		var ptmx *os.File
		var err error
		onSpawnThread(func() {
			ptmx, err = pty.StartWithAttrs(cmd, &pty.Winsize{Cols: uint16(spec.Cols), Rows: uint16(spec.Rows)}, attr)
		})
		return cmd, ptmx, err
	}
	// The process is cloned straight into its cgroup, so no descendant
	// can be born outside it.
	s.cg = sessionCgroup(string(spec.ID))
	// The record comes first: a Hivemind killed right after the start
	// leaves no process its successor cannot find.
	s.writeRecord()
	if spec.beforeStart != nil {
		spec.beforeStart(s)
	}
	cmd, ptmx, err := start(withCgroup(sysProcAttr(), s.cg))
	if err != nil && s.cg != nil {
		// Cloning into a cgroup refused (a kernel without clone3, a
		// cgroup we may create but not enter): track by marks instead.
		cgErr := err
		s.cg.kill(0)
		s.cg = nil
		s.writeRecord()
		if cmd, ptmx, err = start(sysProcAttr()); err == nil {
			// The cgroup was the trouble: stop trying for later sessions.
			disableCgroups(cgErr)
		}
	}
	if s.cg != nil {
		s.cg.closeFD()
	}
	if err != nil {
		s.removeRecord()
		_ = s.scr.Close()
		_ = s.log.Close()
		// exec errors name the program, never the environment.
		return nil, fmt.Errorf("ptyagent: %s: start %s: %w", spec.ID, spec.Argv[0], err)
	}
	s.cmd, s.ptmx, s.pid = cmd, ptmx, cmd.Process.Pid
	if testAfterSpawn != nil {
		testAfterSpawn(s)
	}
	s.writeRecord()
	now := time.Now()
	s.started, s.changedAt, s.lastLife, s.lastOutput = now, now, now, now

	s.emit(Event{Kind: EventHealth, Health: vocab.HealthStarting})
	s.workers.Add(3)
	go s.reader()
	go s.writer()
	go s.monitor()
	go s.deliverer()
	go s.waiter()
	return s, nil
}

// testAfterSpawn, when set by a test, runs right after the process was
// spawned, before Start finishes.
var testAfterSpawn func(*Session)

// markEnv names the environment variable that marks every process of one
// session, so processes that left the agent's session and lost their parent
// can still be found and stopped.
const markEnv = "HIVEMIND_SESSION_MARK"

// newMark returns a value unique to one session.
func newMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%x", os.Getpid(), b)
}

// newSecret returns 128 random bits in hex (a session's hook token).
func newSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tokenMatches reports, in constant time, whether tok is the session's
// hook token.
func (s *Session) tokenMatches(tok string) bool {
	return s.spec.HookToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.spec.HookToken)) == 1
}

// outerTerminalVars name the variables by which programs detect the
// terminal or multiplexer they run in; agents must not inherit them.
var outerTerminalVars = map[string]bool{
	"TMUX": true, "TMUX_PANE": true, "STY": true, "WINDOW": true,
	"TERM_PROGRAM": true, "TERM_PROGRAM_VERSION": true, "TERM_SESSION_ID": true,
	"KITTY_WINDOW_ID": true, "KITTY_PID": true, "ITERM_SESSION_ID": true,
	"WT_SESSION": true, "VTE_VERSION": true, "WEZTERM_PANE": true, "ALACRITTY_WINDOW_ID": true,
}

// buildEnv is the parent's environment minus what Hivemind sets itself,
// plus spec.Env and the terminal variables. Values are never logged.
func buildEnv(parent []string, spec Spec) []string {
	b, _ := KindBehavior(spec.Kind)
	dropEnv := b.DropEnv // per CLI (Behavior.DropEnv)
	drop := func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "HIVEMIND_"), name == "TERM", name == "COLORTERM":
			return true
		case outerTerminalVars[name]:
			// The agent draws into Hivemind's emulator, not into the
			// terminal (or tmux/screen) Hivemind itself runs in.
			return true
		case slices.Contains(dropEnv, name):
			return true
		}
		return false
	}
	env := make([]string, 0, len(parent)+len(spec.Env)+2)
	for _, kv := range parent {
		if !drop(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, spec.Env...)
	return append(env, "TERM=xterm-256color", "COLORTERM=truecolor")
}

// ---- accessors ----

// ID returns the agent id.
func (s *Session) ID() vocab.AgentID { return s.spec.ID }

// Spec returns the spec the session was started with (defaults applied).
func (s *Session) Spec() Spec { return s.spec }

// PID returns the agent process id.
func (s *Session) PID() int { return s.pid }

// Done is closed when the process has exited and the session cleaned up.
func (s *Session) Done() <-chan struct{} { return s.done }

// ExitCode is the exit status (128+signal when killed), -1 while running.
func (s *Session) ExitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode
}

// Health returns the current health and its detail.
func (s *Session) Health() vocab.Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

// HealthDetail returns the reason of the last health change.
func (s *Session) HealthDetail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detail
}

// Version increases with every PTY read processed into the screen.
func (s *Session) Version() uint64 { return s.version.Load() }

// Queued is the number of messages waiting for delivery (including the
// one being delivered).
func (s *Session) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Lines renders the visible rows, scroll lines back into the scrollback.
func (s *Session) Lines(scroll int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return nil
	}
	return s.scr.Lines(scroll)
}

// CopyText is the text of rows from..to of the view scroll lines back, as
// a user copies it: soft-wrapped rows joined, trailing blanks trimmed
// (see screen.Term.CopyText). An emulator that does not know soft wraps
// gives one line per row.
func (s *Session) CopyText(scroll, from, to int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return ""
	}
	if c, ok := s.scr.(screen.Copier); ok {
		return c.CopyText(scroll, from, to)
	}
	lines := s.scr.Lines(scroll)
	var out []string
	for i := max(from, 0); i <= min(to, len(lines)-1); i++ {
		out = append(out, strings.TrimRight(ansi.Strip(lines[i]), " "))
	}
	return strings.Join(out, "\n")
}

// Text returns the visible screen as plain text.
func (s *Session) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return ""
	}
	return s.scr.Text()
}

// Title returns the window title the agent set.
func (s *Session) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return ""
	}
	return s.scr.Title()
}

// Modes returns the terminal modes the agent set.
func (s *Session) Modes() screen.Modes {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return screen.Modes{}
	}
	return s.scr.Modes()
}

// Cursor returns the cursor position and visibility.
func (s *Session) Cursor() (x, y int, visible bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return 0, 0, false
	}
	return s.scr.Cursor()
}

// Size returns the screen size.
func (s *Session) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return s.spec.Cols, s.spec.Rows
	}
	return s.scr.Size()
}

// ScrollbackLen is the number of lines held above the screen.
func (s *Session) ScrollbackLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scrClosed {
		return 0
	}
	return s.scr.ScrollbackLen()
}

// Resize sets the PTY size (the child gets SIGWINCH) and the screen's.
func (s *Session) Resize(cols, rows int) error {
	if cols < 1 || rows < 1 {
		return fmt.Errorf("ptyagent: %s: bad size %dx%d", s.spec.ID, cols, rows)
	}
	s.mu.Lock()
	if !s.scrClosed {
		s.scr.Resize(cols, rows)
	}
	s.mu.Unlock()
	s.version.Add(1)
	s.changed()
	select {
	case <-s.exited:
		return nil
	default:
	}
	// Not pty.Setsize: it calls ptmx.Fd(), which puts the descriptor back
	// into blocking mode (see ptyReader).
	rc, err := s.ptmx.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			err = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("ptyagent: %s: resize: %w", s.spec.ID, err)
	}
	return nil
}

// Write sends raw user input (attach mode) to the agent.
func (s *Session) Write(p []byte) (int, error) {
	now := time.Now()
	s.mu.Lock()
	s.userIn.Store(now.UnixNano()) // first: the screen's word waits for the echo
	s.draft.feed(p, now)
	s.mu.Unlock()
	defer s.poke() // a submitted or cleared draft frees the queue
	if err := s.writeInput(append([]byte(nil), p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Inject queues one message; it is typed in when the agent is ready and
// idle, and the outcome is reported as EventDelivered or
// EventDeliveryFailed with the same seq.
func (s *Session) Inject(seq int, text string) error {
	s.mu.Lock()
	if s.dead {
		err := &ExitedError{Agent: s.spec.ID, Detail: s.exitDetail}
		s.mu.Unlock()
		return err
	}
	s.queue = append(s.queue, message{seq: seq, text: text})
	s.mu.Unlock()
	s.poke()
	return nil
}

// HandleHook feeds one relayed hook event to the session (the Manager's
// relay server calls it). It waits only while the session is alive.
func (s *Session) HandleHook(m HookMessage) {
	select {
	case s.hooks <- m:
	case <-s.quit:
	}
}

// ---- goroutines ----

// replyWriter carries the emulator's answers to terminal queries back to
// the PTY without ever blocking the emulator.
type replyWriter struct{ s *Session }

func (w replyWriter) Write(p []byte) (int, error) {
	select {
	case w.s.input <- inputReq{data: append([]byte(nil), p...)}:
	default: // input backlog full: dropping a reply beats a deadlock
	}
	return len(p), nil
}

// Output path. The reader drains the PTY into the raw log and the emulator.
// Agents write in pieces: a fast one (a build log, a diff, a test run) as
// fast as it can, a trickling one (a status line, a token of text) many
// times a second. Reading each piece of a trickle costs a wake-up, an epoll
// round, two read(2)s, an emulator call and a change signal: on a small
// virtual machine about 90 µs a piece, 7 % of a core for 8 agents at
// 20 KB/s. So the reader works in one of two modes:
//
//   - stream: it reads whenever the PTY has data, so the producer runs at
//     PTY speed;
//   - trickle: after taking what is there it pauses coalesceDelay, so the
//     next pieces arrive together.
//
// The mode follows the producer's measured rate, never the size of one
// read (a Linux PTY hands out at most 4095 bytes a read): after a pause the
// reader drains the PTY until it is empty and counts what arrived. A PTY
// holds about 20 KiB; a producer that wrote coalesceFast bytes during one
// pause (100 KB/s or more) could soon fill it, so the reader streams from
// then on, and goes back to trickling only after a streamWindow with less
// than that rate. A producer is thus held at most once, for one pause, when
// it turns from trickling to flooding, and never while it floods. Output
// somebody waits for (a delivery's confirmation, a health rule:
// outputWanted) and the echo of the user's typing (coalesceAfterKey) are
// read at once in either mode.
const (
	coalesceDelay    = 20 * time.Millisecond
	coalesceFast     = 2 << 10
	coalesceAfterKey = 2 * time.Second
	streamWindow     = 100 * time.Millisecond
	hangupRetry      = 10 * time.Millisecond
	// streamFloor is what a streaming producer writes in a streamWindow to
	// keep streaming: the rate coalesceFast per coalesceDelay.
	streamFloor = coalesceFast * int(streamWindow/coalesceDelay)
)

// readMode is the reader's choice between stream and trickle (see above),
// apart from the PTY and the clock so that its guarantees are tested by
// construction (TestReadModeFlood and friends).
type readMode struct {
	stream   bool      // the producer is fast: no pauses, the feeder emulates
	paused   bool      // the last drain followed a pause
	window   time.Time // start of the current rate window
	inWindow int       // bytes drained since then
}

// drained records a drain of n bytes at now and reports whether the reader
// streams it. A window's bytes include the drain that closes it: they
// arrived during the window, and a reader that stalled (the machine busy,
// the feeder behind) drains a fast producer's window in one piece.
func (m *readMode) drained(now time.Time, n int) bool {
	m.inWindow += n
	switch {
	case m.paused && n >= coalesceFast:
		m.stream, m.window, m.inWindow = true, now, 0
	case now.Sub(m.window) >= streamWindow:
		if m.stream && m.inWindow < streamFloor {
			m.stream = false
		}
		m.window, m.inWindow = now, 0
	}
	return m.stream
}

// pause reports whether the reader pauses after the drain: in trickle mode,
// unless somebody waits for the output (wanted).
func (m *readMode) pause(wanted bool) bool {
	m.paused = !m.stream && !wanted
	return m.paused
}

// running reports whether the agent process has not exited yet.
func (s *Session) running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *Session) reader() {
	defer close(s.readerDone)
	out := newOutBuf()
	feederDone := make(chan struct{})
	go s.feeder(out, feederDone)
	defer func() { out.close(); <-feederDone }()
	// One buffer for the session's life (a drain takes whatever the agent
	// wrote meanwhile); in stream mode the drain is copied to the feeder.
	buf := make([]byte, 64<<10)
	read := s.ptyReader()
	var mode readMode
	for {
		// Wait for output, then take everything the PTY holds.
		total, err := read(buf, true)
		for err == nil && total > 0 && total < len(buf) {
			var n int
			if n, err = read(buf[total:], false); n == 0 {
				break
			}
			total += n
		}
		now := time.Now()
		s.drains.Add(1)
		stream := mode.drained(now, total)
		notify := false
		if stream {
			// The emulator works on the previous drain on the other
			// core while this goroutine reads the next one.
			out.put(buf[:total])
		} else {
			out.wait() // what the feeder holds comes first
			notify = s.feed(buf[:total])
		}
		if err != nil {
			if errors.Is(err, syscall.EIO) && s.running() {
				// No process holds the terminal at this moment (the
				// agent's launcher handing it over, say): not the end
				// while the agent runs. The PTY is readable while
				// nobody holds it, so wait by the clock, not by poll.
				time.Sleep(hangupRetry)
				continue
			}
			// EOF, or EIO once the agent is gone, or the deadline the
			// waiter sets: stop, never spin.
			return
		}
		if mode.pause(notify || now.UnixNano()-s.userIn.Load() <= int64(coalesceAfterKey)) {
			// A trickle nobody waits for: let the next pieces gather.
			s.pauses.Add(1)
			time.Sleep(coalesceDelay)
		}
	}
}

// feeder emulates what the reader hands over in stream mode.
func (s *Session) feeder(out *outBuf, done chan<- struct{}) {
	defer close(done)
	var batch []byte
	for {
		var ok bool
		if batch, ok = out.take(batch); !ok {
			return
		}
		s.feed(batch)
		out.fed()
		runtime.Gosched() // as between chunks (see feed)
	}
}

// maxPending bounds what the reader may hand the feeder before it waits:
// the emulator is then slower than the producer, and memory stays bounded.
const maxPending = 1 << 20

// outBuf is the reader → feeder hand-off of stream mode.
type outBuf struct {
	mu      sync.Mutex
	cond    sync.Cond
	pending []byte
	busy    bool // the feeder is emulating a batch
	closed  bool
}

func newOutBuf() *outBuf {
	o := &outBuf{}
	o.cond.L = &o.mu
	return o
}

// put appends p for the feeder, waiting while maxPending bytes wait.
func (o *outBuf) put(p []byte) {
	o.mu.Lock()
	for len(o.pending) >= maxPending {
		o.cond.Wait()
	}
	o.pending = append(o.pending, p...)
	o.cond.Broadcast()
	o.mu.Unlock()
}

// wait returns once the feeder has emulated everything handed over.
func (o *outBuf) wait() {
	o.mu.Lock()
	for o.busy || len(o.pending) > 0 {
		o.cond.Wait()
	}
	o.mu.Unlock()
}

// take waits for pending bytes and returns them, recycling prev's array;
// ok is false once closed with nothing left.
func (o *outBuf) take(prev []byte) (b []byte, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.pending) == 0 && !o.closed {
		o.cond.Wait()
	}
	if len(o.pending) == 0 {
		return nil, false
	}
	b, o.pending, o.busy = o.pending, prev[:0], true
	o.cond.Broadcast()
	return b, true
}

// fed marks the batch from take as emulated.
func (o *outBuf) fed() {
	o.mu.Lock()
	o.busy = false
	o.cond.Broadcast()
	o.mu.Unlock()
}

// close lets the feeder finish what is pending and stop.
func (o *outBuf) close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Broadcast()
	o.mu.Unlock()
}

// ptyReader returns the reader's read function: read(p, true) waits for
// output; read(p, false) returns 0, nil when there is none.
//
// creack/pty calls os.File.Fd, which leaves the descriptor blocking; the
// reader makes it non-blocking again (nothing calls Fd after the start:
// Resize sets the size through SyscallConn). Then a read that finds
// nothing returns EAGAIN at once, with no FIONREAD before each read, and a
// waiting read parks in the runtime's poller instead of holding a thread
// in read(2), which the runtime answers by handing the thread's processor
// to another thread on every wait. Reading a flood this way costs about
// 40 % less CPU (BenchmarkPTYToScreen/raw, ms-cpu/MB). Should the switch
// fail, "is there output" is asked with FIONREAD first, so a read that
// must not wait never does.
func (s *Session) ptyReader() func(p []byte, wait bool) (int, error) {
	rc, rcErr := s.ptmx.SyscallConn()
	nonblock := false
	if rcErr == nil {
		_ = rc.Control(func(fd uintptr) { nonblock = unix.SetNonblock(int(fd), true) == nil })
	}
	return func(p []byte, wait bool) (int, error) {
		if rcErr != nil { // the file is closed
			return 0, rcErr
		}
		if !wait && !nonblock {
			avail, ierr := 0, error(nil)
			if err := rc.Control(func(fd uintptr) { avail, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil || avail <= 0 {
				return 0, nil
			}
		}
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			for {
				n, rerr = syscall.Read(int(fd), p)
				if rerr != syscall.EINTR {
					break
				}
			}
			if rerr == syscall.EAGAIN {
				n, rerr = 0, nil
				return !wait // false: the runtime waits until the PTY is readable
			}
			return true
		})
		switch {
		case err != nil: // the deadline, or the file closed
			return 0, err
		case rerr != nil:
			return 0, rerr
		case n == 0 && wait:
			return 0, io.EOF
		}
		return n, nil
	}
}

// feed writes one drain to the raw log and the emulator, in chunks so that
// no lock hold grows with the drain, and wakes the monitor if it waits for
// output. It reports whether somebody waits for this session's output.
func (s *Session) feed(b []byte) (wanted bool) {
	if len(b) == 0 {
		return false
	}
	s.log.Write(b)
	for len(b) > 0 {
		chunk := b[:min(len(b), feedChunk)]
		b = b[len(chunk):]
		now := time.Now()
		s.mu.Lock()
		if !s.scrClosed {
			_, _ = s.scr.Write(chunk)
		}
		s.lastOutput, s.lastLife = now, now
		wanted = s.outputWanted(now) || wanted
		s.mu.Unlock()
		if len(b) > 0 {
			// Between chunks, let waiting goroutines run: the UI's
			// input, the writer of the user's keys. The runtime does
			// not preempt on wake-up, and with agents flooding every
			// processor may be emulating.
			runtime.Gosched()
		}
	}
	s.version.Add(1)
	if wanted {
		select {
		case s.activity <- struct{}{}:
		default:
		}
	}
	s.changed()
	return wanted
}

// feedChunk is how much output the emulator takes per lock hold.
const feedChunk = 16 << 10

func (s *Session) writer() {
	defer s.workers.Done()
	for {
		select {
		case r := <-s.input:
			_, err := s.ptmx.Write(r.data)
			if r.done != nil {
				r.done <- err
			}
		case <-s.quit:
			return
		}
	}
}

// writeInput writes p to the PTY through the writer and waits for it.
func (s *Session) writeInput(p []byte) error {
	r := inputReq{data: p, done: make(chan error, 1)}
	select {
	case s.input <- r:
	case <-s.quit:
		return ErrExited
	}
	select {
	case err := <-r.done:
		if err != nil {
			return fmt.Errorf("ptyagent: %s: write: %w", s.spec.ID, err)
		}
		return nil
	case <-s.quit:
		return ErrExited
	}
}

func (s *Session) waiter() {
	err := s.cmd.Wait()
	code := 0
	if err != nil {
		code = -1
	}
	if ps := s.cmd.ProcessState; ps != nil {
		code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	// From here on no rule may report the agent alive (ready after quiet
	// output, idle, busy): reaping what it left can take a while on a busy
	// machine, and a program that printed why it cannot start and exited
	// must be seen as exited before its prompt, never as ready.
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	close(s.exited)

	// Reap what the agent left. The cgroup holds every descendant,
	// whatever session or environment it has; then the scan (its session,
	// the setsid sessions its tools started, the mark) catches anything
	// that left the cgroup, or everything without one. Then make sure
	// nothing is left.
	cgLeft := 0
	if s.cg != nil {
		cgLeft = s.cg.kill(2 * time.Second)
	}
	s.mu.Lock()
	sids := maps(s.sids)
	s.mu.Unlock()
	left := 0
	for i := 0; i < 20; i++ {
		left = killAgentProcs(s.pid, false, sids, s.mark, syscall.SIGKILL)
		if left == 0 {
			break
		}
		time.Sleep(25 * time.Millisecond) // the kernel needs a moment to tear them down
	}
	left += cgLeft
	if left == 0 {
		s.removeRecord()
	}

	// With every holder of the PTY gone the reader sees EIO; the deadline
	// covers a holder we could not kill.
	select {
	case <-s.readerDone:
	case <-time.After(time.Second):
		_ = s.ptmx.SetReadDeadline(time.Now())
		<-s.readerDone
	}
	_ = s.ptmx.SetWriteDeadline(time.Now()) // unblock a writer stuck on a full PTY
	close(s.quit)
	s.workers.Wait()
	_ = s.ptmx.Close()
	_ = s.log.Close()

	s.mu.Lock()
	words := ""
	if code != 0 && !s.stopping && !s.scrClosed {
		// Everything the agent wrote is on the screen now (the reader
		// is done): quote it, the reason is usually there.
		words = lastWords(s.scr.Text())
	}
	detail := fmt.Sprintf("exit code %d", code)
	if left > 0 {
		detail += fmt.Sprintf("; %d processes could not be killed", left)
	}
	if words != "" {
		detail += "; last output: " + words
	}
	s.exitCode = code
	s.exitDetail = "it exited, " + detail
	if s.stopping {
		s.exitDetail = "Hivemind stopped it (" + detail + ")"
	}
	s.leftover = left
	s.dead = true // Inject refuses from here on
	pending := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, m := range pending {
		s.emit(Event{Kind: EventDeliveryFailed, Seq: m.seq, Detail: "agent exited before delivery (" + detail + ")"})
	}
	s.setHealth(vocab.HealthExited, detail)
	close(s.done)
}

// lastWords returns the last lines with words in them of an agent's
// screen (at most two, joined by " / ", clipped): what an agent that
// dies says before it exits, such as a refusal or a missing command.
func lastWords(screen string) string {
	const maxLines, maxRunes = 2, 240
	var picked []string
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0 && len(picked) < maxLines; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue // blank, or only borders and symbols
		}
		picked = append([]string{l}, picked...)
	}
	w := strings.Join(picked, " / ")
	if r := []rune(w); len(r) > maxRunes {
		w = string(r[:maxRunes-1]) + "…"
	}
	return w
}

func maps(m map[int]bool) map[int]bool {
	c := make(map[int]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ---- stop ----

// Stop stops the agent: `/exit` when a Claude agent is idle, else SIGTERM
// to everything it owns, then SIGKILL after StopTimeout. It returns at once;
// Done is closed when the process is gone.
func (s *Session) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopStarted)
		go s.stopper()
	})
}

// Wait blocks until the session is done.
func (s *Session) Wait() { <-s.done }

func (s *Session) stopper() {
	s.mu.Lock()
	s.stopping = true
	h, awaiting := s.health, s.awaiting
	s.mu.Unlock()
	s.scanSessions()
	if h == vocab.HealthBusy {
		// A turn under way is given a moment to end: a CLI records a
		// turn (its usage) as it ends, and one stopped mid-way loses it
		// (the Reviewer stopped just after writing its approval).
		if !s.awaitTurnEnd() {
			return
		}
		h = s.Health()
	}
	if exit := s.spec.behavior.ExitCommand; exit != "" && h.Injectable() && !awaiting {
		_ = s.writeInput([]byte(exit))
		select {
		case <-s.exited:
			return
		case <-time.After(3 * time.Second):
		}
	}
	s.signalAll(syscall.SIGTERM)
	select {
	case <-s.exited:
		return
	case <-time.After(s.spec.StopTimeout):
	}
	s.signalAll(syscall.SIGKILL)
}

// stopTurnGrace bounds the wait for a turn under way to end before an agent
// is stopped; turnSettle is the moment after it ended for the CLI to write
// what it records of the turn.
const (
	stopTurnGrace = time.Second
	turnSettle    = 200 * time.Millisecond
)

// awaitTurnEnd waits, at most stopTurnGrace, for the agent to leave busy,
// then turnSettle; false when the process exited meanwhile.
func (s *Session) awaitTurnEnd() bool {
	deadline := time.NewTimer(stopTurnGrace)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for s.Health() == vocab.HealthBusy {
		select {
		case <-s.exited:
			return false
		case <-deadline.C:
			return true
		case <-tick.C:
		}
	}
	select {
	case <-s.exited:
		return false
	case <-time.After(turnSettle):
		return true
	}
}

// Kill sends SIGKILL to everything the agent owns at once.
func (s *Session) Kill() {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.scanSessions()
	s.signalAll(syscall.SIGKILL)
}

func (s *Session) signalAll(sig syscall.Signal) {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = syscall.Kill(-s.pid, sig)
	if s.cg != nil {
		s.cg.signal(sig) // every descendant, wherever it went
		return
	}
	s.mu.Lock()
	sids := maps(s.sids)
	s.mu.Unlock()
	killAgentProcs(s.pid, true, sids, s.mark, sig)
}

// scanSessions records the setsid sessions of the agent's descendants so
// they can be killed after their parent is gone. A session in a cgroup
// needs none: its cgroup holds them all.
func (s *Session) scanSessions() {
	if s.cg != nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	procs := listProcs()
	found := descendantSessions(s.pid, procs)
	added := false
	s.mu.Lock()
	for _, sid := range found {
		if s.sids[sid] {
			continue
		}
		s.sids[sid], added = true, true
		for _, p := range procs {
			if p.pid == sid {
				s.sidStarts[sid] = p.start
			}
		}
	}
	s.lastScan = time.Now()
	s.mu.Unlock()
	if added {
		s.writeRecord() // a crashed run's successor must find them too
	}
}

// Close stops the agent if needed (SIGKILL), waits for it and releases the
// emulator. The session's screen reads return nothing afterwards.
func (s *Session) Close() error {
	select {
	case <-s.done:
	default:
		s.Kill()
		<-s.done
	}
	s.closeOnce.Do(func() {
		s.mu.Lock()
		scr := s.scr
		s.scrClosed = true
		s.mu.Unlock()
		_ = scr.Close()
	})
	return nil
}

// ---- events ----

// emit reports an event; calls are serialised per session.
func (s *Session) emit(e Event) {
	if s.spec.OnEvent == nil {
		return
	}
	e.Agent = s.spec.ID
	e.PID = s.pid
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.Health == "" {
		s.mu.Lock()
		e.Health = s.health
		s.mu.Unlock()
	}
	if e.Health == vocab.HealthExited {
		s.mu.Lock()
		e.ExitCode, e.Stopped = s.exitCode, s.stopping
		s.mu.Unlock()
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.spec.OnEvent(e)
}

func (s *Session) changed() {
	if s.spec.OnChange != nil {
		s.spec.OnChange()
	}
}

func (s *Session) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// setHealth changes the health and reports it.
func (s *Session) setHealth(h vocab.Health, detail string) {
	s.mu.Lock()
	if s.health == h || s.health == vocab.HealthExited || s.gone && h != vocab.HealthExited {
		s.mu.Unlock()
		return
	}
	s.health, s.detail, s.changedAt = h, detail, time.Now()
	switch h {
	case vocab.HealthStarting, vocab.HealthBusy:
		s.base = h
	case vocab.HealthWaitingPermission:
		s.permSince = time.Now()
	default: // nothing more to note
	}
	if h == vocab.HealthBusy {
		s.busySince = time.Now()
	}
	s.mu.Unlock()
	s.emit(Event{Kind: EventHealth, Health: h, Detail: detail})
	s.poke()
	s.changed()
}
