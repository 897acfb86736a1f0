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
	"sync"
	"time"
)

// Environment variable names of the hook relay.
const (
	EnvHookSocket = "HIVEMIND_HOOK_SOCKET"
	EnvAgentID    = "HIVEMIND_AGENT_ID"
	EnvRole       = "HIVEMIND_ROLE"
	EnvTaskDir    = "HIVEMIND_TASK_DIR"
	EnvProject    = "HIVEMIND_PROJECT"
)

// Hook event names (Claude Code's HookEventName values).
const (
	HookSessionStart      = "SessionStart"
	HookUserPromptSubmit  = "UserPromptSubmit"
	HookStop              = "Stop"
	HookStopFailure       = "StopFailure"
	HookNotification      = "Notification"
	HookPermissionRequest = "PermissionRequest"
	HookPreToolUse        = "PreToolUse"
	HookSessionEnd        = "SessionEnd"
)

// HookEvents lists every hook Hivemind installs, in a stable order.
var HookEvents = []string{
	HookSessionStart, HookUserPromptSubmit, HookStop, HookStopFailure,
	HookNotification, HookPermissionRequest, HookPreToolUse, HookSessionEnd,
}

// ErrNoRelay is returned by RunHook when the environment names no relay
// socket or agent (the process does not run under Hivemind).
var ErrNoRelay = errors.New("ptyagent: no hook relay in the environment")

// HookMessage is one line of the relay protocol:
// {"agent":"…","event":"…","payload":<hook stdin json>}\n
// The relay answers each line with "ok\n" once the agent's session has
// queued it; clients may wait for it (SendHook does, up to 500 ms) so that
// hooks sent in sequence are handled in sequence.
// Decision/Reason are optional: the hook process sets Decision "deny" when
// it denied a PreToolUse call locally, so the denial is reported as an
// EventHookDenied.
type HookMessage struct {
	Agent    string          `json:"agent"`
	Event    string          `json:"event"`
	Payload  json.RawMessage `json:"payload"`
	Decision string          `json:"decision,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

const (
	hookDialTimeout = 200 * time.Millisecond
	hookAckTimeout  = 500 * time.Millisecond
)

// SendHook sends one hook event to the relay socket. It gives up after
// 200 ms; the payload should be JSON (anything else is sent as a string).
func SendHook(socket, agent, event string, payload []byte) error {
	return SendHookMessage(socket, HookMessage{Agent: agent, Event: event, Payload: jsonOrString(payload)})
}

// SendHookMessage sends one relay line; see SendHook.
func SendHookMessage(socket string, m HookMessage) error {
	if len(m.Payload) == 0 {
		m.Payload = json.RawMessage("null")
	}
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("ptyagent: hook: encode: %w", err)
	}
	line = append(line, '\n')
	c, err := net.DialTimeout("unix", socket, hookDialTimeout)
	if err != nil {
		return fmt.Errorf("ptyagent: hook: dial relay: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(hookAckTimeout))
	if _, err := c.Write(line); err != nil {
		return fmt.Errorf("ptyagent: hook: write relay: %w", err)
	}
	// Wait for the relay's "ok": hooks sent one after the other (as Claude
	// runs them) are then handled in that order, though each uses its own
	// connection. A missing ack is not an error worth blocking for.
	// Half-close first, so a reader that waits for EOF is not kept waiting.
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	var ack [3]byte
	_, _ = io.ReadFull(c, ack[:])
	return nil
}

// RunHook is the body of `hivemind hook <event>`: it reads the hook JSON
// from stdin and relays it to the running Hivemind named by
// HIVEMIND_HOOK_SOCKET for the agent HIVEMIND_AGENT_ID. It never blocks
// long; the caller should exit 0 whatever it returns, so Claude Code is
// never disturbed.
func RunHook(event string, stdin io.Reader, env func(string) string) error {
	payload, err := io.ReadAll(io.LimitReader(stdin, 8<<20))
	if err != nil {
		return fmt.Errorf("ptyagent: hook: read stdin: %w", err)
	}
	return RelayHook(event, payload, "", "", env)
}

// RelayHook relays an already-read hook payload, optionally with a local
// decision ("deny" and its reason) — used by the PreToolUse hook after the
// roles package decided.
func RelayHook(event string, payload []byte, decision, reason string, env func(string) string) error {
	socket, agent := env(EnvHookSocket), env(EnvAgentID)
	if socket == "" || agent == "" {
		return ErrNoRelay
	}
	return SendHookMessage(socket, HookMessage{Agent: agent, Event: event,
		Payload: jsonOrString(payload), Decision: decision, Reason: reason})
}

func jsonOrString(p []byte) json.RawMessage {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return json.RawMessage("null")
	}
	if json.Valid(p) {
		return json.RawMessage(p)
	}
	b, _ := json.Marshal(string(p))
	return b
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
			_, _ = c.Write([]byte("ok\n"))
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
