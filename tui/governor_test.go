package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// governorState is testState(4) with usage (one model without a price)
// and worker_1's account held by a rate limit.
func governorState() vocab.State {
	st := testState(4)
	use := map[vocab.AgentID]vocab.Usage{
		"lead":     {Model: "claude-sonnet-4-5", Input: 12_000, Output: 300, CostUSD: 0.0405, CostKnown: true},
		"worker_1": {Model: "claude-sonnet-4-5", Input: 2_100_000, Output: 40_000, CostUSD: 6.9, CostKnown: true},
		"worker_2": {Model: "llama-3", Input: 900},
	}
	for id, u := range use {
		a := st.Agents[id]
		a.Usage = u
		st.Agents[id] = a
	}
	st.Holds = map[string]vocab.Hold{"default": {Account: "default", Agent: "worker_1", Reason: "429", Since: testNow, Until: testNow.Add(5 * time.Second), Attempt: 1}}
	return st
}

// The pane title shows tokens and cost, "$?" without a price, and drops
// them first when short of room.
func TestPaneTitleUsage(t *testing.T) {
	st := governorState()
	for id, want := range map[vocab.AgentID]string{"lead": "12.3k tok $0.0405", "worker_1": "2.1M tok $6.90", "worker_2": "900 tok $?"} {
		u := st.Agents[id].Usage
		td := titleData{ID: id, Role: vocab.RoleOf(id), Health: "busy", Activity: "●", Usage: u.Short()}
		if got := ansi.Strip(renderTop(100, borderNormal, td)); u.Short() != want || !strings.Contains(got, " · "+want) {
			t.Errorf("%s: title %q, want %q", id, got, want)
		}
	}
	td := titleData{ID: "worker_1", Role: "worker", Health: "busy", Activity: "●", Subtask: "st_2", Usage: "2.1M tok $6.94"}
	if narrow := ansi.Strip(renderTop(40, borderNormal, td)); strings.Contains(narrow, "tok") || !strings.Contains(narrow, "st_2") {
		t.Errorf("narrow title %q", narrow)
	}
	if got := (vocab.Usage{}).Short(); got != "" {
		t.Errorf("no usage shows %q", got)
	}
}

func TestHeaderSpendAndHold(t *testing.T) {
	st := governorState()
	if got, note := spendLabel(st); got != "$6.94 + ?" || note != " (llama-3 unpriced)" {
		t.Errorf("spend %q%q", got, note)
	}
	if got := holdLabel(st); got != "⏸ rate limited: worker_1 — new work held" {
		t.Errorf("hold %q", got)
	}
	st.Holds = map[string]vocab.Hold{"codex": {Agent: "worker_2"}, "claude": {Agent: "worker_1"}}
	if got := holdLabel(st); got != "⏸ rate limited: worker_1 (claude), worker_2 (codex) — new work held" {
		t.Errorf("holds %q", got)
	}
	if s, n := spendLabel(testState(4)); s+n != "" || holdLabel(testState(4)) != "" {
		t.Error("labels without usage or holds")
	}
}

// Each unpriced model is named once, however many agents use it.
func TestHeaderSpendNamesUnpricedModels(t *testing.T) {
	st := governorState()
	u := st.Agents["worker_2"].Usage
	for _, id := range []vocab.AgentID{"lead", "reviewer"} {
		a := st.Agents[id]
		a.Usage = u
		st.Agents[id] = a
	}
	a := st.Agents["worker_1"]
	a.Usage = vocab.Usage{Model: "claude-x", Input: 5}
	st.Agents["worker_1"] = a
	if got, note := spendLabel(st); got+note != "$0.00 + ? (claude-x, llama-3 unpriced)" {
		t.Errorf("spend %q%q", got, note)
	}
}
