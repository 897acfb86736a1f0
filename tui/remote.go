package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Remote is set when the model is a client of a Hivemind server
// (hivemind attach): the team lives in the server, so leaving this UI
// detaches from it. D detaches at once; q asks whether to detach (the
// default: the team keeps working) or to stop the team.
type Remote struct {
	// Stop asks the server to stop the team (its agents stop; the task
	// stays resumable). It must return quickly.
	Stop func()
}

// PaneViewer is implemented by Terminals that stream screens only for the
// panes shown (a server's client): after every layout the model tells it
// which agents' panes are visible and at what rate it draws them.
type PaneViewer interface {
	Showing(s Shown)
}

// Shown is what the model draws of the agents' terminals.
type Shown struct {
	// Panes are the visible panes, in order.
	Panes []vocab.AgentID
	// Fast is the attached pane ("" when none is): it takes new content
	// at Options.FPS.
	Fast vocab.AgentID
	// SlowFPS is how often the other visible panes take new content
	// (Options.UnfocusedFPS): a source that sends them faster sends
	// frames the model does not draw.
	SlowFPS int
}

// tellShowing tells a PaneViewer the panes the layout shows.
func (m *runView) tellShowing() {
	v, ok := m.opts.Terminals.(PaneViewer)
	if !ok {
		return
	}
	var ids []vocab.AgentID
	for _, row := range m.lay.Rows {
		for _, c := range row.Cells {
			if c.Agent >= 0 && c.Agent < len(m.agents) {
				ids = append(ids, m.agents[c.Agent])
			}
		}
	}
	if m.lay.TooSmall {
		ids = nil
	}
	fast := m.fastID()
	if !slices.Contains(ids, fast) {
		fast = ""
	}
	if slices.Equal(ids, m.r.showing.Panes) && fast == m.r.showing.Fast {
		return
	}
	m.r.showing = Shown{Panes: ids, Fast: fast, SlowFPS: m.opts.UnfocusedFPS}
	told := m.r.showing
	told.Panes = slices.Clone(ids)
	v.Showing(told)
}

// remoteLeaveKey handles q and D of a client: D detaches, q asks, unless
// the task is over (its agents stopped as it ended: there is no team to
// keep working or to stop; the server ends once no client is attached).
func (m *runView) remoteLeaveKey(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if m.opts.Remote == nil {
		return false, nil
	}
	switch {
	case key.Matches(msg, m.keys.Leave) || (key.Matches(msg, m.keys.Quit) && m.taskOver()):
		return true, m.quit()
	case key.Matches(msg, m.keys.Quit):
		m.confirm = confirmLeave
		return true, nil
	}
	return false, nil
}

// leaveKeyMap answers the leave question of a server's client.
type leaveKeyMap struct {
	Detach, Stop, Stay key.Binding
}

func newLeaveKeyMap() leaveKeyMap {
	return leaveKeyMap{
		Detach: key.NewBinding(key.WithKeys("d", "D", "enter", "y", "ctrl+c", "q"), key.WithHelp("D/enter", "detach: the team keeps working")),
		Stop:   key.NewBinding(key.WithKeys("s", "S"), key.WithHelp("s", "stop the team (resumable)")),
		Stay:   key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("esc", "stay")),
	}
}

func (k leaveKeyMap) helpSections() []helpSection {
	return []helpSection{{"Leaving (attached to a server)", bindingEntries(k.Detach, k.Stop, k.Stay)}}
}

// leaveKey answers the leave question: d, enter (or ctrl+c again) detach,
// s stops the team, n/esc stays.
func (m *runView) leaveKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.km.leave
	switch {
	case key.Matches(msg, k.Detach):
		m.confirm = confirmNone
		return m.quit()
	case key.Matches(msg, k.Stop):
		m.confirm = confirmNone
		if m.opts.Remote.Stop != nil {
			m.opts.Remote.Stop()
		}
		return m.quit()
	case key.Matches(msg, k.Stay):
		m.confirm = confirmNone
	}
	return nil
}

// leaveLine is the leave question, cut to w cells.
func (m runView) leaveLine(w int) string {
	q := " Leave: detach, the team keeps working (hivemind attach comes back) [D/enter] · stop the team [s] · stay [esc] "
	return stConfirm.Render(fitWidth(ansi.Truncate(q, w, "…"), w))
}
