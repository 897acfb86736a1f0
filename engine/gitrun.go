package engine

import (
	"context"
	"errors"
	"strconv"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// GitWork is what the Runner needs from git when workers have their own
// worktrees (main adapts internal/gitwork to it; nil means no git). Both
// calls are synchronous.
type GitWork interface {
	// Commit commits everything the worker changed in its worktree with
	// a message naming the subtask ("" sha: nothing to commit). An error
	// wrapping ErrUnresolved means conflict markers are left in a
	// conflict fix.
	Commit(agent, subtask, summary string) (sha string, err error)
	// Merge merges the checkpoint's worker branches into the task branch,
	// runs the check and writes the files the event names. It honours ctx
	// (the check is killed when the run ends).
	Merge(ctx context.Context, m MergeCheckpoint) CheckpointMerged
}

// ErrUnresolved is wrapped by GitWork.Commit when a conflict fix still
// holds conflict markers.
var ErrUnresolved = errors.New("conflict markers left")

// gitCommit commits a worker's work when its subtask (or fix) is done,
// before Step sees the event. A commit refused for conflict markers turns
// the event into a rejection, so Step sends the fix back. Run on the
// runner goroutine (a commit costs ~20 ms).
func (r *Runner) gitCommit(ev SubtaskDone) SubtaskDone {
	if r.cfg.Git == nil || !ev.OK {
		return ev
	}
	agent, summary, ok := CommitTarget(r.state, ev)
	if !ok {
		return ev
	}
	sha, err := r.cfg.Git.Commit(string(agent), ev.Subtask, summary)
	switch {
	case errors.Is(err, ErrUnresolved):
		ev.OK, ev.Problem = false, err.Error()
		r.record(vocab.EventRecord{Time: r.cfg.Clock(), Type: vocab.RecordCommitRefused, Task: r.state.TaskID, Agent: agent,
			Details: map[string]any{"subtask": ev.Subtask, "error": err.Error()}})
	case err != nil:
		// Not done: work that is not committed would be merged by nobody.
		// The work stays in the worktree; the worker is told to mark it
		// done again (bounded by max_retries, then needs_human with this
		// cause), and the checkpoint's merge commits what is left.
		ev.OK, ev.Problem = false, "Hivemind could not commit your work ("+err.Error()+"); your files are kept in your working directory. Write the done marker again to retry the commit"
		r.record(vocab.EventRecord{Time: r.cfg.Clock(), Type: vocab.RecordGitCommitFailed, Task: r.state.TaskID, Agent: agent,
			Details: map[string]any{"subtask": ev.Subtask, "error": err.Error()}})
	case sha != "":
		r.record(vocab.EventRecord{Time: r.cfg.Clock(), Type: vocab.RecordSubtaskCommitted, Task: r.state.TaskID, Agent: agent,
			Details: map[string]any{"subtask": ev.Subtask, "sha": sha}})
	}
	return ev
}

// CommitTarget returns the worker whose worktree holds the work of a done
// subtask or fix in state s, and the commit summary. Work already
// recorded as done (a marker seen again after a restart) is not committed
// again: whatever the worker has changed since belongs to its next work.
// Exported for the remote workers, whose commit is made on their host
// before their done marker reaches the runner.
func CommitTarget(s State, ev SubtaskDone) (agent vocab.AgentID, summary string, ok bool) {
	if f, found := s.Fixes[ev.Subtask]; found {
		if f.Status == vocab.SubtaskDone {
			return "", "", false
		}
		agent = f.Worker
		summary = "fix the checkpoint " + strconv.Itoa(s.CurrentCheckpoint) + " review issues"
		if flow.IsMergeFix(ev.Subtask) {
			summary = "resolve the merge conflicts of checkpoint " + strconv.Itoa(s.CurrentCheckpoint)
		}
	} else if sub, found := s.Subtasks[ev.Subtask]; found {
		if sub.Status == vocab.SubtaskDone {
			return "", "", false
		}
		agent = sub.Worker
		if s.Plan != nil {
			for _, ps := range s.Plan.Subtasks {
				if ps.ID == ev.Subtask {
					summary = flow.FirstLine(ps.Description)
				}
			}
		}
	} else {
		return "", "", false
	}
	if agent == "" {
		agent = ev.Agent
	}
	if a, found := s.Agents[agent]; !found || a.Role != vocab.RoleWorker {
		return "", "", false
	}
	if summary == "" {
		summary = "done"
	}
	return agent, summary, true
}

// startMerge runs a MergeCheckpoint off the runner goroutine (the check
// may take minutes) and sends its outcome back as an event. The merge is
// bound to the Run context: ending the run kills the check.
func (r *Runner) startMerge(m MergeCheckpoint) {
	if r.cfg.Git == nil {
		r.Send(CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt,
			Error: "the project is not a git repository (no worktrees to merge)", At: r.cfg.Clock()})
		return
	}
	ctx := r.runCtx
	if ctx == nil {
		ctx = context.Background()
	}
	m.Workers = append([]vocab.AgentID(nil), m.Workers...)
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		ev := r.cfg.Git.Merge(ctx, m)
		ev.Checkpoint, ev.Round, ev.Attempt = m.Checkpoint, m.Round, m.Attempt
		if ev.At.IsZero() {
			ev.At = r.cfg.Clock()
		}
		if ctx.Err() != nil {
			return // the run is over; a resumed run asks again
		}
		r.Send(ev)
	}()
}

// Republish sends the current snapshot to OnSnapshot again (on the runner
// goroutine), for data that changes outside the state machine, such as
// the workers' changed-file counts. Safe from any goroutine.
func (r *Runner) Republish() { r.enqueue(runnerItem{republish: true}) }
