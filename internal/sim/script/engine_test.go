package script

import (
	"math/rand/v2"
	"testing"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// TestPlansPassEngineValidation checks the lead's plans (first and revised)
// against the engine's own parser and validator.
func TestPlansPassEngineValidation(t *testing.T) {
	f := newFixture(t)
	for round, st := range []vocab.Phase{vocab.PhasePlanning, vocab.PhasePlanRevision} {
		if round == 1 {
			mustWrite(t, f.td("reviews/plan_v1-feedback.md"), "- **Problem:** vague.\n")
		}
		out, _ := DefaultScenario().Respond(vocab.Assignment{State: st, Role: vocab.RoleLead, Agent: "lead",
			Writes: []string{f.td("plan.md")}}, f.taskDir, f.project, rand.New(rand.NewPCG(uint64(round), 9)))
		if len(out) != 1 {
			t.Fatalf("round %d: %d files", round, len(out))
		}
		p, probs := flow.ParsePlan([]byte(out[0].Content), f.project)
		if len(probs) > 0 {
			t.Fatalf("round %d: engine rejects the plan: %v\n%s", round, probs, out[0].Content)
		}
		if len(p.Subtasks) != 4 || len(p.Checkpoints) != 2 {
			t.Errorf("round %d: parsed %d subtasks, %d checkpoints", round, len(p.Subtasks), len(p.Checkpoints))
		}
	}
}

// TestInjectedLineFound checks the sim's regex finds the engine's line.
func TestInjectedLineFound(t *testing.T) {
	line := flow.InjectText("Do subtask st_1: core", flow.AssignmentFile("/p/.hivemind/tasks/t1", "worker_1", 7))
	if got := AssignmentRE.FindString(line); got != flow.AssignmentFile("/p/.hivemind/tasks/t1", "worker_1", 7) {
		t.Fatalf("found %q in %q", got, line)
	}
}
