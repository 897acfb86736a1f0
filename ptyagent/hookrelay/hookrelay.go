// Package hookrelay is the client side of Hivemind's hook relay and the
// wire protocol it shares with the server in ptyagent.
//
// Claude Code runs a hook command for each hook event; that command reads
// the hook JSON on stdin and sends one line
//
//	{"agent":"<HIVEMIND_AGENT_ID>","event":"<name>","payload":<stdin json>}\n
//
// to the unix socket named by HIVEMIND_HOOK_SOCKET. The hook runs on every
// turn of every agent and Claude waits for it, so it must start fast and
// never block: this package imports the standard library only (a process
// pays for the init of every package it links), and every step has a
// deadline. The `hivemind-hook` binary (cmd/hivemind-hook) and the hidden
// `hivemind hook` sub-command both run Command.
package hookrelay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	// EnvHookToken holds the per-session secret every relay line must
	// carry: it proves which agent sent it (the relay rejects a line whose
	// token is not the named agent's).
	EnvHookToken = "HIVEMIND_HOOK_TOKEN"
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

// Events lists every hook Hivemind installs, in a stable order.
func Events() []string {
	return []string{
		HookSessionStart, HookUserPromptSubmit, HookStop, HookStopFailure,
		HookNotification, HookPermissionRequest, HookPreToolUse, HookSessionEnd,
	}
}

// BinaryName is the name of the standalone hook executable
// (cmd/hivemind-hook). It takes the event name as its only argument
// (`hivemind-hook Stop`), where the main binary takes `hivemind hook Stop`.
const BinaryName = "hivemind-hook"

// ErrNoRelay is returned by Run and Relay when the environment names no
// relay socket or agent (the process does not run under Hivemind).
var ErrNoRelay = errors.New("hookrelay: no hook relay in the environment")

// Message is one line of the relay protocol:
// {"agent":"…","token":"…","event":"…","payload":<hook stdin json>}\n
// at most MaxLine bytes. The relay answers each line with "ok\n" once the
// agent's session has queued it, or with "error: <why>\n" when it rejects
// the line (unknown agent, wrong token, line too long); clients may wait
// for it (SendMessage does, up to AckTimeout) so that hooks sent in
// sequence are handled in sequence.
// Decision/Reason are optional: the hook process sets Decision "deny" when
// it denied a PreToolUse call locally, so the denial is reported.
type Message struct {
	Agent    string          `json:"agent"`
	Token    string          `json:"token,omitempty"`
	Event    string          `json:"event"`
	Payload  json.RawMessage `json:"payload"`
	Decision string          `json:"decision,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

// Ack is the relay's answer to each accepted line; a rejected line is
// answered with NackPrefix and the reason.
const (
	Ack        = "ok\n"
	NackPrefix = "error: "
)

// ErrTooLarge is returned when a hook payload exceeds MaxPayload.
var ErrTooLarge = errors.New("hookrelay: hook input too large")

// ErrRejected wraps the relay's reason for rejecting a line.
var ErrRejected = errors.New("hookrelay: relay rejected the hook")

// Time limits of one hook process. The worst case (stdin never closed,
// relay accepting but never answering) is StdinTimeout + DialTimeout +
// AckTimeout, far below Claude Code's hook timeout.
const (
	DialTimeout  = 200 * time.Millisecond
	AckTimeout   = 500 * time.Millisecond
	StdinTimeout = time.Second
	// MaxPayload bounds the hook JSON read from stdin.
	MaxPayload = 8 << 20
	// MaxLine bounds one relay line; the relay rejects longer ones
	// without buffering them. A client whose payload would exceed it
	// sends a short note in its place (Oversized), so the event itself
	// (a Stop, say) still arrives.
	MaxLine = 1 << 20
	// maxAnswer bounds the relay's answer a client reads.
	maxAnswer = 512
)

// Oversized returns the payload sent in place of one of n bytes that does
// not fit in a relay line.
func Oversized(n int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"hivemind_error": fmt.Sprintf(
		"hook payload of %d bytes exceeds the relay limit of %d bytes; it was dropped", n, MaxLine)})
	return b
}

// Send sends one hook event to the relay socket, with this process's
// session token ($HIVEMIND_HOOK_TOKEN). It gives up on the connection
// after DialTimeout; the payload should be JSON (anything else is sent as a
// JSON string).
func Send(socket, agent, event string, payload []byte) error {
	return SendMessage(socket, Message{Agent: agent, Token: os.Getenv(EnvHookToken), Event: event, Payload: Payload(payload)})
}

// SendMessage sends one relay line and waits (at most AckTimeout) for the
// relay's answer; it returns the relay's reason when the line was
// rejected. A payload too large for a line is replaced by Oversized.
func SendMessage(socket string, m Message) error {
	if len(m.Payload) == 0 {
		m.Payload = json.RawMessage("null")
	}
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("hookrelay: encode: %w", err)
	}
	if len(line) >= MaxLine {
		m.Payload = Oversized(len(m.Payload))
		if line, err = json.Marshal(m); err != nil {
			return fmt.Errorf("hookrelay: encode: %w", err)
		}
		if len(line) >= MaxLine {
			return fmt.Errorf("hookrelay: relay line of %d bytes exceeds the limit of %d bytes", len(line), MaxLine)
		}
	}
	line = append(line, '\n')
	c, err := net.DialTimeout("unix", socket, DialTimeout)
	if err != nil {
		return fmt.Errorf("hookrelay: dial relay: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(AckTimeout))
	if _, err := c.Write(line); err != nil {
		return fmt.Errorf("hookrelay: write relay: %w", err)
	}
	// Wait for the relay's "ok": hooks sent one after the other (as Claude
	// runs them) are then handled in that order, though each uses its own
	// connection. A missing ack is not an error worth blocking for.
	// Half-close first, so a reader that waits for EOF is not kept waiting.
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	ans, _ := io.ReadAll(io.LimitReader(c, maxAnswer))
	if why, ok := bytes.CutPrefix(ans, []byte(NackPrefix)); ok {
		return fmt.Errorf("%w %s: %s", ErrRejected, m.Event, bytes.TrimSpace(why))
	}
	return nil
}

// Run reads the hook JSON from stdin and relays it to the running Hivemind
// named by HIVEMIND_HOOK_SOCKET for the agent HIVEMIND_AGENT_ID. It never
// blocks long; the caller should exit 0 whatever it returns, so Claude
// Code is never disturbed.
func Run(event string, stdin io.Reader, env func(string) string) error {
	payload, err := readStdin(stdin, StdinTimeout)
	if err != nil {
		return fmt.Errorf("hookrelay: read stdin: %w", err)
	}
	return Relay(event, payload, "", "", env)
}

// Relay relays an already-read hook payload, optionally with a local
// decision ("deny" and its reason) — used by the PreToolUse hook after the
// roles package decided.
func Relay(event string, payload []byte, decision, reason string, env func(string) string) error {
	socket, agent := env(EnvHookSocket), env(EnvAgentID)
	if socket == "" || agent == "" {
		return ErrNoRelay
	}
	return SendMessage(socket, Message{Agent: agent, Token: env(EnvHookToken), Event: event,
		Payload: Payload(payload), Decision: decision, Reason: reason})
}

// Payload returns p as a relay payload: p itself when it is JSON, "null"
// when empty, else p as a JSON string.
func Payload(p []byte) json.RawMessage {
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

// PreToolUseFunc decides a PreToolUse call from Claude's hook input and
// the agent's environment; out is printed on stdout (Claude's hook JSON).
// roles.PreToolUse has this signature.
type PreToolUseFunc func(payload []byte, env func(string) string) (out []byte, denied bool, reason string)

// Command is the body of a hook process: `hivemind-hook <event>` and
// `hivemind hook <event>` (args holds the words after "hook"; a leading
// "hook" word is accepted too). It reads the hook JSON from stdin; for
// PreToolUse it decides locally with decide (when not nil), prints Claude's
// hook JSON and relays the denial; every other event is relayed as is. It
// always returns exit status 0: a hook must never disturb the agent, even
// when Hivemind is unreachable.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string, decide PreToolUseFunc) int {
	if len(args) == 2 && args[0] == "hook" {
		args = args[1:]
	}
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintln(stderr, "usage: hivemind-hook <HookEventName>")
		return 0
	}
	event := args[0]
	payload, err := readStdin(stdin, commandStdinTimeout)
	if errors.Is(err, ErrTooLarge) && event == HookPreToolUse && decide != nil {
		// Fail closed: a call too large to read cannot be checked.
		why := fmt.Sprintf("Hivemind: the tool call is larger than %d bytes, so it cannot be checked against your role; split it into smaller calls.", MaxPayload)
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": HookPreToolUse, "permissionDecision": "deny", "permissionDecisionReason": why}})
		_, _ = stdout.Write(append(out, '\n'))
		_ = Relay(event, Oversized(len(payload)), "deny", why, env)
		return 0
	}
	if errors.Is(err, ErrTooLarge) {
		_ = Relay(event, Oversized(len(payload)), "", "", env)
		return 0
	}
	if err != nil {
		return 0
	}
	payload = bytes.TrimSpace(payload)
	decision, reason := "", ""
	if event == HookPreToolUse && decide != nil {
		out, denied, why := decide(payload, env)
		if len(out) > 0 {
			_, _ = stdout.Write(out)
		}
		if denied {
			decision, reason = "deny", why
		}
	}
	if err := Relay(event, payload, decision, reason, env); errors.Is(err, ErrRejected) {
		// Hivemind is up but refused the line: say why (Claude shows a
		// hook's stderr in its transcript). An unreachable Hivemind is
		// not worth a word.
		fmt.Fprintln(stderr, err)
	}
	return 0
}

// commandStdinTimeout is Command's StdinTimeout; a test of another limit
// lifts it, so that the machine's load cannot turn it into a timeout.
var commandStdinTimeout = StdinTimeout

// readStdin reads at most MaxPayload bytes from r (ErrTooLarge past it, with
// what was read), giving up after timeout
// (Claude writes the hook JSON and closes stdin at once; a writer that
// never closes must not hold the hook). On timeout it returns what was
// read so far. The reading goroutine is left behind then: the hook process
// exits right after.
func readStdin(r io.Reader, timeout time.Duration) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	var (
		mu   sync.Mutex
		b    []byte
		rerr error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		chunk := make([]byte, 32<<10)
		lr := io.LimitReader(r, MaxPayload+1)
		for {
			n, err := lr.Read(chunk)
			mu.Lock()
			b = append(b, chunk[:n]...)
			if err != nil && err != io.EOF {
				rerr = err
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(b) > MaxPayload {
		return b[:MaxPayload:MaxPayload], ErrTooLarge
	}
	return append([]byte(nil), b...), rerr
}
