package ptyagent

import (
	"fmt"
	"strings"
)

// Codex CLI (npm @openai/codex, measured on 0.169.0; docs/agents/codex.md).
// Its hooks are Claude Code's (same event names and stdin JSON, including
// PreToolUse denials), so the hook relay serves it unchanged; they are
// passed as -c overrides, leaving the user's CODEX_HOME untouched.

// CodexOptions are the flags of one Codex agent.
type CodexOptions struct {
	Binary string // default "codex"
	// DeveloperInstructions is the role prompt (-c developer_instructions:
	// a developer message in every request, kept on resume).
	DeveloperInstructions string
	Model                 string
	// Sandbox is read-only, workspace-write or danger-full-access.
	Sandbox string
	// Approval is on-request or never (default never: an agent has no one
	// to ask; refusals go back to the model).
	Approval string
	// SessionID is the thread to resume (Codex picks the id itself; learn
	// it from the SessionStart hook); with Resume the command is
	// `codex resume <SessionID>`.
	SessionID string
	Resume    bool
	// HookCommand, when set, installs Hivemind's hooks (see HookCommand)
	// and trusts them for this run (--dangerously-bypass-hook-trust).
	HookCommand string
	AddDirs     []string // --add-dir: more writable roots
	ExtraArgs   []string
}

// codexHookEvents are the hooks a Codex agent installs. Codex has no
// StopFailure or Notification.
var codexHookEvents = []string{HookSessionStart, HookUserPromptSubmit, HookPreToolUse, HookPermissionRequest, HookStop, HookSessionEnd}

// Argv returns the command line. --no-daemon: otherwise the TUI starts a
// shared app-server daemon in its own session that outlives it.
func (o CodexOptions) Argv() []string {
	a := startArgv(o.Binary, "codex", "", false, "", "")
	if o.Resume && o.SessionID != "" {
		a = append(a, "resume")
	}
	a = append(a, "--no-daemon")
	if o.Model != "" {
		a = append(a, "--model", o.Model)
	}
	if o.Sandbox != "" {
		a = append(a, "--sandbox", o.Sandbox)
	}
	approval := o.Approval
	if approval == "" {
		approval = "never"
	}
	a = append(a, "--ask-for-approval", approval)
	for _, d := range o.AddDirs {
		a = append(a, "--add-dir", d)
	}
	if o.DeveloperInstructions != "" {
		a = append(a, "-c", "developer_instructions="+tomlString(o.DeveloperInstructions))
	}
	if o.HookCommand != "" {
		for _, ev := range codexHookEvents {
			a = append(a, "-c", codexHookOverride(ev, hookArgv(o.HookCommand, ev)))
		}
		a = append(a, "--dangerously-bypass-hook-trust")
	}
	a = append(a, o.ExtraArgs...)
	if o.Resume && o.SessionID != "" {
		a = append(a, o.SessionID)
	}
	return a
}

// codexHookOverride is the -c value installing command for event, in
// TOML: hooks.<Event>=[{matcher="*",hooks=[{type="command",command="…",timeout=10}]}].
func codexHookOverride(event, command string) string {
	var b strings.Builder
	b.WriteString("hooks.")
	b.WriteString(event)
	b.WriteString("=[{")
	if event == HookPreToolUse || event == HookPermissionRequest {
		b.WriteString(`matcher="*",`)
	}
	b.WriteString(`hooks=[{type="command",command=`)
	b.WriteString(tomlString(command))
	b.WriteString(",timeout=10}]}]")
	return b.String()
}

// tomlString quotes s as a TOML basic string (Go's %q escapes such as
// \x and \a are not TOML).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CodexSpec fills spec with Codex's command and rules: typed as a
// bracketed paste with a separate Enter (an Enter within ~100 ms of a
// plain burst of keys is taken as part of the paste), confirmed by the
// UserPromptSubmit hook (the screen without hooks); ready when the
// composer shows; busy until the Stop hook.
func CodexSpec(spec Spec, o CodexOptions) Spec {
	spec.Argv = o.Argv()
	spec.Kind = ProfileCodex
	spec.Submit = hookSubmit(ProfileCodex, o.HookCommand != "")
	spec.Ready = DefaultReadyRules(ProfileCodex)
	return spec
}

// hookSubmit returns the default submit rules of kind, confirmed on the
// screen instead when the agent runs without Hivemind's hooks.
func hookSubmit(kind ProfileKind, hooks bool) SubmitRules {
	r := DefaultSubmitRules(kind)
	if !hooks {
		r.Confirm = ConfirmScreen
	}
	return r
}
