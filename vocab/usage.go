package vocab

import (
	"fmt"
	"slices"
	"time"
)

// Usage is what an agent's CLI recorded it consumed (tokens by kind, as in
// ptyagent.Usage) and its estimated cost.
type Usage struct {
	Model      string `json:"model,omitempty"`
	Input      int64  `json:"input_tokens"`
	Output     int64  `json:"output_tokens"`
	CacheRead  int64  `json:"cache_read_tokens,omitempty"`
	CacheWrite int64  `json:"cache_write_tokens,omitempty"`
	// CostUSD is the estimate at the pricing table's price; meaningful only
	// when CostKnown (the model has a price).
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
}

// Tokens is the sum of every count.
func (u Usage) Tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Hold stops new dispatches to the agents of one account (one CLI's
// credentials) while it is rate limited.
type Hold struct {
	Account string    `json:"account"`
	Agent   AgentID   `json:"agent"`  // the agent whose limit set it
	Reason  string    `json:"reason"` // the first-party signal, clipped
	Since   time.Time `json:"since"`
	// Until is when the hold is checked again if no signal clears it
	// first; Attempt counts those checks (the engine's RetryPolicy).
	Until   time.Time `json:"until"`
	Attempt int       `json:"attempt"`
}

// Spend is the task's estimated spend: the sum of the agents' known costs,
// and the agents that used tokens at no known price (not in the sum).
func (s State) Spend() (usd float64, unknown []AgentID) {
	for _, id := range s.AgentIDs() {
		u := s.Agents[id].Usage
		switch {
		case u.CostKnown:
			usd += u.CostUSD
		case u.Tokens() > 0:
			unknown = append(unknown, id)
		}
	}
	return usd, unknown
}

// Tokens is the task's tokens: every agent's, summed.
func (s State) Tokens() int64 {
	var n int64
	for _, a := range s.Agents {
		n += a.Usage.Tokens()
	}
	return n
}

// UnpricedModels lists, once each and sorted, the models of the agents
// whose tokens have no known cost ("unknown model" for an agent whose
// CLI named none).
func (s State) UnpricedModels() []string {
	var out []string
	for _, id := range s.AgentIDs() {
		u := s.Agents[id].Usage
		if u.CostKnown || u.Tokens() == 0 {
			continue
		}
		m := u.Model
		if m == "" {
			m = "unknown model"
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// Short renders u compactly for a pane title: "12.3k tok $0.04", or
// "12.3k tok $?" when the model has no price; "" before any usage.
func (u Usage) Short() string {
	if u.Tokens() == 0 {
		return ""
	}
	return FormatTokens(u.Tokens()) + " tok " + u.Cost()
}

// Cost renders the estimated cost: "$0.04", "$?" when unknown.
func (u Usage) Cost() string {
	if !u.CostKnown {
		return "$?"
	}
	return FormatUSD(u.CostUSD)
}

// FormatUSD renders dollars with two decimals, four below ten cents.
func FormatUSD(v float64) string {
	if v < 0.1 && v != 0 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// FormatTokens renders a token count compactly: 950, 12.3k, 4.1M.
func FormatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
