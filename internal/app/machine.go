package app

import (
	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
)

// newMachine builds the engine's state machine from the effective config.
// internal/config owns every default and range check; each value is passed
// as it is (max_retries = 0 means no retries). With git, a checkpoint
// merges the workers' branches before its review.
func newMachine(cfg config.Config, git bool) engine.Machine {
	return engine.Machine{Cfg: engine.Config{
		Workers:           cfg.Workers,
		QuietPeriod:       cfg.QuietPeriod(),
		MaxRevisionCycles: cfg.MaxRevisionCycles,
		MaxRetries:        cfg.MaxRetries,
		Backoff:           cfg.Backoff(),
		HangTimeout:       cfg.HangTimeout(),
		AgentTimeout:      cfg.AgentTimeout(),
		StallTimeout:      cfg.StallTimeout(),
		Git:               git,
		Check:             cfg.Check,
	}}
}
