package ptyagent

import (
	"slices"
	"testing"
)

func TestBuildEnvDropsOuterTerminal(t *testing.T) {
	parent := []string{
		"PATH=/bin", "HOME=/root", "TMUX=/tmp/tmux-0/default,1,0", "TMUX_PANE=%1", "STY=1.pts",
		"TERM=screen", "COLORTERM=24bit", "TERM_PROGRAM=tmux", "HIVEMIND_AGENT_ID=stale",
	}
	env := buildEnv(parent, Spec{Env: []string{"HIVEMIND_AGENT_ID=lead"}})
	want := []string{"PATH=/bin", "HOME=/root", "HIVEMIND_AGENT_ID=lead", "TERM=xterm-256color", "COLORTERM=truecolor"}
	if !slices.Equal(env, want) {
		t.Errorf("buildEnv =\n%q\nwant\n%q", env, want)
	}
}

// Each CLI loses only the variables that change how it runs in a pane:
// Gemini CLI goes headless (and exits 42) under CI=true.
func TestBuildEnvDropsPerCLI(t *testing.T) {
	parent := []string{"PATH=/bin", "CI=true", "GITHUB_ACTIONS=true", "CLAUDECODE=1"}
	for _, tc := range []struct {
		kind ProfileKind
		want []string
	}{
		{ProfileGemini, []string{"PATH=/bin", "CLAUDECODE=1"}},
		{ProfileClaude, []string{"PATH=/bin", "CI=true", "GITHUB_ACTIONS=true"}},
		{ProfileCodex, []string{"PATH=/bin", "CI=true", "GITHUB_ACTIONS=true", "CLAUDECODE=1"}},
	} {
		env := buildEnv(parent, Spec{Kind: tc.kind})
		want := append(tc.want, "TERM=xterm-256color", "COLORTERM=truecolor")
		if !slices.Equal(env, want) {
			t.Errorf("%s: buildEnv =\n%q\nwant\n%q", tc.kind, env, want)
		}
	}
}
