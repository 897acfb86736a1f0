package roles

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestPreToolUseDenyOutput pins the exact hook JSON Claude Code receives
// when the Reviewer tries to write a source file.
func TestPreToolUseDenyOutput(t *testing.T) {
	env := envOf(map[string]string{EnvRole: "reviewer", EnvAgentID: "reviewer", EnvTaskDir: "/p/.hivemind/tasks/t1", EnvProject: "/p"})
	in := `{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"bypassPermissions",` +
		`"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/src/main.go","content":"x"},"tool_use_id":"toolu_1"}`
	out, denied, reason := PreToolUse([]byte(in), env)
	if !denied {
		t.Fatal("not denied")
	}
	golden.RequireEqual(t, out)

	var got struct {
		HookSpecificOutput struct {
			HookEventName, PermissionDecision, PermissionDecisionReason string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	h := got.HookSpecificOutput
	if h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || h.PermissionDecisionReason != reason {
		t.Errorf("output %+v, reason %q", h, reason)
	}
}

func TestPreToolUseAllowIsEmpty(t *testing.T) {
	dir := t.TempDir()
	task := filepath.Join(dir, ".hivemind", "tasks", "t1")
	env := envOf(map[string]string{EnvRole: "reviewer", EnvAgentID: "reviewer", EnvTaskDir: task, EnvProject: dir})
	in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": dir,
		"tool_input": map[string]any{"file_path": filepath.Join(task, "agents", "reviewer", "plan-approved.md")}})
	out, denied, reason := PreToolUse(in, env)
	if denied || len(out) != 0 || reason != "" {
		t.Errorf("allowed call produced %q %v %q", out, denied, reason)
	}
}

func TestPreToolUseCases(t *testing.T) {
	dir := t.TempDir()
	task := filepath.Join(dir, "ws", "tasks", "t1")
	base := map[string]string{EnvTaskDir: task, EnvProject: dir}
	with := func(role string) func(string) string {
		m := map[string]string{EnvRole: role}
		for k, v := range base {
			m[k] = v
		}
		return envOf(m)
	}
	tests := []struct {
		name   string
		env    func(string) string
		stdin  string
		denied bool
		reason string
	}{
		{"not a hivemind agent", envOf(nil), `{"tool_name":"Write","tool_input":{"file_path":"/etc/x"}}`, false, ""},
		{"bad json fails closed", with("reviewer"), `{"tool_name":`, true, "cannot parse the PreToolUse hook input"},
		{"bash for reviewer", with("reviewer"), `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, true, "may not run shell commands"},
		{"relative path uses cwd", with("worker"), `{"hook_event_name":"PreToolUse","cwd":"` + task + `","tool_name":"Write","tool_input":{"file_path":"state.json"}}`, true, "state.json"},
		{"relative path in project", with("worker"), `{"hook_event_name":"PreToolUse","cwd":"` + dir + `","tool_name":"Write","tool_input":{"file_path":"a.go"}}`, false, ""},
		{"other event ignored", with("reviewer"), `{"hook_event_name":"Stop","tool_name":"Bash"}`, false, ""},
		{"unknown role is read-only", with("ghost"), `{"tool_name":"Write","tool_input":{"file_path":"` + dir + `/a.go"}}`, true, "the ghost role may not use the Write tool. This role may not write any file."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, denied, reason := PreToolUse([]byte(tc.stdin), tc.env)
			if denied != tc.denied || !strings.Contains(reason, tc.reason) {
				t.Fatalf("denied=%v reason=%q; want %v ~ %q", denied, reason, tc.denied, tc.reason)
			}
			if denied != (len(out) > 0) {
				t.Errorf("stdout %q with denied=%v", out, denied)
			}
		})
	}
}
