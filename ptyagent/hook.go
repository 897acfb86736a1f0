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

// maxHookConns bounds the relay connections served at once (each may
// hold a line of up to hookrelay.MaxLine bytes); further clients wait in
// the listen backlog, and give up after their dial timeout.
const maxHookConns = 32

// hookServer accepts relay connections and hands each line, with the pid
// of the process that connected (0 when unknown), to deliver, which
// accepts it or says why not (the client gets the reason).
type hookServer struct {
	path    string
	ln      net.Listener
	deliver func(m HookMessage, peer int) error
	slots   chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
}

// newHookServer listens on a fresh short socket path in dir (os.TempDir()
// when empty). Unix socket paths must stay under ~100 bytes.
func newHookServer(dir string, deliver func(m HookMessage, peer int) error) (*hookServer, error) {
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
	s := &hookServer{path: path, ln: ln, deliver: deliver, conns: map[net.Conn]struct{}{},
		slots: make(chan struct{}, maxHookConns), stop: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *hookServer) accept() {
	defer s.wg.Done()
	for {
		select {
		case s.slots <- struct{}{}:
		case <-s.stop:
			return
		}
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *hookServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
		<-s.slots
	}()
	// A hook writes one line and closes; the deadline stops a stuck client
	// from holding a goroutine.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(c, 64<<10)
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
		line, err := readLine(r, hookrelay.MaxLine)
		if errors.Is(err, errLineTooLong) {
			// Never buffered whole: answer and drop the connection.
			answer(fmt.Errorf("relay line exceeds %d bytes; send smaller hook payloads", hookrelay.MaxLine))
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var m HookMessage
			switch {
			case json.Unmarshal(line, &m) != nil:
				answer(errors.New("relay line is not a JSON hook message"))
			case m.Agent == "" || m.Event == "":
				answer(errors.New("relay line names no agent or no event"))
			default:
				answer(s.deliver(m, peer)) // queued in the agent's session, in order
			}
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
	close(s.stop)
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
