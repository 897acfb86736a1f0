package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHome(t *testing.T) {
	dir := t.TempDir()
	home := Home(t, dir)
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		HasCompletedOnboarding        bool `json:"hasCompletedOnboarding"`
		BypassPermissionsModeAccepted bool `json:"bypassPermissionsModeAccepted"`
		CustomAPIKeyResponses         struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.HasCompletedOnboarding || !cfg.BypassPermissionsModeAccepted ||
		len(cfg.CustomAPIKeyResponses.Approved) != 1 || cfg.CustomAPIKeyResponses.Approved[0] != APIKey ||
		!cfg.Projects[dir].HasTrustDialogAccepted {
		t.Errorf("config %s", b)
	}
	var settings struct {
		Skip bool `json:"skipDangerousModePermissionPrompt"`
	}
	if b, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); err != nil || json.Unmarshal(b, &settings) != nil || !settings.Skip {
		t.Errorf("settings.json %q: %v", b, err)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "real-secret")
	t.Setenv("ANTHROPIC_API_KEY", "real-key")
	env := Env("/h", "http://127.0.0.1:1")
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; dup {
			t.Errorf("duplicate %s", k)
		}
		m[k] = v
	}
	want := map[string]string{"HOME": "/h", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": APIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "TERM": "xterm-256color"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s=%q, want %q", k, m[k], v)
		}
	}
	if _, ok := m["ANTHROPIC_AUTH_TOKEN"]; ok {
		t.Error("real credentials leak into the test environment")
	}
	if (os.Geteuid() == 0) != (m["IS_SANDBOX"] == "1") {
		t.Errorf("IS_SANDBOX=%q as uid %d", m["IS_SANDBOX"], os.Geteuid())
	}
}
