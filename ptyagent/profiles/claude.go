package profiles

import (
	"os"
	"path/filepath"

	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// Claude Code (npm @anthropic-ai/claude-code): its PTY rules are
// ptyagent's ProfileClaude (title glyphs, the prompt box), its command
// line ptyagent.ClaudeOptions.
func init() {
	register(Profile{
		Name: "claude", Title: "Claude Code", Kind: ptyagent.ProfileClaude,
		Binary: "claude", NPM: "@anthropic-ai/claude-code", Version: "2.1.197", Global: true, Node: 18,
		Offered: true, Remote: true,
		Hook:        roles.PreToolUseHook,
		Enforcement: "tools a role may not use are removed (--disallowedTools); every other call is checked by the PreToolUse hook (write paths, read-only Bash).",
		Checks:      preflight.ClaudeChecks,
		Launch:      launchClaude,
	})
}

// launchClaude runs Claude Code with the role's prompt and tool limits and
// one settings file holding every hook (only the last --settings counts).
func launchClaude(l Launch) (ptyagent.Spec, error) {
	prompt, err := l.Prompt()
	if err != nil {
		return l.Base, err
	}
	settings := filepath.Join(l.TaskDir, "settings", l.ID+".json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		return l.Base, err
	}
	// Hooks run hivemind-hook (next to this executable or on PATH) when
	// installed: it starts in a few ms where `hivemind hook` pays for the
	// TUI's package init on every hook.
	if err := ptyagent.WriteClaudeSettings(settings, ptyagent.HookCommand(l.Self)); err != nil {
		return l.Base, err
	}
	sid := ptyagent.ClaudeSessionID(l.TaskID, l.ID)
	o := ptyagent.ClaudeOptions{
		SessionID: sid,
		// Resume only a conversation Claude actually saved; a first start
		// that died early has none, and --resume would fail forever.
		Resume:       l.Resume && ptyagent.ClaudeResumable(sid),
		SettingsPath: settings,
		ExtraArgs:    roles.ClaudeArgs(roles.DefaultPolicy(l.Role), l.RoleConfig, prompt),
		AddDirs:      l.AddDirs,
	}
	return ptyagent.ClaudeSpec(l.Base, o), nil
}
