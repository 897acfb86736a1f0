package profiles

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// hookSamples are, per profile with a pre-tool hook, the payload its CLI
// sends when the Reviewer writes /p/src/main.go (recorded from the real
// CLI against the fake API, paths replaced), and how the CLI reads a
// denial back: the reason it shows the model.
var hookSamples = map[string]struct {
	payload string
	read    func(out []byte) (reason string)
}{
	"claude": {`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"bypassPermissions",` +
		`"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/src/main.go","content":"x"},"tool_use_id":"toolu_1"}`,
		claudeReadsDenial},
	// Codex 0.169: a write is an apply_patch heredoc run as Bash.
	"codex": {`{"cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"bypassPermissions",` +
		`"session_id":"01a20e0b-ea97-7f23-8533-68daba533bf9","tool_input":{"command":"apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: src/main.go\n+package main\n*** End Patch\nPATCH\n"},` +
		`"tool_name":"Bash","tool_use_id":"call_fake000002","turn_id":"01a20e0b-eb71-7db2-88f8-2cf30a035cc8"}`,
		claudeReadsDenial},
	// Gemini CLI 0.61: BeforeTool, its own tool names and answer.
	"gemini": {`{"cwd":"/p","hook_event_name":"BeforeTool","session_id":"9ca1dbba-8403-47a3-9ce2-1ed8eaab48c0",` +
		`"timestamp":"2026-11-24T14:53:25.304Z","tool_name":"write_file","tool_input":{"file_path":"/p/src/main.go","content":"x"}}`,
		func(out []byte) string {
			var a struct{ Decision, Reason string }
			if json.Unmarshal(out, &a) != nil || a.Decision != "deny" {
				return ""
			}
			return a.Reason
		}},
	// opencode 1.18.33 through Hivemind's plugin (opencodePlugin): its
	// apply_patch tool, the patch under Claude's key too; the plugin
	// throws the reason of Claude's answer.
	"opencode": {`{"hook_event_name":"PreToolUse","session_id":"ses_1","tool_name":"apply_patch","cwd":"/p",` +
		`"tool_input":{"patchText":"*** Begin Patch\n*** Add File: /p/src/main.go\n+x\n*** End Patch","patch":"*** Begin Patch\n*** Add File: /p/src/main.go\n+x\n*** End Patch"}}`,
		claudeReadsDenial},
}

// claudeReadsDenial is how Claude Code (and Codex, and opencode's plugin)
// read a PreToolUse denial.
func claudeReadsDenial(out []byte) string {
	var a struct {
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if json.Unmarshal(out, &a) != nil || a.HookSpecificOutput.PermissionDecision != "deny" {
		return ""
	}
	return a.HookSpecificOutput.PermissionDecisionReason
}

// Every profile's pre-tool hook reaches the role checks: its recorded
// payload is read in the dialect the profile declares, the call is denied
// for the right reason, and the answer is the dialect's denial, which the
// CLI reads back as that reason.
func TestEveryHookDialectRoundTrips(t *testing.T) {
	env := map[string]string{roles.EnvRole: "reviewer", roles.EnvAgentID: "reviewer",
		roles.EnvTaskDir: "/p/.hivemind/tasks/t1", roles.EnvProject: "/p"}
	for _, p := range Registered() {
		s, ok := hookSamples[p.Name]
		if p.Hook == roles.NoHook {
			if ok {
				t.Errorf("%s: a recorded hook payload, but the profile declares roles.NoHook", p.Name)
			}
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			if !ok {
				t.Fatalf("the profile declares the %s hook: record one payload of its CLI in hookSamples", p.Hook.Name)
			}
			var in struct {
				Event string `json:"hook_event_name"`
			}
			if err := json.Unmarshal([]byte(s.payload), &in); err != nil || in.Event != p.Hook.Event {
				t.Fatalf("its payload names event %q (%v); the profile's dialect %s reads %q", in.Event, err, p.Hook.Name, p.Hook.Event)
			}
			out, denied, reason := roles.PreToolUse([]byte(s.payload), func(k string) string { return env[k] })
			if !denied || !strings.Contains(reason, "may not write /p/src/main.go") {
				t.Fatalf("denied %v, %q: the write was not judged as a write of /p/src/main.go", denied, reason)
			}
			if !bytes.Equal(out, p.Hook.Deny(reason)) {
				t.Errorf("answer %s, not the %s denial %s", out, p.Hook.Name, p.Hook.Deny(reason))
			}
			if got := s.read(out); got != reason {
				t.Errorf("the CLI reads back %q from %s; want %q", got, out, reason)
			}
		})
	}
}

// usageSamples are, per profile whose CLI records usage, lines of its
// session file (cut from real ones: Claude Code 2.1.197, Codex 0.169.0,
// Gemini CLI 0.61.0, opencode's plugin, the sim agent) and what they sum
// to.
var usageSamples = map[string]struct {
	lines string
	want  ptyagent.Usage
}{
	"claude": {`{"type":"user","message":{"content":"hi"}}
{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}
{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-6","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}}}
`, ptyagent.Usage{Model: "claude-sonnet-4-6", Input: 10, Output: 7, CacheRead: 100, CacheWrite: 20}},
	"codex": {`{"timestamp":"2026-11-24T14:20:30.120Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5-codex"}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3768,"cached_input_tokens":0,"output_tokens":224,"total_tokens":3992}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5068,"cached_input_tokens":1000,"cache_write_input_tokens":7,"output_tokens":242,"reasoning_output_tokens":0,"total_tokens":5310}}}}
`, ptyagent.Usage{Model: "gpt-5-codex", Input: 4068, Output: 242, CacheRead: 1000, CacheWrite: 7}},
	"gemini": {`{"sessionId":"1b267acd","projectHash":"7ff8","startTime":"2026-11-24T14:19:28.833Z","kind":"main"}
{"id":"8e12","timestamp":"2026-11-24T14:19:29Z","type":"gemini","content":"","tokens":{"input":1207,"output":154,"cached":200,"thoughts":5,"tool":0,"total":1361},"model":"gemini-3.8-flash"}
`, ptyagent.Usage{Model: "gemini-3.8-flash", Input: 1007, Output: 159, CacheRead: 200}},
	"opencode": {`{"type":"assistant","message":{"id":"msg_1","model":"fake-model","usage":{"input_tokens":12,"output_tokens":5,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}}}
`, ptyagent.Usage{Model: "fake-model", Input: 12, Output: 5, CacheRead: 3, CacheWrite: 2}},
	"sim": {`{"message":{"id":"sim-1","model":"sim","usage":{"input_tokens":90,"output_tokens":10}},"type":"assistant"}
`, ptyagent.Usage{Model: "sim", Input: 90, Output: 10}},
}

// Every profile whose hooks fire (and name its session file) declares the
// format its CLI records usage in, and that format alone reads its
// recorded lines.
func TestEveryUsageFormatReadsItsCLI(t *testing.T) {
	for _, p := range Registered() {
		b, _ := ptyagent.KindBehavior(p.Kind)
		s, ok := usageSamples[p.Name]
		t.Run(p.Name, func(t *testing.T) {
			switch {
			case b.Usage == nil && b.Submit.Confirm == ptyagent.ConfirmHook:
				t.Fatal("its hooks name its session file, but its kind's Behavior declares no Usage format")
			case b.Usage == nil && ok:
				t.Fatal("a recorded usage sample, but its kind's Behavior declares no Usage format")
			case b.Usage == nil:
				return
			case !ok:
				t.Fatalf("its kind reads usage as %s: record lines of its session file in usageSamples", b.Usage.Name)
			}
			if got := b.Usage.Read([]byte(s.lines)); got != s.want {
				t.Errorf("%s reads %+v; want %+v", b.Usage.Name, got, s.want)
			}
		})
	}
}

// A profile that names no hook dialect, or one the hook does not read, is
// refused at registration: no CLI is left to a silent default.
func TestRegisterNeedsAHookDialect(t *testing.T) {
	launch := func(Launch) (ptyagent.Spec, error) { return ptyagent.Spec{}, nil }
	for name, hook := range map[string]*roles.HookDialect{
		"none declared":    nil,
		"not one it reads": {Name: "mine", Event: "BeforeMyTool"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "Hook") {
					t.Errorf("registered, or refused for another reason: %v", r)
				}
			}()
			register(Profile{Name: "hookless-test", Kind: ptyagent.ProfileCustom, Launch: launch, Enforcement: "x", Hook: hook})
		})
	}
}
