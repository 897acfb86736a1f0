package profiles

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/preflight"
)

// Codex's key is read as Codex reads it: the env_key of the provider its
// config.toml selects, else OPENAI_API_KEY / CODEX_API_KEY.
func TestCodexKeysFromConfig(t *testing.T) {
	home := t.TempDir()
	env := func(vars map[string]string) preflight.Env {
		return preflight.Env{Getenv: func(k string) string { return vars[k] }}
	}
	vars := map[string]string{"CODEX_HOME": home}
	if got := codexKeys(env(vars)); !slices.Equal(got, []string{"OPENAI_API_KEY", "CODEX_API_KEY"}) {
		t.Errorf("no config: %v", got)
	}
	cfg := "model_provider = \"corp\"\n[model_providers.corp]\nbase_url = \"http://x\"\nenv_key = \"CORP_KEY\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := codexKeys(env(vars)); !slices.Equal(got, []string{"CORP_KEY"}) {
		t.Errorf("provider env_key: %v", got)
	}
	vars["CORP_KEY"] = "sk-x"
	p, _ := Lookup("codex")
	rs := p.Checks(t.Context(), env(vars), preflight.Agent{}, "")
	if len(rs) != 1 || rs[0].Status != preflight.OK || rs[0].Msg != "CORP_KEY is set" {
		t.Errorf("key check: %v", rs)
	}
}
