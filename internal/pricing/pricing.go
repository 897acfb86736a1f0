// Package pricing turns token counts into an estimated cost. Prices are
// data: a table shipped in the binary (prices.toml), which config.toml's
// [pricing."model"] tables override.
package pricing

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Price is a model's price in USD per million tokens of each kind.
type Price struct {
	Input      float64 `toml:"input"`
	Output     float64 `toml:"output"`
	CacheRead  float64 `toml:"cache_read"`
	CacheWrite float64 `toml:"cache_write"`
}

// Table maps model names to prices.
type Table map[string]Price

//go:embed prices.toml
var shipped string

// Default returns the shipped table (a fresh copy).
func Default() Table {
	var t Table
	if _, err := toml.Decode(shipped, &t); err != nil {
		panic("pricing: shipped prices.toml: " + err.Error())
	}
	return t
}

// With returns t with the prices of over replacing or adding to its own.
func (t Table) With(over Table) Table {
	out := maps.Clone(t)
	if out == nil {
		out = Table{}
	}
	maps.Copy(out, over)
	return out
}

// Lookup returns the price of model: its own entry, else the longest entry
// it starts with followed by "-" (a dated or minor version of a family).
func (t Table) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for name := range t {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best, found = name, true
		}
	}
	return t[best], found
}

// Cost is the USD cost of the token counts at model's price; false when
// the model has no price (or none is named).
func (t Table) Cost(model string, input, output, cacheRead, cacheWrite int64) (float64, bool) {
	if model == "" {
		return 0, false
	}
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return (float64(input)*p.Input + float64(output)*p.Output +
		float64(cacheRead)*p.CacheRead + float64(cacheWrite)*p.CacheWrite) / 1e6, true
}

// Check reports what is wrong with a price (for config errors).
func (p Price) Check() error {
	for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
		if v < 0 || v > 1e6 || v != v {
			return fmt.Errorf("prices must be between 0 and 1000000 USD per million tokens")
		}
	}
	return nil
}

// Unpriced returns the named models the table has no price for, each once,
// in order (empty names — the agent's own default, not yet known — are
// skipped).
func (t Table) Unpriced(models ...string) []string {
	var out []string
	for _, m := range models {
		if _, ok := t.Lookup(m); m == "" || ok || slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	return out
}
