// Package workspace owns Hivemind's on-disk workspace: the directory layout
// under <project>/.hivemind, crash-safe atomic writes, state.json (with a
// single writer, rolling backups and restore), the append-only events.jsonl
// log, the workspace lock and per-resource locks, assignments, worker
// outputs and done markers, archived triggers, heartbeats, the cross-task
// friction log and retention.
//
// Layout:
//
//	<root>/                     default <project>/.hivemind
//	  hivemind.lock             one engine per workspace (pid, host, start)
//	  friction.json             cross-task friction log
//	  context/                  shared knowledge, across tasks (knowledge.go):
//	    decisions.json constraints.json glossary.json   engine-owned
//	    changes.jsonl           one line per change (add, update, remove)
//	    inbox/<agent>-<n>.md    entries proposed by agents
//	    archive/                merged or rejected inbox files
//	  config.toml, roles/       optional, owned by other packages
//	  tasks/<task_id>/
//	    task.json task.md       immutable task definition
//	    state.json              written only through a StateStore
//	    backups/                rolling state.json backups (10)
//	    blobs/<sha256>          long strings state.json references (immutable)
//	    events.jsonl            one JSON object a line, fsync'd per event
//	    assignments/ outputs/ reviews/ friction/ logs/agents/ heartbeats/
//	    locks/                  per-resource lock files
//
// The records it keeps (Task, State, Assignment, EventRecord, …) and the
// layout's names are package vocab's, which does no I/O; this package
// reads and writes them. Nothing here knows about terminals or the workflow. Every file the engine
// writes goes through WriteFileAtomic (temp file in the same directory,
// fsync, rename, fsync directory), which never follows a symlink planted at
// the destination, and every path inside a task directory goes through
// TaskDir.Path, which rejects paths (and symlinks) that lead outside it.
//
// The package is Unix-only: locks use flock(2) and liveness uses kill(pid, 0).
package workspace
