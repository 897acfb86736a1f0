package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestWriteCodexHome(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), `odd "dir"`)
	hooks := []Hook{{Event: "Stop", Command: "log stop"}, {Event: "PreToolUse", Command: "log pre"}}
	if err := WriteCodexHome(home, "http://127.0.0.1:9/", []string{project}, hooks); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ModelProvider  string `toml:"model_provider"`
		ModelProviders map[string]struct {
			BaseURL string `toml:"base_url"`
			EnvKey  string `toml:"env_key"`
			WireAPI string `toml:"wire_api"`
		} `toml:"model_providers"`
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if _, err := toml.DecodeFile(filepath.Join(home, "config.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.ModelProviders[cfg.ModelProvider]
	if p.BaseURL != "http://127.0.0.1:9/v1" || p.EnvKey != CodexKeyEnv || p.WireAPI != "responses" {
		t.Errorf("provider %+v", p)
	}
	if cfg.Projects[project].TrustLevel != "trusted" {
		t.Errorf("projects %+v", cfg.Projects)
	}
	var hj struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
	}
	b, _ := os.ReadFile(filepath.Join(home, "hooks.json"))
	if err := json.Unmarshal(b, &hj); err != nil {
		t.Fatal(err)
	}
	if g := hj.Hooks["PreToolUse"]; len(g) != 1 || g[0].Matcher != "*" || g[0].Hooks[0].Command != "log pre" {
		t.Errorf("PreToolUse %+v", g)
	}
	if g := hj.Hooks["Stop"]; len(g) != 1 || g[0].Matcher != "" || g[0].Hooks[0].Type != "command" {
		t.Errorf("Stop %+v", g)
	}
	for _, kv := range CodexEnv(home) {
		if strings.HasPrefix(kv, "HIVEMIND_") && strings.Contains(kv, "KEY") {
			t.Errorf("key variable %q would be dropped by ptyagent", kv)
		}
	}
}

func TestWriteGeminiHomeAndEnv(t *testing.T) {
	home := t.TempDir()
	if err := WriteGeminiHome(home, []string{"/p"}, []Hook{{Event: "AfterAgent", Command: "x"}}); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Security struct{ Auth struct{ SelectedType string } }
		Hooks    map[string]any
	}
	b, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err := json.Unmarshal(b, &s); err != nil || s.Security.Auth.SelectedType != "gemini-api-key" || s.Hooks["AfterAgent"] == nil {
		t.Errorf("settings %s: %v", b, err)
	}
	var trusted map[string]string
	b, _ = os.ReadFile(filepath.Join(home, ".gemini", "trustedFolders.json"))
	if err := json.Unmarshal(b, &trusted); err != nil || trusted["/p"] != "TRUST_FOLDER" {
		t.Errorf("trustedFolders %s: %v", b, err)
	}

	t.Setenv("GOOGLE_API_KEY", "real-key")
	t.Setenv("GEMINI_API_KEY", "real-gemini-key")
	env := GeminiEnv(home, "http://127.0.0.1:9/")
	seen := map[string]int{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		seen[k]++
		switch k {
		case "GOOGLE_API_KEY":
			t.Errorf("real credential kept: %s", kv)
		case "GEMINI_API_KEY":
			if v != APIKey {
				t.Errorf("GEMINI_API_KEY=%q", v)
			}
		case "GOOGLE_GEMINI_BASE_URL":
			if v != "http://127.0.0.1:9" {
				t.Errorf("base URL %q", v)
			}
		}
	}
	if seen["GEMINI_API_KEY"] != 1 || seen["HOME"] != 1 {
		t.Errorf("duplicate or missing keys: %v", seen)
	}
}
