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

// status shows each agent's tokens and cost, the task's estimated spend
// (naming agents without a price) and the accounts held by a rate limit.
func TestRenderStatusUsage(t *testing.T) {
	st := &workspace.State{Phase: workspace.PhaseExecuting, Agents: map[workspace.AgentID]workspace.AgentState{
		"lead":     {Role: "lead", Usage: workspace.Usage{Model: "fake-claude", Input: 12_000, Output: 345, CostUSD: 0.041, CostKnown: true}},
		"worker_1": {Role: "worker", Usage: workspace.Usage{Model: "llama", Input: 900}},
		"reviewer": {Role: "reviewer"},
	}, Holds: map[string]workspace.Hold{"default": {Account: "default", Agent: "worker_1", Reason: "rate_limit"}}}
	got := renderStatus(workspace.TaskInfo{ID: "t1", State: st})
	for _, want := range []string{"12.3k tok $0.0410\n", "900 tok $?\n", "spend     $0.0410 estimated + not known for worker_1 (no price)\n",
		"held      new work for account default since", "worker_1 rate limited (rate_limit)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "  reviewer") && strings.Contains(line, "tok") {
			t.Errorf("an agent without usage shows tokens: %q", line)
		}
	}
}
