package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/hivemind-dev/hivemind/internal/pricing"
	"github.com/hivemind-dev/hivemind/vocab"
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

// checkBudgetPrices refuses a budget_usd that could not be kept: a role's
// model has no price, so its spend could not be counted, and no token
// budget (the team's or that role's) limits it instead.
func checkBudgetPrices(cfg Config, src Sources) Errors {
	if cfg.BudgetUSD <= 0 || cfg.BudgetTokens > 0 {
		return nil
	}
	prices := cfg.Prices()
	s := src.Of("budget_usd")
	var errs Errors
	for _, a := range cfg.modelsRun() {
		if cfg.Role(a.role).BudgetTokens > 0 || len(prices.Unpriced(a.model)) == 0 {
			continue
		}
		errs = append(errs, &Error{File: s.File, Line: s.Line, Key: "budget_usd", Msg: fmt.Sprintf(
			"the %s's model %q has no price, so budget_usd cannot count its spend; add its price "+
				"([pricing.%q] with input, output, cache_read, cache_write in USD per million tokens) "+
				"or a token budget (budget_tokens, or budget_tokens under [roles.%s])", a.who, a.model, a.model, a.role)})
	}
	return errs
}

// modelRun is a model the configuration runs: a role's, or a worker's own.
type modelRun struct {
	who   string // the role, or the worker id
	role  vocab.Role
	model string
}

// modelsRun lists each role's model, then each worker's own.
func (c Config) modelsRun() []modelRun {
	var out []modelRun
	for _, r := range vocab.Roles() {
		out = append(out, modelRun{string(r), r, c.Role(r).Model})
	}
	ids := slices.Collect(maps.Keys(c.WorkerModels))
	vocab.SortAgents(ids)
	for _, id := range ids {
		out = append(out, modelRun{string(id), vocab.RoleWorker, c.WorkerModels[id]})
	}
	return out
}

// Unpriced is a model the roles or workers are configured to run
// (roles.<role>.model, agents.<worker>.model) that the pricing table has
// no price for.
type Unpriced struct {
	Model string
	Roles []string // the roles and worker ids that run it
}

// UnpricedModels lists the configured models without a price, once per
// model. A role that runs its agent's default model is not listed: the
// shipped table prices the defaults of the built-in CLIs.
func (c Config) UnpricedModels() []Unpriced {
	prices := c.Prices()
	var out []Unpriced
	for _, a := range c.modelsRun() {
		if len(prices.Unpriced(a.model)) == 0 {
			continue
		}
		if i := slices.IndexFunc(out, func(u Unpriced) bool { return u.Model == a.model }); i >= 0 {
			out[i].Roles = append(out[i].Roles, a.who)
		} else {
			out = append(out, Unpriced{Model: a.model, Roles: []string{a.who}})
		}
	}
	return out
}

// Warning says what an unpriced model means and how to fix it.
func (u Unpriced) Warning() string {
	return fmt.Sprintf("model %q (%s) has no price: its cost shows as $? and budget_usd cannot count it; "+
		"add [pricing.%q] to config.toml (USD per million tokens), or cap it with budget_tokens",
		u.Model, strings.Join(u.Roles, ", "), u.Model)
}
