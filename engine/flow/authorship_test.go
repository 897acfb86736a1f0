package flow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// Every watched kind of the trigger table but the done marker (a
// SubtaskDone) has a handler, and every handler a row: a trigger added to
// the table is classified and dispatched, and none is dispatched that the
// table does not list.
func TestTriggerTableHandled(t *testing.T) {
	for _, spec := range triggers.Table() {
		_, ok := triggerHandlers[spec.Kind]
		if want := spec.Watched && spec.Kind != triggers.Done; ok != want {
			t.Errorf("%s: handler %v, want %v", spec.Kind, ok, want)
		}
	}
	for k := range triggerHandlers {
		if _, ok := triggers.Lookup(k); !ok {
			t.Errorf("handler for %s, which is not in the table", k)
		}
	}
}

// A file written where it does not count is refused: archived so it never
// fires, recorded with its writer, the writer told once — and the state
// does not move. Each row is one way an agent can write what is not its
// own.
func TestRefusedTriggers(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(sc *scenario)
		ev     Event
		writer vocab.AgentID
		phase  vocab.Phase
	}{
		{"the Lead approves its own plan", (*scenario).toPlanReview,
			TriggerCompleted{Path: "agents/lead/plan-approved.md", Content: []byte("ok")}, "lead", vocab.PhasePlanReview},
		{"the Lead sends its plan back", (*scenario).toPlanReview,
			TriggerCompleted{Path: "agents/lead/plan-feedback.md", Content: []byte("no")}, "lead", vocab.PhasePlanReview},
		{"a worker approves the plan", (*scenario).toPlanReview,
			TriggerCompleted{Path: "agents/worker_1/plan-approved.md", Content: []byte("ok")}, "worker_1", vocab.PhasePlanReview},
		{"the Reviewer writes the plan", func(sc *scenario) { sc.submit(2) },
			TriggerCompleted{Path: "agents/reviewer/plan.md", Content: validPlan}, "reviewer", vocab.PhasePlanning},
		{"a worker approves its checkpoint", (*scenario).toCheckpointReview,
			TriggerCompleted{Path: "agents/worker_1/checkpoint-approved.md", Content: []byte("ok")}, "worker_1", vocab.PhaseCheckpointReview},
		{"the Lead files checkpoint issues", (*scenario).toCheckpointReview,
			TriggerCompleted{Path: "agents/lead/checkpoint-issues.md", Content: []byte("x")}, "lead", vocab.PhaseCheckpointReview},
		{"the Reviewer ends the execution", (*scenario).toExecuting,
			TriggerCompleted{Path: "agents/reviewer/checkpoint.md", Content: []byte("x")}, "reviewer", vocab.PhaseExecuting},
		{"a worker resolves friction", (*scenario).toFrictionResolution,
			TriggerCompleted{Path: "agents/worker_2/friction-resolution.md", Content: []byte("x")}, "worker_2", vocab.PhaseFrictionResolution},
		{"worker_1 completes worker_2's subtask", (*scenario).toExecuting,
			SubtaskDone{Subtask: "st_2", Agent: "worker_1", OK: true}, "worker_1", vocab.PhaseExecuting},
		{"the Reviewer completes a subtask", (*scenario).toExecuting,
			SubtaskDone{Subtask: "st_1", Agent: "reviewer", OK: true}, "reviewer", vocab.PhaseExecuting},
		{"worker_2 completes worker_1's fix", (*scenario).toCheckpointFix,
			SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_2", OK: true}, "worker_2", vocab.PhaseCheckpointFix},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			c.setup(sc)
			before := sc.s
			eff := sc.do(c.ev)
			sc.expect(c.phase)
			if !hasEvent(eff, "trigger_refused") {
				t.Fatalf("not refused: %s", describe(eff))
			}
			for _, e := range effectsOf[AppendEvent](eff) {
				if e.Type == "trigger_refused" && (e.Agent != c.writer || e.Details["writer"] != c.writer) {
					t.Fatalf("refusal names %s/%v, want %s", e.Agent, e.Details["writer"], c.writer)
				}
			}
			ar := effectsOf[ArchiveTrigger](eff)
			if len(ar) != 1 || !strings.HasPrefix(ar[0].To, "reviews/refused_v") || !strings.HasPrefix(ar[0].From, triggers.Outbox(c.writer)+"/") {
				t.Fatalf("archive %v", ar)
			}
			if got := injectedTo(eff); len(got) != 1 || got[0] != string(c.writer) {
				t.Fatalf("told %v, want %s: %s", got, c.writer, describe(eff))
			}
			// Busy: its work re-sent with the refusal; idle: a notice.
			msg := ""
			if len(effectsOf[WriteAssignment](eff)) > 0 {
				a := assignmentFor(t, eff, c.writer)
				msg = a.Instruction + a.Rejected
			} else {
				msg = noticeFor(t, eff, c.writer)
			}
			if !strings.Contains(msg, "refused") {
				t.Fatalf("the message does not say what was refused: %q", msg)
			}
			for id, sub := range sc.s.Subtasks {
				if sub.Status != before.Subtasks[id].Status || sub.Worker != before.Subtasks[id].Worker {
					t.Fatalf("subtask %s moved: %+v → %+v", id, before.Subtasks[id], sub)
				}
			}
			if len(sc.s.Rounds) != len(before.Rounds) || sc.s.Plan != before.Plan && sc.s.PlanFile != before.PlanFile {
				t.Fatal("a refused file counted as a review round or a plan")
			}
		})
	}
}

// The rightful writer's file is taken after a forgery was refused, and a
// worker that keeps forging is told at most maxRefusalNotices times.
func TestRefusalsBoundedAndWorkGoesOn(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	told := 0
	for i := range 10 {
		eff := sc.do(TriggerCompleted{Path: "agents/worker_1/checkpoint-approved.md", Content: []byte{byte('a' + i)}})
		if !hasEvent(eff, "trigger_refused") {
			t.Fatalf("forgery %d not refused", i)
		}
		told += len(effectsOf[Inject](eff))
	}
	if told != maxRefusalNotices {
		t.Fatalf("worker_1 told %d times, want %d", told, maxRefusalNotices)
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.expect(vocab.PhaseCheckpointReview)
	sc.trig("checkpoint-approved.md", "ok")
	if sc.s.Subtasks["st_1"].Status != vocab.SubtaskDone || sc.s.Subtasks["st_2"].Worker != "worker_2" {
		t.Fatalf("subtasks %+v", sc.s.Subtasks)
	}
}

// A trigger in the outbox of no agent of the task is refused with a
// notice to the user (there is nobody to tell).
func TestTriggerFromUnknownOutboxRefused(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanReview()
	eff := sc.do(TriggerCompleted{Path: "agents/stranger/plan-approved.md", Content: []byte("ok")})
	sc.expect(vocab.PhasePlanReview)
	if !hasEvent(eff, "trigger_refused") || len(effectsOf[NotifyUser](eff)) != 1 || len(effectsOf[Inject](eff)) != 0 {
		t.Fatalf("%s", describe(eff))
	}
}

// An agent's friction reports past MaxPendingFriction are refused, the
// agent told once however many more come; the friction flow resets the
// count.
func TestFrictionFloodCapped(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	told := 0
	for i := range MaxPendingFriction + 50 {
		eff := sc.do(TriggerCompleted{Path: fmt.Sprintf("agents/worker_2/friction/f%d.md", i), Content: []byte("slow")})
		told += len(effectsOf[Inject](eff))
		if refused := hasEvent(eff, "trigger_refused"); refused != (i >= MaxPendingFriction) {
			t.Fatalf("report %d: refused %v", i, refused)
		}
	}
	if told != 1 || len(sc.s.FrictionPending) != MaxPendingFriction {
		t.Fatalf("told %d times, %d pending", told, len(sc.s.FrictionPending))
	}
	// worker_1's reports still count.
	if eff := sc.do(TriggerCompleted{Path: "agents/worker_1/friction/x.md", Content: []byte("x")}); !hasEvent(eff, "friction_recorded") {
		t.Fatalf("%s", describe(eff))
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseFrictionResolution)
	if ag := sc.s.Agents["worker_2"]; ag.Friction != 0 || ag.FrictionCapped {
		t.Fatalf("count not reset: %+v", ag)
	}
}
