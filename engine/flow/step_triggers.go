package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// ---- triggers ----

// Trigger kinds: the rows of the one trigger table (workspace/triggers).
const (
	trigPlan               = triggers.Plan
	trigPlanApproved       = triggers.PlanApproved
	trigPlanFeedback       = triggers.PlanFeedback
	trigCheckpoint         = triggers.Checkpoint
	trigCheckpointApproved = triggers.CheckpointApproved
	trigCheckpointIssues   = triggers.CheckpointIssues
	trigFrictionResolution = triggers.FrictionResolution
	trigFriction           = triggers.Friction
)

// triggerHandler takes one complete trigger file of the table, in a phase
// where it means something (done markers come as SubtaskDone).
type triggerHandler func(st *stepper, p, key string, ref triggers.Ref, content []byte)

// triggerHandlers dispatch the watched kinds of the trigger table
// (TestTriggerTableHandled ties the two).
var triggerHandlers = map[triggers.Kind]triggerHandler{
	trigPlan:               func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.planSubmitted(p, key, c) },
	trigPlanApproved:       func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.planApproved(p, key, c) },
	trigPlanFeedback:       func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.planFeedbackIn(p, key, c) },
	triggers.PlanDecision:  func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.planDecision(p, key, c) },
	trigCheckpoint:         func(st *stepper, p, key string, _ triggers.Ref, _ []byte) { st.checkpointWritten(p, key) },
	trigCheckpointApproved: func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.checkpointApproved(p, key, c) },
	trigCheckpointIssues:   func(st *stepper, p, key string, _ triggers.Ref, c []byte) { st.checkpointIssues(p, key, c) },
	trigFrictionResolution: func(st *stepper, p, key string, _ triggers.Ref, _ []byte) { st.frictionResolved(p, key) },
	trigFriction:           func(st *stepper, p, key string, ref triggers.Ref, c []byte) { st.frictionLogged(p, key, ref, c) },
}

// TriggerKey identifies one instance of a trigger file: its path, content
// hash and modification time. A consumed key never fires again.
func TriggerKey(p string, content []byte, mod time.Time) string {
	sum := sha256.Sum256(content)
	k := p + "@" + hex.EncodeToString(sum[:8])
	if !mod.IsZero() {
		k += "@" + mod.UTC().Format(time.RFC3339Nano)
	}
	return k
}

func (st *stepper) trigger(e TriggerCompleted) {
	s := st.s
	p := cleanPath(e.Path)
	key := TriggerKey(p, e.Content, e.ModTime)
	if e.Inode != 0 {
		key += fmt.Sprintf("@i%d", e.Inode)
	}
	if s.Consumed[key] {
		to := s.Archives[key]
		st.emit(vocab.RecordTriggerDuplicate, e.Agent, map[string]any{"path": p, "archived": to})
		if to != "" {
			st.do(ArchiveTrigger{From: p, To: to})
		}
		return
	}
	ref, isTrigger := triggers.Parse(p)
	spec, _ := triggers.Lookup(ref.Kind)
	handle := triggerHandlers[ref.Kind]
	if !isTrigger || handle == nil {
		st.emit(vocab.RecordTriggerIgnored, e.Agent, map[string]any{"path": p, "state": string(s.Phase), "reason": "not a trigger file"})
		return
	}
	if why := st.authorship(ref, spec); why != "" {
		st.refuseTrigger(p, key, ref.Owner, why)
		return
	}
	if e.Problem != "" {
		st.rejectTrigger(p, key, ref, e)
		return
	}
	if !spec.Means(s.Phase) {
		st.ignoreTrigger(p, key, ref.Owner, fmt.Sprintf("%s means nothing in state %s", p, s.Phase))
		return
	}
	handle(st, p, key, ref, e.Content)
}

// authorship says why the trigger ref may not be taken from where it lies
// ("" when it may): a trigger counts only in the outbox of an agent of a
// role that writes it (authorship by path; the trigger table's Writers).
func (st *stepper) authorship(ref triggers.Ref, spec triggers.Spec) string {
	if spec.ByUser() {
		return ""
	}
	ag, ok := st.s.Agents[ref.Owner]
	if !ok {
		return fmt.Sprintf("%s is not an agent of this task", ref.Owner)
	}
	if !spec.WrittenBy(ag.Role) {
		return fmt.Sprintf("only the %s writes %s, not the %s", rolesText(spec.Writers), ref.Kind.Name(ref.Item), ag.Role)
	}
	return ""
}

func rolesText(rs []vocab.Role) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = string(r)
	}
	return strings.Join(names, " or ")
}

// maxRefusalNotices bounds the messages one agent gets about refused
// files: past it, a refusal is only recorded (an agent that keeps forging
// is not answered in a loop).
const maxRefusalNotices = 3

// refuseTrigger refuses a file written where it does not count (another
// role's trigger, a marker for work not the writer's): it is archived as
// reviews/refused_v<n>-<path>, so it never fires, recorded with its
// writer, and the writer is told what to do instead, at most
// maxRefusalNotices times.
func (st *stepper) refuseTrigger(p, key string, writer vocab.AgentID, why string) {
	to := fmt.Sprintf("%s/refused_v%d-%s", vocab.ReviewsDir, st.version("refused"), strings.ReplaceAll(p, "/", "_"))
	st.consume(p, key, to)
	st.refused(p, to, writer, why)
}

// refused records a refused file (already moved to archived) and tells its
// writer, bounded.
func (st *stepper) refused(p, archived string, writer vocab.AgentID, why string) {
	s := st.s
	st.emit(vocab.RecordTriggerRefused, writer, map[string]any{"path": p, "writer": writer, "state": string(s.Phase), "reason": why, "archived": archived})
	ag, ok := s.Agents[writer]
	if !ok {
		st.notify("warn", fmt.Sprintf("Refused %s: %s", p, why))
		return
	}
	ag.Refusals++
	s.Agents[writer] = ag
	if ag.Refusals > maxRefusalNotices || !running(s.Phase) {
		return
	}
	text := fmt.Sprintf("Hivemind refused %s (moved to %s): %s. Write only the files your assignment's `writes` and `done_marker` name, "+
		"all in your outbox %s; never write another agent's files or answer for another agent.", p, archived, why, triggers.Outbox(writer))
	if ag.Pending {
		// Keep the agent on its current work: re-send it with the
		// refusal (a notice would replace its assignment file).
		a := s.Assignments[writer]
		a.Rejected = clip(text, maxProblem)
		s.Assignments[writer] = a
		st.resend(writer)
		return
	}
	st.notice(writer, "A file you wrote was refused: "+firstLine(why), text, nil)
}

// rejectTrigger handles a trigger file that cannot be read (a symlink, a
// directory, too large: e.Problem). It is never archived (it may not be a
// file) but recorded as consumed, so this instance does not fire again;
// its writer is told what to fix. An unreadable plan.md counts as an
// invalid plan (bounded by max_revision_cycles); any other trigger's
// writer gets its work re-sent with the problem, under the retry policy.
func (st *stepper) rejectTrigger(p, key string, ref triggers.Ref, e TriggerCompleted) {
	s := st.s
	if s.Consumed == nil {
		s.Consumed = map[string]bool{}
	}
	s.Consumed[key] = true
	problem := clip(e.Problem, maxProblem)
	writer := ref.Owner
	st.emit(vocab.RecordTriggerRejected, writer, map[string]any{"path": p, "state": string(s.Phase), "problem": problem})
	if ref.Kind == trigPlan && (s.Phase == vocab.PhasePlanning || s.Phase == vocab.PhasePlanRevision) {
		s.InvalidPlans++
		if s.InvalidPlans >= st.cfg.MaxRevisionCycles {
			st.needsHuman("plan_invalid", fmt.Sprintf("The Lead wrote %d invalid plans in a row (max_revision_cycles=%d). Last problem: %s",
				s.InvalidPlans, st.cfg.MaxRevisionCycles, problem))
			return
		}
		st.leadPlanInvalid("", []Problem{{Msg: problem}})
		return
	}
	ag, ok := s.Agents[writer]
	if !ok || !ag.Pending || !running(s.Phase) {
		st.notify("warn", firstLine(problem))
		return
	}
	a := s.Assignments[writer]
	a.Rejected = problem
	s.Assignments[writer] = a
	ag.Failures++
	s.Agents[writer] = ag
	st.retryWork(st.cfg.resendPolicy(), writer, "agent:"+string(writer), fmt.Sprintf("%s: %s", writer, problem), ag.Failures)
}

// consume records the trigger as handled and archives it to reviews/.
func (st *stepper) consume(p, key, to string) {
	s := st.s
	if s.Consumed == nil {
		s.Consumed = map[string]bool{}
	}
	if s.Archives == nil {
		s.Archives = map[string]string{}
	}
	s.Consumed[key] = true
	s.Archives[key] = to
	st.do(ArchiveTrigger{From: p, To: to})
}

// version increments and returns the archive counter of kind.
func (st *stepper) version(kind string) int {
	if st.s.Versions == nil {
		st.s.Versions = map[string]int{}
	}
	st.s.Versions[kind]++
	return st.s.Versions[kind]
}

// ignoreTrigger archives a trigger that means nothing now as
// reviews/ignored_v<n>-<path with / as _>, so it cannot fire later, at a
// wrong time, and stays readable.
func (st *stepper) ignoreTrigger(p, key string, agent vocab.AgentID, reason string) {
	to := fmt.Sprintf("%s/ignored_v%d-%s", vocab.ReviewsDir, st.version("ignored"), strings.ReplaceAll(p, "/", "_"))
	st.consume(p, key, to)
	st.emit(vocab.RecordTriggerIgnored, agent, map[string]any{"path": p, "state": string(st.s.Phase), "reason": reason, "archived": to})
}

func (st *stepper) consumed(p, to string, agent vocab.AgentID) {
	st.emit(vocab.RecordTriggerConsumed, agent, map[string]any{"path": p, "state": string(st.s.Phase), "archived": to})
}

func (st *stepper) planSubmitted(p, key string, content []byte) {
	s := st.s
	plan, probs := ParsePlan(content, s.Project)
	if len(probs) > 0 {
		to := fmt.Sprintf("%s/plan_v%d-invalid.md", vocab.ReviewsDir, st.version("plan-invalid"))
		st.consume(p, key, to)
		msgs := make([]string, len(probs))
		for i, pr := range probs {
			msgs[i] = pr.String()
		}
		st.emit(vocab.RecordPlanInvalid, vocab.AgentLead, map[string]any{"archived": to, "problems": msgs})
		s.InvalidPlans++
		if s.InvalidPlans >= st.cfg.MaxRevisionCycles {
			st.needsHuman("plan_invalid", fmt.Sprintf("The Lead wrote %d invalid plans in a row (max_revision_cycles=%d). Last problems (%s):\n- %s",
				s.InvalidPlans, st.cfg.MaxRevisionCycles, to, strings.Join(msgs, "\n- ")))
			return
		}
		st.leadPlanInvalid(to, probs)
		return
	}
	v := st.version("plan")
	to := fmt.Sprintf("%s/plan_v%d.md", vocab.ReviewsDir, v)
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentLead)
	s.InvalidPlans = 0
	s.Plan = &plan
	s.PlanFile = to
	s.ReviewSubject = fmt.Sprintf("plan_v%d", v)
	s.ResolutionFile = ""
	s.TotalCheckpoints = len(plan.Checkpoints)
	st.emit(vocab.RecordPlanSubmitted, vocab.AgentLead, map[string]any{"version": v, "checkpoints": len(plan.Checkpoints), "subtasks": len(plan.Subtasks)})
	st.finishWork(vocab.AgentLead)
	st.enter(vocab.PhasePlanReview)
	st.reviewerPlan()
}

func (st *stepper) reviewSubject() string {
	if st.s.ReviewSubject != "" {
		return st.s.ReviewSubject
	}
	return fmt.Sprintf("plan_v%d", st.s.Versions["plan"])
}

func (st *stepper) planRound(verdict, archived string, content []byte) {
	n := 1
	for _, r := range st.s.Rounds {
		if r.Kind == "plan" {
			n++
		}
	}
	st.s.Rounds = append(st.s.Rounds, vocab.Round{Kind: "plan", Number: n, Verdict: verdict, Archived: archived, Summary: summarize(content), At: st.at})
}

func (st *stepper) planApproved(p, key string, content []byte) {
	s := st.s
	to := fmt.Sprintf("%s/%s-approved.md", vocab.ReviewsDir, st.reviewSubject())
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentReviewer)
	st.planRound("approved", to, content)
	st.emit(vocab.RecordPlanApproved, vocab.AgentReviewer, map[string]any{"subject": st.reviewSubject()})
	st.finishWork(vocab.AgentReviewer)
	if st.gatePlan() {
		return
	}
	s.FrictionActive = nil
	s.ResolutionFile = ""
	s.ReviewSubject = ""
	st.startExecution()
}

// startExecution (re)starts building after a plan approval: subtasks keep
// their progress when their id is still in the plan.
func (st *stepper) startExecution() {
	s := st.s
	subs := map[string]vocab.SubtaskState{}
	for _, sub := range s.Plan.Subtasks {
		if old, ok := s.Subtasks[sub.ID]; ok && old.Status != vocab.SubtaskFailed {
			subs[sub.ID] = old
			continue
		}
		subs[sub.ID] = vocab.SubtaskState{Status: vocab.SubtaskPending}
	}
	s.Subtasks = subs
	st.advance()
}

// advance goes to the next checkpoint with work left, or completes.
func (st *stepper) advance() {
	s := st.s
	next := nextCheckpoint(s)
	if next == 0 {
		st.complete()
		return
	}
	if next != s.CurrentCheckpoint {
		s.FixRounds = 0
		s.CheckpointFile = ""
		s.IssuesFile = ""
		s.Fixes = nil
	}
	s.CurrentCheckpoint = next
	st.enter(vocab.PhaseExecuting)
	st.emit(vocab.RecordCheckpointStarted, "", map[string]any{"checkpoint": next, "name": st.checkpointName(next)})
	st.scheduleWork()
}

func (st *stepper) complete() {
	s := st.s
	st.enter(vocab.PhaseComplete)
	// The task is over: its agents stop now, not when the user quits
	// (each Claude Code holds hundreds of MB while it waits).
	st.stopAll()
	done := 0
	for _, sub := range s.Subtasks {
		if sub.Status == vocab.SubtaskDone {
			done++
		}
	}
	st.emit(vocab.RecordTaskComplete, "", map[string]any{"subtasks": done, "revisions": s.RevisionCount, "friction": s.FrictionCount})
	st.notify("info", fmt.Sprintf("Task complete: %d subtasks, %d checkpoints, %d plan revision(s)", done, s.TotalCheckpoints, s.RevisionCount))
}

func (st *stepper) planFeedbackIn(p, key string, content []byte) {
	s := st.s
	to := fmt.Sprintf("%s/%s-feedback.md", vocab.ReviewsDir, st.reviewSubject())
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentReviewer)
	st.planRound("feedback", to, content)
	s.RevisionCount++
	st.emit(vocab.RecordPlanFeedback, vocab.AgentReviewer, map[string]any{"subject": st.reviewSubject(), "revision": s.RevisionCount})
	st.finishWork(vocab.AgentReviewer)
	if s.RevisionCount >= st.cfg.MaxRevisionCycles {
		st.needsHuman("plan_revisions", fmt.Sprintf("The plan was sent back %d times (max_revision_cycles=%d); the Lead and the Reviewer do not agree. Rounds:%s",
			s.RevisionCount, st.cfg.MaxRevisionCycles, st.roundsSummary("plan", 0)))
		return
	}
	st.enter(vocab.PhasePlanRevision)
	st.leadRevise("The reviewer", to)
}

func checkpointKey(cp int) string { return fmt.Sprintf("checkpoint_%d", cp) }

// checkpointWritten handles checkpoint.md in executing or checkpoint_fix.
func (st *stepper) checkpointWritten(p, key string) {
	s := st.s
	cp := s.CurrentCheckpoint
	to := fmt.Sprintf("%s/checkpoint_%d_v%d.md", vocab.ReviewsDir, cp, s.Versions[checkpointKey(cp)]+1)
	st.consume(p, key, to)
	st.consumed(p, to, "")
	s.CheckpointFile = to
	st.reachCheckpoint()
}

// reachCheckpoint: checkpoint (workers told, read-only) → checkpoint_review
// (automatic). Fixers still at work are released: the review supersedes.
func (st *stepper) reachCheckpoint() {
	s := st.s
	for _, id := range slices.Sorted(maps.Keys(s.Fixes)) {
		f := s.Fixes[id]
		if f.Status != vocab.SubtaskDone {
			if ag, ok := s.Agents[f.Worker]; ok && ag.Pending {
				if a, ok := s.Assignments[f.Worker]; ok && a.DoneMarker != "" && strings.HasSuffix(a.DoneMarker, id+".done") {
					st.finishWork(f.Worker)
				}
			}
		}
	}
	st.enter(vocab.PhaseCheckpoint)
	cp := s.CurrentCheckpoint
	st.emit(vocab.RecordCheckpointReached, "", map[string]any{"checkpoint": cp})
	// The workers are not told: it would change nothing they do (their
	// next message is their fix or their next subtask) and cost each a
	// paid turn (bench/overhead measured 13–19 % of a worker's tokens).
	if st.cfg.Git {
		// Merge the workers' branches first; the review starts on
		// CheckpointMerged (merge.go).
		st.requestMerge()
		return
	}
	st.reviewCheckpoint()
}

// reviewCheckpoint starts a new review round of the current checkpoint.
func (st *stepper) reviewCheckpoint() {
	st.version(checkpointKey(st.s.CurrentCheckpoint))
	st.enter(vocab.PhaseCheckpointReview)
	st.reviewerCheckpoint()
}

func (st *stepper) checkpointRound(verdict, archived string, content []byte) {
	cp := st.s.CurrentCheckpoint
	st.s.Rounds = append(st.s.Rounds, vocab.Round{Kind: "checkpoint", Checkpoint: cp, Number: st.s.Versions[checkpointKey(cp)],
		Verdict: verdict, Archived: archived, Summary: summarize(content), At: st.at})
}

func (st *stepper) checkpointApproved(p, key string, content []byte) {
	s := st.s
	cp := s.CurrentCheckpoint
	to := fmt.Sprintf("%s/checkpoint_%d_v%d-approved.md", vocab.ReviewsDir, cp, s.Versions[checkpointKey(cp)])
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentReviewer)
	st.checkpointRound("approved", to, content)
	st.emit(vocab.RecordCheckpointApproved, vocab.AgentReviewer, map[string]any{"checkpoint": cp})
	st.finishWork(vocab.AgentReviewer)
	s.FixRounds = 0
	s.Fixes = nil
	s.CheckpointFile = ""
	s.IssuesFile = ""
	if len(s.FrictionPending) > 0 {
		st.startFriction()
		return
	}
	st.advance()
}

func (st *stepper) checkpointIssues(p, key string, content []byte) {
	s := st.s
	cp := s.CurrentCheckpoint
	round := s.Versions[checkpointKey(cp)]
	to := fmt.Sprintf("%s/checkpoint_%d_v%d-issues.md", vocab.ReviewsDir, cp, round)
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentReviewer)
	st.checkpointRound("issues", to, content)
	s.FixRounds++
	s.IssuesFile = to
	st.emit(vocab.RecordCheckpointIssues, vocab.AgentReviewer, map[string]any{"checkpoint": cp, "round": round})
	st.finishWork(vocab.AgentReviewer)
	if s.FixRounds >= st.cfg.MaxRevisionCycles {
		st.needsHuman("checkpoint_revisions", fmt.Sprintf("Checkpoint %d was sent back %d times (max_revision_cycles=%d). Rounds:%s",
			cp, s.FixRounds, st.cfg.MaxRevisionCycles, st.roundsSummary("checkpoint", cp)))
		return
	}
	ws, files := fixers(s, cp, content)
	s.Fixes = map[string]vocab.SubtaskState{}
	agents := []vocab.AgentID{}
	if _, ok := s.Agents[vocab.AgentLead]; ok && !s.Agents[vocab.AgentLead].Pending {
		agents = append(agents, vocab.AgentLead)
	}
	agents = append(agents, ws...)
	for _, a := range agents {
		s.Fixes[fixID(cp, round, a)] = vocab.SubtaskState{Status: vocab.SubtaskInProgress, Worker: a, StartedAt: st.at}
	}
	st.enter(vocab.PhaseCheckpointFix)
	st.emit(vocab.RecordFixStarted, "", map[string]any{"checkpoint": cp, "round": round, "agents": agents})
	for _, a := range agents {
		st.fixAssignment(a, fixID(cp, round, a), files[a])
	}
	if len(agents) == 0 {
		// Nobody can fix now (everyone busy): review again when work ends.
		st.reviewCheckpoint()
	}
}

// MaxPendingFriction bounds one agent's friction reports waiting for the
// friction flow: past it, a report is refused (the agent told once) so a
// flood of them cannot grow the state or the Lead's reads.
const MaxPendingFriction = 8

func (st *stepper) frictionLogged(p, key string, ref triggers.Ref, content []byte) {
	s := st.s
	agent := ref.Owner
	if ag := s.Agents[agent]; ag.Friction >= MaxPendingFriction {
		to := fmt.Sprintf("%s/refused_v%d-%s", vocab.ReviewsDir, st.version("refused"), strings.ReplaceAll(p, "/", "_"))
		st.consume(p, key, to)
		why := fmt.Sprintf("%s already has %d friction reports waiting for the Lead (at most %d)", agent, ag.Friction, MaxPendingFriction)
		if ag.FrictionCapped {
			st.emit(vocab.RecordTriggerRefused, agent, map[string]any{"path": p, "writer": agent, "state": string(s.Phase), "reason": why, "archived": to})
			return
		}
		ag.FrictionCapped = true
		s.Agents[agent] = ag
		st.refused(p, to, agent, why+": write no more friction files until the Lead resolved these; mention further problems in your output")
		return
	}
	if ag, ok := s.Agents[agent]; ok {
		ag.Friction++
		s.Agents[agent] = ag
	}
	to := fmt.Sprintf("%s/friction_v%d-%s.md", vocab.ReviewsDir, st.version("friction"), ref.Item)
	st.consume(p, key, to)
	s.FrictionCount++
	s.Friction = append(s.Friction, to)
	s.FrictionPending = append(s.FrictionPending, to)
	st.emit(vocab.RecordFrictionRecorded, agent, map[string]any{"path": p, "archived": to, "summary": summarize(content), "count": s.FrictionCount})
}

// startFriction runs friction_logged → friction_sync (everyone told; the
// Lead's notice is folded into its resolution assignment, so two messages do
// not race for assignments/lead.json) → friction_resolution.
func (st *stepper) startFriction() {
	s := st.s
	s.FrictionActive = s.FrictionPending
	s.FrictionPending = nil
	for id, ag := range s.Agents {
		ag.Friction, ag.FrictionCapped = 0, false
		s.Agents[id] = ag
	}
	st.enter(vocab.PhaseFrictionLogged)
	st.emit(vocab.RecordFrictionFlowStarted, "", map[string]any{"files": s.FrictionActive})
	st.enter(vocab.PhaseFrictionSync)
	for _, id := range allAgents(s) {
		if id == vocab.AgentLead || s.Agents[id].Pending {
			continue
		}
		st.notice(id, fmt.Sprintf("Friction was logged (%d file(s)); the Lead will propose fixes", len(s.FrictionActive)),
			"Read the friction files so you know the problems and avoid them.", s.FrictionActive)
	}
	st.enter(vocab.PhaseFrictionResolution)
	st.leadFrictionResolution()
}

func (st *stepper) frictionResolved(p, key string) {
	s := st.s
	v := st.version("friction-resolution")
	to := fmt.Sprintf("%s/friction-resolution_v%d.md", vocab.ReviewsDir, v)
	st.consume(p, key, to)
	st.consumed(p, to, vocab.AgentLead)
	s.ResolutionFile = to
	s.ReviewSubject = fmt.Sprintf("friction-resolution_v%d", v)
	st.finishWork(vocab.AgentLead)
	st.enter(vocab.PhasePlanReview)
	st.reviewerPlan()
}
