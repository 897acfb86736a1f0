package flow

import (
	"fmt"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// This file is the git side of a checkpoint (Config.Git): every worker
// works in its own worktree and branch, so when a checkpoint is reached the
// machine first asks the runner to merge the branches (MergeCheckpoint) and
// waits in `checkpoint` for the outcome (CheckpointMerged). A clean merge
// starts the review with the combined diff and the check result in the
// Reviewer's reads; a conflict sends the conflicting workers a fix
// assignment (checkpoint_fix) and, when every fix is done, merges again.
// The run never goes on before a clean merge. Without git none of this
// runs and a checkpoint goes straight to its review.

// mergeFixPrefix starts the id of every merge-conflict fix.
const mergeFixPrefix = "merge-"

// mergeFixID names one merge-conflict fix: merge-cp<checkpoint>-a<attempt>-<agent>.
func mergeFixID(cp, attempt int, agent vocab.AgentID) string {
	return fmt.Sprintf("%scp%d-a%d-%s", mergeFixPrefix, cp, attempt, agent)
}

func isMergeFix(id string) bool { return strings.HasPrefix(id, mergeFixPrefix) }

// mergeEffect is the MergeCheckpoint for the merge the state waits for.
func (st *stepper) mergeEffect() MergeCheckpoint {
	m := st.s.Merge
	return MergeCheckpoint{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt, Workers: workerIDs(st.s)}
}

// requestMerge asks for the merge of the current checkpoint (state
// checkpoint, git projects) and waits for CheckpointMerged.
func (st *stepper) requestMerge() {
	s := st.s
	cp := s.CurrentCheckpoint
	m := s.Merge
	if m.Checkpoint != cp {
		m = vocab.MergeState{Checkpoint: cp}
	}
	m.Round = s.Versions[checkpointKey(cp)] + 1
	m.Attempt++
	m.Waiting = true
	s.Merge = m
	st.emit(vocab.RecordMergeRequested, "", map[string]any{"checkpoint": cp, "round": m.Round, "attempt": m.Attempt})
	st.do(st.mergeEffect())
}

// resumeMerge asks again for a merge whose result a restart lost (the
// merge of branches already merged is a no-op). A paused run asks too: the
// result is deferred until the pause ends.
func (st *stepper) resumeMerge() {
	s := st.s
	phase := s.Phase
	if phase == vocab.PhasePaused {
		phase = s.PreviousPhase
	}
	if phase != vocab.PhaseCheckpoint || !s.Merge.Waiting {
		return
	}
	st.emit(vocab.RecordMergeRequested, "", map[string]any{"checkpoint": s.Merge.Checkpoint, "round": s.Merge.Round,
		"attempt": s.Merge.Attempt, "resumed": true})
	st.do(st.mergeEffect())
}

// retryMerge is Retry after a failed or endlessly conflicting merge.
func (st *stepper) retryMerge() {
	s := st.s
	s.Merge.Conflicts = 0
	s.Merge.Waiting = false
	st.enter(vocab.PhaseCheckpoint)
	if st.cfg.Git {
		st.requestMerge()
		return
	}
	// Git went away (the project is no longer a repository): review the
	// shared directory as without git.
	st.reviewCheckpoint()
}

func (st *stepper) checkpointMerged(e CheckpointMerged) {
	s := st.s
	m := s.Merge
	details := map[string]any{"checkpoint": e.Checkpoint, "round": e.Round, "attempt": e.Attempt}
	ignore := func(reason string) {
		details["reason"] = reason
		st.emit(vocab.RecordMergeResultIgnored, "", details)
	}
	switch {
	case s.Phase != vocab.PhaseCheckpoint:
		ignore("not waiting at a checkpoint (" + string(s.Phase) + ")")
		return
	case !m.Waiting:
		ignore("no merge was requested")
		return
	case e.Checkpoint != m.Checkpoint || e.Round != m.Round || e.Attempt != m.Attempt:
		ignore(fmt.Sprintf("stale: waiting for checkpoint %d round %d attempt %d", m.Checkpoint, m.Round, m.Attempt))
		return
	}
	m.Waiting = false
	s.Merge = m
	cp := m.Checkpoint
	switch {
	case e.Error != "":
		details["error"] = e.Error
		st.emit(vocab.RecordMergeFailed, "", details)
		st.needsHuman("git_merge", fmt.Sprintf("Merging the workers' branches at checkpoint %d failed: %s", cp, e.Error))
	case e.Merged:
		m.DiffFile, m.CheckFile, m.Checked, m.CheckOK, m.MergedDir = e.DiffFile, e.CheckFile, e.Checked, e.CheckOK, e.MergedDir
		s.Merge = m
		details["diff"] = e.DiffFile
		if e.Checked {
			details["check"], details["check_ok"] = e.CheckFile, e.CheckOK
		}
		st.emit(vocab.RecordCheckpointMerged, "", details)
		st.reviewCheckpoint()
	case len(e.Conflicts) > 0:
		st.mergeConflicts(e)
	default:
		st.needsHuman("git_merge", fmt.Sprintf("The merge of checkpoint %d reported neither a result nor a conflict", cp))
	}
}

// mergeConflicts turns a conflicting merge into fix assignments for the
// workers whose branches did not merge.
func (st *stepper) mergeConflicts(e CheckpointMerged) {
	s := st.s
	m := s.Merge
	cp := m.Checkpoint
	m.Conflicts++
	s.Merge = m
	var names []vocab.AgentID
	var files []string
	for _, c := range e.Conflicts {
		names = append(names, c.Worker)
		files = append(files, c.Files...)
	}
	st.emit(vocab.RecordMergeConflict, "", map[string]any{"checkpoint": cp, "attempt": m.Attempt, "workers": names,
		"files": dedupe(files), "conflicts": m.Conflicts})
	if m.Conflicts > st.cfg.MaxRevisionCycles {
		st.needsHuman("merge_conflicts", fmt.Sprintf("Checkpoint %d still does not merge after %d conflict rounds (max_revision_cycles=%d); conflicting workers: %s",
			cp, m.Conflicts-1, st.cfg.MaxRevisionCycles, vocab.JoinAgents(names)))
		return
	}
	var fixers []MergeConflict
	seen := map[vocab.AgentID]bool{}
	for _, c := range e.Conflicts {
		if a, ok := s.Agents[c.Worker]; !ok || a.Role != vocab.RoleWorker || seen[c.Worker] {
			continue
		}
		seen[c.Worker] = true
		fixers = append(fixers, c)
	}
	if len(fixers) == 0 {
		st.needsHuman("git_merge", fmt.Sprintf("The merge of checkpoint %d conflicted for unknown workers: %s", cp, vocab.JoinAgents(names)))
		return
	}
	if s.Fixes == nil {
		s.Fixes = map[string]vocab.SubtaskState{}
	}
	var ids []vocab.AgentID
	for _, c := range fixers {
		s.Fixes[mergeFixID(cp, m.Attempt, c.Worker)] = vocab.SubtaskState{Status: vocab.SubtaskInProgress, Worker: c.Worker, StartedAt: st.at}
		ids = append(ids, c.Worker)
	}
	st.enter(vocab.PhaseCheckpointFix)
	st.emit(vocab.RecordFixStarted, "", map[string]any{"checkpoint": cp, "merge_attempt": m.Attempt, "agents": ids})
	for _, c := range fixers {
		st.mergeFixAssignment(c, mergeFixID(cp, m.Attempt, c.Worker))
	}
	// The other side of each conflict is not told: its branch merged
	// first and there is nothing for it to do (a notice would cost it a
	// paid turn and change nothing).
}

// mergeFixAssignment asks a worker to resolve the conflict markers that
// merging the checkpoint's other work left in its files.
func (st *stepper) mergeFixAssignment(c MergeConflict, id string) {
	s := st.s
	cp := s.CurrentCheckpoint
	out := outputOf(c.Worker, id)
	done := triggers.Path(c.Worker, triggers.Done, id)
	var reads []string
	if c.HunksFile != "" {
		reads = append(reads, c.HunksFile)
	}
	if s.PlanFile != "" {
		reads = append(reads, s.PlanFile)
	}
	writes := []string{out}
	for _, f := range c.Files {
		writes = append(writes, st.projectFile(f))
	}
	with := "the work merged before yours"
	if len(c.With) > 0 {
		with = vocab.JoinAgents(c.With)
	}
	hunks := "your reads"
	if c.HunksFile != "" {
		hunks = st.abs(c.HunksFile)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Merging your branch at checkpoint %d conflicted with %s in %s. ", cp, with, strings.Join(c.Files, ", "))
	fmt.Fprintf(&b, "Those files in your working directory now contain conflict markers (<<<<<<< / ||||||| / ======= / >>>>>>>); "+
		"the conflicting hunks are in %s. Keep the intent of both sides, remove every marker, and change nothing else. ", hunks)
	fmt.Fprintf(&b, "Then write %s saying how you resolved each conflict, then, last, the done marker %s "+
		"containing {\"agent_id\": %q, \"output_file\": %q, \"completed_at\": \"<RFC 3339 time>\"}. "+
		"Hivemind commits your resolution and merges the checkpoint again.", out, done, c.Worker, out)
	st.send(message{agent: c.Worker, what: fmt.Sprintf("Resolve the merge conflict of checkpoint %d", cp), body: b.String(),
		reads: reads, writes: writes, done: done})
}

// mergeFixRejected handles a merge fix whose completion was refused (the
// runner found conflict markers left): the worker gets the assignment
// again with the problem, past max_retries the run needs a human.
func (st *stepper) mergeFixRejected(e SubtaskDone, f vocab.SubtaskState) {
	s := st.s
	problem := clip(e.Problem, maxProblem)
	f.Attempts++
	s.Fixes[e.Subtask] = f
	st.emit(vocab.RecordFixRejected, f.Worker, map[string]any{"fix": e.Subtask, "problem": problem, "attempts": f.Attempts})
	p := st.cfg.resendPolicy()
	reason := fmt.Sprintf("%s's conflict resolution %s was refused; last problem: %s", f.Worker, e.Subtask, problem)
	if _, ok := p.Retry(f.Attempts); ok && s.Phase != vocab.PhaseCheckpointFix {
		return
	}
	if a, ok := s.Assignments[f.Worker]; ok && strings.HasSuffix(a.DoneMarker, e.Subtask+".done") {
		a.Rejected = "Your last completion was refused: " + problem +
			". Remove every remaining conflict marker, then write the output and the done marker again."
		s.Assignments[f.Worker] = a
		ag := s.Agents[f.Worker]
		ag.Pending = true
		s.Agents[f.Worker] = ag
	}
	st.retryWork(p, f.Worker, "merge_conflicts", reason, f.Attempts)
}

// mergeReview adds the last clean merge of the current checkpoint to the
// Reviewer's reads and says what it is.
func (st *stepper) mergeReview(reads []string) ([]string, string) {
	s := st.s
	m := s.Merge
	if m.Checkpoint != s.CurrentCheckpoint || m.DiffFile == "" {
		return reads, ""
	}
	reads = append(reads, m.DiffFile)
	var b strings.Builder
	fmt.Fprintf(&b, "Every worker's branch was merged into the task branch: the combined diff of this checkpoint is %s", st.abs(m.DiffFile))
	if m.MergedDir != "" {
		fmt.Fprintf(&b, " and the merged code is at %s (review it there: the project directory does not have it)", m.MergedDir)
	}
	b.WriteString(". ")
	if m.Checked && m.CheckFile != "" {
		reads = append(reads, m.CheckFile)
		check := "The project's check"
		if st.cfg.Check != "" {
			check = fmt.Sprintf("The project's check `%s`", st.cfg.Check)
		}
		verdict := "passed"
		if !m.CheckOK {
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "%s %s on the merged code (output: %s).", check, verdict, st.abs(m.CheckFile))
		if !m.CheckOK {
			b.WriteString(" A failing check is an issue to report.")
		}
	}
	return reads, b.String()
}
