package flow

import "github.com/hivemind-dev/hivemind/internal/config"

// defaultConfig is the machine's config from internal/config's defaults.
// engine.NewConfig builds it for the program; this package cannot import
// engine (engine imports it), and engine's TestNewConfigKeepsEveryValue
// proves NewConfig passes every value through unchanged, so the fields
// are taken the same way here.
func defaultConfig() Config {
	c := config.Default()
	return Config{
		Workers:           c.Workers,
		QuietPeriod:       c.QuietPeriod(),
		MaxRevisionCycles: c.MaxRevisionCycles,
		MaxRetries:        c.MaxRetries,
		Backoff:           c.Backoff(),
		HangTimeout:       c.HangTimeout(),
		AgentTimeout:      c.AgentTimeout(),
		StallTimeout:      c.StallTimeout(),
	}
}
