package ptyagent

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
)

// Environment variable names of the hook relay (see package hookrelay,
// which holds the client and the wire protocol).
const (
	EnvHookSocket = hookrelay.EnvHookSocket
	EnvAgentID    = hookrelay.EnvAgentID
	EnvRole       = hookrelay.EnvRole
	EnvTaskDir    = hookrelay.EnvTaskDir
	EnvProject    = hookrelay.EnvProject
	EnvHookToken  = hookrelay.EnvHookToken
)

// Hook event names (Claude Code's HookEventName values).
const (
	HookSessionStart      = hookrelay.HookSessionStart
	HookUserPromptSubmit  = hookrelay.HookUserPromptSubmit
	HookStop              = hookrelay.HookStop
	HookStopFailure       = hookrelay.HookStopFailure
	HookNotification      = hookrelay.HookNotification
	HookPermissionRequest = hookrelay.HookPermissionRequest
	HookPreToolUse        = hookrelay.HookPreToolUse
	HookSessionEnd        = hookrelay.HookSessionEnd
)

// HookEvents lists every hook Hivemind installs, in a stable order.
var HookEvents = hookrelay.Events()

// ErrNoRelay is returned by RunHook when the environment names no relay
// socket or agent (the process does not run under Hivemind).
var ErrNoRelay = hookrelay.ErrNoRelay

// HookMessage is one line of the relay protocol (hookrelay.Message):
// {"agent":"…","event":"…","payload":<hook stdin json>}\n
// answered by "ok\n". Decision "deny" and Reason are set by the hook
// process when it denied a PreToolUse call locally, so the denial is
// reported as an EventHookDenied.
type HookMessage = hookrelay.Message

// SendHook sends one hook event to the relay socket (hookrelay.Send). It
// gives up after 200 ms; the payload should be JSON (anything else is sent
// as a string).
func SendHook(socket, agent, event string, payload []byte) error {
	return hookrelay.Send(socket, agent, event, payload)
}

// SendHookMessage sends one relay line; see SendHook.
func SendHookMessage(socket string, m HookMessage) error {
	return hookrelay.SendMessage(socket, m)
}

// RunHook reads the hook JSON from stdin and relays it to the running
// Hivemind named by HIVEMIND_HOOK_SOCKET for the agent HIVEMIND_AGENT_ID
// (hookrelay.Run). The caller should exit 0 whatever it returns.
func RunHook(event string, stdin io.Reader, env func(string) string) error {
	return hookrelay.Run(event, stdin, env)
}

// RelayHook relays an already-read hook payload, optionally with a local
// decision ("deny" and its reason) — hookrelay.Relay.
func RelayHook(event string, payload []byte, decision, reason string, env func(string) string) error {
	return hookrelay.Relay(event, payload, decision, reason, env)
}

// The relay's intake is bounded: a connection must send each line within
// hookLineTimeout; one agent (the processes carrying one session mark,
// see hookPeerKey) holds at most maxHookConnsPerAgent open connections and
// all agents together maxHookConns. Past a cap the oldest connection that
// has not yet sent a complete line is closed, never one that has: a hook
// writes its whole line at once, so an agent's own hook (which carries its
// secret) is read and answered while a flood of idle or half-written
// connections, its own included, is shed. Accepting never waits.
const (
	hookLineTimeout      = 3 * time.Second
	maxHookConnsPerAgent = 64
	maxHookConns         = 256
)

// hookServer accepts relay connections and hands each line, with the pid
// of the process that connected (0 when unknown), to deliver, which
// accepts it or says why not (the client gets the reason).
type hookServer struct {
	path    string
	ln      net.Listener
	deliver func(m HookMessage, peer int) error
	// lineTimeout and the caps are the constants above (tests shorten them).
	lineTimeout     time.Duration
	perAgent, total int
	wg              sync.WaitGroup
	mu              sync.Mutex
	conns           map[net.Conn]*hookConn
	seq             uint64
	shed            int // connections closed to make room (for tests and logs)
	closed          bool
}

// hookConn is one open relay connection.
type hookConn struct {
	key  string // the agent it comes from (hookPeerKey)
	seq  uint64 // accept order
	read bool   // a complete line arrived: never shed
}

// newHookServer listens on a fresh short socket path in dir (os.TempDir()
// when empty). Unix socket paths must stay under ~100 bytes.
func newHookServer(dir string, deliver func(m HookMessage, peer int) error) (*hookServer, error) {
	return listenHooks(dir, deliver, hookLineTimeout, maxHookConnsPerAgent, maxHookConns)
}

// listenHooks is newHookServer with the line deadline and caps given.
func listenHooks(dir string, deliver func(m HookMessage, peer int) error, lineTimeout time.Duration, perAgent, total int) (*hookServer, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	removeStaleSockets(dir)
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	path := filepath.Join(dir, fmt.Sprintf("hm-%d-%s.sock", os.Getpid(), hex.EncodeToString(rb[:])))
	if len(path) >= 100 {
		return nil, fmt.Errorf("ptyagent: hook socket path too long (%d bytes): %s", len(path), path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("ptyagent: hook relay: %w", err)
	}
	_ = os.Chmod(path, 0o600)
	s := &hookServer{path: path, ln: ln, deliver: deliver, conns: map[net.Conn]*hookConn{},
		lineTimeout: lineTimeout, perAgent: perAgent, total: total}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *hookServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		key := hookPeerKey(peerPID(c))
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.seq++
		s.conns[c] = &hookConn{key: key, seq: s.seq}
		s.makeRoom(key)
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// makeRoom closes the oldest connections without a complete line while
// key's agent, or everyone, is over its cap. Called with s.mu held.
func (s *hookServer) makeRoom(key string) {
	for {
		n, mine := 0, 0
		var oldest, oldestMine net.Conn
		for c, hc := range s.conns {
			n++
			if hc.key == key {
				mine++
			}
			if hc.read {
				continue
			}
			if oldest == nil || hc.seq < s.conns[oldest].seq {
				oldest = c
			}
			if hc.key == key && (oldestMine == nil || hc.seq < s.conns[oldestMine].seq) {
				oldestMine = c
			}
		}
		victim := oldest
		switch {
		case mine > s.perAgent && oldestMine != nil:
			victim = oldestMine
		case n > s.total && oldest != nil:
		default:
			return
		}
		delete(s.conns, victim) // serve sees the close and ends
		_ = victim.Close()
		s.shed++
	}
}

// hookPeerKey names the agent of the process at pid for the relay's caps:
// its session mark (every process of one session carries it), else the
// pid's session id; "" when the process is gone.
func hookPeerKey(pid int) string {
	if pid <= 0 {
		return ""
	}
	if m := markOf(pid); m != "" {
		return m
	}
	return "sid:" + strconv.Itoa(sessionOf(pid))
}

func (s *hookServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	// Small at first: an idle connection holds little; readLine grows the
	// line up to hookrelay.MaxLine.
	r := bufio.NewReaderSize(c, 4<<10)
	peer := peerPID(c)
	answer := func(why error) {
		ans := hookrelay.Ack
		if why != nil {
			ans = hookrelay.NackPrefix + why.Error() + "\n"
		}
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte(ans))
	}
	for {
		// A hook writes one line and closes: each line has its deadline.
		_ = c.SetReadDeadline(time.Now().Add(s.lineTimeout))
		line, err := readLine(r, hookrelay.MaxLine)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return // a line not finished in time is dropped unanswered
		}
		if errors.Is(err, errLineTooLong) {
			// Never buffered whole: answer and drop the connection.
			answer(fmt.Errorf("relay line exceeds %d bytes; send smaller hook payloads", hookrelay.MaxLine))
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			s.mu.Lock()
			if hc := s.conns[c]; hc != nil {
				hc.read = true
			}
			s.mu.Unlock()
			var m HookMessage
			switch {
			case json.Unmarshal(line, &m) != nil:
				answer(errors.New("relay line is not a JSON hook message"))
			case m.Agent == "" || m.Event == "":
				answer(errors.New("relay line names no agent or no event"))
			default:
				answer(s.deliver(m, peer)) // queued in the agent's session, in order
			}
			s.mu.Lock()
			if hc := s.conns[c]; hc != nil {
				hc.read = false // answered: idle again until its next line
			}
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes; past max it
// returns errLineTooLong without reading the rest. At the end of input it
// returns what it read with the read error.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// close stops accepting, closes open connections, waits for the handlers
// and removes the socket file.
func (s *hookServer) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	_ = s.ln.Close()
	s.wg.Wait()
	_ = os.Remove(s.path)
}

// removeStaleSockets removes the relay sockets in dir that Hivemind
// processes no longer alive left behind (a run killed with SIGKILL cannot
// remove its own). The owner's pid is in the name: hm-<pid>-<random>.sock.
func removeStaleSockets(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "hm-*-*.sock"))
	for _, p := range names {
		pidStr, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(p), "hm-"), "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(p)
		}
	}
}

// processAlive reports whether a process with this pid exists (it may
// belong to another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
