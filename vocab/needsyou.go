package vocab

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// NeedKind says why someone waits for the human.
type NeedKind string

// The reasons an agent or the team waits for the human.
const (
	NeedPermission   NeedKind = "permission"    // an agent shows a permission prompt
	NeedPlanApproval NeedKind = "plan_approval" // the plan waits for the user's decision
	NeedHuman        NeedKind = "needs_human"   // the run stopped for the user
	NeedRateLimit    NeedKind = "rate_limit"    // new work waits for an account's rate limit
	NeedPrompt       NeedKind = "prompt"        // a message waits for text the user typed in an agent's prompt
)

// Need is one thing waiting for the human: who, why, and the keys of the
// full-screen UI that take the user there.
type Need struct {
	Kind   NeedKind `json:"kind"`
	Agent  AgentID  `json:"agent,omitempty"` // empty: the whole team
	Detail string   `json:"detail,omitempty"`
	Keys   string   `json:"keys"`
}

// String is the need in one short phrase: "worker_1 permission prompt (3 enter)".
func (n Need) String() string {
	who := string(n.Agent)
	if who == "" {
		who = "team"
	}
	what := map[NeedKind]string{
		NeedPermission: "permission prompt", NeedPlanApproval: "plan approval", NeedHuman: "needs you",
		NeedRateLimit: "rate limited", NeedPrompt: "your typed text in its prompt",
	}[n.Kind]
	if n.Detail != "" {
		what += ": " + n.Detail
	}
	if n.Keys == "" {
		return who + " " + what
	}
	return fmt.Sprintf("%s %s (%s)", who, what, n.Keys)
}

// NeedsYou lists everything in st that waits for the human, the team's
// first, then each agent's in pane order. health gives an agent's live
// health (nil: state.json's).
func NeedsYou(st State, health func(AgentID) Health) []Need {
	if health == nil {
		health = func(id AgentID) Health { return st.Agents[id].Status }
	}
	var out []Need
	switch {
	case st.Phase == PhaseNeedsHuman:
		out = append(out, Need{Kind: NeedHuman, Detail: Headline(st.Reason), Keys: "R retry · A abandon"})
	case st.Phase == PhasePlanApproval && st.Plan != nil:
		out = append(out, Need{Kind: NeedPlanApproval, Agent: AgentLead, Keys: "a approve · f feedback"})
	}
	held := map[AgentID]Hold{}
	for _, acc := range slices.Sorted(maps.Keys(st.Holds)) {
		if h := st.Holds[acc]; held[h.Agent].Agent == "" {
			held[h.Agent] = h
		}
	}
	for i, id := range st.AgentIDs() {
		attach := fmt.Sprintf("%d enter", i+1)
		switch h := health(id); {
		case h == HealthWaitingPermission:
			out = append(out, Need{Kind: NeedPermission, Agent: id, Keys: attach})
		case h == HealthRateLimited || held[id].Agent != "":
			d := "new work held"
			if u := held[id].Until; !u.IsZero() {
				d += " until " + u.Local().Format(time.TimeOnly)
			}
			out = append(out, Need{Kind: NeedRateLimit, Agent: id, Detail: d, Keys: attach})
		}
	}
	return out
}
