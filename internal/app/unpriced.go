package app

// warnUnpriced tells the user, once per model, that a model the roles are
// configured to run has no price (its cost would show as $? and
// budget_usd could not count it), and how to fix it.
func (a *App) warnUnpriced() {
	for _, u := range a.cfg.UnpricedModels() {
		a.out.notice("warn", u.Warning())
	}
}
