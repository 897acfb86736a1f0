package roles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// TestDecideWorkerWorktree: in a git project a worker's project is its own
// worktree under <workspace>/worktrees/<id>. It may write there (and its
// task files), but not in another worker's worktree, not in the main
// checkout, not in the workspace's control files and not in a workspace
// checked in below its worktree.
func TestDecideWorkerWorktree(t *testing.T) {
	f := newFixture(t)
	wt1 := filepath.Join(f.ws, "worktrees", "worker_1")
	wt2 := filepath.Join(f.ws, "worktrees", "worker_2")
	for _, d := range []string{filepath.Join(wt1, "src"), filepath.Join(wt2, "src"), filepath.Join(wt1, ".hivemind")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt1, ".git"), []byte("gitdir: "+f.project+"/.git/worktrees/worker_1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(wt2, filepath.Join(wt1, "peer")); err != nil {
		t.Fatal(err)
	}
	T := f.task
	tests := []struct {
		name                string
		role                vocab.Role
		tool, project, path string
		allow               bool
		reason              string
	}{
		{"own worktree file", "worker", "Write", wt1, wt1 + "/src/a.go", true, ""},
		{"own worktree edit", "worker", "Edit", wt1, wt1 + "/src/main.go", true, ""},
		{"own worktree relative", "worker", "Write", wt1, "src/rel.go", true, ""},
		{"own worktree new dir", "worker", "Write", wt1, wt1 + "/pkg/x/y.go", true, ""},
		{"own output", "worker", "Write", wt1, T + "/agents/worker_1/outputs/st_1.md", true, ""},
		{"own done marker", "worker", "Write", wt1, T + "/agents/worker_1/outputs/st_1.done", true, ""},
		{"checkpoint trigger", "worker", "Write", wt1, T + "/agents/worker_1/checkpoint.md", true, ""},
		{"other worker's worktree", "worker", "Write", wt1, wt2 + "/src/a.go", false, "protected pattern {workspace}/**"},
		{"other worktree via symlink", "worker", "Write", wt1, wt1 + "/peer/src/a.go", false, "resolves to " + wt2},
		{"other worktree via dotdot", "worker", "Write", wt1, wt1 + "/../worker_2/src/a.go", false, "{workspace}/**"},
		{"main checkout", "worker", "Write", wt1, f.project + "/src/main.go", false, "outside the role's write paths"},
		{"workspace control file", "worker", "Write", wt1, f.ws + "/config.toml", false, "{workspace}/config.toml"},
		{"state.json", "worker", "Write", wt1, T + "/state.json", false, "state.json"},
		{"plan", "worker", "Write", wt1, T + "/plan.md", false, "{workspace}/**"},
		{"worktree git link", "worker", "Write", wt1, wt1 + "/.git", false, "{project}/.git/**"},
		{"workspace inside worktree", "worker", "Write", wt1, wt1 + "/.hivemind/config.toml", false, "{worktree}/.hivemind/**"},
		{"lead still no code", "lead", "Write", f.project, wt1 + "/src/a.go", false, "outside"},
		{"reviewer no worktree code", "reviewer", "Write", f.project, wt1 + "/src/a.go", false, "outside"},
		// Without worktrees ({worktree} undefined) nothing changes.
		{"shared dir worker code", "worker", "Write", f.project, f.project + "/src/a.go", true, ""},
		{"shared dir worker into worktrees", "worker", "Write", f.project, wt1 + "/src/a.go", false, "{workspace}/**"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := DefaultPolicy(tc.role)
			pol.Agent = map[vocab.Role]vocab.AgentID{"lead": "lead", "reviewer": "reviewer", "worker": "worker_1"}[tc.role]
			allow, reason := Decide(pol, T, tc.project, tc.tool, map[string]any{"file_path": tc.path})
			if allow != tc.allow {
				t.Fatalf("allow = %v, want %v (reason %q)", allow, tc.allow, reason)
			}
			if !allow && !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q\nlacks %q", reason, tc.reason)
			}
		})
	}
	// The denial names the worktree as what the worker may write.
	_, reason := Decide(DefaultPolicy("worker"), T, wt1, "Write", map[string]any{"file_path": f.project + "/src/x.go"})
	if !strings.Contains(reason, "files in your git worktree "+wt1) {
		t.Errorf("reason does not name the worktree: %q", reason)
	}
}

func TestPreToolUseWorkerWorktree(t *testing.T) {
	f := newFixture(t)
	wt := filepath.Join(f.ws, "worktrees", "worker_1")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvRole: "worker", EnvTaskDir: f.task, EnvProject: wt}
	in := `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"src/a.go"},"cwd":"` + wt + `"}`
	if _, denied, reason := PreToolUse([]byte(in), func(k string) string { return env[k] }); denied {
		t.Fatalf("write in own worktree denied: %s", reason)
	}
	in = `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + f.project + `/src/a.go"},"cwd":"` + wt + `"}`
	if _, denied, _ := PreToolUse([]byte(in), func(k string) string { return env[k] }); !denied {
		t.Fatal("write in the main checkout allowed for a worktree worker")
	}
}
