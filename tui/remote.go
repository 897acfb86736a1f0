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
// which agents' panes are visible, in order.
type PaneViewer interface {
	Showing(ids []vocab.AgentID)
}

// tellShowing tells a PaneViewer the panes the layout shows.
func (m *Model) tellShowing() {
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
	if slices.Equal(ids, m.r.showing) {
		return
	}
	m.r.showing = ids
	v.Showing(slices.Clone(ids))
}

// remoteLeaveKey handles q and D of a client: D detaches, q asks, unless
// the task is over (its agents stopped as it ended: there is no team to
// keep working or to stop; the server ends once no client is attached).
func (m *Model) remoteLeaveKey(msg tea.KeyPressMsg) (bool, tea.Cmd) {
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
func (m *Model) leaveKey(msg tea.KeyPressMsg) tea.Cmd {
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
func (m Model) leaveLine(w int) string {
	q := " Leave: detach, the team keeps working (hivemind attach comes back) [D/enter] · stop the team [s] · stay [esc] "
	return stConfirm.Render(fitWidth(ansi.Truncate(q, w, "…"), w))
}
