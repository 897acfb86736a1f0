package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// maxClaudeConfig bounds what is read of a host's ~/.claude.json (it
// grows with the user's project history).
const maxClaudeConfig = 16 << 20

// ClaudeState is what a host's Claude Code configuration says of its
// first run there: without onboarding, or without the work dir trusted,
// a worker's Claude stops at a dialog (or exits) instead of working.
type ClaudeState struct {
	Path      string // the configuration file read
	Found     bool   // it exists
	Onboarded bool   // hasCompletedOnboarding
	// Trusted is dir, or the parent of it, whose trust dialog was
	// accepted ("" when none).
	Trusted string
}

// CheckClaude reads the host's Claude Code configuration
// ($CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json) and says whether
// onboarding is done and dir (an absolute path on the host) is trusted.
// It changes nothing on the host.
func CheckClaude(ctx context.Context, h Host, dir string) (ClaudeState, error) {
	script := fmt.Sprintf(`f="${CLAUDE_CONFIG_DIR:-$HOME}/.claude.json"; echo "$f"; [ -f "$f" ] || exit 0; head -c %d "$f"`, maxClaudeConfig+1)
	out, err := h.runMax(ctx, nil, script, nil, maxClaudeConfig+4096)
	if err != nil {
		return ClaudeState{}, err
	}
	file, body, _ := strings.Cut(out, "\n")
	st := ClaudeState{Path: file, Found: strings.TrimSpace(body) != ""}
	if !st.Found {
		return st, nil
	}
	if len(body) > maxClaudeConfig {
		return st, fmt.Errorf("%s: %s is larger than %d MB: not checked", h.label(), file, maxClaudeConfig>>20)
	}
	var cfg struct {
		HasCompletedOnboarding bool `json:"hasCompletedOnboarding"`
		Projects               map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(body), &cfg); err != nil {
		return st, fmt.Errorf("%s: %s is not valid JSON (%v)", h.label(), file, err)
	}
	st.Onboarded = cfg.HasCompletedOnboarding
	for d := path.Clean(dir); strings.HasPrefix(d, "/"); d = path.Dir(d) {
		if cfg.Projects[d].HasTrustDialogAccepted {
			st.Trusted = d
			break
		}
		if d == "/" {
			break
		}
	}
	return st, nil
}
