// Package gitwork holds every git mechanic of Hivemind's per-worker
// isolation: a task branch hivemind/<task_id> created from the user's HEAD,
// one worktree and branch per worker (hivemind/<task_id>-<agent_id>, under
// <workspace>/worktrees/<agent_id>), a commit per finished subtask, a merge
// of every worker branch into the task branch at each checkpoint (in a
// scratch worktree, with the project's check command run on the result),
// diffs for people and the TUI, and clean-up at the end or after a crash.
//
// It drives the real git command line (os/exec); every call is synchronous.
// The user's working tree, index and current branch are never touched,
// except by Finish(true), which merges the task branch into the current
// branch only when the working tree is clean.
//
// Worker branches cannot be named hivemind/<task_id>/<agent_id>: git stores
// refs as paths, so the branch hivemind/<task_id> and a branch below it
// cannot both exist ("cannot lock ref ... exists").
package gitwork
