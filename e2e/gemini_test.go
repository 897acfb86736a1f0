package e2e_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
)

// TestGeminiTypedTurn runs the real Gemini CLI (npm @google/gemini-cli) in
// a PTY against the fake Gemini API with a dummy key, offline: no dialog at
// start (API-key auth in settings.json, the project in
// trustedFolders.json), a session id chosen up front (--session-id), a
// [HIVEMIND] line typed into its prompt is submitted (BeforeAgent hook),
// the scripted turn writes the source file, the output and the done marker
// through Gemini's own write_file tool in auto_edit mode (exactly the
// scripted content, every call reported successful), the AfterAgent hook
// ends the turn with the script's summary, the usage Gemini records in its
// chat file is what the fake reported, and /quit exits 0 leaving no
// process behind.
func TestGeminiTypedTurn(t *testing.T) {
	parallel(t)
	c := setupCLI(t, "gemini", "@google/gemini-cli")
	hooks := c.logHooks("SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent")
	if err := agenttest.WriteGeminiHome(c.Home, []string{c.Project}, hooks); err != nil {
		t.Fatal(err)
	}
	sid := uuid.NewString()
	c.start(t, []string{c.Bin, "--session-id", sid, "--approval-mode", "auto_edit"}, agenttest.GeminiEnv(c.Home, c.API.URL()))

	after := c.typedTurn(t, "Type your message", "BeforeAgent", "AfterAgent")

	main := c.checkScriptedWrites(t, "gemini")
	if got, _ := after["prompt_response"].(string); !strings.Contains(got, "st_1 complete") {
		t.Errorf("AfterAgent prompt_response = %q, want the script's summary", got)
	}
	if got := after["session_id"]; got != sid {
		t.Errorf("hook session_id = %v, want the --session-id %s", got, sid)
	}
	for _, r := range main {
		if r.Tool != "" && r.Tool != "write_file" {
			t.Errorf("write answered as tool %q", r.Tool)
		}
	}
	if n := len(c.hooks("BeforeTool")); n != 3 {
		t.Errorf("%d BeforeTool hooks, want 3 (one per write)", n)
	}

	// Usage: the chat file records tokens per model message; their sum is
	// what the fake reported for the main turn requests.
	files, _ := filepath.Glob(filepath.Join(c.Home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one chat file under ~/.gemini/tmp/*/chats, found %v", files)
	}
	in, out := tokenSums(main)
	gotSID, gotIn, gotOut := geminiUsage(t, files[0])
	if gotSID != sid {
		t.Errorf("chat file session %q, want %s", gotSID, sid)
	}
	if gotIn != in || gotOut != out {
		t.Errorf("Gemini recorded %d input / %d output tokens, the fake reported %d / %d", gotIn, gotOut, in, out)
	}

	c.quit(t)
}

// geminiUsage returns the session id of a Gemini CLI chat file and the
// tokens of its model messages (each message counted once: the file
// appends a message again when it is updated).
func geminiUsage(t *testing.T, path string) (sid string, in, out int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("chat file: %v", err)
	}
	defer f.Close()
	type tokens struct {
		Input  int `json:"input"`
		Output int `json:"output"`
	}
	seen := map[string]tokens{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			SessionID string  `json:"sessionId"`
			ID        string  `json:"id"`
			Type      string  `json:"type"`
			Tokens    *tokens `json:"tokens"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if rec.SessionID != "" {
			sid = rec.SessionID
		}
		if rec.Type == "gemini" && rec.Tokens != nil {
			seen[rec.ID] = *rec.Tokens
		}
	}
	for _, tk := range seen {
		in += tk.Input
		out += tk.Output
	}
	return sid, in, out
}
