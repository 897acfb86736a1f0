package main

import (
	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
)

// newMachine builds the engine's state machine from the effective config.
// internal/config owns every default and range check; each value is passed
// as it is (max_retries = 0 means no retries).
func newMachine(cfg config.Config) engine.Machine {
	return engine.Machine{Cfg: engine.NewConfig(cfg)}
}
