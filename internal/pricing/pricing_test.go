package pricing

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	tbl := Default().With(Table{"my-model": {Input: 2, Output: 4}, "gpt-5": {Input: 1, Output: 1}})
	cases := []struct {
		model           string
		in, out, cr, cw int64
		want            float64
		ok              bool
	}{
		{"claude-sonnet-4-5-20250929", 1_000_000, 100_000, 2_000_000, 0, 3 + 1.5 + 0.6, true},
		{"claude-opus-4-5", 0, 0, 0, 1_000_000, 6.25, true},
		{"gpt-5-codex", 1_000_000, 0, 0, 0, 1.25, true}, // its own entry beats the gpt-5 family
		{"gpt-5", 1_000_000, 1_000_000, 0, 0, 2, true},  // overridden
		{"my-model", 500_000, 250_000, 0, 0, 2, true},   // added
		{"fake-claude", 1000, 100, 0, 0, 0.0045, true},
		{"gpt-50", 1, 1, 0, 0, 0, false}, // a prefix must end at "-"
		{"llama-3", 1, 1, 0, 0, 0, false},
		{"", 1, 1, 0, 0, 0, false},
	}
	for _, c := range cases {
		got, ok := tbl.Cost(c.model, c.in, c.out, c.cr, c.cw)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: got %v, %v; want %v, %v", c.model, got, ok, c.want, c.ok)
		}
	}
	if _, ok := Default()["my-model"]; ok {
		t.Error("With changed the shipped table")
	}
	for name, p := range Default() {
		if err := p.Check(); err != nil || p.Input == 0 || p.Output == 0 {
			t.Errorf("shipped %s: %+v %v", name, p, err)
		}
	}
}

// The models the pinned and newest CLIs run by default, and the ones they
// offer that the vendors price, have a price: a default team's cost and
// budget_usd work without any [pricing] of the user's.
func TestDefaultModelsPriced(t *testing.T) {
	tbl := Default()
	for _, m := range []string{
		"claude-opus-4-8", "claude-opus-5-5", "claude-opus-4-7", "claude-opus-4-6",
		"claude-sonnet-5", "claude-sonnet-5-5", "claude-sonnet-4-6", "claude-haiku-4-5-20251001",
		"gpt-6.1-sol", "gpt-6-sol", "gpt-6-luna", "gemini-3.8-flash", "gemini-2.5-pro",
	} {
		if _, ok := tbl.Lookup(m); !ok {
			t.Errorf("%s has no price", m)
		}
	}
	// The longest name wins: Opus 5.5 is not priced as Opus 5.
	if p, _ := tbl.Lookup("claude-opus-5-5"); p.Input != 4 || p.CacheRead != 0.2 {
		t.Errorf("claude-opus-5-5 priced %+v", p)
	}
	if got := tbl.Unpriced("gpt-6.1-sol", "x-model", "", "x-model", "y-model-1"); len(got) != 2 || got[0] != "x-model" || got[1] != "y-model-1" {
		t.Errorf("Unpriced = %q", got)
	}
}
