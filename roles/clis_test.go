package roles

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// codexPatch is the PreToolUse payload Codex CLI 0.169 sends for a write:
// tool_name Bash, the apply_patch heredoc as the command (recorded from
// the real CLI against the fake API, paths replaced).
func codexPatch(cwd, patch string) string {
	b, _ := json.Marshal(map[string]any{"cwd": cwd, "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
		"permission_mode": "bypassPermissions", "session_id": "01a20e0b-ea97-7f23-8533-68daba533bf9",
		"tool_input": map[string]any{"command": "apply_patch <<'PATCH'\n*** Begin Patch\n" + patch + "*** End Patch\nPATCH\n"},
		"tool_name":  "Bash", "tool_use_id": "call_fake000002", "turn_id": "01a20e0b-eb71-7db2-88f8-2cf30a035cc8"})
	return string(b)
}

// geminiTool is the BeforeTool payload Gemini CLI 0.61 sends (recorded
// the same way).
func geminiTool(cwd, tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{"cwd": cwd, "hook_event_name": "BeforeTool", "session_id": "9ca1dbba-8403-47a3-9ce2-1ed8eaab48c0",
		"timestamp": "2026-11-24T14:53:25.304Z", "tool_name": tool, "tool_input": input})
	return string(b)
}

func TestCodexAndGeminiToolCalls(t *testing.T) {
	dir := t.TempDir()
	task := filepath.Join(dir, ".hivemind", "tasks", "t1")
	src := filepath.Join(dir, "greet.go")
	add := func(p string) string { return "*** Add File: " + p + "\n+package main\n" }
	for _, tc := range []struct {
		name, role, stdin string
		denied            bool
		reason            string // part of the reason
	}{
		// Codex: the patch's files are judged as Write calls.
		{"codex reviewer writes a source file", "reviewer", codexPatch(dir, add(src)), true, "the reviewer role may not write " + src},
		{"codex reviewer writes its review", "reviewer", codexPatch(dir, add(filepath.Join(task, "agents/reviewer/plan-approved.md"))), false, ""},
		{"codex lead writes the plan", "lead", codexPatch(dir, add(filepath.Join(task, "agents/lead/plan.md"))), false, ""},
		{"codex relative path", "reviewer", codexPatch(dir, add("greet.go")), true, "may not write " + src},
		{"codex worker updates source", "worker", codexPatch(dir, "*** Update File: greet.go\n@@\n-a\n+b\n"), false, ""},
		{"codex worker writes state.json", "worker", codexPatch(dir, add(filepath.Join(task, "state.json"))), true, "only Hivemind writes state.json"},
		{"codex delete checked", "reviewer", codexPatch(dir, "*** Delete File: go.mod\n"), true, "may not write " + filepath.Join(dir, "go.mod")},
		{"codex move destination checked", "lead", codexPatch(dir, "*** Update File: "+filepath.Join(task, "agents/lead/plan.md")+"\n*** Move to: main.go\n"), true, "may not write " + filepath.Join(dir, "main.go")},
		{"codex one forbidden file of two", "reviewer", codexPatch(dir, add(filepath.Join(task, "agents/reviewer/plan-feedback.md"))+add(src)), true, src},
		{"codex patch without files", "worker", codexPatch(dir, "+x\n"), true, "without *** Add File"},
		{"codex heredoc then more shell", "lead", `{"hook_event_name":"PreToolUse","cwd":"` + dir + `","tool_name":"Bash","tool_input":{"command":"apply_patch <<'P'\n*** Add File: ` + task + `/plan.md\n+x\nP\nrm -rf /"}}`, true, "read-only shell commands"},
		{"codex apply_patch tool", "reviewer", `{"hook_event_name":"PreToolUse","cwd":"` + dir + `","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n` + strings.ReplaceAll(add(src), "\n", `\n`) + `*** End Patch\n"}}`, true, "may not write " + src},
		{"codex plain shell for reviewer", "reviewer", `{"hook_event_name":"PreToolUse","cwd":"` + dir + `","tool_name":"Bash","tool_input":{"command":"ls"}}`, true, "may not run shell commands"},
		// Gemini: its tool names.
		{"gemini reviewer writes a source file", "reviewer", geminiTool(dir, "write_file", map[string]any{"file_path": src, "content": "x"}), true, "the reviewer role may not write " + src},
		{"gemini reviewer writes its review", "reviewer", geminiTool(dir, "write_file", map[string]any{"file_path": filepath.Join(task, "agents/reviewer/checkpoint-approved.md")}), false, ""},
		{"gemini reviewer replaces", "reviewer", geminiTool(dir, "replace", map[string]any{"file_path": src, "old_string": "a", "new_string": "b"}), true, "may not use the Edit tool"},
		{"gemini reviewer shell", "reviewer", geminiTool(dir, "run_shell_command", map[string]any{"command": "touch x"}), true, "may not run shell commands"},
		{"gemini lead read-only shell", "lead", geminiTool(dir, "run_shell_command", map[string]any{"command": "git log --oneline"}), false, ""},
		{"gemini lead writing shell", "lead", geminiTool(dir, "run_shell_command", map[string]any{"command": "echo x > a.go"}), true, "read-only shell commands"},
		{"gemini reviewer reads", "reviewer", geminiTool(dir, "read_file", map[string]any{"absolute_path": src}), false, ""},
		{"gemini unknown tool", "reviewer", geminiTool(dir, "save_memory", map[string]any{"fact": "x"}), true, `"gemini:save_memory" is not a tool`},
		{"gemini worker any tool", "worker", geminiTool(dir, "save_memory", map[string]any{"fact": "x"}), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := map[string]string{"lead": "lead", "reviewer": "reviewer", "worker": "worker_1"}[tc.role]
			env := envOf(map[string]string{EnvRole: tc.role, EnvAgentID: id, EnvTaskDir: task, EnvProject: dir})
			out, denied, reason := PreToolUse([]byte(tc.stdin), env)
			if denied != tc.denied || !strings.Contains(reason, tc.reason) {
				t.Fatalf("denied %v %q; want %v, reason containing %q", denied, reason, tc.denied, tc.reason)
			}
			if !denied {
				return
			}
			// Each CLI gets the answer in its own format.
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.stdin, `"BeforeTool"`) {
				if got["decision"] != "deny" || got["reason"] != reason {
					t.Errorf("Gemini answer %s", out)
				}
			} else if h, _ := got["hookSpecificOutput"].(map[string]any); h["permissionDecision"] != "deny" {
				t.Errorf("Codex answer %s", out)
			}
		})
	}
}

// `hivemind roles` marks the CLI of a worker of its own agent as used,
// and names the team with it.
func TestEnforcementWorkerAgents(t *testing.T) {
	cfg := config.Default().WithAgents(config.AgentFlag{PerWorker: map[vocab.AgentID]string{"worker_2": "codex"}})
	got := enforcement(cfg)
	if !strings.Contains(got, "this team: lead=claude,reviewer=claude,worker=claude,worker_2=codex") {
		t.Errorf("team not named:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "  codex ") {
			t.Errorf("codex (worker_2's CLI) is not marked used: %q", l)
		}
	}
}

// Each dialect the hook reads has an event of its own, so a payload's
// hook_event_name selects one dialect (and "" Claude Code's).
func TestHookDialectsOnePerEvent(t *testing.T) {
	seen := map[string]string{}
	for _, d := range HookDialects() {
		if d.Event == "" || d.calls == nil || d.deny == nil {
			t.Errorf("%s: Event, calls and deny are required", d.Name)
		}
		if o, dup := seen[d.Event]; dup {
			t.Errorf("%s and %s both read event %q", o, d.Name, d.Event)
		}
		seen[d.Event] = d.Name
		if dialectOf(d.Event) != d {
			t.Errorf("event %q does not select %s", d.Event, d.Name)
		}
	}
	if dialectOf("") != PreToolUseHook || dialectOf("Stop") != nil || slices.Contains(HookDialects(), NoHook) {
		t.Error(`"" must select PreToolUseHook, another event none, and NoHook is never read`)
	}
}
