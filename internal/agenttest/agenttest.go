// Package agenttest prepares real Codex CLI and Gemini CLI for offline
// tests, as claudetest does for Claude Code: a throwaway home whose config
// skips every first-run dialog and points the CLI at a fake API (package
// fakeapi), and the environment to run it with a dummy key. The recipes
// and how they were found are in docs/agents/codex.md and gemini.md.
package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// APIKey is the dummy key both CLIs are given.
const APIKey = "sk-test"

// Binary finds name ("codex" or "gemini") on PATH.
func Binary(name string) (string, bool) {
	p, err := exec.LookPath(name)
	return p, err == nil
}

// CodexProvider is the model provider id the test config defines.
const CodexProvider = "hivemind_fake"

// CodexKeyEnv is the variable the test provider reads its key from.
const CodexKeyEnv = "FAKEAPI_OPENAI_KEY" // not HIVEMIND_*: ptyagent drops those from agents

// Hook is one command hook: Command runs on Event. Codex has Claude
// Code's events (SessionStart, UserPromptSubmit, PreToolUse,
// PermissionRequest, PostToolUse, Stop …); Gemini CLI its own
// (SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent,
// Notification, SessionEnd …).
type Hook struct {
	Event, Command string
}

// WriteCodexHome writes home/config.toml (CODEX_HOME) for an offline Codex:
// a custom Responses provider at baseURL+"/v1" reading CodexKeyEnv, no
// retries (a scripted error is seen at once), every trusted dir trusted (no
// folder-access dialog), and home/hooks.json with hooks when given (run
// Codex with --dangerously-bypass-hook-trust, or it asks to review them).
func WriteCodexHome(home, baseURL string, trusted []string, hooks []Hook) error {
	var b strings.Builder
	fmt.Fprintf(&b, "model = %q\nmodel_provider = %q\ncheck_for_update_on_startup = false\n\n", "gpt-5-codex", CodexProvider)
	fmt.Fprintf(&b, "[model_providers.%s]\nname = \"Hivemind fake\"\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\n"+
		"request_max_retries = 0\nstream_max_retries = 0\n\n", CodexProvider, strings.TrimSuffix(baseURL, "/")+"/v1", CodexKeyEnv)
	b.WriteString("[tui]\nscreen_reader_detection_done = true\n\n")
	for _, d := range trusted {
		for _, p := range samePaths(d) {
			fmt.Fprintf(&b, "[projects.%s]\ntrust_level = \"trusted\"\n\n", strconv.Quote(p))
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if len(hooks) == 0 {
		return nil
	}
	return writeJSON(filepath.Join(home, "hooks.json"), map[string]any{"hooks": hookTable(hooks, "PreToolUse", "PostToolUse", "PermissionRequest")})
}

// hookTable builds the Claude-style hooks object both CLIs read: event →
// [{matcher, hooks: [{type: command, command}]}]; tool events get the
// match-all matcher.
func hookTable(hooks []Hook, toolEvents ...string) map[string]any {
	table := map[string]any{}
	for _, h := range hooks {
		group := map[string]any{"hooks": []map[string]any{{"type": "command", "command": h.Command}}}
		for _, e := range toolEvents {
			if e == h.Event {
				group["matcher"] = "*"
			}
		}
		list, _ := table[h.Event].([]map[string]any)
		table[h.Event] = append(list, group)
	}
	return table
}

// CodexEnv is the environment for an offline Codex with CODEX_HOME=home:
// the current environment minus OpenAI credentials and settings, plus the
// dummy key.
func CodexEnv(home string) []string {
	return CleanEnv([]string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"},
		"CODEX_HOME="+home, CodexKeyEnv+"="+APIKey, "TERM=xterm-256color", "COLORTERM=truecolor")
}

// WriteGeminiHome writes home/.gemini/settings.json (HOME or
// GEMINI_CLI_HOME) for an offline Gemini CLI: API-key auth (no auth
// dialog), no usage statistics, no update check, and hooks when given;
// and home/.gemini/trustedFolders.json trusting each dir (no trust dialog).
func WriteGeminiHome(home string, trusted []string, hooks []Hook) error {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"ui":       map[string]any{"hideTips": true},
	}
	if len(hooks) > 0 {
		settings["hooks"] = hookTable(hooks, "BeforeTool", "AfterTool")
	}
	if err := writeJSON(filepath.Join(dir, "settings.json"), settings); err != nil {
		return err
	}
	folders := map[string]string{}
	for _, d := range trusted {
		for _, p := range samePaths(d) {
			folders[p] = "TRUST_FOLDER"
		}
	}
	return writeJSON(filepath.Join(dir, "trustedFolders.json"), folders)
}

// GeminiEnv is the environment for an offline Gemini CLI with HOME=home
// against the fake API at baseURL: the current environment minus Google
// credentials and settings, plus the dummy key.
func GeminiEnv(home, baseURL string) []string {
	return CleanEnv([]string{"GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI",
		"GOOGLE_VERTEX_BASE_URL", "GEMINI_MODEL", "GEMINI_CLI_HOME", "GEMINI_SYSTEM_MD", "GEMINI_SANDBOX", "XDG_CONFIG_HOME",
		// CI=true makes Gemini headless even in a terminal (as in
		// Hivemind's panes, ptyagent drops them for Gemini agents).
		"CI", "GITHUB_ACTIONS"},
		"HOME="+home, "GEMINI_API_KEY="+APIKey, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(baseURL, "/"),
		"TERM=xterm-256color", "COLORTERM=truecolor")
}

// CleanEnv returns the current environment without the drop keys and the
// keys of set, followed by set: what an offline CLI run starts from.
func CleanEnv(drop []string, set ...string) []string {
	gone := map[string]bool{}
	for _, k := range drop {
		gone[k] = true
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		gone[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !gone[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// samePaths returns d made absolute, and its symlink-free form when that
// differs (both CLIs compare the real path of the working directory).
func samePaths(d string) []string {
	if abs, err := filepath.Abs(d); err == nil {
		d = abs
	}
	out := []string{d}
	if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
		out = append(out, real)
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
