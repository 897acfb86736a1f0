package e2e_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
)

// TestCodexTypedTurn runs the real Codex CLI (npm @openai/codex) in a PTY
// against the fake Responses API with a dummy key, offline: no dialog at
// start (trusted project in config.toml), a [HIVEMIND] line typed into its
// prompt is submitted (UserPromptSubmit hook), the scripted turn writes
// the source file, the output and the done marker through Codex's own
// apply_patch (exactly the scripted content, every call reported
// successful), the Stop hook ends the turn with the script's summary, the
// usage Codex records in its session file is what the fake reported, and
// /quit exits 0 leaving no process behind.
func TestCodexTypedTurn(t *testing.T) {
	parallel(t)
	c := setupCLI(t, "codex", "@openai/codex")
	codexHome := filepath.Join(c.Home, "codex")
	hooks := c.logHooks("SessionStart", "UserPromptSubmit", "PreToolUse", "Stop")
	if err := agenttest.WriteCodexHome(codexHome, c.API.URL(), []string{c.Project}, hooks); err != nil {
		t.Fatal(err)
	}
	// --no-daemon: without it Codex starts a shared app-server daemon
	// (its own session) that outlives the TUI.
	c.start(t, []string{c.Bin, "--no-daemon", "--sandbox", "workspace-write", "--ask-for-approval", "never",
		"--dangerously-bypass-hook-trust"}, agenttest.CodexEnv(codexHome))

	stop := c.typedTurn(t, "Ask Codex", "UserPromptSubmit", "Stop")

	main := c.checkScriptedWrites(t, "responses")
	final := main[len(main)-1]
	if final.StopReason != "end_turn" {
		t.Fatalf("last main request answered %q, want end_turn", final.StopReason)
	}
	if got := stop["last_assistant_message"]; got == nil || !strings.Contains(got.(string), "st_1 complete") {
		t.Errorf("Stop hook last_assistant_message = %v, want the script's summary", got)
	}
	sid, _ := stop["session_id"].(string)
	for _, r := range main {
		if r.SessionID != sid {
			t.Errorf("request session id %q, hook session id %q", r.SessionID, sid)
		}
		if r.Tool != "" && r.Tool != "exec_command" && r.Tool != "apply_patch" {
			t.Errorf("write answered as tool %q", r.Tool)
		}
	}
	if n := len(c.hooks("PreToolUse")); n != 3 {
		t.Errorf("%d PreToolUse hooks, want 3 (one per write)", n)
	}

	// Usage: the session file (rollout) named by the hook holds token_count
	// events; the last total is the sum of what the fake reported.
	transcript, _ := stop["transcript_path"].(string)
	if !strings.HasPrefix(transcript, filepath.Join(codexHome, "sessions")) || !strings.Contains(transcript, sid) {
		t.Errorf("transcript_path %q is not the session file of %s under CODEX_HOME/sessions", transcript, sid)
	}
	in, out := tokenSums(main)
	gotIn, gotOut := codexUsage(t, transcript)
	if gotIn != in || gotOut != out {
		t.Errorf("Codex recorded %d input / %d output tokens, the fake reported %d / %d", gotIn, gotOut, in, out)
	}

	c.quit(t)
}

// codexUsage returns the last total_token_usage of a Codex session file.
func codexUsage(t *testing.T, path string) (in, out int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("session file: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total struct {
						Input  int `json:"input_tokens"`
						Output int `json:"output_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "event_msg" && rec.Payload.Type == "token_count" && rec.Payload.Info != nil {
			in, out = rec.Payload.Info.Total.Input, rec.Payload.Info.Total.Output
		}
	}
	return in, out
}
