package ptyagent

import (
	"encoding/json"
	"fmt"
	"os"
)

// Gemini CLI (npm @google/gemini-cli, measured on 0.61.0;
// docs/agents/gemini.md). Its hooks have their own event names; each is
// installed to run Hivemind's hook command under the Claude event it
// stands for, so the relay and the session see the events they know.

// geminiHooks maps Gemini CLI's hook events to Hivemind's. BeforeTool runs
// the PreToolUse check, which answers in Gemini's format
// ({"decision":"deny","reason":…}) when the payload's hook_event_name is
// BeforeTool (roles.PreToolUse).
var geminiHooks = []struct{ gemini, hivemind string }{
	{"SessionStart", HookSessionStart},
	{"BeforeTool", HookPreToolUse},
	{"BeforeAgent", HookUserPromptSubmit},
	{"AfterAgent", HookStop},
	{"Notification", HookNotification},
	{"SessionEnd", HookSessionEnd},
}

// GeminiOptions are the flags of one Gemini CLI agent.
type GeminiOptions struct {
	Binary string // default "gemini"
	Model  string // -m; also skips the model router's extra request
	// ApprovalMode is default, auto_edit, yolo or plan (read-only).
	ApprovalMode string
	// SessionID is the session UUID, chosen at first start
	// (--session-id); with Resume the command is --resume SessionID.
	SessionID string
	Resume    bool
	// SettingsPath is a settings file (see GeminiSettings) given as
	// GEMINI_CLI_SYSTEM_SETTINGS_PATH: it overrides the user's and the
	// project's settings without touching them. Gemini ignores it (with a
	// warning) when a parent directory is writable by others, as /tmp is.
	SettingsPath string
	// Hooks says Hivemind's hooks are installed (GeminiSettings, in
	// SettingsPath or the user's settings): the BeforeAgent hook then
	// confirms each message.
	Hooks       bool
	IncludeDirs []string // --include-directories
	ExtraArgs   []string
}

// Argv returns the command line.
func (o GeminiOptions) Argv() []string {
	a := startArgv(o.Binary, "gemini", o.SessionID, o.Resume, "--session-id", "--resume")
	if o.Model != "" {
		a = append(a, "--model", o.Model)
	}
	if o.ApprovalMode != "" {
		a = append(a, "--approval-mode", o.ApprovalMode)
	}
	for _, d := range o.IncludeDirs {
		a = append(a, "--include-directories", d)
	}
	return append(a, o.ExtraArgs...)
}

// GeminiSettings returns a settings JSON turning off the folder-trust
// dialogs, installing Hivemind's hooks
// (hookCommand as for ClaudeSettings; empty for none), loading the role
// prompt from contextFiles (context.fileName: file names Gemini looks
// for in the workspace, like GEMINI.md) and removing tools from what the
// model is offered (tools.exclude, e.g. write_file and replace for a
// read-only role).
func GeminiSettings(hookCommand string, contextFiles, excludeTools []string) []byte {
	type cmd struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"` // milliseconds
	}
	type group struct {
		Matcher string `json:"matcher,omitempty"`
		Hooks   []cmd  `json:"hooks"`
	}
	// No folder-trust dialog: it would stop an agent nobody watches (for
	// the project, and for every --include-directories), and the user
	// chose the project by starting Hivemind in it.
	settings := map[string]any{"security": map[string]any{"folderTrust": map[string]any{"enabled": false}}}
	if hookCommand != "" {
		hooks := map[string][]group{}
		for _, h := range geminiHooks {
			g := group{Hooks: []cmd{{Type: "command", Command: hookArgv(hookCommand, h.hivemind), Timeout: 10000}}}
			if h.hivemind == HookPreToolUse {
				g.Matcher = "*"
			}
			hooks[h.gemini] = []group{g}
		}
		settings["hooks"] = hooks
	}
	if len(contextFiles) > 0 {
		// Included directories may hold them (the role prompt's own).
		settings["context"] = map[string]any{"fileName": contextFiles, "loadMemoryFromIncludeDirectories": true}
	}
	if len(excludeTools) > 0 {
		settings["tools"] = map[string]any{"exclude": excludeTools}
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	return append(b, '\n')
}

// WriteGeminiSettings writes GeminiSettings(…) to path.
func WriteGeminiSettings(path, hookCommand string, contextFiles, excludeTools []string) error {
	if err := os.WriteFile(path, GeminiSettings(hookCommand, contextFiles, excludeTools), 0o644); err != nil {
		return fmt.Errorf("ptyagent: write gemini settings: %w", err)
	}
	return nil
}

// GeminiSpec fills spec with Gemini CLI's command and rules: typed as a
// bracketed paste with a separate Enter (an Enter within ~100 ms of a
// plain burst of keys is swallowed), confirmed by the BeforeAgent hook
// when the settings file installs the hooks (the screen otherwise); ready
// when the composer shows; busy until the AfterAgent hook.
func GeminiSpec(spec Spec, o GeminiOptions) Spec {
	spec.Argv = o.Argv()
	spec.Kind = ProfileGemini
	if o.SettingsPath != "" {
		spec.Env = append(spec.Env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+o.SettingsPath)
	}
	spec.Submit = hookSubmit(ProfileGemini, o.Hooks)
	spec.Ready = DefaultReadyRules(ProfileGemini)
	return spec
}
