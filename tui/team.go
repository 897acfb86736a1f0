package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// teamRoles are the roles the Team row picks an agent for, in its order.
var teamRoles = [...]vocab.Role{vocab.RoleLead, vocab.RoleReviewer, vocab.RoleWorker}

// maxWorkers is the most workers the start screen offers (the config's
// limit).
const maxWorkers = config.MaxWorkers

// agentSlot is one agent slot of the Team row: its name and its pick.
type agentSlot struct {
	name string
	pick *int // index into agents
}

// agentSlots are the Team row's agent slots in order: the Lead, the
// Reviewer, then the workers (one slot, or one per worker once e split
// them); none when the start screen offers no agent.
func (sc *startScreen) agentSlots() []agentSlot {
	if len(sc.agents) == 0 {
		return nil
	}
	out := []agentSlot{{"lead", &sc.pick[0]}, {"reviewer", &sc.pick[1]}}
	if sc.each == nil {
		return append(out, agentSlot{"workers", &sc.pick[2]})
	}
	for i := range sc.each {
		out = append(out, agentSlot{string(vocab.WorkerID(i + 1)), &sc.each[i]})
	}
	return out
}

// countSlot is the Team row's last slot, after the agent slots: the
// worker count.
func (sc *startScreen) countSlot() int { return len(sc.agentSlots()) }

// setTeam offers agents for every role, each role starting on its agent in
// start (added to the offer when missing from it), else on the first.
func (sc *startScreen) setTeam(agents []AgentChoice, start map[vocab.Role]string) {
	sc.agents = slices.Clone(agents)
	sc.pick = make([]int, len(teamRoles))
	sc.each = nil
	for i, r := range teamRoles {
		name := start[r]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(sc.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(sc.agents)
			sc.agents = append(sc.agents, AgentChoice{Name: name})
		}
		sc.pick[i] = j
	}
	if len(sc.agents) == 0 {
		sc.slot = sc.countSlot() // no agent to choose: the launcher's
	}
}

// setEach splits the workers when some run their own agent (start:
// worker id → agent), each on its own or the worker role's.
func (sc *startScreen) setEach(start map[vocab.AgentID]string) {
	if len(start) == 0 || len(sc.agents) == 0 {
		return
	}
	sc.toggleEach()
	for i := range sc.each {
		name := start[vocab.WorkerID(i+1)]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(sc.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(sc.agents)
			sc.agents = append(sc.agents, AgentChoice{Name: name})
		}
		sc.each[i] = j
	}
}

// teamKey handles the Team row: ←→ choose a slot (an agent slot or the
// worker count), ↑↓ change it, +/- change the worker count, = gives every
// slot the selected one's agent, e on a worker splits the workers into
// one slot each (or joins them again, on the selected one's agent), p
// switches who approves the plan (the Reviewer, or the user after it).
func (sc *startScreen) teamKey(msg tea.KeyPressMsg) {
	k := sc.keys
	slots := sc.agentSlots()
	onAgent := sc.slot < len(slots)
	step := 1
	if key.Matches(msg, k.SlotLeft, k.PickUp) {
		step = -1
	}
	switch {
	case key.Matches(msg, k.SlotLeft, k.SlotRight):
		n := len(slots) + 1
		sc.slot = (sc.slot + step + n) % n
	case key.Matches(msg, k.PickUp, k.PickDown) && onAgent:
		n := len(sc.agents)
		p := slots[sc.slot].pick
		*p = (*p + n + step) % n
	case key.Matches(msg, k.PickUp, k.PickDown):
		sc.addWorkers(-step) // up adds one
	case key.Matches(msg, k.MoreWorkers):
		sc.addWorkers(+1)
	case key.Matches(msg, k.FewerWorkers):
		sc.addWorkers(-1)
	case key.Matches(msg, k.AllRoles) && onAgent:
		v := *slots[sc.slot].pick
		for _, s := range slots {
			*s.pick = v
		}
		sc.pick[2] = v
	case key.Matches(msg, k.Each) && onAgent && sc.slot >= 2:
		sc.toggleEach()
	case key.Matches(msg, k.PlanBy):
		sc.humanPlan = !sc.humanPlan
	}
}

// toggleEach splits the workers slot into one per worker, each on the
// worker role's agent, or joins them into one on the selected worker's.
func (sc *startScreen) toggleEach() {
	if sc.each != nil {
		sc.pick[2] = sc.each[sc.slot-2]
		sc.each, sc.slot = nil, 2
		return
	}
	sc.workers = max(sc.workers, 1)
	sc.each = make([]int, sc.workers)
	for i := range sc.each {
		sc.each[i] = sc.pick[2]
	}
}

// addWorkers changes the worker count by d, from the launcher's default
// (shown as "default", counted as 1) within 1..maxWorkers; split workers
// gain slots on the last one's agent, or lose the last ones.
func (sc *startScreen) addWorkers(d int) {
	sc.workers = min(max(max(sc.workers, 1)+d, 1), maxWorkers)
	if sc.each == nil {
		return
	}
	atCount := sc.slot == sc.countSlot()
	for len(sc.each) < sc.workers {
		sc.each = append(sc.each, sc.each[len(sc.each)-1])
	}
	sc.each = sc.each[:sc.workers]
	if atCount || sc.slot > sc.countSlot() {
		sc.slot = sc.countSlot()
	}
}

// teamChoices are the agents picked for the Team row's agent slots, in
// order (none when the start screen offers none).
func (sc *startScreen) teamChoices() []AgentChoice {
	var out []AgentChoice
	for _, s := range sc.agentSlots() {
		out = append(out, sc.agents[*s.pick])
	}
	return out
}

// team is the agent picked for each role (role → agent), nil when the
// start screen offers none (the launcher's config decides). Split workers
// run their own (workerTeam); the role's is worker_1's.
func (sc *startScreen) team() map[vocab.Role]string {
	if len(sc.agents) == 0 {
		return nil
	}
	t := make(map[vocab.Role]string, len(teamRoles))
	for i, r := range teamRoles {
		t[r] = sc.agents[sc.pick[i]].Name
	}
	if sc.each != nil {
		t[vocab.RoleWorker] = sc.agents[sc.each[0]].Name
	}
	return t
}

// workerTeam is the agent picked for each worker (worker id → agent) once
// the workers are split, else nil.
func (sc *startScreen) workerTeam() map[vocab.AgentID]string {
	if sc.each == nil {
		return nil
	}
	t := make(map[vocab.AgentID]string, len(sc.each))
	for i, p := range sc.each {
		t[vocab.WorkerID(i+1)] = sc.agents[p].Name
	}
	return t
}

// teamLines show each role's agent (or each worker's) and the worker
// count, wrapped to width w; when the row has the focus the selected slot
// is lit, between the arrows that change it. An agent whose program is not
// on PATH is marked ✖ (missingLine says why).
func (sc startScreen) teamLines(label func(startFocus, string, string) string, w int) []string {
	slot := func(i int, name, value string, missing bool) string {
		v := stText.Bold(true).Render(value)
		if sc.focus == focusTeam && sc.slot == i {
			v = stFocused.Render("◂ " + value + " ▸")
		}
		if missing {
			v += stBadTxt.Render(" ✖")
		}
		return stDim.Render(name+" ") + v
	}
	var parts []string
	count := "×" // after "workers <agent>"
	if len(sc.agents) == 0 {
		parts = append(parts, stDim.Render("agents ")+stText.Bold(true).Render("as configured"))
		count = "workers"
	}
	for i, s := range sc.agentSlots() {
		a := sc.agents[*s.pick]
		parts = append(parts, slot(i, s.name, a.Name, a.Missing != ""))
	}
	workers := "default"
	if sc.workers > 0 {
		workers = fmt.Sprint(sc.workers)
	}
	parts = append(parts, slot(sc.countSlot(), count, workers, false))
	lines := []string{label(focusTeam, "Team", "  ") + parts[0]}
	for _, p := range parts[1:] {
		if last := &lines[len(lines)-1]; lipgloss.Width(*last)+2+lipgloss.Width(p) <= w {
			*last += "  " + p
			continue
		}
		lines = append(lines, "        "+p)
	}
	return lines
}

// missingLine says which picked agents cannot start here and how to
// install them ("" when all can, or cannot be told).
func (sc startScreen) missingLine() string {
	var why []string
	for _, a := range sc.teamChoices() {
		if a.Missing != "" && !slices.Contains(why, a.Missing) {
			why = append(why, a.Missing)
		}
	}
	if len(why) == 0 {
		return ""
	}
	return "        " + stBadTxt.Render("✖ "+strings.Join(why, "; "))
}

// planLine shows who approves the plan before the build (p on the Team
// row switches it).
func (sc startScreen) planLine() string {
	who := "the Reviewer"
	if sc.humanPlan {
		who = "the Reviewer, then you"
	}
	line := "        " + stDim.Render("plan approved by ") + stText.Bold(true).Render(who)
	if sc.focus == focusTeam {
		line += stDim.Render("   p switches")
	}
	return line
}
