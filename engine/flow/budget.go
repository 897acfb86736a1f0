package flow

import (
	"fmt"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// This file is the budget: the caps on what a task spends (budget_usd,
// budget_tokens for the team and per role). Reaching any of them sends a
// running task to needs_human; a retry continues once none is reached.

// checkBudget sends a running task to needs_human once its recorded usage
// reaches a budget: nothing new is dispatched (agents in a turn finish it,
// and their usage keeps being recorded).
func (st *stepper) checkBudget() {
	if !running(st.s.Phase) {
		return
	}
	if reached := st.budgetsReached("reached"); len(reached) > 0 {
		st.needsHuman("budget", st.budgetFigures(reached))
	}
}

// retryBudget continues a task stopped by its budget if no budget is
// reached now (one was raised); otherwise it stays in needs_human and says
// so.
func (st *stepper) retryBudget(back vocab.Phase) {
	if reached := st.budgetsReached("is still at or over"); len(reached) > 0 {
		st.needsHuman("budget", st.budgetFigures(reached))
		return
	}
	st.enter(back)
	st.scheduleWork()
}

// budgetsReached says, one line each, which budgets the recorded usage has
// reached (verb: "reached", "is still at or over"); none when under all.
func (st *stepper) budgetsReached(verb string) []string {
	s, c := st.s, st.cfg
	var out []string
	if c.BudgetUSD > 0 {
		if spent, _ := s.Spend(); spent >= c.BudgetUSD {
			out = append(out, fmt.Sprintf("Estimated spend %s %s the budget of %s (budget_usd).",
				vocab.FormatUSD(spent), verb, vocab.FormatUSD(c.BudgetUSD)))
		}
	}
	if c.BudgetTokens > 0 {
		if n := tokensOf(*s, ""); n >= c.BudgetTokens {
			out = append(out, fmt.Sprintf("The team's %d tokens %s the budget of %d tokens (budget_tokens).", n, verb, c.BudgetTokens))
		}
	}
	for _, r := range vocab.Roles() {
		if b := c.RoleBudgetTokens[r]; b > 0 {
			if n := tokensOf(*s, r); n >= b {
				out = append(out, fmt.Sprintf("The %s's %d tokens %s the budget of %d tokens (roles.%s.budget_tokens).", r, n, verb, b, r))
			}
		}
	}
	return out
}

// tokensOf is the tokens role's agents used (every agent's for "").
func tokensOf(s State, role vocab.Role) int64 {
	var n int64
	for _, id := range s.AgentIDs() {
		if role == "" || s.AgentRole(id) == role {
			n += s.Agents[id].Usage.Tokens()
		}
	}
	return n
}

// budgetFigures says which budgets were reached, what each agent spent,
// and how to continue.
func (st *stepper) budgetFigures(reached []string) string {
	s := st.s
	_, unknown := s.Spend()
	var b strings.Builder
	b.WriteString(strings.Join(reached, "\n"))
	for _, id := range allAgents(s) {
		u := s.Agents[id].Usage
		if u.Tokens() == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s tokens, %s)", id, u.Cost(), vocab.FormatTokens(u.Tokens()), u.Model)
	}
	if len(unknown) > 0 && st.cfg.BudgetUSD > 0 {
		fmt.Fprintf(&b, "\nNot counted (no price for their model): %s.", vocab.JoinAgents(unknown))
	}
	b.WriteString("\nNo new work is dispatched. To continue, raise the budget that was reached and retry: " +
		"hivemind --resume --retry, with --budget <USD> for budget_usd, or a higher budget_tokens in config.toml.")
	return b.String()
}

// unpricedNotice tells the user, once per model, that agent's model has
// no price: its cost shows as $? and budget_usd cannot count it (a token
// budget can). An agent that used the model before was already said.
func (st *stepper) unpricedNotice(agent vocab.AgentID, model string) {
	for _, id := range st.s.AgentIDs() {
		if u := st.s.Agents[id].Usage; id != agent && u.Model == model && !u.CostKnown && u.Tokens() > 0 {
			return
		}
	}
	msg := fmt.Sprintf("%s's model %q has no price: its cost shows as $?", agent, model)
	if st.cfg.BudgetUSD > 0 {
		msg += " and is not counted against budget_usd"
	}
	st.notify("warn", msg+fmt.Sprintf("; add [pricing.%q] to config.toml, or cap tokens with budget_tokens", model))
}
