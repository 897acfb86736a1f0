package config

import (
	"maps"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/hivemind-dev/hivemind/internal/pricing"
)

// priceKeys are the keys of a [pricing."<model>"] table, in USD per
// million tokens.
var priceKeys = []key[pricing.Price]{
	{name: "input", spec: priceSpec, field: func(p *pricing.Price) any { return &p.Input }, defText: "shipped",
		doc: "USD per million input tokens; a model the shipped table prices starts from its prices, a new one from 0"},
	{name: "output", spec: priceSpec, field: func(p *pricing.Price) any { return &p.Output }, defText: "shipped",
		doc: "USD per million output tokens"},
	{name: "cache_read", spec: priceSpec, field: func(p *pricing.Price) any { return &p.CacheRead }, defText: "shipped",
		doc: "USD per million tokens read from the prompt cache"},
	{name: "cache_write", spec: priceSpec, field: func(p *pricing.Price) any { return &p.CacheWrite }, defText: "shipped",
		doc: "USD per million tokens written to the prompt cache"},
}

var priceSpec = spec{kind: kindFloat, min: 0, max: 1_000_000}

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
		setKeys(l, mpath, fields, priceKeys, &p)
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
