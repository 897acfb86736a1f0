package flow

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// submitGated starts a task whose plans the user approves.
func (sc *scenario) submitGated() {
	sc.do(TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Workers: 2, Description: "do it",
		PlanApproval: "human"}, TaskDir: testTaskDir})
	sc.expect(vocab.PhasePlanning)
}

// toPlanApproval: a gated task whose first plan the Reviewer approved.
func (sc *scenario) toPlanApproval() {
	sc.submitGated()
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	sc.expect(vocab.PhasePlanReview)
	sc.trig("plan-approved.md", "LGTM")
	sc.expect(vocab.PhasePlanApproval)
}

func archivesOf(eff []Effect) []string {
	var out []string
	for _, a := range effectsOf[ArchiveTrigger](eff) {
		out = append(out, a.From+"→"+a.To)
	}
	return out
}

func noteLike(eff []Effect, sub string) bool {
	for _, n := range effectsOf[NotifyUser](eff) {
		if strings.Contains(n.Message, sub) {
			return true
		}
	}
	return false
}

func TestPlanGateTransitions(t *testing.T) {
	tests := []struct {
		name  string
		run   func(sc *scenario)
		want  vocab.Phase
		check func(t *testing.T, sc *scenario)
	}{
		{"plan_review → plan_approval (Reviewer approves, the user decides)", func(sc *scenario) {
			sc.toPlanApproval()
		}, vocab.PhasePlanApproval, func(t *testing.T, sc *scenario) {
			if len(sc.s.ActiveAgents) != 0 || len(effectsOf[Inject](sc.eff)) != 0 || len(sc.s.Timers) != 0 {
				t.Fatalf("someone works while the user decides: active %v timers %v effects %s", sc.s.ActiveAgents, sc.s.Timers, describe(sc.eff))
			}
			if !hasEvent(sc.eff, "plan_approved") || !hasEvent(sc.eff, "plan_awaiting_human") {
				t.Fatalf("events %v", eventTypes(sc.eff))
			}
			if !noteLike(sc.eff, testTaskDir+"/plan-decision.md") || !noteLike(sc.eff, "(a)") {
				t.Fatalf("the notice does not say how to decide: %v", effectsOf[NotifyUser](sc.eff))
			}
			if sc.s.ReviewSubject != "plan_v1" || sc.s.Subtasks["st_1"].Status != "" {
				t.Fatalf("subject %q subtasks %v", sc.s.ReviewSubject, sc.s.Subtasks)
			}
		}},
		{"plan_approval → executing (the user approves)", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "approve\n")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if !containsSeq(archivesOf(sc.eff), "plan-decision.md→reviews/plan_v1-human-approved.md") {
				t.Fatalf("archives %v", archivesOf(sc.eff))
			}
			if !hasEvent(sc.eff, "plan_decision") || len(effectsOf[Inject](sc.eff)) != 2 {
				t.Fatalf("effects %s", describe(sc.eff))
			}
			last := sc.s.Rounds[len(sc.s.Rounds)-1]
			if last.Verdict != "approved" || last.Summary != "(from you)" || sc.s.RevisionCount != 0 {
				t.Fatalf("round %+v revisions %d", last, sc.s.RevisionCount)
			}
		}},
		{"plan_approval → executing (a worker paused and resumed at the gate; then the user approves)", func(sc *scenario) {
			sc.toPlanApproval()
			sc.do(KeyPressed{Action: KeyToggleAgent, Agent: "worker_1"})
			sc.do(KeyPressed{Action: KeyToggleAgent, Agent: "worker_1"})
			sc.trig(PlanDecisionFile, "approve\n")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if sc.s.Agents["worker_1"].Paused || len(effectsOf[Inject](sc.eff)) != 2 {
				t.Fatalf("paused %v, effects %s", sc.s.Agents["worker_1"].Paused, describe(sc.eff))
			}
		}},
		{"plan_approval → executing (a worker paused at the gate: its subtask waits, the other is sent)", func(sc *scenario) {
			sc.toPlanApproval()
			sc.do(KeyPressed{Action: KeyToggleAgent, Agent: "worker_1"})
			sc.trig(PlanDecisionFile, "approve\n")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			for _, in := range effectsOf[Inject](sc.eff) {
				if in.Agent == "worker_1" {
					t.Fatalf("injected into the paused worker_1: %s", describe(sc.eff))
				}
			}
			if !sc.s.Agents["worker_1"].Paused || len(effectsOf[Inject](sc.eff)) != 1 {
				t.Fatalf("paused %v, effects %s", sc.s.Agents["worker_1"].Paused, describe(sc.eff))
			}
		}},
		{"plan_approval → plan_revision (the user sends feedback to the Lead)", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "Revise\n\nSplit st_1: it is too big.\n")
		}, vocab.PhasePlanRevision, func(t *testing.T, sc *scenario) {
			const fb = "reviews/plan_v1-human-feedback.md"
			if !containsSeq(archivesOf(sc.eff), "plan-decision.md→"+fb) || sc.s.RevisionCount != 1 {
				t.Fatalf("archives %v revisions %d", archivesOf(sc.eff), sc.s.RevisionCount)
			}
			a := assignmentFor(t, sc.eff, "lead")
			if !strings.Contains(a.Instruction, "The user (the human who approves plans) asked for changes in "+fb) {
				t.Fatalf("lead instruction %q", a.Instruction)
			}
			if !contains(a.Reads, testTaskDir+"/"+fb) {
				t.Fatalf("lead reads %v", a.Reads)
			}
			var ev AppendEvent
			for _, e := range effectsOf[AppendEvent](sc.eff) {
				if e.Type == "plan_decision" {
					ev = e
				}
			}
			if ev.Details["decision"] != DecisionRevise || ev.Details["revision"] != 1 {
				t.Fatalf("plan_decision %v", ev.Details)
			}
		}},
		{"revised plan goes to the Reviewer, then to the user again", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "revise\nmore tests")
			sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, "\nv2\n"...), Agent: "lead"})
			sc.expect(vocab.PhasePlanReview)
			a := assignmentFor(t, sc.eff, "reviewer")
			if !contains(a.Reads, testTaskDir+"/reviews/plan_v1-human-feedback.md") {
				t.Fatalf("the Reviewer does not see the user's feedback: %v", a.Reads)
			}
			sc.trig("plan-approved.md", "LGTM 2")
		}, vocab.PhasePlanApproval, func(t *testing.T, sc *scenario) {
			if sc.s.ReviewSubject != "plan_v2" {
				t.Fatalf("subject %q", sc.s.ReviewSubject)
			}
		}},
		{"invalid decision: archived, the user told, still waiting", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "yes please\n")
		}, vocab.PhasePlanApproval, func(t *testing.T, sc *scenario) {
			if !containsSeq(archivesOf(sc.eff), "plan-decision.md→reviews/plan_v1-decision_v1-invalid.md") {
				t.Fatalf("archives %v", archivesOf(sc.eff))
			}
			if !hasEvent(sc.eff, "plan_decision_rejected") || !noteLike(sc.eff, `the first line must be "approve" or "revise", got "yes please"`) {
				t.Fatalf("effects %s", describe(sc.eff))
			}
		}},
		{"revise without feedback is rejected", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "revise\n\n")
		}, vocab.PhasePlanApproval, func(t *testing.T, sc *scenario) {
			if !noteLike(sc.eff, "revise needs feedback") || sc.s.RevisionCount != 0 {
				t.Fatalf("effects %s", describe(sc.eff))
			}
		}},
		{"a friction resolution approved by the Reviewer is not gated", func(sc *scenario) {
			sc.toPlanApproval()
			sc.trig(PlanDecisionFile, "approve")
			sc.trig("friction/slow-tests.md", "tests are slow")
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
			sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
			sc.trig("checkpoint-approved.md", "ok")
			sc.expect(vocab.PhaseFrictionResolution)
			sc.trig("friction-resolution.md", "use a cache")
			sc.expect(vocab.PhasePlanReview)
			sc.trig("plan-approved.md", "fine")
		}, vocab.PhaseExecuting, nil},
		{"plan_approval → paused → plan_approval", func(sc *scenario) {
			sc.toPlanApproval()
			sc.do(KeyPressed{Action: KeyPause})
			sc.expect(vocab.PhasePaused)
			// A decision written while paused waits for the resume.
			eff := sc.trig(PlanDecisionFile, "approve")
			if len(effectsOf[ArchiveTrigger](eff)) != 0 || len(sc.s.Deferred) != 1 {
				t.Fatalf("paused machine acted: %s", describe(eff))
			}
			sc.do(KeyPressed{Action: KeyResume})
		}, vocab.PhaseExecuting, nil},
		{"plan_approval → cancelled", func(sc *scenario) {
			sc.toPlanApproval()
			sc.do(KeyPressed{Action: KeyCancel})
		}, vocab.PhaseCancelled, nil},
		{"the default (reviewer) builds at once", func(sc *scenario) {
			sc.toExecuting()
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if sc.s.PlanApproval != "" || hasEvent(sc.eff, "plan_awaiting_human") {
				t.Fatalf("gate without asking: %s", describe(sc.eff))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScenario(t)
			tc.run(sc)
			sc.expect(tc.want)
			if tc.check != nil {
				tc.check(t, sc)
			}
		})
	}
}

// The user's feedback counts against max_revision_cycles like the
// Reviewer's: the last round past the limit needs a human.
func TestPlanGateRevisionLimit(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanApproval()
	for i := 1; i <= 3; i++ {
		sc.trig(PlanDecisionFile, fmt.Sprintf("revise\nround %d: no", i))
		if i == 3 {
			break
		}
		sc.expect(vocab.PhasePlanRevision)
		sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, fmt.Sprintf("\nv%d\n", i+1)...)})
		sc.trig("plan-approved.md", fmt.Sprintf("ok %d", i))
		sc.expect(vocab.PhasePlanApproval)
	}
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "plan_revisions" || !strings.Contains(sc.s.Reason, "the last time by you") || sc.s.RevisionCount != 3 {
		t.Fatalf("escalation %q reason %q revisions %d", sc.s.Escalation, sc.s.Reason, sc.s.RevisionCount)
	}
	// Reviewer and user rounds share the limit.
	sc = newScenario(t)
	sc.submitGated()
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan})
	sc.trig("plan-feedback.md", "no")
	sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, "\nv2\n"...)})
	sc.trig("plan-feedback.md", "no again")
	sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, "\nv3\n"...)})
	sc.trig("plan-approved.md", "ok")
	sc.expect(vocab.PhasePlanApproval)
	sc.trig(PlanDecisionFile, "revise\nnot yet")
	sc.expect(vocab.PhaseNeedsHuman)
	// Retry starts planning afresh, and the gate still applies.
	sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhasePlanning)
	sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, "\nv4\n"...)})
	sc.trig("plan-approved.md", "ok at last")
	sc.expect(vocab.PhasePlanApproval)
}

// A run killed while the user decides resumes waiting; a decision written
// while it was down (found on disk) is taken as it starts.
func TestPlanGateResume(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanApproval()
	raw, _ := json.Marshal(sc.s)
	var restored State
	if err := json.Unmarshal(raw, &restored); err != nil {
		t.Fatal(err)
	}
	sc.s = restored
	eff := sc.do(Resumed{})
	sc.expect(vocab.PhasePlanApproval)
	if len(effectsOf[SpawnAgent](eff)) != 4 || len(effectsOf[Inject](eff)) != 0 {
		t.Fatalf("resume effects: %s", describe(eff))
	}
	sc.s = restored
	eff = sc.do(Resumed{OnDisk: []Event{TriggerCompleted{Path: PlanDecisionFile, Content: []byte("approve"), ModTime: t0, When: When{At: t0}}}})
	sc.expect(vocab.PhaseExecuting)
	if !hasEvent(eff, "plan_decision") || len(effectsOf[Inject](eff)) != 2 {
		t.Fatalf("resume with a decision on disk: %s", describe(eff))
	}
	// The same file seen again (archived after the state was saved, then
	// a crash) is a duplicate.
	n, eff := step(t, testMachine, sc.s, TriggerCompleted{Path: PlanDecisionFile, Content: []byte("approve"), ModTime: t0, When: When{At: t0.Add(time.Hour)}})
	if n.Phase != vocab.PhaseExecuting || !hasEvent(eff, "trigger_duplicate") {
		t.Fatalf("duplicate decision: %s", describe(eff))
	}
}

// While the user decides, agents are still looked after: a crash is
// restarted (after the backoff), and nothing else is sent.
func TestPlanGateAgentCrash(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanApproval()
	sc.ready()
	sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1})
	sc.expect(vocab.PhasePlanApproval)
	if _, ok := sc.s.Timers[restartTimer("worker_1")]; !ok {
		t.Fatalf("no restart scheduled: %s", describe(sc.eff))
	}
	eff := sc.do(TimerFired{ID: restartTimer("worker_1")})
	if len(effectsOf[RestartAgent](eff)) != 1 || len(effectsOf[Inject](eff)) != 0 {
		t.Fatalf("restart: %s", describe(eff))
	}
	// Idle agents with nothing to do are not reminded.
	eff = sc.do(AgentHealth{Agent: "lead", Health: "idle"})
	if len(sc.s.Timers) != 0 || len(effectsOf[ScheduleTimer](eff)) != 0 {
		t.Fatalf("timers while waiting for the user: %v", sc.s.Timers)
	}
}

func TestParsePlanDecision(t *testing.T) {
	tests := []struct {
		in      string
		want    PlanDecision
		problem string
	}{
		{"approve", PlanDecision{Approve: true}, ""},
		{"  APPROVE  \r\n\r\nlooks good\r\n", PlanDecision{Approve: true, Feedback: "looks good"}, ""},
		{"# Revise\n\n- split st_1\n- add tests\n", PlanDecision{Feedback: "- split st_1\n- add tests"}, ""},
		{"**revise**\nx", PlanDecision{Feedback: "x"}, ""},
		{"revise", PlanDecision{}, "revise needs feedback"},
		{"", PlanDecision{}, `the first line must be "approve" or "revise", got ""`},
		{"ok\napprove", PlanDecision{}, `got "ok"`},
		{"approve\xff", PlanDecision{}, "not UTF-8"},
		{"approve\n" + strings.Repeat("x", MaxPlanDecision), PlanDecision{}, "at most 16384"},
	}
	for _, tc := range tests {
		got, err := ParsePlanDecision([]byte(tc.in))
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.problem)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
		// What FormatPlanDecision writes reads back the same.
		if again, err := ParsePlanDecision(FormatPlanDecision(got)); err != nil || again != got {
			t.Errorf("round trip of %+v: %+v %v", got, again, err)
		}
	}
}
