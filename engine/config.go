package engine

import "github.com/hivemind-dev/hivemind/internal/config"

// NewConfig is the state machine's part of the effective configuration,
// every value as it is: internal/config owns the defaults and the range
// checks (max_retries = 0 means no retries). Git and Check are the run's
// git integration, set by the program when the project is a repository;
// Accounts are the agents' accounts, set by the program from their CLIs.
func NewConfig(c config.Config) Config {
	return Config{
		Workers:           c.Workers,
		QuietPeriod:       c.QuietPeriod(),
		MaxRevisionCycles: c.MaxRevisionCycles,
		MaxRetries:        c.MaxRetries,
		Backoff:           c.Backoff(),
		HangTimeout:       c.HangTimeout(),
		AgentTimeout:      c.AgentTimeout(),
		StallTimeout:      c.StallTimeout(),
		BudgetUSD:         c.BudgetUSD,
	}
}
