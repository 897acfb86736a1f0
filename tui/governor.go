package tui

import (
	"maps"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// spendLabel is the header's estimate of the task's spend: "$0.12", with
// " + ?" when an agent used tokens at no known price; "" before any usage.
// unpriced names those models, once each: " (llama unpriced)".
func spendLabel(st vocab.State) (spend, unpriced string) {
	usd, unknown := st.Spend()
	if usd == 0 && len(unknown) == 0 {
		return "", ""
	}
	spend = vocab.FormatUSD(usd)
	if models := st.UnpricedModels(); len(models) > 0 {
		spend += " + ?"
		unpriced = " (" + strings.Join(models, ", ") + " unpriced)"
	}
	return spend, unpriced
}

// holdLabel says which accounts' new work waits for a rate limit:
// "⏸ rate limited: worker_1 — dispatch held".
func holdLabel(st vocab.State) string {
	if len(st.Holds) == 0 {
		return ""
	}
	var who []string
	for _, acc := range slices.Sorted(maps.Keys(st.Holds)) {
		h := st.Holds[acc]
		w := string(h.Agent)
		if acc != "default" {
			w += " (" + acc + ")"
		}
		who = append(who, w)
	}
	return "⏸ rate limited: " + strings.Join(who, ", ") + " — new work held"
}
