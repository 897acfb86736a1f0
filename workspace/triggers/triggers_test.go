package triggers

import (
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Every row's path, for every agent, parses back to its owner, kind and
// item; the user's lie at the root whatever the agent.
func TestPathParseRoundTrip(t *testing.T) {
	for _, s := range Table() {
		for _, agent := range []vocab.AgentID{"lead", "reviewer", "worker_7"} {
			item := ""
			if s.Kind.Family() {
				item = "st_1"
			}
			p := Path(agent, s.Kind, item)
			ref, ok := Parse(p)
			want := Ref{Owner: agent, Kind: s.Kind, Item: item}
			if s.ByUser() {
				want.Owner = ""
			}
			if !ok || ref != want {
				t.Errorf("Parse(%q) = %+v %v, want %+v", p, ref, ok, want)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, p := range []string{
		"plan.md", "outputs/st_1.done", "friction/x.md", // the root layout of older versions
		"agents/lead", "agents/lead/", "agents/lead/notes.md", "agents/lead/sub/plan.md",
		"agents/../plan.md", "agents/a b/plan.md", "agents/lead/friction/a/b.md", "agents/lead/friction/.md",
		"agents/lead/.plan.md.swp", "agents/lead/plan.md.tmp", "agents/worker_1/outputs/.st_1.done",
		"reviews/plan_v1.md", "assignments/lead.json",
	} {
		if ref, ok := Parse(p); ok {
			t.Errorf("Parse(%q) = %+v, want not a trigger", p, ref)
		}
	}
}

func TestWatchedDir(t *testing.T) {
	for p, want := range map[string]bool{
		"agents": true, "agents/lead": true, "agents/worker_1/outputs": true, "agents/worker_1/friction": true,
		"agents/lead/inbox": false, "agents/lead/outputs/x": false, "outputs": false, "friction": false,
		"reviews": false, "agents/.tmp": false,
	} {
		if got := WatchedDir(p); got != want {
			t.Errorf("WatchedDir(%q) = %v, want %v", p, got, want)
		}
	}
}

// Each row has its writers or is the user's, and means something in a
// live phase.
func TestTableRows(t *testing.T) {
	seen := map[Kind]bool{}
	for _, s := range Table() {
		if seen[s.Kind] {
			t.Errorf("%s twice", s.Kind)
		}
		seen[s.Kind] = true
		if s.Watched && s.Milestone == "" {
			t.Errorf("%s: watched without a record", s.Kind)
		}
		for _, ph := range s.Phases {
			if ph == vocab.PhaseIdle || ph == vocab.PhaseComplete || ph == vocab.PhaseCancelled {
				t.Errorf("%s means something in %s", s.Kind, ph)
			}
		}
	}
}
