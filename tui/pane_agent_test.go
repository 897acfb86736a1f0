package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
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
