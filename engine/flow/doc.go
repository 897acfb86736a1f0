// Package flow is the Lead/Reviewer/Worker workflow as a pure state
// machine, the heart of package engine: one function, [Machine.Step]:
// Step(State, Event) (State, []Effect), with the limits of a [Config]
// (engine.NewConfig fills it). It reads no clock (time comes from each
// event's At), does no I/O and never changes the state
// it is given. Events are facts: a task was submitted, a trigger file in the
// task dir is complete, a worker's outputs/<subtask>.done validated, an agent's
// health changed, a timer fired, a key was pressed. Effects are intents: write
// state.json, append an event record, write assignments/<agent>.json and
// inject its one [HIVEMIND] line, spawn/restart/stop an agent, archive a
// consumed trigger to reviews/, notify the user, schedule or cancel a timer.
// Package engine's runner carries out the effects in order and feeds results
// back as events; its watchers turn files into events.
//
// Only the standard library's I/O-free packages and workspace (the
// vocabulary: State, Phase, Plan, Assignment, the task dir's names) may be
// imported here, and no clock read: TestPurePackage, run by `make lint`,
// checks both.
//
// Phases follow the state machine spec (idle … complete, error, paused) plus
// needs_human and cancelled. Automatic transitions happen inside one Step:
// checkpoint → checkpoint_review, and friction_logged → friction_sync →
// friction_resolution (the Lead's ○ notice is folded into its ● assignment).
//
// Trigger files (paths relative to the task dir, forward slashes) are
// consumed once: each instance is keyed by path, content hash and mtime
// ([TriggerKey]) in State.Consumed, and archived under reviews/ with a
// version:
//
//	plan.md                 → reviews/plan_v<N>.md  (invalid: reviews/plan_v<K>-invalid.md)
//	plan-approved.md        → reviews/<subject>-approved.md   subject = plan_v<N> or friction-resolution_v<R>
//	plan-feedback.md        → reviews/<subject>-feedback.md
//	checkpoint.md           → reviews/checkpoint_<C>_v<round>.md
//	checkpoint-approved.md  → reviews/checkpoint_<C>_v<round>-approved.md
//	checkpoint-issues.md    → reviews/checkpoint_<C>_v<round>-issues.md
//	friction/<name>.md      → reviews/friction_v<F>-<name>.md
//	friction-resolution.md  → reviews/friction-resolution_v<R>.md
//	anything meaningless now → reviews/ignored_v<I>-<path with / as _>
//
// A trigger that means nothing in the current state is logged
// (trigger_ignored) and archived as ignored, so a stale file cannot fire
// later at a wrong time; the phase does not change.
//
// The shared knowledge (knowledge.go; engine/knowledgewatch.go): agents propose
// decisions, constraints and glossary terms as notes in their own outbox,
// agents/<id>/knowledge/*.md (authored by path). A complete note becomes [KnowledgeSubmitted];
// Step validates it and emits [MergeKnowledge] (the runner merges it into
// context/*.json and archives the file to context/archive/<task>_c<V>_<agent>-<name>)
// or, when invalid, [ArchiveKnowledge] (…_c<V>-invalid_<name>). The author is
// told in its next assignment (State.KnowledgeNotes), never interrupted. Every
// assignment reads context/decisions.json, constraints.json, glossary.json.
//
// The plan parser ([ParsePlan]) and the scheduler are pure too.
package flow
