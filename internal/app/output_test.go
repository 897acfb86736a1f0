package app

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestExitCodes(t *testing.T) {
	for p, want := range map[vocab.Phase]int{
		vocab.PhaseComplete:   0,
		vocab.PhaseNeedsHuman: 3,
		vocab.PhaseError:      1,
		vocab.PhaseCancelled:  1,
		"":                    1,
	} {
		if got := exitCode(p); got != want {
			t.Errorf("exitCode(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestFormatRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	got := FormatRecord(vocab.EventRecord{Time: at, Type: "input.trigger_completed", Agent: "lead",
		Details: map[string]any{"path": "plan.md", "content": strings.Repeat("x", 42), "n": 3.0}})
	want := "03:04:05 ← trigger_completed [lead] content=42B n=3 path=plan.md"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	long := FormatRecord(vocab.EventRecord{Time: at, Type: "x", Details: map[string]any{"what": strings.Repeat("word ", 60)}})
	if n := len([]rune(long)); n > 160 || strings.Contains(long, "\n") {
		t.Errorf("long value not clipped to one line (%d runes): %q", n, long)
	}
}
