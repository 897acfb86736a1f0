package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// A server's client asks before leaving a task under way (detach, or stop
// the team); once the task is over its agents were stopped as it ended,
// so q leaves at once (the server then ends: no client, nothing to run).
func TestRemoteQuitAsksOnlyWhileTheTaskRuns(t *testing.T) {
	h := newHarness(t, 4, 160, 40)
	h.m.run.opts.Remote = &Remote{}
	h.key("q")
	if h.m.run.confirm != confirmLeave || !strings.Contains(h.footer(), "Leave: detach") {
		t.Fatalf("running: q did not ask (footer %q)", h.footer())
	}
	h.key("esc")
	for _, p := range []vocab.Phase{vocab.PhaseComplete, vocab.PhaseCancelled, vocab.PhaseIdle} {
		st := testState(4)
		st.Phase = p
		h.send(SnapshotMsg{State: st})
		if cmd := h.key("q"); cmd == nil || cmd() != tea.QuitMsg(struct{}{}) || h.m.run.confirm != confirmNone {
			t.Fatalf("%s: q did not leave at once (footer %q)", p, h.footer())
		}
	}
}
