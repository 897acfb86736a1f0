package roles

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// TestSharedContextWritePolicy: every role may write its notes in its own
// outbox, and no role may write another's notes, the old shared inbox, the
// context files themselves, the archive, or anything that only looks like
// a note.
func TestSharedContextWritePolicy(t *testing.T) {
	const ws, task, project = "/p/.hivemind", "/p/.hivemind/tasks/t1", "/p"
	cases := []struct {
		path  string
		allow bool
	}{
		{task + "/agents/{self}/knowledge/1.md", true},
		{task + "/agents/{self}/knowledge/use-sqlite.md", true},
		{task + "/agents/{other}/knowledge/1.md", false},
		{task + "/agents/{self}/knowledge/sub/1.md", false},
		{task + "/agents/{self}/knowledge/1.json", false},
		{ws + "/context/inbox/lead-1.md", false},
		{ws + "/context/inbox/worker_2-7.md", false},
		{ws + "/context/decisions.json", false},
		{ws + "/context/constraints.json", false},
		{ws + "/context/glossary.json", false},
		{ws + "/context/ids.json", false},
		{ws + "/context/changes.jsonl", false},
		{ws + "/context/archive/t1_c1_lead-1.md", false},
		{ws + "/context/inbox/sub/lead-1.md", false},
		{ws + "/context/inbox/lead-1.json", false},
		{task + "/context/inbox/lead-1.md", false},
	}
	self := map[vocab.Role]string{"lead": "lead", "reviewer": "reviewer", "worker": "worker_1"}
	other := map[vocab.Role]string{"lead": "worker_1", "reviewer": "lead", "worker": "worker_2"}
	for _, role := range vocab.Roles() {
		p := DefaultPolicy(role)
		p.Agent = vocab.AgentID(self[role])
		for _, c := range cases {
			for _, tool := range []string{"Write", "Edit"} {
				if tool == "Edit" && !p.Tools.Edit {
					continue
				}
				path := strings.NewReplacer("{self}", self[role], "{other}", other[role]).Replace(c.path)
				ok, reason := Decide(p, task, project, tool, map[string]any{"file_path": path})
				if ok != c.allow {
					t.Errorf("%s %s %s: allowed=%v (%s), want %v", role, tool, c.path, ok, reason, c.allow)
				}
			}
		}
	}
}

// TestPromptsTeachSharedContext: each prompt explains the inbox format and
// its role's part in the shared knowledge.
func TestPromptsTeachSharedContext(t *testing.T) {
	common := []string{"agents/<your agent id>/knowledge/<n>.md", "kind: decision", "`constraint`", "`term`",
		"decisions.json", "next** assignment", "hivemind context rm ID"}
	want := map[vocab.Role][]string{
		"lead":     {"plan-level choices"},
		"worker":   {"other Workers must follow"},
		"reviewer": {"contradicts a recorded decision", "Do not re-raise"},
	}
	for role, words := range want {
		text, err := EmbeddedPrompt(role)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range append(common, words...) {
			if !strings.Contains(text, w) {
				t.Errorf("%s prompt lacks %q", role, w)
			}
		}
	}
}
