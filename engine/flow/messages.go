package flow

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// InjectPrefix starts every line the engine types into an agent.
const InjectPrefix = "[HIVEMIND] "

// AssignmentFile returns the absolute path of agent's assignment seq in
// the task dir, assignments/<agent>-<seq>.json: the file the line that
// sends it names, never rewritten (vocab.AssignmentRel).
func AssignmentFile(taskDir string, agent vocab.AgentID, seq int) string {
	return filepath.Join(taskDir, vocab.AssignmentRel(agent, seq))
}

// InjectText returns the one line typed into an agent: "[HIVEMIND] <what>
// — read <assignment file>". Line breaks in what are flattened so the line
// stays one line.
func InjectText(what, assignmentFile string) string {
	what = strings.Join(strings.Fields(what), " ")
	return InjectPrefix + what + " — read " + assignmentFile
}

// message is an assignment before it gets its sequence number.
type message struct {
	agent vocab.AgentID
	// what is the one-line summary (also the first line of the instruction).
	what string
	// body is the rest of the instruction (may be several paragraphs).
	body     string
	subtask  *vocab.Subtask
	reads    []string // relative to the task dir, or absolute
	writes   []string // relative to the task dir, or absolute
	done     string   // relative to the task dir, or ""
	readOnly bool
	// rejected says why the agent's previous completion was rejected.
	rejected string
	// hold: record the assignment as the agent's current work but do not
	// send it (a re-send follows, now or after a backoff: retryWork).
	hold bool
}

// protocol is appended to every writing assignment of agent.
func protocol(agent vocab.AgentID) string {
	return "Protocol: read every file in `reads`. Create the file(s) in `writes` as asked, at exactly those paths " +
		"(a trigger file is read by Hivemind as soon as you finish your turn, so write it complete, in one go). " +
		"If there is a `done_marker`, create it last, after everything else is written. " +
		"Your Hivemind files go only in your outbox " + triggers.Outbox(agent) + "/ of the task directory: Hivemind takes them from there and nowhere else, " +
		"and never from another agent's outbox. Never write state.json. If something keeps going wrong, describe it in " +
		triggers.Path(agent, trigFriction, "<short-name>") + "."
}

// out is the path (relative to the task dir) of agent's trigger of kind.
func out(agent vocab.AgentID, kind triggers.Kind, item string) string {
	return triggers.Path(agent, kind, item)
}

// outputOf is the output file of subtask (or fix) id done by agent.
func outputOf(agent vocab.AgentID, id string) string { return out(agent, triggers.Output, id) }

// readOnlyNote is appended to every read-only notice.
const readOnlyNote = "This is for your information only: do not write any file and do not start new work; " +
	"wait for your next [HIVEMIND] message."

// abs turns a task-dir-relative (slash) path into an absolute one; absolute
// paths are kept.
func (st *stepper) abs(rel string) string {
	if rel == "" {
		return ""
	}
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(st.s.TaskDir, filepath.FromSlash(rel))
}

// projectFile returns the absolute path of a project-relative plan path.
func (st *stepper) projectFile(p string) string {
	return filepath.Join(st.s.Project, filepath.FromSlash(path.Clean(p)))
}

// send writes the assignment and injects its line: WriteAssignment, then
// Inject. A writing assignment becomes the agent's current work (Pending,
// re-sent after a restart) and arms its timeout timer.
func (st *stepper) send(m message) {
	s := st.s
	ag, ok := s.Agents[m.agent]
	if !ok {
		return
	}
	s.Seq++
	a := vocab.Assignment{
		Seq:         s.Seq,
		State:       s.Phase,
		Role:        ag.Role,
		Agent:       m.agent,
		Instruction: m.what,
		Subtask:     m.subtask,
		Reads:       []string{},
		Writes:      []string{},
		DoneMarker:  st.abs(m.done),
		ReadOnly:    m.readOnly,
		Rejected:    m.rejected,
	}
	if m.body != "" {
		a.Instruction += "\n\n" + m.body
	}
	if m.readOnly {
		a.Instruction += "\n\n" + readOnlyNote
	} else {
		a.Instruction += "\n\n" + protocol(m.agent)
	}
	// Every assignment reads the shared knowledge (decisions, constraints,
	// glossary) and carries the acknowledgements of the agent's inbox
	// entries (knowledge.go).
	sharedReads, sharedNote := st.knowledgeFor(m.agent)
	if sharedNote != "" && !m.readOnly {
		a.Instruction += "\n\n" + sharedNote
	}
	if notes := st.takeKnowledgeNotes(m.agent); len(notes) > 0 {
		a.Instruction += "\n\nYour shared-knowledge entries:\n- " + strings.Join(notes, "\n- ")
	}
	seen := map[string]bool{}
	for _, r := range slices.Concat(m.reads, sharedReads) {
		if p := st.abs(r); p != "" && !seen[p] {
			seen[p] = true
			a.Reads = append(a.Reads, p)
		}
	}
	if !m.readOnly {
		for _, w := range m.writes {
			a.Writes = append(a.Writes, st.abs(w))
		}
	} else {
		a.DoneMarker = ""
	}
	ag.LastSeq = a.Seq
	if !m.readOnly {
		ag.Pending = true
		ag.Subtask = ""
		if m.subtask != nil {
			ag.Subtask = m.subtask.ID
		}
		if s.Assignments == nil {
			s.Assignments = map[vocab.AgentID]vocab.Assignment{}
		}
		s.Assignments[m.agent] = a
	}
	s.Agents[m.agent] = ag
	if m.hold && !m.readOnly {
		return
	}
	st.deliver(a, m.what, false)
}

// deliver emits WriteAssignment + Inject for a and, for work, arms the
// agent's timeout; while the agent's account is held or the team or the
// agent is paused, a waits instead (holdDispatch) and its timeout starts
// when it is sent. Work supersedes what the agent layer still holds for
// the agent (Withdraw): an older message is never typed after it. A
// notice writes no assignment file (the agent's file keeps its work): its
// line carries its whole content.
func (st *stepper) deliver(a vocab.Assignment, what string, resend bool) {
	if st.holdDispatch(a) {
		return
	}
	ag := st.s.Agents[a.Agent]
	if a.ReadOnly {
		st.do(Inject{Agent: a.Agent, Seq: a.Seq, Text: NoticeText(a.Instruction, a.Reads), Notice: true})
	} else {
		if st.sent == nil {
			st.sent = map[vocab.AgentID]bool{}
		}
		st.sent[a.Agent] = true
		if ag.Queued > 0 {
			st.do(Withdraw{Agent: a.Agent, Before: a.Seq, Why: fmt.Sprintf("superseded by #%d", a.Seq)})
		}
		st.do(WriteAssignment{Assignment: a})
		st.do(Inject{Agent: a.Agent, Seq: a.Seq, Text: InjectText(what, AssignmentFile(st.s.TaskDir, a.Agent, a.Seq)), Resend: resend})
	}
	ag.Queued++
	st.s.Agents[a.Agent] = ag
	d := map[string]any{"seq": a.Seq, "what": what, "read_only": a.ReadOnly}
	if a.ReadOnly {
		d["text"] = NoticeText(a.Instruction, a.Reads) // what is typed: no file says it
	}
	st.emit(vocab.RecordAssignmentSent, a.Agent, d)
	if !a.ReadOnly {
		st.schedule(timeoutTimer(a.Agent), st.cfg.AgentTimeout)
	}
}

// maxNoticeBytes bounds a notice's line (it carries its whole content).
const maxNoticeBytes = 2000

// NoticeText returns the one line typed for a read-only notice: its whole
// instruction and the files to read, so it never depends on a file that
// may say something else by the time it is read.
func NoticeText(instruction string, reads []string) string {
	what, rest, _ := strings.Cut(instruction, "\n")
	text := strings.Join(strings.Fields(what), " ")
	if rest = strings.Join(strings.Fields(rest), " "); rest != "" {
		text += " — " + rest
	}
	if len(reads) > 0 {
		text += " Read: " + strings.Join(reads, ", ") + "."
	}
	return InjectPrefix + clip(text, maxNoticeBytes)
}

// resend re-sends the agent's current assignment under a new seq.
func (st *stepper) resend(agent vocab.AgentID) {
	s := st.s
	a, ok := s.Assignments[agent]
	ag, ok2 := s.Agents[agent]
	if !ok || !ok2 || !ag.Pending || st.sent[agent] {
		return // no work, or sent by another rule of this step
	}
	s.Seq++
	a.Seq = s.Seq
	a.Resent = true
	ag.LastSeq = a.Seq
	s.Agents[agent] = ag
	s.Assignments[agent] = a
	st.deliver(a, resentWhat(a), true)
}

// resentWhat is the line's summary of a re-sent assignment.
func resentWhat(a vocab.Assignment) string {
	what, _, _ := strings.Cut(a.Instruction, "\n")
	return "(re-sent) " + what
}

// ---- reads ----

func taskReads() []string {
	return []string{vocab.TaskMarkdown, vocab.TaskFile}
}

// planFeedback returns the archived plan feedback files, oldest first.
func (st *stepper) planFeedback() []string {
	var out []string
	for _, r := range st.s.Rounds {
		if r.Kind == "plan" && r.Verdict == "feedback" && r.Archived != "" {
			out = append(out, r.Archived)
		}
	}
	return out
}

// frictionContext returns the friction files and resolution under way.
func (st *stepper) frictionContext() []string {
	out := append([]string(nil), st.s.FrictionActive...)
	if st.s.ResolutionFile != "" {
		out = append(out, st.s.ResolutionFile)
	}
	return out
}

// ---- assignments per state ----

const planFormat = "plan.md is for people, but it must carry exactly one fenced ```json block:\n" +
	"{\"summary\": \"…\", \"checkpoints\": [{\"id\": 1, \"name\": \"…\"}], \"subtasks\": [{\"id\": \"st_1\", " +
	"\"description\": \"…\", \"checkpoint\": 1, \"dependencies\": [], \"files\": [\"CREATE path/new.go\", \"MODIFY path/old.go\"]}]}\n" +
	"Rules: unique subtask ids (letters, digits, . _ -); dependencies name earlier-or-same-checkpoint subtasks, no cycles; " +
	"checkpoint ids are positive integers with names; every file is \"CREATE path\" or \"MODIFY path\", relative to the project, no \"..\". " +
	"Subtasks of one checkpoint that touch the same file must depend on one another (else the plan is refused), so split work by file where you can."

// leadPlan asks the Lead to write plan.md.
func (st *stepper) leadPlan() {
	reads := append(taskReads(), st.planFeedback()...)
	body := "Read the task and write the build plan to " + out(vocab.AgentLead, trigPlan, "") + " in the task directory. " + planFormat
	if fb := st.planFeedback(); len(fb) > 0 {
		body += "\nEarlier plans were rejected; the reviewer's feedback files are in your reads: address every point."
	}
	st.send(message{agent: vocab.AgentLead, what: "Plan the task: write plan.md", body: body, reads: reads, writes: []string{out(vocab.AgentLead, trigPlan, "")}})
}

// leadPlanInvalid tells the Lead every problem of its plan.md.
func (st *stepper) leadPlanInvalid(archived string, probs []Problem) {
	var b strings.Builder
	if archived != "" {
		fmt.Fprintf(&b, "Your plan.md was not accepted (it was moved to %s and not sent for review). Fix every problem below and write plan.md again.\n", archived)
	} else {
		b.WriteString("Your plan.md was not accepted and not sent for review. Fix every problem below and write plan.md again.\n")
	}
	for _, p := range probs {
		b.WriteString("- " + p.String() + "\n")
	}
	b.WriteString(planFormat)
	reads := taskReads()
	if archived != "" {
		reads = append(reads, archived)
	}
	reads = append(reads, st.planFeedback()...)
	reads = append(reads, st.frictionContext()...)
	what := fmt.Sprintf("plan.md has %d problem(s); fix them and write plan.md again", len(probs))
	st.send(message{agent: vocab.AgentLead, what: what, body: b.String(), reads: reads, writes: []string{out(vocab.AgentLead, trigPlan, "")}})
}

// leadRevise asks the Lead to revise the plan after feedback.
func (st *stepper) leadRevise(who, feedback string) {
	reads := append(taskReads(), st.s.PlanFile)
	reads = append(reads, st.frictionContext()...)
	reads = append(reads, st.planFeedback()...)
	body := fmt.Sprintf("%s asked for changes in %s. Revise the plan (your last one is %s) to address every point, "+
		"and write the whole revised plan to plan.md. %s", who, feedback, st.s.PlanFile, planFormat)
	st.send(message{agent: vocab.AgentLead, what: "Revise the plan: write plan.md", body: body, reads: reads, writes: []string{out(vocab.AgentLead, trigPlan, "")}})
}

// reviewerPlan asks the Reviewer to review the plan (or a friction
// resolution).
func (st *stepper) reviewerPlan() {
	reads := append(taskReads(), st.s.PlanFile)
	reads = append(reads, st.frictionContext()...)
	reads = append(reads, st.planFeedback()...)
	what := "Review the plan: write plan-approved.md or plan-feedback.md"
	body := fmt.Sprintf("Review %s adversarially against the task, its constraints and risks. ", st.s.PlanFile)
	if st.s.ResolutionFile != "" {
		what = "Review the friction resolution: write plan-approved.md or plan-feedback.md"
		body = fmt.Sprintf("The Lead proposed fixes for logged friction in %s (friction files are in your reads). "+
			"Review them together with the plan %s. ", st.s.ResolutionFile, st.s.PlanFile)
	}
	if fb := st.planFeedback(); len(fb) > 0 {
		body += "Your earlier feedback is in your reads: check it was addressed. "
	}
	body += "Then write exactly one file: plan-approved.md if it is good to build, or plan-feedback.md with concrete issues " +
		"(each with severity, location, problem, suggestion)."
	st.send(message{agent: vocab.AgentReviewer, what: what, body: body, reads: reads, writes: []string{out(vocab.AgentReviewer, trigPlanApproved, ""), out(vocab.AgentReviewer, trigPlanFeedback, "")}})
}

// workerSubtask asks a worker to do one subtask.
// With a problem (a rejected completion) it is held for retryWork to send.
func (st *stepper) workerSubtask(worker vocab.AgentID, sub vocab.Subtask, problem string, hold bool) {
	output := outputOf(worker, sub.ID)
	done := out(worker, triggers.Done, sub.ID)
	reads := append(taskReads(), st.s.PlanFile)
	for _, d := range sub.Dependencies {
		if w := st.s.Subtasks[d].Worker; w != "" {
			reads = append(reads, outputOf(w, d))
		}
	}
	writes := []string{output}
	for _, f := range sub.Files {
		if _, p, ok := strings.Cut(strings.TrimSpace(f), " "); ok {
			writes = append(writes, st.projectFile(strings.TrimSpace(p)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Subtask %s (checkpoint %d): %s\n", sub.ID, sub.Checkpoint, sub.Description)
	if len(sub.Files) > 0 {
		fmt.Fprintf(&b, "Files: %s. Touch only these project files.\n", strings.Join(sub.Files, ", "))
	}
	if problem != "" {
		fmt.Fprintf(&b, "Your previous completion was rejected: %s. Fix it.\n", problem)
	}
	fmt.Fprintf(&b, "When the work is done, write %s (what you did, files changed, how to check it), then, last, the done marker %s "+
		"containing {\"agent_id\": %q, \"output_file\": %q, \"completed_at\": \"<RFC 3339 time>\"}.", output, done, worker, output)
	c := sub
	st.send(message{agent: worker, what: "Do subtask " + sub.ID + ": " + firstLine(sub.Description), body: b.String(),
		subtask: &c, reads: reads, writes: writes, done: done, rejected: problem, hold: hold})
}

// reviewerCheckpoint asks the Reviewer to review the current checkpoint.
func (st *stepper) reviewerCheckpoint() {
	s := st.s
	cp := s.CurrentCheckpoint
	reads := append(taskReads(), s.PlanFile)
	if s.CheckpointFile != "" {
		reads = append(reads, s.CheckpointFile)
	}
	if s.Plan != nil {
		for _, sub := range s.Plan.Subtasks {
			if sub.Checkpoint == cp && s.Subtasks[sub.ID].Status == vocab.SubtaskDone {
				reads = append(reads, outputOf(s.Subtasks[sub.ID].Worker, sub.ID))
			}
		}
	}
	if s.IssuesFile != "" {
		reads = append(reads, s.IssuesFile)
		for _, id := range slices.Sorted(maps.Keys(s.Fixes)) {
			if s.Fixes[id].Status == vocab.SubtaskDone {
				reads = append(reads, outputOf(s.Fixes[id].Worker, id))
			}
		}
	}
	body := fmt.Sprintf("Checkpoint %d (%s) is ready for review (round %d). Check the code and the outputs in your reads against the plan %s. "+
		"Then write exactly one file: checkpoint-approved.md, or checkpoint-issues.md with concrete issues "+
		"(each with severity, location as project-relative file path and line, problem, suggestion).",
		cp, st.checkpointName(cp), s.Versions[checkpointKey(cp)], s.PlanFile)
	reads, merged := st.mergeReview(reads)
	if merged != "" {
		body += "\n\n" + merged
	}
	st.send(message{agent: vocab.AgentReviewer, what: fmt.Sprintf("Review checkpoint %d: write checkpoint-approved.md or checkpoint-issues.md", cp),
		body: body, reads: reads, writes: []string{out(vocab.AgentReviewer, trigCheckpointApproved, ""), out(vocab.AgentReviewer, trigCheckpointIssues, "")}})
}

// fixAssignment asks an agent to fix the reviewer's issues.
func (st *stepper) fixAssignment(agent vocab.AgentID, fixID string, files []string) {
	s := st.s
	output := outputOf(agent, fixID)
	done := out(agent, triggers.Done, fixID)
	reads := append(taskReads(), s.PlanFile, s.IssuesFile)
	writes := []string{output}
	for _, f := range files {
		writes = append(writes, st.projectFile(f))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The reviewer found issues at checkpoint %d (%s). ", s.CurrentCheckpoint, s.IssuesFile)
	if agent == vocab.AgentLead {
		b.WriteString("As Lead, check whether the issues call for a change of approach and coordinate the fix; ")
	} else {
		fmt.Fprintf(&b, "Fix the issues that concern your files (%s); ", strings.Join(files, ", "))
	}
	fmt.Fprintf(&b, "then write %s saying what you changed, then, last, the done marker %s "+
		"containing {\"agent_id\": %q, \"output_file\": %q, \"completed_at\": \"<RFC 3339 time>\"}. "+
		"The review starts again when every fix is done.", output, done, agent, output)
	st.send(message{agent: agent, what: fmt.Sprintf("Fix the checkpoint %d issues", s.CurrentCheckpoint), body: b.String(),
		reads: reads, writes: writes, done: done})
}

// leadFrictionResolution asks the Lead to resolve the logged friction.
func (st *stepper) leadFrictionResolution() {
	reads := append(taskReads(), st.s.PlanFile)
	reads = append(reads, st.s.FrictionActive...)
	body := fmt.Sprintf("Agents logged friction (%d file(s), in your reads; every agent has been told). "+
		"Propose how to remove each problem (process, plan or prompt changes) and write friction-resolution.md. "+
		"The reviewer reviews it next.", len(st.s.FrictionActive))
	st.send(message{agent: vocab.AgentLead, what: "Resolve the logged friction: write friction-resolution.md", body: body,
		reads: reads, writes: []string{out(vocab.AgentLead, trigFrictionResolution, "")}})
}

// notice tells an agent something without asking it to write (a ○ agent).
// A notice changes nothing for an agent with unfinished work (it would
// contradict it), and the same notice twice in a row tells nothing new
// (a checkpoint's next review round): neither is sent.
func (st *stepper) notice(agent vocab.AgentID, what, body string, reads []string) {
	ag, ok := st.s.Agents[agent]
	if !ok || ag.Pending {
		return
	}
	key := noticeKey(agent)
	if st.s.Extra[key] != nil && string(st.s.Extra[key]) == strconv.Quote(what) {
		st.emit(vocab.RecordNoticeSkipped, agent, map[string]any{"what": what, "why": "already told"})
		return
	}
	if st.s.Extra == nil {
		st.s.Extra = map[string]json.RawMessage{}
	}
	st.s.Extra[key] = json.RawMessage(strconv.Quote(what))
	st.send(message{agent: agent, what: what, body: body, reads: reads, readOnly: true})
}

// noticeKey is the State.Extra key of the last notice agent was told.
func noticeKey(agent vocab.AgentID) string { return "told:" + string(agent) }

func (st *stepper) checkpointName(cp int) string {
	if st.s.Plan != nil {
		for _, c := range st.s.Plan.Checkpoints {
			if c.ID == cp {
				return c.Name
			}
		}
	}
	return "?"
}

// maxProblem bounds a rejection reason copied into events, state and
// assignments (it may quote what an agent wrote).
const maxProblem = 1000

// clip returns s cut to at most n bytes (on a rune boundary), marked with
// "…" when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// firstLine is s's first line, at most 100 runes: a line of a message to an
// agent or the user, cut from what an agent or the user wrote. Unlike
// vocab.Headline it keeps the text's own spacing, and it bounds the
// length (the text may be anything).
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100]) + "…"
	}
	return s
}
