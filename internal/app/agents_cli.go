package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// The session a CLI that chooses its own ids (Codex) reported at its last
// turn end, resumed after a restart (ptyagent/profiles builds each CLI's
// command).

// sessionPath is the file recording the session id an agent's CLI
// reported at the end of a turn (a saved conversation to resume).
func sessionPath(taskDir, id string) string {
	return filepath.Join(taskDir, "settings", id+".session")
}

// savedSession is the recorded session id of agent id ("" when none).
func (f *agentFactory) savedSession(id string) string {
	b, err := os.ReadFile(sessionPath(f.td.Dir(), id))
	if err != nil || len(b) > 200 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordSession saves the session id of a Stop hook's payload, for
// resume (Codex chooses its ids; Gemini's is saved only once a turn is).
func recordSession(path string, payload []byte) {
	var p struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(payload, &p) != nil || p.SessionID == "" || len(p.SessionID) > 100 || strings.ContainsAny(p.SessionID, "/\n") {
		return
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte(p.SessionID+"\n"), 0o644)
}
