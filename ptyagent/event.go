package ptyagent

import "time"

// Health is an agent's state as seen from outside. The strings are the
// ones the engine and the TUI use.
type Health string

// Health states.
const (
	HealthStarting          Health = "starting"
	HealthReady             Health = "ready"
	HealthBusy              Health = "busy"
	HealthIdle              Health = "idle"
	HealthWaitingPermission Health = "waiting_permission"
	HealthRateLimited       Health = "rate_limited"
	HealthHangWarning       Health = "hang_warning"
	HealthHung              Health = "hung"
	HealthExited            Health = "exited"
)

// Injectable reports whether a message may be typed into an agent in this
// state.
func (h Health) Injectable() bool { return h == HealthReady || h == HealthIdle }

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
	Agent    string
	Kind     EventKind
	Health   Health // current health (all kinds)
	ExitCode int    // for exited
	PID      int
	Seq      int    // for Delivered / DeliveryFailed
	Detail   string // human-readable reason, hook name, attempts …
	// Payload is the relayed hook JSON for EventHook (e.g. the Stop hook's
	// last_assistant_message). Nil for other kinds.
	Payload []byte
	At      time.Time
}
