package flow

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The human plan gate (plan_approval = "human"). After the Reviewer
// approves a plan, the run waits in plan_approval for the user instead of
// building. The user's decision is a trigger file like the agents' ones,
// plan-decision.md in the task dir, whoever writes it: the TUI (keys a and
// f, Runner.DecidePlan) or the user by hand in headless mode. So it is
// write-ahead like every trigger: on disk before the engine acts, consumed
// and archived after the state that records it is saved, and found again by
// a restarted run. The first line is "approve" or "revise"; the rest is the
// feedback, which goes back to the Lead as a plan revision (one round of
// max_revision_cycles, like the Reviewer's feedback).
//
// There is no deadline: like a pause, the wait is on the user and nothing
// runs meanwhile (no agent has work, so no agent timer ticks). The phase
// counts as running: pause, cancel and agent restarts work as anywhere
// else, and a run killed here resumes here.
//
// A friction resolution the Reviewer approves is not gated: the plan the
// user approved stays what is built.

// PlanDecisionFile is the trigger file of the human plan gate.
const PlanDecisionFile = "plan-decision.md"

// MaxPlanDecision bounds plan-decision.md.
const MaxPlanDecision = 16 << 10

// Plan decisions (the first line of plan-decision.md).
const (
	DecisionApprove = "approve"
	DecisionRevise  = "revise"
)

// PlanDecision is the user's decision at the plan gate.
type PlanDecision struct {
	Approve  bool
	Feedback string
}

// ParsePlanDecision reads plan-decision.md: a first line "approve" or
// "revise" (case and surrounding blanks or markdown markers do not
// matter), then the feedback, which revise requires. The error says what
// to write instead.
func ParsePlanDecision(b []byte) (PlanDecision, error) {
	if len(b) > MaxPlanDecision {
		return PlanDecision{}, fmt.Errorf("it is %d bytes; at most %d: shorten the feedback", len(b), MaxPlanDecision)
	}
	if !utf8.Valid(b) {
		return PlanDecision{}, fmt.Errorf("it is not UTF-8 text")
	}
	text := strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n"))
	first, rest, _ := strings.Cut(text, "\n")
	word := strings.ToLower(strings.Trim(strings.TrimSpace(first), "#*_`>- "))
	rest = strings.TrimSpace(rest)
	switch word {
	case DecisionApprove:
		return PlanDecision{Approve: true, Feedback: rest}, nil
	case DecisionRevise:
		if rest == "" {
			return PlanDecision{}, fmt.Errorf("revise needs feedback: write what the Lead should change below the first line")
		}
		return PlanDecision{Feedback: rest}, nil
	}
	return PlanDecision{}, fmt.Errorf("the first line must be %q or %q, got %q", DecisionApprove, DecisionRevise, clip(first, 60))
}

// FormatPlanDecision is the plan-decision.md that ParsePlanDecision reads
// back as d.
func FormatPlanDecision(d PlanDecision) []byte {
	var b bytes.Buffer
	if d.Approve {
		b.WriteString(DecisionApprove)
	} else {
		b.WriteString(DecisionRevise)
	}
	b.WriteString("\n")
	if fb := strings.TrimSpace(d.Feedback); fb != "" {
		b.WriteString("\n" + fb + "\n")
	}
	return b.Bytes()
}

// PlanDecisionHelp tells the user how to decide, for notices and the
// headless run.
func PlanDecisionHelp(taskDir string) string {
	return fmt.Sprintf("write %s: first line %q to build the plan, or %q followed by your feedback for the Lead",
		filepath.Join(taskDir, PlanDecisionFile), DecisionApprove, DecisionRevise)
}

// gatePlan holds an approved plan for the user when the task asks for it
// (State.PlanApproval "human") and returns true; friction resolutions pass.
func (st *stepper) gatePlan() bool {
	s := st.s
	if s.PlanApproval != "human" || s.ResolutionFile != "" {
		return false
	}
	st.enter(vocab.PhasePlanApproval)
	st.emit(vocab.RecordPlanAwaitingHuman, "", map[string]any{"subject": st.reviewSubject(), "plan": s.PlanFile})
	st.notify("warn", fmt.Sprintf("The Reviewer approved %s: approve it (a) or send feedback (f); headless: %s",
		st.reviewSubject(), PlanDecisionHelp(s.TaskDir)))
	return true
}

// planDecision handles plan-decision.md in plan_approval.
func (st *stepper) planDecision(p, key string, content []byte) {
	s := st.s
	subject := st.reviewSubject()
	d, err := ParsePlanDecision(content)
	if err != nil {
		to := fmt.Sprintf("%s/%s-decision_v%d-invalid.md", vocab.ReviewsDir, subject, st.version("plan-decision-invalid"))
		st.consume(p, key, to)
		st.emit(vocab.RecordPlanDecisionRejected, "", map[string]any{"archived": to, "problem": err.Error()})
		st.notify("warn", fmt.Sprintf("%s not taken (%v); kept as %s. The plan still waits: %s",
			PlanDecisionFile, err, to, PlanDecisionHelp(s.TaskDir)))
		return
	}
	verdict, to := "feedback", fmt.Sprintf("%s/%s-human-feedback.md", vocab.ReviewsDir, subject)
	if d.Approve {
		verdict, to = "approved", fmt.Sprintf("%s/%s-human-approved.md", vocab.ReviewsDir, subject)
	}
	st.consume(p, key, to)
	st.consumed(p, to, "")
	summary := "(from you)"
	if d.Feedback != "" {
		summary = "(from you) " + d.Feedback
	}
	st.planRound(verdict, to, []byte(summary))
	details := map[string]any{"subject": subject, "decision": DecisionRevise, "archived": to}
	if d.Approve {
		details["decision"] = DecisionApprove
	}
	if !d.Approve {
		s.RevisionCount++
		details["revision"] = s.RevisionCount
	}
	st.emit(vocab.RecordPlanDecision, "", details)
	if d.Approve {
		s.ReviewSubject = ""
		st.notify("info", "Plan approved: building")
		st.startExecution()
		return
	}
	if s.RevisionCount >= st.cfg.MaxRevisionCycles {
		st.needsHuman("plan_revisions", fmt.Sprintf("The plan was sent back %d times (max_revision_cycles=%d), the last time by you. Rounds:%s",
			s.RevisionCount, st.cfg.MaxRevisionCycles, st.roundsSummary("plan", 0)))
		return
	}
	st.enter(vocab.PhasePlanRevision)
	st.leadRevise("The user (the human who approves plans)", to)
}

// remindPlanGate repeats how to decide when a run comes back to the gate
// (a resume after a restart or a pause): a headless user sees it again.
func (st *stepper) remindPlanGate() {
	if st.s.Phase == vocab.PhasePlanApproval {
		st.notify("warn", fmt.Sprintf("%s waits for your decision: %s", st.reviewSubject(), PlanDecisionHelp(st.s.TaskDir)))
	}
}
