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
	m := engine.Machine{Cfg: engine.NewConfig(cfg)}
	m.Cfg.Git, m.Cfg.Check = git, cfg.Check
	return m
}
