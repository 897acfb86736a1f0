package main

import (
	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
)

// newMachine builds the engine's state machine from the effective config.
func newMachine(cfg config.Config) engine.Machine {
	c := engine.DefaultConfig()
	if cfg.Workers > 0 {
		c.Workers = cfg.Workers
	}
	if q := cfg.QuietPeriod(); q > 0 {
		c.QuietPeriod = q
	}
	if cfg.MaxRevisionCycles > 0 {
		c.MaxRevisionCycles = cfg.MaxRevisionCycles
	}
	if cfg.MaxRetries > 0 {
		c.MaxRetries = cfg.MaxRetries
	}
	if b := cfg.Backoff(); len(b) > 0 {
		c.Backoff = b
	}
	if h := cfg.HangTimeout(); h > 0 {
		c.HangTimeout = h
	}
	if t := cfg.AgentTimeout(); t > 0 {
		c.AgentTimeout = t
	}
	return engine.Machine{Cfg: c}
}
