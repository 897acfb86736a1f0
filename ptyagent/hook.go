package ptyagent

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
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

// hookServer accepts relay connections and hands each line to deliver.
type hookServer struct {
	path    string
	ln      net.Listener
	deliver func(HookMessage)
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
}

// newHookServer listens on a fresh short socket path in dir (os.TempDir()
// when empty). Unix socket paths must stay under ~100 bytes.
func newHookServer(dir string, deliver func(HookMessage)) (*hookServer, error) {
	if dir == "" {
		dir = os.TempDir()
	}
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
	s := &hookServer{path: path, ln: ln, deliver: deliver, conns: map[net.Conn]struct{}{}}
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
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
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
		c.Close()
	}()
	// A hook writes one line and closes; the deadline stops a stuck client
	// from holding a goroutine.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m HookMessage
			if json.Unmarshal(line, &m) == nil && m.Agent != "" && m.Event != "" {
				s.deliver(m) // queued in the agent's session, in order
			}
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte(hookrelay.Ack))
		}
		if err != nil {
			return
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
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
	_ = os.Remove(s.path)
}
