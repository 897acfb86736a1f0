package remote

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Claude Code keeps its conversations on the host it runs on
// (~/.claude/projects/<dir>/<session id>.jsonl), so whether a remote
// Claude agent can be resumed is decided there, by the helper, when it
// starts the agent: Launch's --claude-resume reaches Run, which turns the
// command line's `--session-id <id>` into `--resume <id>` when the host
// holds a saved conversation of that id. This is ptyagent.ClaudeResumable
// on the host's side (the helper does not link ptyagent).

// claudeResumeFlag asks Run to resume the Claude session of the command
// line when the host saved one.
const claudeResumeFlag = "--claude-resume"

// maxTranscriptScan bounds what is read of a transcript to find its first
// message (header lines come first, then messages).
const maxTranscriptScan = 16 << 20

// claudeResumeArgv returns argv with `--session-id <id>` turned into
// `--resume <id>` when Claude saved a conversation of id with at least
// one message under the agent's config dir (env's CLAUDE_CONFIG_DIR, else
// $HOME/.claude). A transcript without messages (Claude killed during its
// first turn writes the header at once, messages lazily) is moved aside
// as <id>.jsonl.empty: both --resume and --session-id refuse it, and the
// session starts afresh under its id. Anything else keeps argv.
func claudeResumeArgv(argv, env []string) []string {
	i := slices.Index(argv, "--session-id")
	if i < 0 || i+1 >= len(argv) || !validSessionID(argv[i+1]) {
		return argv
	}
	sid := argv[i+1]
	dir := envValue(env, "CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := envValue(env, "HOME")
		if home == "" {
			return argv
		}
		dir = filepath.Join(home, ".claude")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "projects", "*", sid+".jsonl"))
	found := false
	for _, p := range paths {
		if transcriptHasMessage(p) {
			found = true
		} else {
			_ = os.Rename(p, p+".empty")
		}
	}
	if !found {
		return argv
	}
	out := slices.Clone(argv)
	out[i] = "--resume"
	return out
}

// validSessionID accepts a UUID's characters only: the id becomes part of
// a glob pattern.
func validSessionID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' || r == '-') {
			return false
		}
	}
	return true
}

// envValue is the value of name in env ("" when unset).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest // the last one wins, as in exec
		}
	}
	return v
}

// transcriptHasMessage reports whether a Claude Code transcript holds a
// user or assistant message within its first maxTranscriptScan bytes.
func transcriptHasMessage(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxTranscriptScan))
	sc.Buffer(make([]byte, 64<<10), maxTranscriptScan)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && (e.Type == "user" || e.Type == "assistant") {
			return true
		}
	}
	return false
}
