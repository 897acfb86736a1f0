package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/vocab"
)

func (e *fakeEngine) DecidePlan(approve bool, feedback string) error {
	if approve {
		e.record("approve")
	} else {
		e.record("revise: " + feedback)
	}
	return nil
}

// gateState is a run waiting for the user's plan decision.
func gateState() vocab.State {
	st := testState(4)
	st.PreviousPhase, st.Phase = vocab.PhasePlanReview, vocab.PhasePlanApproval
	st.ActiveAgents, st.ReviewSubject, st.PlanFile = []vocab.AgentID{}, "plan_v2", "reviews/plan_v2.md"
	st.Plan = &vocab.Plan{
		Summary:     "Sessions in a signed cookie; the login form posts to /login and the middleware checks every request.",
		Checkpoints: []vocab.Checkpoint{{ID: 1, Name: "sessions"}, {ID: 2, Name: "login form and middleware"}},
		Subtasks: []vocab.Subtask{
			{ID: "st_1", Description: "session store with signed cookies and expiry", Checkpoint: 1, Files: []string{"CREATE auth/session.go", "CREATE auth/session_test.go"}},
			{ID: "st_2", Description: "password hashing with bcrypt", Checkpoint: 1, Files: []string{"CREATE auth/hash.go"}},
			{ID: "st_3", Description: "login form and handler that sets the session cookie", Checkpoint: 2,
				Dependencies: []string{"st_1", "st_2"}, Files: []string{"CREATE web/login.go", "MODIFY web/routes.go"}},
			{ID: "st_4", Description: "middleware that rejects requests without a valid session", Checkpoint: 2,
				Dependencies: []string{"st_1"}, Files: []string{"CREATE web/middleware.go", "MODIFY web/routes.go"}},
		},
	}
	return st
}

func TestPlanGateView(t *testing.T) {
	h := newHarness(t, 4, 120, 36)
	h.send(SnapshotMsg{State: gateState()})
	plain := h.plain()
	for _, want := range []string{"plan_v2, approved by the Reviewer: your decision", "Checkpoint 2 · login form and middleware (2 subtasks)",
		"st_3 login form and handler", "files: CREATE web/login.go, MODIFY web/routes.go", "after: st_1, st_2",
		"a approve and build · f send feedback"} {
		if !strings.Contains(plain, want) {
			t.Errorf("plan view lacks %q", want)
		}
	}
	if f := h.footer(); !strings.Contains(f, "a approve the plan") || !strings.Contains(f, "q quit") {
		t.Errorf("footer %q", f)
	}
	golden.RequireEqual(t, plain)
}

func TestPlanGateApprove(t *testing.T) {
	h := newHarness(t, 4, 80, 24)
	h.send(SnapshotMsg{State: gateState()})
	h.runFor(h.key("a"), func(msg tea.Msg) bool { _, ok := msg.(planDecidedMsg); return ok })
	h.eng.requireCalls(t, "approve")
	if !strings.Contains(h.plain(), "approved: the build starts") {
		t.Fatalf("no confirmation:\n%s", h.plain())
	}
	// A second key while the engine has not moved yet sends nothing.
	h.key("a")
	h.key("f")
	h.eng.requireCalls(t, "approve")
	// The engine moves on: the panes are back.
	st := gateState()
	st.Phase = vocab.PhaseExecuting
	h.send(SnapshotMsg{State: st})
	if strings.Contains(h.plain(), "approved by the Reviewer") || h.m.run.gate.subject != "" {
		t.Fatalf("plan view stays after the gate: %+v\n%s", h.m.run.gate.subject, h.plain())
	}
}

func TestPlanGateFeedback(t *testing.T) {
	h := newHarness(t, 4, 60, 20)
	h.send(SnapshotMsg{State: gateState()})
	h.key("f")
	// Empty feedback is not sent.
	h.key("enter")
	if len(h.eng.got()) != 0 || !strings.Contains(h.plain(), "type what the Lead should change") {
		t.Fatalf("empty feedback: %v\n%s", h.eng.got(), h.plain())
	}
	// Still typing. Keys that mean something elsewhere are text here.
	for _, r := range "add q and p tests" {
		h.key(string(r))
	}
	h.send(tea.PasteMsg{Content: "; keep it small"})
	h.runFor(h.key("enter"), func(msg tea.Msg) bool { _, ok := msg.(planDecidedMsg); return ok })
	h.eng.requireCalls(t, "revise: add q and p tests; keep it small")
	if !strings.Contains(h.plain(), "feedback sent") {
		t.Fatalf("no confirmation:\n%s", h.plain())
	}
	// The revised plan reaches the gate again: a fresh view.
	st := gateState()
	st.ReviewSubject = "plan_v3"
	h.send(SnapshotMsg{State: st})
	if h.m.run.gate.sent != "" || !strings.Contains(h.plain(), "plan_v3") {
		t.Fatalf("stale view for a new plan: %+v", h.m.run.gate)
	}
}

func TestPlanGateKeys(t *testing.T) {
	h := newHarness(t, 4, 60, 20)
	h.send(SnapshotMsg{State: gateState()})
	// Scrolling: the last line of the plan can be reached.
	h.key("G")
	if !strings.Contains(h.plain(), "MODIFY web/routes.go") || h.m.run.gate.scroll == 0 {
		t.Fatalf("end of plan not shown (scroll %d):\n%s", h.m.run.gate.scroll, h.plain())
	}
	h.key("g")
	if h.m.run.gate.scroll != 0 {
		t.Fatalf("scroll %d", h.m.run.gate.scroll)
	}
	// f then esc: back to the plan, nothing sent.
	h.key("f")
	h.key("esc")
	if h.m.run.gate.typing || len(h.eng.got()) != 0 {
		t.Fatalf("esc did not leave the input")
	}
	// esc shows the panes, o the plan again; a works from the panes.
	h.key("esc")
	if h.m.run.planShown() {
		t.Fatalf("esc kept the plan")
	}
	h.key("o")
	if !h.m.run.planShown() {
		t.Fatalf("o did not show the plan")
	}
	// Pause and cancel still work at the gate.
	h.key("p")
	h.key("c")
	h.key("y")
	h.eng.requireCalls(t, "pause", "cancel")
}

// p on the start screen's Team row switches who approves the plan; the
// task carries the choice only when it differs from the config's.
func TestStartPlanApproval(t *testing.T) {
	for _, human := range []bool{false, true} {
		l := newFakeLauncher()
		h := newFrontHarnessWith(t, l, Options{Agents: testAgents, Workers: 2, HumanPlanApproval: human}, 120, 40)
		h.typeText("add a square root")
		h.keys("tab", "tab", "tab")
		from, to, want := "plan approved by the Reviewer  ", "plan approved by the Reviewer, then you", "human"
		if human {
			from, to, want = to, from, "reviewer"
		}
		if !strings.Contains(h.plain(), from) || !strings.Contains(h.plain(), "p switches") {
			t.Fatalf("team row:\n%s", h.plain())
		}
		h.keys("p")
		if !strings.Contains(h.plain(), to) {
			t.Fatalf("team row after p:\n%s", h.plain())
		}
		h.run(h.send(ctrl('s')))
		if len(l.started) != 1 || l.started[0].PlanApproval != want {
			t.Fatalf("started %+v, want plan approval %q", l.started, want)
		}
	}
}
