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
func (fd *frontDoor) agentSlots() []agentSlot {
	if len(fd.agents) == 0 {
		return nil
	}
	out := []agentSlot{{"lead", &fd.pick[0]}, {"reviewer", &fd.pick[1]}}
	if fd.each == nil {
		return append(out, agentSlot{"workers", &fd.pick[2]})
	}
	for i := range fd.each {
		out = append(out, agentSlot{string(vocab.WorkerID(i + 1)), &fd.each[i]})
	}
	return out
}

// countSlot is the Team row's last slot, after the agent slots: the
// worker count.
func (fd *frontDoor) countSlot() int { return len(fd.agentSlots()) }

// setTeam offers agents for every role, each role starting on its agent in
// start (added to the offer when missing from it), else on the first.
func (fd *frontDoor) setTeam(agents []AgentChoice, start map[vocab.Role]string) {
	fd.agents = slices.Clone(agents)
	fd.pick = make([]int, len(teamRoles))
	fd.each = nil
	for i, r := range teamRoles {
		name := start[r]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(fd.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(fd.agents)
			fd.agents = append(fd.agents, AgentChoice{Name: name})
		}
		fd.pick[i] = j
	}
	if len(fd.agents) == 0 {
		fd.slot = fd.countSlot() // no agent to choose: the launcher's
	}
}

// setEach splits the workers when some run their own agent (start:
// worker id → agent), each on its own or the worker role's.
func (fd *frontDoor) setEach(start map[vocab.AgentID]string) {
	if len(start) == 0 || len(fd.agents) == 0 {
		return
	}
	fd.toggleEach()
	for i := range fd.each {
		name := start[vocab.WorkerID(i+1)]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(fd.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(fd.agents)
			fd.agents = append(fd.agents, AgentChoice{Name: name})
		}
		fd.each[i] = j
	}
}

// teamKey handles the Team row: ←→ choose a slot (an agent slot or the
// worker count), ↑↓ change it, +/- change the worker count, = gives every
// slot the selected one's agent, e on a worker splits the workers into
// one slot each (or joins them again, on the selected one's agent), p
// switches who approves the plan (the Reviewer, or the user after it).
func (m *Model) teamKey(msg tea.KeyPressMsg) {
	fd := &m.fd
	k := fd.keys
	slots := fd.agentSlots()
	onAgent := fd.slot < len(slots)
	step := 1
	if key.Matches(msg, k.SlotLeft, k.PickUp) {
		step = -1
	}
	switch {
	case key.Matches(msg, k.SlotLeft, k.SlotRight):
		n := len(slots) + 1
		fd.slot = (fd.slot + step + n) % n
	case key.Matches(msg, k.PickUp, k.PickDown) && onAgent:
		n := len(fd.agents)
		p := slots[fd.slot].pick
		*p = (*p + n + step) % n
	case key.Matches(msg, k.PickUp, k.PickDown):
		fd.addWorkers(-step) // up adds one
	case key.Matches(msg, k.MoreWorkers):
		fd.addWorkers(+1)
	case key.Matches(msg, k.FewerWorkers):
		fd.addWorkers(-1)
	case key.Matches(msg, k.AllRoles) && onAgent:
		v := *slots[fd.slot].pick
		for _, s := range slots {
			*s.pick = v
		}
		fd.pick[2] = v
	case key.Matches(msg, k.Each) && onAgent && fd.slot >= 2:
		fd.toggleEach()
	case key.Matches(msg, k.PlanBy):
		fd.humanPlan = !fd.humanPlan
	}
}

// toggleEach splits the workers slot into one per worker, each on the
// worker role's agent, or joins them into one on the selected worker's.
func (fd *frontDoor) toggleEach() {
	if fd.each != nil {
		fd.pick[2] = fd.each[fd.slot-2]
		fd.each, fd.slot = nil, 2
		return
	}
	fd.workers = max(fd.workers, 1)
	fd.each = make([]int, fd.workers)
	for i := range fd.each {
		fd.each[i] = fd.pick[2]
	}
}

// addWorkers changes the worker count by d, from the launcher's default
// (shown as "default", counted as 1) within 1..maxWorkers; split workers
// gain slots on the last one's agent, or lose the last ones.
func (fd *frontDoor) addWorkers(d int) {
	fd.workers = min(max(max(fd.workers, 1)+d, 1), maxWorkers)
	if fd.each == nil {
		return
	}
	atCount := fd.slot == fd.countSlot()
	for len(fd.each) < fd.workers {
		fd.each = append(fd.each, fd.each[len(fd.each)-1])
	}
	fd.each = fd.each[:fd.workers]
	if atCount || fd.slot > fd.countSlot() {
		fd.slot = fd.countSlot()
	}
}

// teamChoices are the agents picked for the Team row's agent slots, in
// order (none when the start screen offers none).
func (fd *frontDoor) teamChoices() []AgentChoice {
	var out []AgentChoice
	for _, s := range fd.agentSlots() {
		out = append(out, fd.agents[*s.pick])
	}
	return out
}

// team is the agent picked for each role (role → agent), nil when the
// start screen offers none (the launcher's config decides). Split workers
// run their own (workerTeam); the role's is worker_1's.
func (fd *frontDoor) team() map[vocab.Role]string {
	if len(fd.agents) == 0 {
		return nil
	}
	t := make(map[vocab.Role]string, len(teamRoles))
	for i, r := range teamRoles {
		t[r] = fd.agents[fd.pick[i]].Name
	}
	if fd.each != nil {
		t[vocab.RoleWorker] = fd.agents[fd.each[0]].Name
	}
	return t
}

// workerTeam is the agent picked for each worker (worker id → agent) once
// the workers are split, else nil.
func (fd *frontDoor) workerTeam() map[vocab.AgentID]string {
	if fd.each == nil {
		return nil
	}
	t := make(map[vocab.AgentID]string, len(fd.each))
	for i, p := range fd.each {
		t[vocab.WorkerID(i+1)] = fd.agents[p].Name
	}
	return t
}

// teamLines show each role's agent (or each worker's) and the worker
// count, wrapped to width w; when the row has the focus the selected slot
// is lit, between the arrows that change it. An agent whose program is not
// on PATH is marked ✖ (missingLine says why).
func (m Model) teamLines(label func(startFocus, string, string) string, w int) []string {
	fd := m.fd
	slot := func(i int, name, value string, missing bool) string {
		v := stText.Bold(true).Render(value)
		if fd.focus == focusTeam && fd.slot == i {
			v = stFocused.Render("◂ " + value + " ▸")
		}
		if missing {
			v += stBadTxt.Render(" ✖")
		}
		return stDim.Render(name+" ") + v
	}
	var parts []string
	count := "×" // after "workers <agent>"
	if len(fd.agents) == 0 {
		parts = append(parts, stDim.Render("agents ")+stText.Bold(true).Render("as configured"))
		count = "workers"
	}
	for i, s := range fd.agentSlots() {
		a := fd.agents[*s.pick]
		parts = append(parts, slot(i, s.name, a.Name, a.Missing != ""))
	}
	workers := "default"
	if fd.workers > 0 {
		workers = fmt.Sprint(fd.workers)
	}
	parts = append(parts, slot(fd.countSlot(), count, workers, false))
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
func (m Model) missingLine() string {
	var why []string
	for _, a := range m.fd.teamChoices() {
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
func (m Model) planLine() string {
	who := "the Reviewer"
	if m.fd.humanPlan {
		who = "the Reviewer, then you"
	}
	line := "        " + stDim.Render("plan approved by ") + stText.Bold(true).Render(who)
	if m.fd.focus == focusTeam {
		line += stDim.Render("   p switches")
	}
	return line
}
