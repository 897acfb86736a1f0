package profiles

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/roles"
)

// opencode (npm opencode-ai, a native binary; measured on 1.18.33). It
// has no command hooks but in-process plugins: Hivemind writes one
// (opencodePlugin) that runs Hivemind's hook command on opencode's
// events, under the Claude Code events they stand for, with Claude-shaped
// payloads, so the hook relay, the role checks (roles.PreToolUse reads
// its tools as Claude's) and the usage reader serve it unchanged:
//
//   - plugin start → SessionStart; chat.message → UserPromptSubmit (the
//     delivery's confirmation);
//   - tool.execute.before → PreToolUse, its tool and input renamed to
//     Claude's (write → Write, filePath → file_path, …); a denial is
//     thrown, which opencode hands the model as the tool's error;
//   - session.idle → Stop, naming the session (resumed with --session)
//     and a usage file the plugin keeps: one Claude-shaped assistant line
//     per completed message (ptyagent.ReadUsage reads it);
//   - session.error → StopFailure (a rate limit shows as rate_limited),
//     but for an interrupt (MessageAbortedError: Esc, or the agent being
//     stopped).
//
// Its configuration reaches it as OPENCODE_CONFIG_CONTENT, merged over
// the user's own (providers, keys, model): the plugin, the role prompt
// as an instructions file, no autoupdate, no sharing. --auto approves
// what the role checks allowed: no permission dialog stops an agent.
func init() {
	register(Profile{
		Name: "opencode", Title: "opencode", Kind: "opencode",
		Behavior: &ptyagent.Behavior{
			Submit: ptyagent.HookSubmitRules(),
			// The footer is drawn once the TUI takes input.
			Ready: ptyagent.ReadyRules{Mode: ptyagent.ReadyQuiet, Quiet: 500 * time.Millisecond, Pattern: `ctrl\+p commands`},
			// Instances started together share its data directory (one
			// database, its locks); measured on a loaded 2-core machine, the
			// first of three to bootstrap stopped for good before its prompt
			// in half the team starts, and none of nine started one by one.
			StartAlone: true,
			// Its plugin writes usage as Claude Code's transcript does.
			Usage: ptyagent.ClaudeUsage(),
		},
		Binary: "opencode", NPM: "opencode-ai", Version: "1.18.33",
		Offered: true, Redefinable: true,
		Hook: roles.PreToolUseHook,
		Enforcement: "every call is checked by Hivemind's opencode plugin (tool.execute.before → the PreToolUse check: write as Write, edit as Edit, bash as Bash, apply_patch as one Write per file, read tools as Read; a denial is thrown back to the model); --auto, so no dialog stops an agent. " +
			"Not enforced: tools are not removed from what the model is offered; tools of other plugins or MCP servers are judged by name only (allowed to workers).",
		Launch: launchOpencode,
	})
}

// launchOpencode writes the agent's plugin, role prompt and usage file
// under the task's settings dir and runs the TUI in the agent's dir.
func launchOpencode(l Launch) (ptyagent.Spec, error) {
	prompt, err := l.Prompt()
	if err != nil {
		return l.Base, err
	}
	dir := filepath.Join(l.TaskDir, "settings", l.ID+"-opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return l.Base, err
	}
	hook := ptyagent.HookCommand(l.Self)
	argv := []string{hook}
	if filepath.Base(hook) != hookrelay.BinaryName {
		argv = append(argv, "hook")
	}
	plugin := filepath.Join(dir, "hivemind.js")
	promptFile := filepath.Join(dir, "HIVEMIND-"+strings.ToUpper(string(l.Role))+".md")
	// The plugin writes the usage file from inside the agent's write
	// scope: a directory of its own is in it, the plugin and the prompt
	// beside it are not (an agent rewriting its plugin would unhook its
	// next start).
	usageDir := filepath.Join(dir, "usage")
	if err := os.MkdirAll(usageDir, 0o755); err != nil {
		return l.Base, err
	}
	usage := filepath.Join(usageDir, "usage.jsonl")
	hookJSON, _ := json.Marshal(argv)
	usageJSON, _ := json.Marshal(usage)
	src := strings.NewReplacer("__HOOK__", string(hookJSON), "__USAGE__", string(usageJSON)).Replace(opencodePlugin)
	if err := os.WriteFile(plugin, []byte(src), 0o644); err != nil {
		return l.Base, err
	}
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		return l.Base, err
	}
	cfg, _ := json.Marshal(map[string]any{
		"plugin":       []string{"file://" + plugin},
		"instructions": []string{promptFile},
		"autoupdate":   false,
		"share":        "disabled",
	})
	spec := l.Base
	spec.Argv = []string{"opencode", "--auto"}
	if l.RoleConfig.Model != "" {
		spec.Argv = append(spec.Argv, "--model", l.RoleConfig.Model)
	}
	if l.Resume && l.SavedSession != "" {
		spec.Argv = append(spec.Argv, "--session", l.SavedSession)
	}
	spec.Argv = append(spec.Argv, l.RoleConfig.ExtraArgs...)
	spec.Env = append(spec.Env, "OPENCODE_CONFIG_CONTENT="+string(cfg))
	// Its data (database, logs, sessions) and state (locks) are written by
	// every start: they must exist before the write scope is applied, which
	// skips a missing directory (a first start on a busy machine, its
	// preflight --version not done, failed with EACCES on mkdir).
	state, err := opencodeStateDirs(spec.Env)
	if err != nil {
		return l.Base, err
	}
	spec.Sandbox.Writable = append(append(spec.Sandbox.Writable, state...), usageDir)
	spec.Kind = "opencode"
	spec.Submit, spec.Ready = ptyagent.DefaultSubmitRules(spec.Kind), ptyagent.DefaultReadyRules(spec.Kind)
	return spec, nil
}

// opencodeStateDirs creates and returns opencode's data and state
// directories (XDG_DATA_HOME/opencode, XDG_STATE_HOME/opencode, by default
// under ~/.local), env overriding this process's environment.
func opencodeStateDirs(env []string) ([]string, error) {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return os.Getenv(k)
	}
	home := get("HOME")
	var dirs []string
	for _, d := range []struct{ env, def string }{{"XDG_DATA_HOME", ".local/share"}, {"XDG_STATE_HOME", ".local/state"}} {
		base := get(d.env)
		if !filepath.IsAbs(base) {
			if home == "" {
				return nil, fmt.Errorf("opencode: neither $%s nor $HOME is set: no place for its data", d.env)
			}
			base = filepath.Join(home, d.def)
		}
		dir := filepath.Join(base, "opencode")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("opencode's data directory: %w", err)
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// opencodePlugin is the plugin each opencode agent loads (see above);
// __HOOK__ is the hook command's argv before the event, __USAGE__ the
// usage file, both as JSON.
const opencodePlugin = `// Written by Hivemind for one agent: relays opencode's events to Hivemind's hook.
import { spawnSync } from "node:child_process"
import { appendFileSync } from "node:fs"

const HOOK = __HOOK__
const USAGE = __USAGE__
const TOOLS = { write: "Write", edit: "Edit", multiedit: "Edit", bash: "Bash", read: "Read", glob: "Glob",
  grep: "Grep", list: "LS", todowrite: "TodoWrite", todoread: "TodoRead", webfetch: "WebFetch",
  websearch: "WebSearch", task: "Task", apply_patch: "apply_patch", patch: "apply_patch" }

function hook(event, payload) {
  const r = spawnSync(HOOK[0], [...HOOK.slice(1), event],
    { input: JSON.stringify({ hook_event_name: event, ...payload }), encoding: "utf8", timeout: 30000 })
  if (r.error || r.status !== 0) return { failed: String(r.error || r.stderr || "exit " + r.status) }
  return { out: r.stdout || "" }
}

function claudeInput(args) {
  const a = { ...(args || {}) }
  if (typeof a.filePath === "string") a.file_path = a.filePath
  if (typeof a.patchText === "string") a.patch = a.patchText
  return a
}

export const Hivemind = async ({ directory }) => {
  let session = ""
  hook("SessionStart", { cwd: directory })
  return {
    "chat.message": async (input) => {
      session = input.sessionID || session
      hook("UserPromptSubmit", { session_id: session, cwd: directory })
    },
    "tool.execute.before": async (input, output) => {
      const r = hook("PreToolUse", { session_id: input.sessionID, tool_name: TOOLS[input.tool] || input.tool,
        tool_input: claudeInput(output.args), cwd: directory })
      if (r.failed) throw new Error("Hivemind: the role check did not answer (" + r.failed + "); not run")
      if (!r.out.trim()) return
      let d
      try { d = JSON.parse(r.out) } catch { throw new Error("Hivemind: unreadable role check answer; not run") }
      const h = d.hookSpecificOutput || {}
      if (h.permissionDecision === "deny") throw new Error(h.permissionDecisionReason || "denied by Hivemind")
    },
    event: async ({ event }) => {
      const p = event.properties || {}
      if (event.type === "message.updated") {
        const i = p.info || {}
        const t = i.tokens
        if (i.role !== "assistant" || !t || !i.time || !i.time.completed) return
        const c = t.cache || {}
        appendFileSync(USAGE, JSON.stringify({ type: "assistant", message: { id: i.id, model: i.modelID, usage: {
          input_tokens: t.input || 0, output_tokens: (t.output || 0) + (t.reasoning || 0),
          cache_read_input_tokens: c.read || 0, cache_creation_input_tokens: c.write || 0 } } }) + "\n")
      } else if (event.type === "session.idle") {
        hook("Stop", { session_id: p.sessionID || session, transcript_path: USAGE, cwd: directory })
      } else if (event.type === "session.error") {
        const e = p.error || {}
        // An interrupt (Esc, or Hivemind stopping the agent) is no failure.
        if (e.name === "MessageAbortedError") return
        hook("StopFailure", { session_id: p.sessionID || session, transcript_path: USAGE,
          error: (e.name || "error") + ": " + JSON.stringify(e.data || e) })
      }
    },
  }
}
`
