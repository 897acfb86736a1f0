package roles

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Environment variables the hook process inherits from its agent.
const (
	EnvRole    = "HIVEMIND_ROLE"
	EnvTaskDir = "HIVEMIND_TASK_DIR"
	// EnvAgentID names the agent ({outbox} of its policy).
	EnvAgentID = "HIVEMIND_AGENT_ID"
	EnvProject = "HIVEMIND_PROJECT"
)

// preToolUseInput is the part of Claude Code's PreToolUse hook input the
// decision needs.
type preToolUseInput struct {
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
	Cwd           string         `json:"cwd"`
}

// preToolUseOutput is Claude Code's hook JSON output for PreToolUse.
type preToolUseOutput struct {
	HookSpecificOutput hookSpecificOutput `json:"hookSpecificOutput"`
}

type hookSpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// PreToolUse makes the PreToolUse decision inside `hivemind hook
// PreToolUse`: stdin is an agent CLI's pre-tool hook input (tool_name,
// tool_input, cwd), read in the HookDialect its hook_event_name selects
// (clis.go: Claude Code's, Codex CLI's and opencode's PreToolUse, Gemini
// CLI's BeforeTool); env gives HIVEMIND_ROLE, HIVEMIND_TASK_DIR and
// HIVEMIND_PROJECT. When the call is allowed stdout
// is empty (the CLI goes on as usual); when denied, stdout is the
// dialect's denial (Claude's
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":...}},
// Gemini's {"decision":"deny","reason":…}) and the caller should print it
// and exit 0. A process without HIVEMIND_ROLE is not a Hivemind agent and
// is always allowed, and so is an event no dialect reads; input that
// cannot be parsed is denied (fail closed).
func PreToolUse(stdin []byte, env func(string) string) (stdout []byte, denied bool, reason string) {
	role := vocab.Role(env(EnvRole))
	if role == "" {
		return nil, false, ""
	}
	var in preToolUseInput
	if err := json.Unmarshal(stdin, &in); err != nil {
		return deny(PreToolUseHook, "Hivemind: cannot parse the PreToolUse hook input: "+err.Error())
	}
	d := dialectOf(in.HookEventName)
	if d == nil {
		return nil, false, ""
	}
	calls, why := d.calls(in.ToolName, in.ToolInput)
	if why != "" {
		return deny(d, why)
	}
	project := env(EnvProject)
	if project == "" {
		project = in.Cwd
	}
	for _, c := range calls {
		input := c.input
		// Claude passes absolute paths; a relative one is relative to the
		// agent's working directory, not necessarily the project.
		if in.Cwd != "" && filepath.IsAbs(in.Cwd) {
			input = absolutize(input, in.Cwd)
		}
		pol := DefaultPolicy(role)
		pol.Agent = vocab.AgentID(env(EnvAgentID))
		if allow, why := Decide(pol, env(EnvTaskDir), project, c.name, input); !allow {
			return deny(d, why)
		}
	}
	return nil, false, ""
}

// deny is PreToolUse's answer denying a call, in the dialect's format.
func deny(d *HookDialect, reason string) ([]byte, bool, string) {
	return d.Deny(reason), true, reason
}

// absolutize returns a copy of input whose relative file_path or
// notebook_path is joined to cwd.
func absolutize(input map[string]any, cwd string) map[string]any {
	out := make(map[string]any, len(input))
	for k, v := range input {
		if s, ok := v.(string); ok && (k == "file_path" || k == "notebook_path") && s != "" && !filepath.IsAbs(s) {
			// Not filepath.Join: keep ".." for the resolver to apply
			// physically.
			v = strings.TrimSuffix(cwd, string(filepath.Separator)) + string(filepath.Separator) + s
		}
		out[k] = v
	}
	return out
}
