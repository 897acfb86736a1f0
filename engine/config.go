package engine

import (
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// NewConfig is the state machine's part of the effective configuration,
// every value as it is: internal/config owns the defaults and the range
// checks (max_retries = 0 means no retries). Git and Check are the run's
// git integration, set by the program when the project is a repository.
// Each agent's account — whose rate limit it shares — is its own CLI (a
// worker's may differ from its role's): a limited Claude Code holds new
// work for the Claude agents, not for a Codex Reviewer or a Gemini worker.
func NewConfig(c config.Config) Config {
	accounts := map[vocab.AgentID]string{}
	for _, id := range c.TeamIDs() {
		accounts[id] = c.AgentOfID(id)
	}
	return Config{
		Accounts:          accounts,
		Workers:           c.Workers,
		QuietPeriod:       c.QuietPeriod(),
		MaxRevisionCycles: c.MaxRevisionCycles,
		MaxRetries:        c.MaxRetries,
		Backoff:           c.Backoff(),
		HangTimeout:       c.HangTimeout(),
		AgentTimeout:      c.AgentTimeout(),
		StallTimeout:      c.StallTimeout(),
		BudgetUSD:         c.BudgetUSD,
		BudgetTokens:      int64(c.BudgetTokens),
		RoleBudgetTokens:  roleBudgetTokens(c),
	}
}

// roleBudgetTokens is each role's budget_tokens that is set.
func roleBudgetTokens(c config.Config) map[vocab.Role]int64 {
	out := map[vocab.Role]int64{}
	for _, r := range vocab.Roles() {
		if n := c.Role(r).BudgetTokens; n > 0 {
			out[r] = int64(n)
		}
	}
	return out
}
