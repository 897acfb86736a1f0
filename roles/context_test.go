package roles

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/workspace"
)

// TestSharedContextWritePolicy: every role may write its inbox entries at
// the workspace root, and no role may write the context files themselves,
// the archive, or anything that only looks like an inbox entry.
func TestSharedContextWritePolicy(t *testing.T) {
	const ws, task, project = "/p/.hivemind", "/p/.hivemind/tasks/t1", "/p"
	cases := []struct {
		path  string
		allow bool
	}{
		{ws + "/context/inbox/lead-1.md", true},
		{ws + "/context/inbox/worker_2-7.md", true},
		{ws + "/context/decisions.json", false},
		{ws + "/context/constraints.json", false},
		{ws + "/context/glossary.json", false},
		{ws + "/context/ids.json", false},
		{ws + "/context/changes.jsonl", false},
		{ws + "/context/archive/t1_c1_lead-1.md", false},
		{ws + "/context/inbox/sub/lead-1.md", false},
		{ws + "/context/inbox/lead-1.json", false},
		{task + "/context/inbox/lead-1.md", false}, // the inbox is at the workspace root, not in the task
	}
	for _, role := range workspace.Roles() {
		p := DefaultPolicy(role)
		for _, c := range cases {
			for _, tool := range []string{"Write", "Edit"} {
				if tool == "Edit" && !p.Tools.Edit {
					continue
				}
				ok, reason := Decide(p, task, project, tool, map[string]any{"file_path": c.path})
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
	common := []string{"context/inbox/<your agent id>-<n>.md", "kind: decision", "`constraint`", "`term`",
		"decisions.json", "next** assignment", "hivemind context rm ID"}
	want := map[workspace.Role][]string{
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
