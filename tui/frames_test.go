package tui

import (
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// calls returns each terminal's Lines-call count (one per redraw of its
// pane body).
func (h *harness) calls(ids ...vocab.AgentID) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		ft := h.term(id)
		ft.mu.Lock()
		out[i] = ft.calls
		ft.mu.Unlock()
	}
	return out
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func plus(a []int, d ...int) []int {
	out := make([]int, len(a))
	for i := range a {
		out[i] = a[i] + d[i]
	}
	return out
}

// TestFrameSlots: panes that are not attached take new content in one
// shared slot at UnfocusedFPS — changes of several panes cost one frame,
// and a change inside the slot waits for it — while the attached pane
// takes its changes at FPS, watched by the frame timer meanwhile.
func TestFrameSlots(t *testing.T) {
	h := newKeyHarness(t)
	h.m.run.interval, h.m.run.slow = time.Millisecond, time.Hour
	ids := []vocab.AgentID{"lead", "reviewer", "worker_1"}
	h.view()
	base := h.calls(ids...)

	// The slot is open: two panes' changes arrive in one frame.
	h.term("reviewer").bump()
	h.term("worker_1").bump()
	h.send(termsChangedMsg{})
	h.view()
	if got := h.calls(ids...); !sameInts(got, plus(base, 0, 1, 1)) {
		t.Fatalf("Lines calls %v, want %v", got, plus(base, 0, 1, 1))
	}
	if !h.m.run.waiting || h.m.run.frameTimer {
		t.Fatal("not waiting for changes after the frame")
	}

	// Inside the slot a change is held until the slot opens; the change
	// channel is not read meanwhile.
	h.term("reviewer").bump()
	cmd := h.send(termsChangedMsg{})
	if !h.m.run.frameTimer || h.m.run.waiting || cmd == nil {
		t.Fatal("change inside the slot did not arm the frame timer")
	}
	if d := time.Until(h.m.run.timerDue); d < 59*time.Minute {
		t.Fatalf("frame timer due in %s, want the slot (1h)", d)
	}
	h.term("worker_1").bump()
	h.view()
	if got := h.calls(ids...); !sameInts(got, plus(base, 0, 1, 1)) {
		t.Fatal("held change drawn before its slot")
	}
	// The tick stands for the slot's opening: both held panes are drawn in
	// that one frame.
	h.send(frameTickedMsg{})
	h.view()
	if got := h.calls(ids...); !sameInts(got, plus(base, 0, 2, 2)) {
		t.Fatalf("Lines calls %v after the slot, want %v", got, plus(base, 0, 2, 2))
	}

	// Attached: the lead's changes are drawn at FPS while the slot holds
	// the others, and the frame timer looks at the lead every 1/FPS.
	h.key("1")
	h.key("enter")
	if !h.m.run.attached || h.m.run.focusID != "lead" {
		t.Fatal("not attached to the lead")
	}
	h.m.run.lastSlow = time.Now() // the slot just closed
	h.view()
	base = h.calls(ids...)
	h.term("reviewer").bump()
	if h.m.run.frameTimer {
		h.send(frameTickedMsg{})
	} else {
		h.send(termsChangedMsg{})
	}
	if !h.m.run.frameTimer {
		t.Fatal("held change armed no timer")
	}
	if d := time.Until(h.m.run.timerDue); d > time.Minute {
		t.Fatalf("attached: frame timer due in %s, want about 1/FPS", d)
	}
	h.term("lead").bump()
	h.send(frameTickedMsg{})
	h.view()
	if got := h.calls(ids...); !sameInts(got, plus(base, 1, 0, 0)) {
		t.Fatalf("Lines calls %v, want the lead's change only: %v", got, plus(base, 1, 0, 0))
	}
	if !h.m.run.frameTimer {
		t.Fatal("reviewer's held change lost")
	}

	// The attached pane's own cap: a second change within 1/FPS waits.
	h.m.run.interval = time.Hour
	h.m.run.frameTimer = false // as if the pending tick had been handled
	h.m.run.lastFrame = time.Now()
	h.term("lead").bump()
	h.send(termsChangedMsg{})
	h.view()
	if got := h.calls(ids...); !sameInts(got, plus(base, 1, 0, 0)) {
		t.Fatal("attached pane drawn twice within 1/FPS")
	}
	if d := time.Until(h.m.run.timerDue); d < 59*time.Minute {
		t.Fatalf("frame timer due in %s, want 1/FPS after the last frame (1h)", d)
	}
}
