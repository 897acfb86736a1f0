package config

import (
	"maps"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/hivemind-dev/hivemind/internal/pricing"
)

var priceSpecs = map[string]spec{
	"input":       {kind: kindFloat, min: 0, max: 1_000_000},
	"output":      {kind: kindFloat, min: 0, max: 1_000_000},
	"cache_read":  {kind: kindFloat, min: 0, max: 1_000_000},
	"cache_write": {kind: kindFloat, min: 0, max: 1_000_000},
}

// Prices is the shipped pricing table with the config's [pricing] tables
// over it.
func (c Config) Prices() pricing.Table { return pricing.Default().With(c.Pricing) }

// pricing reads [pricing."model"] tables (USD per million tokens). A model
// the shipped table prices starts from those prices, so one key can be
// changed alone; a new model starts from zero.
func (l *fileLoader) pricing(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	shipped := pricing.Default()
	for _, model := range slices.Sorted(maps.Keys(tbl)) {
		mpath := append(slices.Clip(path), model)
		fields, ok := l.table(mpath, tbl[model])
		if !ok {
			continue
		}
		p, ok := l.cfg.Pricing[model]
		if !ok {
			p = shipped[model]
		}
		l.setFields(mpath, fields, priceSpecs, map[string]any{"input": &p.Input, "output": &p.Output,
			"cache_read": &p.CacheRead, "cache_write": &p.CacheWrite})
		if l.cfg.Pricing == nil {
			l.cfg.Pricing = pricing.Table{}
		}
		l.cfg.Pricing[model] = p
	}
}

// number decodes a TOML integer or float.
func (l *fileLoader) number(path []string, prim toml.Primitive) (float64, bool) {
	var v any
	if err := l.md.PrimitiveDecode(prim, &v); err == nil {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			if x == x {
				return x, true
			}
		}
	}
	l.errorf(path, "wrong type: want a number, found %s", l.found(path, prim, ""))
	return 0, false
}
