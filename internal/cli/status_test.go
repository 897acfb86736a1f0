package cli

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/workspace"
)

// status names a task the way tasks and the UI do: an abandoned task (idle
// after it ran) reads "abandoned", not "idle".
func TestRenderStatusStates(t *testing.T) {
	for _, tc := range []struct {
		phase workspace.Phase
		want  string
	}{
		{workspace.PhaseIdle, "state     abandoned"},
		{workspace.PhaseExecuting, "state     executing"},
		{workspace.PhaseComplete, "state     complete"},
	} {
		got := renderStatus(workspace.TaskInfo{ID: "t1", State: &workspace.State{Phase: tc.phase}})
		if !strings.Contains(got, tc.want+"\n") {
			t.Errorf("%s: status reads\n%s\nwant a line %q", tc.phase, got, tc.want)
		}
	}
}
