// Package engine runs the Lead/Reviewer/Worker workflow: the [Runner]
// drives the pure state machine of package engine/flow (Step(State, Event)
// (State, []Effect)) and is everything around it that touches the world.
//
//	engine/flow        the machine: events, effects, Step, plan parsing and
//	                   validation, scheduling, retry policy, replay and
//	                   recovery; imports only the standard library's I/O-free
//	                   packages and workspace, reads no clock
//	runner.go          one goroutine that owns the state: takes events in
//	                   order, steps, saves state.json, appends events.jsonl,
//	                   carries out the effects (effects.go), runs timers
//	runner_log.go      the event log writer
//	watcher.go         task-dir trigger files and done markers → events,
//	                   after a quiet period
//	knowledgewatch.go  the outboxes' notes (agents/*/knowledge/) → KnowledgeSubmitted
//	quiet.go           the quiet-period tracker both watchers use
//	gitrun.go          the checkpoint merge and check command (GitWork)
//	config.go          NewConfig: the machine's limits from internal/config
//
// The machine's types are aliased here (flow.go: engine.State, engine.Event,
// …) for callers that hand events and effects to the runner; its constants
// and functions (flow.ParsePlan, …) are named from flow.
package engine
