package config

import (
	"strings"
	"testing"
)

// A budget_usd that could not be kept (a role's model has no price)
// refuses to start and names both fixes; a price or a token budget makes
// it start.
func TestBudgetNeedsPrices(t *testing.T) {
	const unpriced = "budget_usd = 5\n[roles.worker]\nmodel = \"claude-x\"\n"
	cases := []struct {
		name, file string
		budget     *float64
		want       string // "" when it loads
	}{
		{"unpriced", unpriced, nil, `budget_usd: the worker's model "claude-x" has no price, so budget_usd cannot count its spend; ` +
			`add its price ([pricing."claude-x"] with input, output, cache_read, cache_write in USD per million tokens) ` +
			`or a token budget (budget_tokens, or budget_tokens under [roles.worker])`},
		{"unpriced from the flag", "[roles.worker]\nmodel = \"claude-x\"\n", budgetFlag(2.0), `budget_usd: the worker's model "claude-x" has no price`},
		{"no budget", "[roles.worker]\nmodel = \"claude-x\"\n", nil, ""},
		{"priced", "budget_usd = 5\n[roles.worker]\nmodel = \"claude-opus-5-5\"\n", nil, ""},
		{"price added", unpriced + "[pricing.\"claude-x\"]\ninput = 1\noutput = 2\n", nil, ""},
		{"team token budget", "budget_tokens = 1000\n" + unpriced, nil, ""},
		{"role token budget", unpriced + "budget_tokens = 1000\n", nil, ""},
		{"other role's token budget", unpriced + "[roles.lead]\nbudget_tokens = 1000\n", nil, `the worker's model "claude-x" has no price`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, ud := dirs(t, c.file, "")
			_, _, err := Load(ws, ud, Overrides{Budget: c.budget})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func budgetFlag(v float64) *float64 { return &v }

// Configured models without a price are listed once each, with their
// roles; defaults and priced models are not.
func TestUnpricedModels(t *testing.T) {
	ws, ud := dirs(t, "[roles.worker]\nmodel = \"claude-x\"\n[roles.reviewer]\nmodel = \"claude-x\"\n[roles.lead]\nmodel = \"gpt-6.1-sol\"\n", "")
	cfg, _, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.UnpricedModels()
	if len(got) != 1 || got[0].Model != "claude-x" || len(got[0].Roles) != 2 {
		t.Fatalf("UnpricedModels = %+v", got)
	}
	want := `model "claude-x" (reviewer, worker) has no price: its cost shows as $? and budget_usd cannot count it; add [pricing."claude-x"] to config.toml (USD per million tokens), or cap it with budget_tokens`
	if w := got[0].Warning(); w != want {
		t.Errorf("warning\n%s\nwant\n%s", w, want)
	}
	if got := Default().UnpricedModels(); len(got) != 0 {
		t.Errorf("defaults: %+v", got)
	}
}
