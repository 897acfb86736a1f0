// Package claudetest prepares real Claude Code for offline tests: a
// throwaway HOME whose .claude.json skips every first-run dialog, and the
// environment that points Claude at a fake Messages API (package fakeapi).
package claudetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
)

// APIKey is the key the test home pre-approves.
const APIKey = "sk-test"

// Binary finds `claude` on PATH.
func Binary() (string, bool) {
	p, err := exec.LookPath("claude")
	return p, err == nil
}

// Home creates a temporary HOME (removed after the test) with a .claude.json
// that marks onboarding done, bypass-permissions mode accepted, the test API
// key approved and trustedDir (and its parents, as Claude accepts) trusted.
func Home(t testing.TB, trustedDir string) string {
	t.Helper()
	home := t.TempDir()
	if err := WriteConfig(home, trustedDir); err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	return home
}

// WriteConfig writes home/.claude.json (see Home) and home/.claude/.
func WriteConfig(home string, trustedDirs ...string) error {
	projects := map[string]any{}
	for _, d := range trustedDirs {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		projects[d] = map[string]any{
			"hasTrustDialogAccepted":        true,
			"hasCompletedProjectOnboarding": true,
			"allowedTools":                  []string{},
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			projects[real] = projects[d]
		}
	}
	cfg := map[string]any{
		"hasCompletedOnboarding":        true,
		"bypassPermissionsModeAccepted": true,
		"customApiKeyResponses":         map[string]any{"approved": []string{APIKey}, "rejected": []string{}},
		"projects":                      projects,
		"numStartups":                   1,
		"autoUpdates":                   false,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		return err
	}
	// Claude Code 2.1.x moves bypassPermissionsModeAccepted from
	// .claude.json to settings.json (skipDangerousModePermissionPrompt) at
	// startup. Several sessions starting at once race on that migration and
	// some show the bypass-permissions dialog; writing the migrated form up
	// front avoids the race.
	settings := []byte("{\n  \"skipDangerousModePermissionPrompt\": true\n}\n")
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), settings, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o644)
}

// Env returns the environment for an offline Claude Code run against the
// fake API at baseURL: the current environment minus any real credentials
// and Claude settings, plus the offline switches. IS_SANDBOX=1 is set when
// running as root (--dangerously-skip-permissions refuses otherwise).
func Env(home, baseURL string) []string {
	set := []string{
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=" + APIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"TERM=xterm-256color",
		"COLORTERM=truecolor",
	}
	if os.Geteuid() == 0 {
		set = append(set, "IS_SANDBOX=1")
	}
	return agenttest.CleanEnv([]string{"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDECODE",
		"CLAUDE_CONFIG_DIR", "ANTHROPIC_MODEL", "CLAUDE_CODE_ENTRYPOINT", "XDG_CONFIG_HOME", "ANTHROPIC_CUSTOM_HEADERS", "IS_SANDBOX"},
		set...)
}
