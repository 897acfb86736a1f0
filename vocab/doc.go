// Package vocab is the vocabulary every package of Hivemind shares, with
// no I/O: the workflow's phases (Phase), agents' health (Health), roles
// (Role) and ids (AgentID), the task (Task), its plan (Plan, Subtask), the
// content of state.json (State, AgentState, Assignment, …), the records
// of events.jsonl (EventRecord, IsMilestone), usage and cost (Usage), what
// waits for the user (NeedsYou), the names of the workspace layout
// (StateFile, OutboxesDir, …) and the shared-knowledge note an agent
// writes (ParseInboxEntry).
//
// It imports only the standard library's I/O-free packages, so the pure
// state machine (engine/flow) and every package that only needs the words
// link no file layer, lock or file watcher. Reading and writing these
// records on disk is package workspace's.
package vocab
