package flow

import (
	"fmt"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// ---- subtasks ----

// markerAuthorship says why the done marker of e may not be taken from
// the outbox it lies in ("" when it may): a marker counts only in the
// outbox of the agent the subtask or fix is assigned to, and only while
// that assignment is outstanding; a marker for an unknown subtask is
// judged below (it finishes whoever waits on it).
func (st *stepper) markerAuthorship(e SubtaskDone) string {
	s := st.s
	if _, ok := s.Agents[e.Agent]; !ok {
		return fmt.Sprintf("%s is not an agent of this task", e.Agent)
	}
	if f, ok := s.Fixes[e.Subtask]; ok {
		if f.Worker != e.Agent {
			return fmt.Sprintf("fix %s is assigned to %s, not to %s: only its assignee writes its done marker", e.Subtask, f.Worker, e.Agent)
		}
		return ""
	}
	sub, ok := s.Subtasks[e.Subtask]
	if !ok || sub.Status == vocab.SubtaskDone {
		return ""
	}
	if sub.Worker != "" && sub.Worker != e.Agent {
		return fmt.Sprintf("subtask %s is assigned to %s, not to %s: only its assignee writes its output and done marker", e.Subtask, sub.Worker, e.Agent)
	}
	return ""
}

func (st *stepper) subtaskDone(e SubtaskDone) {
	s := st.s
	if why := st.markerAuthorship(e); why != "" {
		from := triggers.Path(e.Agent, triggers.Done, e.Subtask)
		to := fmt.Sprintf("%s/refused_v%d-%s", vocab.ReviewsDir, st.version("refused"), strings.ReplaceAll(from, "/", "_"))
		st.do(ArchiveTrigger{From: from, To: to})
		st.refused(from, to, e.Agent, why)
		return
	}
	if f, ok := s.Fixes[e.Subtask]; ok {
		st.fixDone(e, f)
		return
	}
	sub, ok := s.Subtasks[e.Subtask]
	if !ok {
		st.emit(vocab.RecordSubtaskDoneIgnored, e.Agent, map[string]any{"subtask": e.Subtask, "reason": "unknown subtask"})
		for _, id := range allAgents(s) {
			if a := s.Agents[id]; a.Pending && a.Subtask == e.Subtask {
				st.finishWork(id)
			}
		}
		return
	}
	if sub.Status == vocab.SubtaskDone {
		return // seen before (e.g. a rescan after restart)
	}
	worker := sub.Worker
	if sub.Status != vocab.SubtaskInProgress || worker == "" {
		// A marker only counts for an assignment that is outstanding: one
		// written before its subtask was assigned (a later checkpoint's,
		// say) must not mark it done, or the work would never be done.
		// It is moved aside so it cannot count later either (after a
		// restart's rescan, once the subtask is assigned).
		from := triggers.Path(e.Agent, triggers.Done, e.Subtask)
		to := fmt.Sprintf("%s/ignored_v%d-%s", vocab.ReviewsDir, st.version("ignored"), strings.ReplaceAll(from, "/", "_"))
		st.do(ArchiveTrigger{From: from, To: to})
		st.emit(vocab.RecordSubtaskDoneIgnored, e.Agent, map[string]any{"subtask": e.Subtask,
			"reason":   fmt.Sprintf("subtask %s is %s, not assigned to anyone: its done marker counts only once it is assigned", e.Subtask, sub.Status),
			"problem":  clip(e.Problem, maxProblem),
			"archived": to})
		return
	}
	if !e.OK {
		problem := clip(e.Problem, maxProblem)
		sub.Attempts++
		s.Subtasks[e.Subtask] = sub
		st.emit(vocab.RecordSubtaskRejected, worker, map[string]any{"subtask": e.Subtask, "problem": problem, "attempts": sub.Attempts})
		reason := fmt.Sprintf("Subtask %s was completed invalidly by %s; last problem: %s", e.Subtask, worker, problem)
		p := st.cfg.resendPolicy()
		if _, ok := p.Retry(sub.Attempts); !ok {
			st.retryWork(p, worker, "subtask:"+e.Subtask, reason, sub.Attempts) // escalates
			return
		}
		if !running(s.Phase) || s.Plan == nil {
			return
		}
		for _, ps := range s.Plan.Subtasks {
			if ps.ID == e.Subtask {
				// The new assignment names the problem; it is sent now or
				// after the backoff.
				st.workerSubtask(worker, ps, problem, true)
				st.retryWork(p, worker, "subtask:"+e.Subtask, reason, sub.Attempts)
			}
		}
		return
	}
	sub.Status = vocab.SubtaskDone
	sub.Worker = worker
	sub.CompletedAt = st.at
	s.Subtasks[e.Subtask] = sub
	st.emit(vocab.RecordSubtaskDone, worker, map[string]any{"subtask": e.Subtask})
	for _, id := range allAgents(s) {
		if a := s.Agents[id]; a.Subtask == e.Subtask {
			st.finishWork(id)
		}
	}
	st.scheduleWork()
}

func (st *stepper) fixDone(e SubtaskDone, f vocab.SubtaskState) {
	s := st.s
	if f.Status == vocab.SubtaskDone {
		return
	}
	if !e.OK && isMergeFix(e.Subtask) {
		st.mergeFixRejected(e, f)
		return
	}
	if !e.OK {
		problem := clip(e.Problem, maxProblem)
		f.Attempts++
		s.Fixes[e.Subtask] = f
		st.emit(vocab.RecordFixRejected, f.Worker, map[string]any{"fix": e.Subtask, "problem": problem, "attempts": f.Attempts})
		if s.Phase != vocab.PhaseCheckpointFix {
			return
		}
		if a, ok := s.Assignments[f.Worker]; ok && strings.HasSuffix(a.DoneMarker, e.Subtask+".done") {
			a.Rejected = problem
			s.Assignments[f.Worker] = a
		}
		st.retryWork(st.cfg.resendPolicy(), f.Worker, "fix:"+e.Subtask,
			fmt.Sprintf("Fix %s was completed invalidly by %s; last problem: %s", e.Subtask, f.Worker, problem), f.Attempts)
		return
	}
	f.Status = vocab.SubtaskDone
	f.CompletedAt = st.at
	s.Fixes[e.Subtask] = f
	st.emit(vocab.RecordFixDone, f.Worker, map[string]any{"fix": e.Subtask})
	if a, ok := s.Assignments[f.Worker]; ok && strings.HasSuffix(a.DoneMarker, e.Subtask+".done") {
		st.finishWork(f.Worker)
	}
	if s.Phase != vocab.PhaseCheckpointFix {
		return
	}
	for _, x := range s.Fixes {
		if x.Status != vocab.SubtaskDone {
			return
		}
	}
	s.CheckpointFile = ""
	st.reachCheckpoint()
}
