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
