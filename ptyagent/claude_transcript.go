package ptyagent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/google/uuid"
)

// This file reads what Claude Code keeps of a session on disk: its
// transcript, ~/.claude/projects/<dir>/<session id>.jsonl (one JSON object
// a line), to know whether a session can be resumed and what it consumed.

// ClaudeSessionID is the Claude Code conversation id of an agent in a
// task: derived, so a restarted Hivemind finds it without storing it.
func ClaudeSessionID(task, agent string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("hivemind/"+task+"/"+agent)).String()
}

// claudeTranscripts are the transcripts Claude Code saved of session sid
// (one per project directory it ran in).
func claudeTranscripts(sid string) []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", sid+".jsonl"))
	return m
}

// ClaudeResumable reports whether Claude Code saved a conversation with id
// sid holding at least one message, so --resume can take it up. Claude
// writes a transcript's header lines at once but its messages lazily:
// killed during its first turn, it leaves a transcript without messages,
// and then both --resume ("No conversation found") and --session-id
// ("already in use") fail. Such a transcript is moved aside
// (<id>.jsonl.empty) so the session can start afresh under its id.
func ClaudeResumable(sid string) bool {
	found := false
	for _, p := range claudeTranscripts(sid) {
		if transcriptHasMessage(p) {
			found = true
		} else {
			_ = os.Rename(p, p+".empty")
		}
	}
	return found
}

// transcriptHasMessage reports whether a Claude Code transcript holds a
// user or assistant message.
func transcriptHasMessage(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &e) == nil && (e.Type == "user" || e.Type == "assistant") {
			return true
		}
	}
	return false
}

// ClaudeTranscript is the path of Claude Code's transcript of session sid,
// or "" when it saved none.
func ClaudeTranscript(sid string) string {
	if m := claudeTranscripts(sid); len(m) > 0 {
		return m[0]
	}
	return ""
}

// TranscriptUsage sums the token usage of the assistant messages of a
// Claude Code transcript: in counts input tokens including cache reads and
// writes.
func TranscriptUsage(path string) (in, out int64, err error) {
	u, err := ReadUsage(path)
	return u.Input + u.CacheRead + u.CacheWrite, u.Output, err
}
