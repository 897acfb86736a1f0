package engine

import (
	"github.com/hivemind-dev/hivemind/vocab"
)

// Agents is what the Runner needs from the agent layer (implemented by
// ptyagent.Manager; a fake in tests). Every method returns quickly; results
// come back as events (AgentHealth, InjectionResult).
type Agents interface {
	// Start starts (or, with resume, restarts keeping its conversation) the
	// agent with that id and role.
	Start(id vocab.AgentID, role vocab.Role, resume bool) error
	// Stop stops the agent gracefully (escalating to SIGKILL).
	Stop(id vocab.AgentID) error
	// Inject queues one message for the agent; it is delivered when the
	// agent is ready and idle. The outcome arrives as an InjectionResult.
	Inject(id vocab.AgentID, seq int, text string) error
	// HoldDelivery stops (hold) or lets the agent layer type the
	// messages queued for the agent; a hold stands across restarts.
	HoldDelivery(id vocab.AgentID, hold bool)
	// Withdraw takes back the agent's queued messages with a seq below
	// before that are not being typed, and returns their seqs: no result
	// comes for them from the agent layer.
	Withdraw(id vocab.AgentID, before int) []int
}
