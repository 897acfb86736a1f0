package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// A sim run records decisions in the shared knowledge: the Lead one while
// planning, worker_1 one with its first subtask. Both land in
// context/decisions.json with their authors; every assignment reads the
// context files; a worker assigned after worker_1's decision was merged
// read it (its output lists it); `hivemind context` shows the lists and
// `hivemind context rm` removes an entry, refusing while the workspace is
// locked by a running hivemind.
func TestSimRecordsSharedDecisions(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	start := time.Now()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--workers", "2", "--project", project,
		"build a tiny key-value store")
	code := exitCode(t, cmd)
	t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out.String())
	}
	dir := taskDir(t, project)
	checkComplete(t, dir)
	taskID := filepath.Base(dir)
	root := filepath.Join(project, ".hivemind")

	// decisions.json: both decisions, with authors and the task.
	var decisions []workspace.Decision
	b, err := os.ReadFile(filepath.Join(root, "context", "decisions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &decisions); err != nil {
		t.Fatalf("decisions.json: %v\n%s", err, b)
	}
	byAuthor := map[string]workspace.Decision{}
	for _, d := range decisions {
		byAuthor[d.DecidedBy] = d
		if d.TaskID != taskID || d.ID == "" || d.Title == "" || d.Rationale == "" || d.DecidedAt.IsZero() {
			t.Errorf("decision fields: %+v", d)
		}
	}
	lead, ok1 := byAuthor["lead"]
	w1, ok2 := byAuthor["worker_1"]
	if len(decisions) != 2 || !ok1 || !ok2 {
		t.Fatalf("decisions: %+v", decisions)
	}
	// The notes were moved from the outboxes into the archive.
	if left, _ := filepath.Glob(filepath.Join(dir, "agents", "*", "knowledge", "*")); len(left) != 0 {
		t.Errorf("notes left in the outboxes: %v", left)
	}

	// events.jsonl: worker_1's decision was merged, then a worker got a
	// subtask, and that subtask's output lists the decision it read.
	recs, _, err := workspace.ReadEvents(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	merged := -1
	for i, r := range recs {
		if r.Type == "context_merged" && r.Agent == "worker_1" && r.Details["id"] == w1.ID {
			merged = i
			break
		}
	}
	if merged < 0 {
		t.Fatalf("no context_merged record for %s", w1.ID)
	}
	later := 0
	for _, r := range recs[merged+1:] {
		what, _ := r.Details["what"].(string)
		sub, found := strings.CutPrefix(what, "Do subtask ")
		if r.Type != "assignment_sent" || !strings.HasPrefix(string(r.Agent), "worker_") || !found {
			continue
		}
		sub, _, _ = strings.Cut(sub, ":")
		outMD, err := os.ReadFile(filepath.Join(dir, vocab.OutboxesDir, string(r.Agent), "outputs", sub+".md"))
		if err != nil {
			t.Fatalf("output of %s: %v", sub, err)
		}
		if !strings.Contains(string(outMD), w1.ID+" "+w1.Title+" (worker_1)") || !strings.Contains(string(outMD), lead.ID+" "+lead.Title) {
			t.Errorf("%s (assigned to %s after %s was merged) does not list the decisions:\n%s", sub, r.Agent, w1.ID, outMD)
		}
		later++
	}
	if later == 0 {
		t.Fatalf("no subtask was assigned after %s was merged", w1.ID)
	}

	// Every assignment left on disk reads the three context files.
	files, _ := filepath.Glob(filepath.Join(dir, "assignments", "*.json"))
	if len(files) == 0 {
		t.Fatal("no assignments")
	}
	for _, f := range files {
		var a vocab.Assignment
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range vocab.KnowledgeFiles(root) {
			if !slices.Contains(a.Reads, p) {
				t.Errorf("%s reads lack %s: %v", filepath.Base(f), p, a.Reads)
			}
		}
	}

	// `hivemind context` lists both with their authors.
	list, lout := hivemind(t, ctx, home, "context", "--project", project)
	if c := exitCode(t, list); c != 0 {
		t.Fatalf("context exit %d: %s", c, lout.String())
	}
	for _, want := range []string{"Decisions (2)", lead.ID, lead.Title, w1.Title, "worker_1 ·", "Glossary (0)"} {
		if !strings.Contains(lout.String(), want) {
			t.Errorf("`hivemind context` lacks %q:\n%s", want, lout.String())
		}
	}

	// rm refuses while the workspace is locked (a running hivemind)...
	lock, _, err := workspace.AcquireWorkspaceLock(root)
	if err != nil {
		t.Fatal(err)
	}
	rm, rout := hivemind(t, ctx, home, "context", "rm", lead.ID, "--project", project)
	if c := exitCode(t, rm); c == 0 || !strings.Contains(rout.String(), "hivemind is running on this workspace") ||
		!strings.Contains(rout.String(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("rm while locked: exit %d\n%s", c, rout.String())
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	// ...and removes the entry otherwise.
	rm, rout = hivemind(t, ctx, home, "context", "rm", lead.ID, "--project", project)
	if c := exitCode(t, rm); c != 0 || !strings.Contains(rout.String(), "removed decision "+lead.ID) {
		t.Fatalf("rm: exit %d\n%s", c, rout.String())
	}
	rm, rout = hivemind(t, ctx, home, "context", "rm", "D99", "--project", project)
	if c := exitCode(t, rm); c == 0 || !strings.Contains(rout.String(), `no decision, constraint or term "D99"`) {
		t.Errorf("rm unknown: exit %d\n%s", c, rout.String())
	}
	js, jout := hivemind(t, ctx, home, "context", "--json", "--project", project)
	if c := exitCode(t, js); c != 0 {
		t.Fatalf("context --json exit %d: %s", c, jout.String())
	}
	var got workspace.Knowledge
	if err := json.Unmarshal([]byte(jout.String()), &got); err != nil || len(got.Decisions) != 1 || got.Decisions[0].ID != w1.ID {
		t.Errorf("after rm: %v %s", err, jout.String())
	}
}
