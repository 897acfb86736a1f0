package flow

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// This file is the pure scheduler: which subtask goes to which worker, when
// a checkpoint is reached, and who fixes a checkpoint's issues.

// subtaskPaths returns the cleaned project paths a subtask touches.
func subtaskPaths(sub vocab.Subtask) []string {
	var out []string
	for _, f := range sub.Files {
		if _, p, ok := strings.Cut(strings.TrimSpace(f), " "); ok {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, path.Clean(p))
			}
		}
	}
	return out
}

// workerIDs returns the worker agent ids in order (worker_1, worker_2, …,
// worker_10).
func workerIDs(s *State) []vocab.AgentID {
	var out []vocab.AgentID
	for id, a := range s.Agents {
		if a.Role == vocab.RoleWorker {
			out = append(out, id)
		}
	}
	vocab.SortAgents(out)
	return out
}

// allAgents returns every agent id in order.
func allAgents(s *State) []vocab.AgentID { return s.AgentIDs() }

// freeWorkers returns the workers with no unfinished work and no restart
// pending, in order.
func freeWorkers(s *State) []vocab.AgentID {
	var out []vocab.AgentID
	for _, id := range workerIDs(s) {
		a := s.Agents[id]
		if a.Pending || a.Subtask != "" || a.Paused {
			continue
		}
		if _, restarting := s.Timers[restartTimer(id)]; restarting {
			continue
		}
		out = append(out, id)
	}
	return out
}

// Assignment is one scheduling decision: worker gets subtask.
type plannedAssignment struct {
	Worker  vocab.AgentID
	Subtask vocab.Subtask
}

// planAssignments decides which ready subtasks of the current checkpoint go
// to which free workers: a subtask is ready when it is pending, in the
// current checkpoint, and all its dependencies are done; it is held back
// while an in-progress (or just assigned) subtask touches one of its files.
// Subtasks are taken in plan order, workers in id order, skipping those
// held (nil: none). Pure.
func planAssignments(s *State, held func(id vocab.AgentID) bool) []plannedAssignment {
	if s.Plan == nil {
		return nil
	}
	free := slices.DeleteFunc(freeWorkers(s), func(id vocab.AgentID) bool { return held != nil && held(id) })
	if len(free) == 0 {
		return nil
	}
	busy := map[string]bool{}
	for _, sub := range s.Plan.Subtasks {
		if s.Subtasks[sub.ID].Status == vocab.SubtaskInProgress {
			for _, p := range subtaskPaths(sub) {
				busy[p] = true
			}
		}
	}
	var out []plannedAssignment
	for _, sub := range s.Plan.Subtasks {
		if len(free) == 0 {
			break
		}
		if sub.Checkpoint != s.CurrentCheckpoint || s.Subtasks[sub.ID].Status != vocab.SubtaskPending {
			continue
		}
		if !depsDone(s, sub) {
			continue
		}
		paths := subtaskPaths(sub)
		conflict := false
		for _, p := range paths {
			if busy[p] {
				conflict = true
				break
			}
		}
		if conflict {
			continue
		}
		for _, p := range paths {
			busy[p] = true
		}
		out = append(out, plannedAssignment{Worker: free[0], Subtask: sub})
		free = free[1:]
	}
	return out
}

func depsDone(s *State, sub vocab.Subtask) bool {
	for _, d := range sub.Dependencies {
		if s.Subtasks[d].Status != vocab.SubtaskDone {
			return false
		}
	}
	return true
}

// checkpointDone reports whether every subtask of checkpoint cp is done.
func checkpointDone(s *State, cp int) bool {
	if s.Plan == nil {
		return false
	}
	found := false
	for _, sub := range s.Plan.Subtasks {
		if sub.Checkpoint != cp {
			continue
		}
		found = true
		if s.Subtasks[sub.ID].Status != vocab.SubtaskDone {
			return false
		}
	}
	return found
}

// nextCheckpoint returns the first checkpoint, in plan order, that still has
// a subtask not done; 0 when all work is done.
func nextCheckpoint(s *State) int {
	if s.Plan == nil {
		return 0
	}
	for _, c := range s.Plan.Checkpoints {
		for _, sub := range s.Plan.Subtasks {
			if sub.Checkpoint == c.ID && s.Subtasks[sub.ID].Status != vocab.SubtaskDone {
				return c.ID
			}
		}
	}
	return 0
}

// inProgress reports whether any subtask is being worked on.
func inProgress(s *State) bool {
	for _, st := range s.Subtasks {
		if st.Status == vocab.SubtaskInProgress {
			return true
		}
	}
	return false
}

// fixers returns the workers who must fix checkpoint cp's issues, with the
// files each owns in that checkpoint: the workers that did a subtask of cp
// whose file is named in the issues text; if none is named, every worker
// that did a subtask of cp. Workers busy with unfinished work are left out
// (their subtask goes on).
func fixers(s *State, cp int, issues []byte) (ids []vocab.AgentID, files map[vocab.AgentID][]string) {
	files = map[vocab.AgentID][]string{}
	if s.Plan == nil {
		return nil, files
	}
	owned := map[vocab.AgentID][]string{}
	for _, sub := range s.Plan.Subtasks {
		if sub.Checkpoint != cp {
			continue
		}
		w := s.Subtasks[sub.ID].Worker
		if w == "" {
			continue
		}
		owned[w] = append(owned[w], subtaskPaths(sub)...)
	}
	named := map[vocab.AgentID]bool{}
	for w, ps := range owned {
		for _, p := range ps {
			if bytes.Contains(issues, []byte(p)) {
				named[w] = true
			}
		}
	}
	pick := func(w vocab.AgentID) bool { return named[w] }
	if len(named) == 0 {
		pick = func(w vocab.AgentID) bool { return len(owned[w]) > 0 }
	}
	for _, w := range workerIDs(s) {
		if !pick(w) || s.Agents[w].Pending {
			continue
		}
		ids = append(ids, w)
		files[w] = dedupe(owned[w])
	}
	return ids, files
}

func dedupe[T comparable](xs []T) []T {
	seen := map[T]bool{}
	var out []T
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// fixID names one fix assignment: fix-cp<checkpoint>-r<round>-<agent>.
func fixID(cp, round int, agent vocab.AgentID) string {
	return fmt.Sprintf("fix-cp%d-r%d-%s", cp, round, agent)
}

// ---- stepper side: effects ----

// scheduleWork assigns ready subtasks to free workers and detects the end of
// the checkpoint (→ checkpoint → checkpoint_review) or a plan that cannot
// progress (→ error). Only acts in executing.
func (st *stepper) scheduleWork() {
	s := st.s
	if s.Phase != vocab.PhaseExecuting {
		return
	}
	if checkpointDone(s, s.CurrentCheckpoint) {
		st.reachCheckpoint()
		return
	}
	plan := planAssignments(s, st.held)
	for _, pa := range plan {
		sub := s.Subtasks[pa.Subtask.ID]
		sub.Status = vocab.SubtaskInProgress
		sub.Worker = pa.Worker
		sub.StartedAt = st.at
		s.Subtasks[pa.Subtask.ID] = sub
		st.emit(vocab.RecordSubtaskAssigned, pa.Worker, map[string]any{"subtask": pa.Subtask.ID, "checkpoint": pa.Subtask.Checkpoint})
		st.workerSubtask(pa.Worker, pa.Subtask, "", false)
	}
	if len(plan) == 0 && !inProgress(s) && !anyPending(s) && len(s.Holds) == 0 && !anyComing(s) {
		st.fail("deadlock", fmt.Sprintf("checkpoint %d cannot progress: no subtask is ready and none is running", s.CurrentCheckpoint))
	}
}

// anyComing reports whether a worker is on its way back to take work: it
// is starting, being restarted, waits for its restart (backoff) or is
// paused by the user. That is a wait, not a deadlock.
func anyComing(s *State) bool {
	for _, id := range workerIDs(s) {
		a := s.Agents[id]
		if _, restarting := s.Timers[restartTimer(id)]; restarting || a.Paused ||
			a.Status == vocab.HealthStarting || a.Status == vocab.HealthRestarting {
			return true
		}
	}
	return false
}

func anyPending(s *State) bool {
	for _, a := range s.Agents {
		if a.Pending {
			return true
		}
	}
	return false
}
