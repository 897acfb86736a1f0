package roles

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Every agent CLI's pre-tool hook reaches the same role checks: its tool
// calls are read as the Claude tool calls they amount to (docs/agents/
// codex.md, gemini.md), each judged by Decide, and a denial is written back
// in the form that CLI shows the model. A HookDialect is one such form;
// each profile with hooks names the one it speaks (ptyagent/profiles:
// Profile.Hook). The dialects are defined here, not in the profiles,
// because the hook binary (cmd/hivemind-hook) links roles but not the
// profiles (their PTY stack is what it is kept light of).
//
// Claude Code runs the PreToolUse hook, and so do Codex (0.169) and
// opencode (through Hivemind's plugin, which renames its tools to
// Claude's). Codex's writes arrive as tool_name "Bash" whose command is an
// `apply_patch <<'PATCH' … PATCH` heredoc, which Codex applies with its own
// patch engine (no shell), or as an apply_patch tool (opencode's too);
// either is judged as one Write per file the patch adds, updates, deletes
// or moves to. Gemini CLI (0.61) runs a BeforeTool hook with its own tool
// names and its own answer.

// HookDialect is how one agent CLI's pre-tool hook reaches the role
// checks: the event its payload names, how its tool call reads as the
// Claude tool calls Decide judges, and how a denial is written back so the
// CLI shows the model the reason.
type HookDialect struct {
	Name string // for messages and tests
	// Event is the payload's hook_event_name ("" also selects the
	// dialect whose Event is PreToolUse: Claude Code's older payloads).
	Event string
	// calls reads one tool call; a non-empty denial refuses it unchecked.
	calls func(tool string, input map[string]any) (calls []toolCall, denial string)
	// deny is the answer denying a call for reason.
	deny func(reason string) any
}

// Deny is the hook's answer denying a call for reason: one JSON line.
func (d *HookDialect) Deny(reason string) []byte {
	out, err := json.Marshal(d.deny(reason))
	if err != nil { // cannot happen: only strings
		panic(err)
	}
	return append(out, '\n')
}

// The dialects the hook reads.
var (
	// PreToolUseHook is Claude Code's PreToolUse hook, as Claude Code,
	// Codex CLI and opencode's plugin send it: Claude's
	// tools, Codex's apply_patch forms; the denial is Claude's
	// hookSpecificOutput (Codex and the plugin read it too).
	PreToolUseHook = &HookDialect{Name: "PreToolUse", Event: "PreToolUse", calls: codexCalls,
		deny: func(reason string) any {
			return preToolUseOutput{HookSpecificOutput: hookSpecificOutput{
				HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
		}}
	// BeforeToolHook is Gemini CLI's BeforeTool hook: its tool names
	// (geminiTools); the denial is {"decision":"deny","reason":…}.
	BeforeToolHook = &HookDialect{Name: "BeforeTool", Event: "BeforeTool",
		calls: func(tool string, input map[string]any) ([]toolCall, string) {
			return []toolCall{geminiCall(tool, input)}, ""
		},
		deny: func(reason string) any { return map[string]string{"decision": "deny", "reason": reason} }}
)

// NoHook is the dialect of a CLI without a pre-tool hook: nothing checks
// its calls (its Enforcement line says so). Not one PreToolUse reads.
var NoHook = &HookDialect{Name: "none"}

// hookDialects are every dialect PreToolUse reads, by Event (one each).
var hookDialects = []*HookDialect{PreToolUseHook, BeforeToolHook}

// HookDialects are the dialects the hook reads.
func HookDialects() []*HookDialect { return slices.Clone(hookDialects) }

// dialectOf is the dialect of a payload naming event (nil: not a
// pre-tool hook).
func dialectOf(event string) *HookDialect {
	if event == "" {
		event = PreToolUseHook.Event
	}
	for _, d := range hookDialects {
		if d.Event == event {
			return d
		}
	}
	return nil
}

// toolCall is one call as Decide judges it.
type toolCall struct {
	name  string
	input map[string]any
}

// geminiTools maps Gemini CLI's tools to the Claude tool Decide judges
// them as, and the input key holding their path or command.
var geminiTools = map[string]string{
	"write_file":          "Write",
	"replace":             "Edit",
	"run_shell_command":   "Bash",
	"read_file":           "Read",
	"read_many_files":     "Read",
	"list_directory":      "Read",
	"glob":                "Glob",
	"search_file_content": "Grep",
	"grep_search":         "Grep",
	"write_todos":         "TodoWrite",
	"web_fetch":           "WebFetch",
	"google_web_search":   "WebSearch",
}

// geminiCall is the Claude-shaped call of a Gemini tool call; tools it
// does not know keep their name (Decide then allows them only to a role
// with full Bash).
func geminiCall(name string, input map[string]any) toolCall {
	if c, ok := geminiTools[name]; ok {
		return toolCall{name: c, input: input}
	}
	return toolCall{name: "gemini:" + name, input: input}
}

// applyPatchHeredoc matches a command that is exactly one apply_patch
// heredoc (Codex intercepts only that form; anything else runs in a shell
// and is judged as Bash).
var applyPatchHeredoc = regexp.MustCompile(`(?s)^\s*apply_patch\s*<<-?\s*(['"]?)(\w+)['"]?[ \t]*\n(.*\n)?(\w+)\s*$`)

// patchFiles finds the files a patch touches: added, updated, deleted or
// moved to.
var patchFiles = regexp.MustCompile(`(?m)^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$`)

// codexCalls returns the calls a Codex tool call amounts to: one Write per
// file of an apply_patch (from the heredoc form run as Bash, or the
// apply_patch tool), else the call itself.
func codexCalls(name string, input map[string]any) (calls []toolCall, denial string) {
	var patch string
	switch name {
	case "Bash", "exec_command", "shell":
		cmd := commandOf(input)
		m := applyPatchHeredoc.FindStringSubmatch(cmd)
		if m == nil || m[2] != m[4] {
			return []toolCall{{name: "Bash", input: map[string]any{"command": cmd}}}, ""
		}
		patch = m[3]
	case "apply_patch":
		for _, k := range []string{"input", "patch", "command"} {
			if s, ok := input[k].(string); ok && s != "" {
				patch = s
				break
			}
		}
		if m := applyPatchHeredoc.FindStringSubmatch(patch); m != nil && m[2] == m[4] {
			patch = m[3]
		}
	default:
		return []toolCall{{name: name, input: input}}, ""
	}
	files := patchFiles.FindAllStringSubmatch(patch, -1)
	if len(files) == 0 {
		return nil, "Hivemind: an apply_patch without *** Add File / Update File / Delete File lines; cannot check it against your role's write paths."
	}
	calls = make([]toolCall, len(files))
	for i, f := range files {
		calls[i] = toolCall{name: "Write", input: map[string]any{"file_path": f[1]}}
	}
	return calls, ""
}

// commandOf is a shell tool's command: a string, or an argv whose last
// word is the script of `bash -lc`.
func commandOf(input map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		switch v := input[k].(type) {
		case string:
			return v
		case []any:
			words := make([]string, 0, len(v))
			for _, w := range v {
				s, _ := w.(string)
				words = append(words, s)
			}
			return strings.Join(words, " ")
		}
	}
	return ""
}

// cliEnforcement says, per agent CLI, how the policies above are enforced
// and what is not, for `hivemind roles`: each CLI's profile registers its
// line (RegisterEnforcement, from ptyagent/profiles).
var cliEnforcement []struct{ agent, text string }

// RegisterEnforcement records how the role policies are enforced for
// agent CLI agent (and what is not), for `hivemind roles`.
func RegisterEnforcement(agent, text string) {
	i := 0
	for i < len(cliEnforcement) && cliEnforcement[i].agent < agent {
		i++
	}
	cliEnforcement = slices.Insert(cliEnforcement, i, struct{ agent, text string }{agent, text})
}

// enforcement renders cliEnforcement for the agents cfg runs, and a
// line for a custom command, which nothing checks.
func enforcement(cfg config.Config) string {
	var b strings.Builder
	b.WriteString("\nEnforcement per agent CLI (this team: " + cfg.TeamString() + "):\n")
	used := map[string]bool{}
	for _, r := range vocab.Roles() {
		used[cfg.AgentOf(r)] = true
	}
	for _, id := range cfg.TeamIDs() {
		used[cfg.AgentOfID(id)] = true // workers of their own agent
	}
	w := 7 // the name column: at least this wide, else the longest name
	for _, e := range cliEnforcement {
		w = max(w, len(e.agent))
	}
	for _, e := range cliEnforcement {
		mark := " "
		if used[e.agent] {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %-*s %s\n", mark, w, e.agent, e.text)
	}
	fmt.Fprintf(&b, "  %-*s a [profiles.<name>] or command line: Hivemind installs no hook, so no role limit is enforced; give it its own sandbox.\n", w, "other")
	return b.String()
}
