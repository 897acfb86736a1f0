package ptyagent

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// A held agent gets nothing typed, across its restart too, even when it
// sits ready with messages queued; a withdrawn message is never typed;
// released, the rest goes in order.
func TestHoldDeliveryAndWithdraw(t *testing.T) {
	var rec recorder
	spec := helperSpec("sim", "sim", "HM_WORK_MS=50")
	spec.Kind = ProfileSim
	m := newTestManager(t, &rec, map[vocab.AgentID]Spec{"sim": spec})
	if err := m.Start("sim", "worker", false); err != nil {
		t.Fatal(err)
	}
	m.HoldDelivery("sim", true)
	for i, msg := range []string{"first message", "second message", "third message"} {
		if err := m.Inject("sim", i+1, msg); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := m.Session("sim")
	waitFor(t, 20*time.Second, "ready with three messages queued", func() bool {
		return s.Health().Injectable() && s.Queued() == 3
	})
	// Ready and held: an unheld agent takes a message within
	// milliseconds; none is typed here.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if n := rec.count(func(e Event) bool { return e.Kind == EventDelivered }); n != 0 || s.Queued() != 3 {
			t.Fatalf("typed while held: %d delivered, %d queued", n, s.Queued())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := m.Withdraw("sim", 3); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("withdrawn %v, want [1 2]", got)
	}
	m.HoldDelivery("sim", false)
	waitFor(t, 20*time.Second, "the third message delivered", func() bool { return rec.count(delivered(3)) == 1 })
	if n := rec.count(func(e Event) bool { return (e.Kind == EventDelivered || e.Kind == EventDeliveryFailed) && e.Seq < 3 }); n != 0 {
		t.Errorf("%d results for withdrawn messages", n)
	}
	waitFor(t, 5*time.Second, "idle", func() bool { return s.Health() == vocab.HealthIdle })
	if txt := s.Text(); strings.Contains(txt, "first message") || strings.Contains(txt, "second message") {
		t.Errorf("a withdrawn message was typed:\n%s", txt)
	}
}
