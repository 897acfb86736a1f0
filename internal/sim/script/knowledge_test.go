package script

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// TestRecordDecisions: with RecordDecisions, the Lead records one decision
// with its first plan and worker_1 one with its first subtask (both in their
// own outbox, before anything else they write that turn);
// nobody records twice, worker_2 never; outputs list the decisions read.
func TestRecordDecisions(t *testing.T) {
	f := newFixture(t)
	root := filepath.Join(f.project, ".hivemind")
	store, err := workspace.OpenKnowledge(root)
	if err != nil {
		t.Fatal(err)
	}
	reads := vocab.KnowledgeFiles(root)
	sc := DefaultScenario()
	sc.RecordDecisions = true
	rnd := rand.New(rand.NewPCG(1, 1))
	leadAsg := vocab.Assignment{Seq: 1, State: vocab.PhasePlanning, Role: vocab.RoleLead, Agent: "lead",
		Writes: []string{f.td("plan.md")}, Reads: reads}
	out, _ := sc.Respond(leadAsg, f.taskDir, f.project, rnd)
	if len(out) != 2 || out[0].Path != filepath.Join(f.taskDir, "agents", "lead", "knowledge", "1.md") || !strings.HasSuffix(out[1].Path, "plan.md") {
		t.Fatalf("lead writes %v", paths(out))
	}
	e, err := vocab.ParseInboxEntry([]byte(out[0].Content))
	if err != nil || e.Kind != vocab.KindDecision {
		t.Fatalf("lead entry %+v: %v", e, err)
	}
	// Without the shared knowledge in its reads, nothing is recorded.
	noCtx := leadAsg
	noCtx.Reads = nil
	if out, _ := sc.Respond(noCtx, f.taskDir, f.project, rnd); len(out) != 1 {
		t.Errorf("without knowledge reads: %v", paths(out))
	}
	// Merged and archived (as the engine does), it is not recorded again.
	if _, err := store.Merge(e, "lead", "t1", "src-lead", time.Now()); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, out[0].Path, out[0].Content)
	if err := store.Archive(out[0].Path, "archive/t1_c1_lead-1.md"); err != nil {
		t.Fatal(err)
	}
	if out, _ := sc.Respond(leadAsg, f.taskDir, f.project, rnd); len(out) != 1 {
		t.Errorf("lead records twice: %v", paths(out))
	}

	plan := f.writePlan(t)
	sub := plan.Subtasks[0]
	work := func(agent vocab.AgentID, st vocab.Subtask) []FileWrite {
		a := vocab.Assignment{Seq: 5, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: agent,
			Subtask: &st, Reads: reads, Writes: []string{f.td("outputs/" + st.ID + ".md")},
			DoneMarker: f.td("outputs/" + st.ID + ".done")}
		out, _ := sc.Respond(a, f.taskDir, f.project, rnd)
		return out
	}
	out = work("worker_2", sub)
	for _, w := range out {
		if strings.Contains(w.Path, "/knowledge/") {
			t.Errorf("worker_2 recorded %s", w.Path)
		}
	}
	out = work("worker_1", sub)
	var entry FileWrite
	for i, w := range out {
		if strings.Contains(w.Path, "/knowledge/") {
			entry = w
			if i >= len(out)-2 {
				t.Errorf("worker_1's entry is not written before its output and marker: %v", paths(out))
			}
		}
	}
	if entry.Path != filepath.Join(f.taskDir, "agents", "worker_1", "knowledge", "1.md") {
		t.Fatalf("worker_1 writes %v", paths(out))
	}
	// The output lists the decisions in decisions.json (the lead's).
	output := out[len(out)-2]
	if !strings.Contains(output.Content, "## Shared decisions followed") || !strings.Contains(output.Content, "D1 One owner per file") {
		t.Errorf("output:\n%s", output.Content)
	}
	// A note waiting in its outbox counts as recorded.
	mustWrite(t, entry.Path, entry.Content)
	for _, w := range work("worker_1", plan.Subtasks[1]) {
		if strings.Contains(w.Path, "/knowledge/") {
			t.Errorf("worker_1 records twice: %s", w.Path)
		}
	}
	if _, err := os.Stat(entry.Path); err != nil {
		t.Fatal(err)
	}
}
