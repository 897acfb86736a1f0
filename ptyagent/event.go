package ptyagent

import (
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	EventHealth         EventKind = "health"          // Health changed (ExitCode for exited)
	EventDelivered      EventKind = "delivered"       // message Seq was submitted
	EventDeliveryFailed EventKind = "delivery_failed" // message Seq could not be submitted
	EventHookDenied     EventKind = "hook_denied"     // a PreToolUse hook denied a tool call
	EventHook           EventKind = "hook"            // any relayed hook (Detail = hook name)
)

// Event is what the agent layer reports to its user (the engine runner,
// the TUI). It never contains environment values.
type Event struct {
	Agent    vocab.AgentID
	Kind     EventKind
	Health   vocab.Health // current health (all kinds)
	ExitCode int          // for exited
	PID      int
	Seq      int    // for Delivered / DeliveryFailed
	Detail   string // human-readable reason, hook name, attempts …
	// Cause is, for exited, a diagnosed cause a restart cannot fix (set
	// by whoever diagnosed it, e.g. a remote host found unreachable).
	Cause string
	// Stopped is, for exited, that Hivemind stopped the agent (Stop, Kill,
	// the manager's Close) or could not start it because the manager is
	// closed: the end of the run, not a crash.
	Stopped bool
	// Payload is the relayed hook JSON for EventHook (e.g. the Stop hook's
	// last_assistant_message). Nil for other kinds.
	Payload []byte
	At      time.Time
}
