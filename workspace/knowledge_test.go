package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func openTestContext(t *testing.T) (*KnowledgeStore, string) {
	t.Helper()
	root := t.TempDir()
	c, err := OpenKnowledge(root)
	if err != nil {
		t.Fatal(err)
	}
	return c, root
}

func TestOpenContextCreatesEmptyFiles(t *testing.T) {
	c, root := openTestContext(t)
	for _, p := range vocab.KnowledgeFiles(root) {
		b, err := os.ReadFile(p)
		if err != nil || strings.TrimSpace(string(b)) != "[]" {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
	for _, d := range []string{filepath.Join(c.Dir(), vocab.KnowledgeArchiveDir)} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	// Opening again keeps what is there.
	if _, _, err := c.AddDecision(Decision{Title: "t", Rationale: "r", DecidedBy: "lead"}); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenKnowledge(root)
	if err != nil {
		t.Fatal(err)
	}
	kn, err := c2.Load()
	if err != nil || len(kn.Decisions) != 1 {
		t.Fatalf("reopen: %+v, %v", kn, err)
	}
}

// ReadContext creates nothing: without a context directory it reads three
// empty (non-nil) lists; with one it reads what the store wrote, without
// the store's lock file.
func TestReadContextCreatesNothing(t *testing.T) {
	root := t.TempDir()
	kn, dir, err := ReadKnowledge(root)
	if err != nil || dir != filepath.Join(root, vocab.KnowledgeDir) {
		t.Fatalf("empty workspace: %s %v", dir, err)
	}
	if kn.Decisions == nil || kn.Constraints == nil || kn.Glossary == nil || len(kn.Items()) != 0 {
		t.Errorf("empty workspace: %+v, want three empty lists", kn)
	}
	if b, _ := json.Marshal(kn); string(b) != `{"decisions":[],"constraints":[],"glossary":[]}` {
		t.Errorf("json %s", b)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("ReadContext created %v", entries)
	}

	c, err := OpenKnowledge(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.AddDecision(Decision{Title: "t", Rationale: "r", DecidedBy: "lead"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(c.Dir(), knowledgeLockFile)); err != nil {
		t.Fatal(err)
	}
	if kn, _, err = ReadKnowledge(root); err != nil || len(kn.Decisions) != 1 || kn.Glossary == nil {
		t.Fatalf("after a decision: %+v %v", kn, err)
	}
	if _, err := os.Lstat(filepath.Join(c.Dir(), knowledgeLockFile)); err == nil {
		t.Error("ReadContext created the lock file")
	}
	if err := os.WriteFile(filepath.Join(c.Dir(), vocab.GlossaryFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadKnowledge(root); err == nil {
		t.Error("a corrupt glossary read without error")
	}

	// A symlinked context directory is refused, as by OpenContext.
	other := t.TempDir()
	if err := os.Symlink(c.Dir(), filepath.Join(other, vocab.KnowledgeDir)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadKnowledge(other); !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked context: %v, want ErrSymlink", err)
	}
}

// TestContextMerge is the merge table: what each entry does to the store,
// applied in order.
func TestContextMerge(t *testing.T) {
	c, _ := openTestContext(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	steps := []struct {
		name   string
		e      vocab.InboxEntry
		by     string
		source string
		want   MergeResult
	}{
		{"first decision", vocab.InboxEntry{Kind: vocab.KindDecision, Title: "Use SQLite", Text: "simple"}, "lead", "s1", MergeResult{Kind: vocab.KindDecision, ID: "D1", Added: true}},
		{"second decision", vocab.InboxEntry{Kind: vocab.KindDecision, Title: "REST not gRPC", Text: "clients"}, "worker_1", "s2", MergeResult{Kind: vocab.KindDecision, ID: "D2", Added: true}},
		{"same source again", vocab.InboxEntry{Kind: vocab.KindDecision, Title: "Use SQLite", Text: "simple"}, "lead", "s1", MergeResult{Kind: vocab.KindDecision, ID: "D1"}},
		{"same decision, other words spacing", vocab.InboxEntry{Kind: vocab.KindDecision, Title: "use  sqlite", Text: "Simple"}, "worker_2", "s3", MergeResult{Kind: vocab.KindDecision, ID: "D1"}},
		{"same title, new rationale is new", vocab.InboxEntry{Kind: vocab.KindDecision, Title: "Use SQLite", Text: "and WAL mode"}, "worker_2", "s4", MergeResult{Kind: vocab.KindDecision, ID: "D3", Added: true}},
		{"constraint", vocab.InboxEntry{Kind: vocab.KindConstraint, Title: "no cgo", Text: "static binary"}, "lead", "s5", MergeResult{Kind: vocab.KindConstraint, ID: "C1", Added: true}},
		{"term", vocab.InboxEntry{Kind: vocab.KindTerm, Title: "Checkpoint", Text: "a milestone"}, "lead", "s6", MergeResult{Kind: vocab.KindTerm, ID: "Checkpoint", Added: true}},
		// The term keeps the spelling it was first defined with.
		{"duplicate term updates", vocab.InboxEntry{Kind: vocab.KindTerm, Title: "checkpoint", Text: "a reviewed milestone"}, "worker_1", "s7", MergeResult{Kind: vocab.KindTerm, ID: "Checkpoint", Updated: true}},
		{"same definition: nothing", vocab.InboxEntry{Kind: vocab.KindTerm, Title: "CHECKPOINT", Text: "a reviewed  milestone"}, "worker_2", "s8", MergeResult{Kind: vocab.KindTerm, ID: "Checkpoint"}},
		{"old source of a term: nothing", vocab.InboxEntry{Kind: vocab.KindTerm, Title: "checkpoint", Text: "a milestone"}, "lead", "s6", MergeResult{Kind: vocab.KindTerm, ID: "Checkpoint"}},
	}
	for _, s := range steps {
		got, err := c.Merge(s.e, s.by, "task1", s.source, at)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: got %+v, want %+v", s.name, got, s.want)
		}
	}
	if _, err := c.Merge(vocab.InboxEntry{Kind: "rule", Title: "x", Text: "y"}, "lead", "t", "s9", at); err == nil {
		t.Error("unknown kind merged")
	}
	kn, err := c.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(kn.Decisions) != 3 || len(kn.Constraints) != 1 || len(kn.Glossary) != 1 {
		t.Fatalf("counts: %d decisions, %d constraints, %d terms", len(kn.Decisions), len(kn.Constraints), len(kn.Glossary))
	}
	d := kn.Decisions[1]
	if d.Title != "REST not gRPC" || d.Rationale != "clients" || d.DecidedBy != "worker_1" || !d.DecidedAt.Equal(at) || d.TaskID != "task1" {
		t.Errorf("decision fields: %+v", d)
	}
	g := kn.Glossary[0]
	if g.Term != "Checkpoint" || g.Definition != "a reviewed milestone" || g.AddedBy != "worker_1" ||
		len(g.History) != 1 || g.History[0].Definition != "a milestone" || g.History[0].AddedBy != "lead" {
		t.Errorf("term history: %+v", g)
	}
	changes, err := c.Changes()
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, ch := range changes {
		ops = append(ops, ch.Op+" "+ch.ID)
	}
	if got, want := strings.Join(ops, ","), "add D1,add D2,add D3,add C1,add Checkpoint,update Checkpoint"; got != want {
		t.Errorf("changes: %s, want %s", got, want)
	}
}

func TestContextRemove(t *testing.T) {
	c, _ := openTestContext(t)
	for i := range 3 {
		if _, _, err := c.AddDecision(Decision{Title: fmt.Sprint("d", i), Rationale: "r", DecidedBy: "lead"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.AddConstraint(Constraint{Name: "n", Description: "d", AddedBy: "user"}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.UpsertTerm(GlossaryEntry{Term: "Hive", Definition: "the team", AddedBy: "lead"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"D3", "c1", "hive", "D1"} {
		if _, err := c.Remove(id, "user"); err != nil {
			t.Fatalf("remove %s: %v", id, err)
		}
	}
	if _, err := c.Remove("D3", "user"); !errors.Is(err, ErrNotFound) {
		t.Errorf("remove twice: %v", err)
	}
	// A removed id is never issued again.
	d, _, err := c.AddDecision(Decision{Title: "new", Rationale: "r", DecidedBy: "lead"})
	if err != nil || d.ID != "D4" {
		t.Errorf("next id after removing D3: %q, %v", d.ID, err)
	}
	items, err := c.Items()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if strings.Join(ids, ",") != "D4,D2" {
		t.Errorf("left: %v", ids)
	}
}

func TestContextCorruptFileNotOverwritten(t *testing.T) {
	c, root := openTestContext(t)
	p := vocab.KnowledgeFiles(root)[0]
	if err := os.WriteFile(p, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.AddDecision(Decision{Title: "t", Rationale: "r"}); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "{not json" {
		t.Errorf("corrupt file overwritten: %q", b)
	}
}

// TestContextConcurrentAdds: two agents' entries merged at the same instant
// through two stores (two engines would be refused by the workspace lock,
// but the store must not depend on that) are both kept, with distinct ids.
func TestContextConcurrentAdds(t *testing.T) {
	_, root := openTestContext(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for w := range 2 {
		c, err := OpenKnowledge(root)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range n {
				src := fmt.Sprintf("agent%d-%d", w, i)
				if _, err := c.Merge(vocab.InboxEntry{Kind: vocab.KindDecision, Title: "decision " + src, Text: "because"}, fmt.Sprint("worker_", w), "t", src, time.Now()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c, _ := OpenKnowledge(root)
	kn, err := c.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(kn.Decisions) != 2*n {
		t.Fatalf("%d decisions kept, want %d", len(kn.Decisions), 2*n)
	}
	seen := map[string]bool{}
	for _, d := range kn.Decisions {
		if seen[d.ID] {
			t.Errorf("id %s issued twice", d.ID)
		}
		seen[d.ID] = true
	}
}

// TestContextConcurrentProcesses runs the adds in two processes, so the
// flock (not the in-process mutex) is what keeps both.
func TestContextConcurrentProcesses(t *testing.T) {
	if os.Getenv("HIVEMIND_CONTEXT_CHILD") != "" {
		root, who := os.Getenv("HIVEMIND_CONTEXT_ROOT"), os.Getenv("HIVEMIND_CONTEXT_CHILD")
		c, err := OpenKnowledge(root)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 15 {
			if _, _, err := c.AddDecision(Decision{Title: who + " " + strconv.Itoa(i), Rationale: "r", DecidedBy: who}); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	_, root := openTestContext(t)
	var cmds []*exec.Cmd
	for _, who := range []string{"worker_1", "worker_2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestContextConcurrentProcesses$")
		cmd.Env = append(os.Environ(), "HIVEMIND_CONTEXT_CHILD="+who, "HIVEMIND_CONTEXT_ROOT="+root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := OpenKnowledge(root)
	kn, err := c.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(kn.Decisions) != 30 {
		t.Fatalf("%d decisions, want 30", len(kn.Decisions))
	}
}

func TestContextArchive(t *testing.T) {
	c, root := openTestContext(t)
	in := filepath.Join(root, "tasks", "t", "agents", "lead", "knowledge", "1.md")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Archive(in, "archive/t_c1_lead-1.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in); !os.IsNotExist(err) {
		t.Errorf("inbox file still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(c.Dir(), "archive", "t_c1_lead-1.md")); err != nil || string(b) != "x" {
		t.Errorf("archive: %q %v", b, err)
	}
	// Again (a repeated effect after a restart): harmless.
	if err := c.Archive(in, "archive/t_c1_lead-1.md"); err != nil {
		t.Errorf("archive again: %v", err)
	}
	// Same content reappearing in the inbox: dropped.
	_ = os.WriteFile(in, []byte("x"), 0o644)
	if err := c.Archive(in, "archive/t_c1_lead-1.md"); err != nil {
		t.Errorf("archive duplicate: %v", err)
	}
	if _, err := os.Stat(in); !os.IsNotExist(err) {
		t.Errorf("duplicate inbox file kept: %v", err)
	}
	// Different content at an existing archive name: refused.
	_ = os.WriteFile(in, []byte("y"), 0o644)
	if err := c.Archive(in, "archive/t_c1_lead-1.md"); !errors.Is(err, ErrExists) {
		t.Errorf("overwrite: %v", err)
	}
	if err := c.Archive(in, "/tmp/a.md"); !errors.Is(err, ErrOutside) {
		t.Errorf("Archive to /tmp/a.md = %v, want ErrOutside", err)
	}
	if err := c.Archive("agents/lead/knowledge/1.md", "archive/a.md"); err == nil {
		t.Error("Archive from a relative path: accepted")
	}
}

func TestContextItemsOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kn := Knowledge{
		Decisions:   []Decision{{ID: "D1", Title: "a", DecidedAt: t0}, {ID: "D2", Title: "b", DecidedAt: t0.Add(2 * time.Second)}},
		Constraints: []Constraint{{ID: "C1", Name: "c", AddedAt: t0.Add(time.Second)}},
		Glossary:    []GlossaryEntry{{Term: "t", AddedAt: t0.Add(3 * time.Second), History: []TermRevision{{}}}},
	}
	b, _ := json.Marshal(kn.Items())
	got := string(b)
	for _, want := range []string{`"id":"t"`, `"id":"D2"`, `"id":"C1"`, `"id":"D1"`} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("%s missing in %s", want, got)
		}
		got = got[i:]
	}
	if kn.Items()[0].Revisions != 1 {
		t.Error("revisions not counted")
	}
}
