package tui

import (
	"github.com/hivemind-dev/hivemind/vocab"
)

// SnapshotMsg carries the engine's current state to the TUI. Send one with
// program.Send whenever the state changes (and once at start).
type SnapshotMsg struct {
	// State is the engine state (state.json).
	State vocab.State
	// Events is the tail of events.jsonl, oldest first. It replaces the
	// events shown so far; nil keeps them.
	Events []vocab.EventRecord
	// Health is the live health per agent id. Agents missing here fall
	// back to State.Agents[id].Status.
	Health map[vocab.AgentID]vocab.Health
	// Knowledge is the shared knowledge (decisions, constraints, glossary
	// terms), newest first, for the knowledge panel. nil keeps the list.
	Knowledge []KnowledgeItem
}

// NotifyMsg is a notice for the user: shown in the status line until the
// next key press, and rung as a terminal notification (bell, OSC 9, OSC 777).
type NotifyMsg struct {
	Level   string // "info", "warn" or "error"
	Message string
}

// termsChangedMsg says at least one agent screen changed since the last one.
type termsChangedMsg struct{}

// termsClosedMsg says the change channel was closed: no more screen updates.
type termsClosedMsg struct{}

// frameTickedMsg ends a frame-rate wait: draw what changed meanwhile.
type frameTickedMsg struct{}

// clockTickedMsg advances the elapsed-time display.
type clockTickedMsg struct{ gen int }
