package roles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestPromptOverrideOrder(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "roles")
	user := filepath.Join(t.TempDir(), "roles")
	for _, d := range []string{proj, user} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	text, src, err := Prompt("lead", proj, user)
	if err != nil || src != "embedded" || !strings.HasPrefix(text, "# Role: Lead") {
		t.Fatalf("embedded: %q %v %.20q", src, err, text)
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(user, "lead.md"), "user lead")
	text, src, err = Prompt("lead", proj, user)
	if err != nil || text != "user lead" || src != filepath.Join(user, "lead.md") {
		t.Fatalf("user: %q %q %v", text, src, err)
	}
	write(filepath.Join(proj, "lead.md"), "project lead")
	text, src, err = Prompt("lead", proj, user)
	if err != nil || text != "project lead" || src != filepath.Join(proj, "lead.md") {
		t.Fatalf("project: %q %q %v", text, src, err)
	}
	// Other roles are unaffected.
	if _, src, _ := Prompt("worker", proj, user); src != "embedded" {
		t.Errorf("worker source %q", src)
	}
	// An empty override is an error, not silently ignored.
	write(filepath.Join(proj, "reviewer.md"), " \n")
	if _, _, err := Prompt("reviewer", proj, user); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty override: %v", err)
	}
	if _, _, err := Prompt("boss", proj, user); !errors.Is(err, ErrUnknownRole) {
		t.Errorf("unknown role: %v", err)
	}
}

// TestPromptsTeachProtocol checks each embedded prompt states what the
// role must know: the [HIVEMIND] protocol, its trigger files, the done
// marker, friction, and that state.json is off limits.
func TestPromptsTeachProtocol(t *testing.T) {
	common := []string{"[HIVEMIND]", "assignments/", "`reads`", "`writes`", "done_marker", "last", "read_only",
		"state.json", "friction/<short-name>.md", "seq"}
	want := map[vocab.Role][]string{
		"lead": {"plan.md", "friction-resolution.md", "```json", `"summary"`, `"checkpoints"`, `"subtasks"`,
			`"dependencies"`, `"files"`, "CREATE", "MODIFY", "Revision notes"},
		"reviewer": {"plan-approved.md", "plan-feedback.md", "checkpoint-approved.md", "checkpoint-issues.md",
			"Severity", "Location", "Problem", "Suggestion", "adversary", "exactly one", "constraint"},
		"worker": {"outputs/<subtask id>.md", "outputs/<subtask id>.done", `"agent_id"`, `"output_file"`,
			`"completed_at"`, "checkpoint.md", "Decisions", "Files"},
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
