package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
)

// writeOpencodeHome points opencode's user config (XDG_CONFIG_HOME of the
// offline home) at the fake API's Messages wire, as a user would point it
// at a proxy: the anthropic provider with a base URL and a dummy key.
func writeOpencodeHome(t *testing.T, c *ClaudeOffline) {
	t.Helper()
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      "anthropic/claude-sonnet-4-5",
		"autoupdate": false,
		"provider": map[string]any{"anthropic": map[string]any{"options": map[string]any{
			"baseURL": c.API.URL() + "/v1", "apiKey": "sk-test"}}},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	dir := filepath.Join(c.Home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Offline: no models.dev catalogue fetch (its bundled copy serves), no
	// LSP downloads, no skills scan of the home.
	c.Env = append(c.Env, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1")
	// opencode (a 185 MB native binary) takes 30–110 s to start four
	// instances on a loaded 2-core machine: more than half of the default
	// hang_seconds, which would warn, and at times all of it; a whole run
	// takes ~5 min (the Claude run deadline) there.
	c.Slow = 3
	ws := filepath.Join(c.Project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte("hang_seconds = 600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// --agent opencode alone runs a whole task to complete: plan rejected
// once, checkpoint fixed once, every turn confirmed by the plugin's hooks.
func TestOpencodeTeamComplete(t *testing.T) {
	if !testkit.Long() {
		t.Skip("a whole opencode team takes 5–7 min on a 2-core machine: make test-long or make real-agents (HIVEMIND_TEST_LONG=1)")
	}
	parallel(t)
	c, dir := runTeam(t, "opencode", "opencode")
	checkWires(t, c, map[vocab.Role]string{"lead": "opencode", "reviewer": "opencode", "worker": "opencode"})
	checkUsageRead(t, c, dir)
}

// TestOpencodeReviewerCannotEditSource: opencode's write reaches the
// plugin's tool.execute.before, which throws the role check's denial.
func TestOpencodeReviewerCannotEditSource(t *testing.T) {
	parallel(t)
	reviewerCannotEditSource(t, "opencode")
}

// A mixed team with opencode Workers next to a Claude Lead and a Codex
// Reviewer.
func TestOpencodeMixedTeamComplete(t *testing.T) {
	if !testkit.Long() {
		t.Skip("a whole opencode team takes 5–7 min on a 2-core machine: make test-long or make real-agents (HIVEMIND_TEST_LONG=1)")
	}
	parallel(t)
	c, _ := runTeam(t, "lead=claude,reviewer=codex,worker=opencode", "claude", "codex", "opencode")
	checkWires(t, c, map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "opencode"})
}

// checkUsageRead asserts that every agent's usage was read from the usage
// file its plugin keeps (the state's usage is what ptyagent.ReadUsage
// summed), and logs it beside what the fake API served.
func checkUsageRead(t *testing.T, c *ClaudeOffline, dir string) {
	t.Helper()
	st := readState(t, dir)
	served := map[string][2]int{}
	for _, r := range c.API.Requests() {
		s := served[r.Agent]
		served[r.Agent] = [2]int{s[0] + r.InputTokens, s[1] + r.OutputTokens}
	}
	for id, a := range st.Agents {
		if a.Usage.Input <= 0 || a.Usage.Output <= 0 {
			t.Errorf("%s: no usage read (%+v)", id, a.Usage)
		}
		t.Logf("%s: usage read in/out %d/%d; served to it %v", id, a.Usage.Input, a.Usage.Output, served[string(id)])
	}
}
