package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The pane title names the CLI running the agent when the team is known.
func TestTitleNamesAgent(t *testing.T) {
	for _, tc := range []struct {
		td   titleData
		want string
	}{
		{titleData{ID: "reviewer", Role: "reviewer", Agent: "codex", Health: "idle", Activity: "–"}, "– reviewer (codex)"},
		{titleData{ID: "worker_1", Role: "worker", Agent: "gemini", Health: "idle", Activity: "–"}, "– worker_1 (worker · gemini)"},
		{titleData{ID: "worker_1", Role: "worker", Health: "idle", Activity: "–"}, "– worker_1 (worker) "},
	} {
		got, _ := titleText(tc.td, borderNormal, 80)
		if plain := ansi.Strip(got); !strings.HasPrefix(plain, tc.want) {
			t.Errorf("title %q, want prefix %q", plain, tc.want)
		}
	}
}

// A worker of its own agent is titled with it, the others with their
// role's.
func TestAgentOfWorker(t *testing.T) {
	o := Options{Team: map[vocab.Role]string{"lead": "claude", "worker": "codex"},
		WorkerTeam: map[vocab.AgentID]string{"worker_2": "gemini"}}
	for id, want := range map[vocab.AgentID]string{"lead": "claude", "worker_1": "codex", "worker_2": "gemini"} {
		if got := o.agentOf(id, vocab.RoleOf(id)); got != want {
			t.Errorf("agentOf(%s) = %q, want %q", id, got, want)
		}
	}
	if got := (Options{}).agentOf("worker_2", "worker"); got != "" {
		t.Errorf("no team: %q", got)
	}
}
