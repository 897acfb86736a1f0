package app

import (
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
)

// TestNewMachinePassesConfigThrough: every value reaches the engine as
// configured; in particular max_retries = 0 stays 0 (no retries) instead
// of silently becoming the default 3.
func TestNewMachinePassesConfigThrough(t *testing.T) {
	cfg := config.Default()
	cfg.MaxRetries = 0
	cfg.QuietPeriodMS = 10
	cfg.StallSeconds = 45
	cfg.BackoffSeconds = []int{0, 2}
	c := newMachine(cfg, false).Cfg
	if c.MaxRetries != 0 || c.QuietPeriod != 10*time.Millisecond || c.StallTimeout != 45*time.Second ||
		len(c.Backoff) != 2 || c.Backoff[0] != 0 || c.Backoff[1] != 2*time.Second {
		t.Fatalf("engine config %+v", c)
	}
	d := newMachine(config.Default(), false).Cfg
	if d.MaxRetries != 3 || d.QuietPeriod != 300*time.Millisecond || d.StallTimeout != 120*time.Second || d.Workers != 2 {
		t.Fatalf("defaults %+v", d)
	}
}
