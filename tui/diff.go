package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// diffView is one worker's changes (key d), drawn over the pane area.
type diffView struct {
	show    bool
	agent   vocab.AgentID
	loading bool
	lines   []string // the diff, one line each, tabs expanded
	err     string
	scroll  int
}

// diffLoadedMsg carries the result of a diffCmd.
type diffLoadedMsg struct {
	agent vocab.AgentID
	text  string
	err   error
}

// diffCmd runs the diff (git) off the UI goroutine.
func diffCmd(diff func(string) (string, error), agent vocab.AgentID) tea.Cmd {
	return func() tea.Msg {
		text, err := diff(string(agent))
		return diffLoadedMsg{agent: agent, text: text, err: err}
	}
}

// openDiff shows the focused worker's diff and loads it.
func (m *runView) openDiff() tea.Cmd {
	id := m.focusID
	role := m.st.AgentRole(id)
	switch {
	case id == "":
		return nil
	case role != vocab.RoleWorker:
		m.notice = notice{level: "info", text: "d shows a worker's changes: focus a worker (" + string(id) + " writes no code of its own)"}
		return nil
	case m.opts.Diff == nil:
		m.notice = notice{level: "info", text: "no diff: this run has no git branches (not a git project)"}
		return nil
	}
	m.diff = diffView{show: true, agent: id, loading: true}
	m.help.show, m.cx.show = false, false
	return diffCmd(m.opts.Diff, id)
}

// loaded takes the result of its diffCmd (an older load is ignored).
func (d *diffView) loaded(msg diffLoadedMsg) {
	if !d.show || msg.agent != d.agent {
		return
	}
	d.loading = false
	if msg.err != nil {
		d.err = msg.err.Error()
		return
	}
	text := strings.ReplaceAll(strings.TrimRight(msg.text, "\n"), "\t", "    ")
	d.lines = nil
	if text != "" {
		d.lines = strings.Split(text, "\n")
	}
}

// diffKeyMap is the keys of the diff view; ? and q go on to the run view,
// every other key is the diff's.
type diffKeyMap struct {
	Close  key.Binding
	Scroll scrollKeyMap
}

func newDiffKeyMap() diffKeyMap {
	return diffKeyMap{
		Close:  key.NewBinding(key.WithKeys("esc", "d"), key.WithHelp("esc/d", "close the diff")),
		Scroll: newScrollKeyMap(),
	}
}

func (k diffKeyMap) helpSections() []helpSection {
	return []helpSection{{"Diff view", bindingEntries(k.Close)}}
}

// handleDiffKey scrolls or closes the diff view; false passes msg on to
// the run view (help and quit).
func (m *runView) handleDiffKey(msg tea.KeyPressMsg) bool {
	if key.Matches(msg, m.keys.Help) || key.Matches(msg, m.keys.Quit) {
		return false
	}
	m.diff.update(msg, m.km.diff, m.lay.Area.H)
	return true
}

// update handles a key of the diff view drawn h lines high: every key is
// the diff's (one that is none of its keys does nothing).
func (d *diffView) update(msg tea.KeyPressMsg, k diffKeyMap, h int) {
	if key.Matches(msg, k.Close) {
		*d = diffView{}
		return
	}
	d.scroll, _ = k.Scroll.scroll(msg, d.scroll, max(h-2, 1), len(d.lines))
	d.scroll = min(max(d.scroll, 0), max(len(d.lines)-(h-1), 0))
}

var (
	stDiffAdd  = lipgloss.NewStyle().Foreground(colOK)
	stDiffDel  = lipgloss.NewStyle().Foreground(colBad)
	stDiffHunk = lipgloss.NewStyle().Foreground(colBusy)
	stDiffFile = lipgloss.NewStyle().Foreground(colText).Bold(true)
)

// view draws the diff view: exactly h lines of w cells.
func (d diffView) view(w, h int) string {
	title := fmt.Sprintf("─ changes of %s (d or esc closes · ↑↓ pgup pgdn) ", d.agent)
	if n := len(d.lines); n > h-1 && h > 1 {
		title = fmt.Sprintf("─ changes of %s · %d–%d of %d (d or esc closes · ↑↓ pgup pgdn) ",
			d.agent, d.scroll+1, min(d.scroll+h-1, n), n)
	}
	lines := []string{fitWidth(stAccent.Render(ansi.Truncate(title, w, "…"))+
		stDim.Render(strings.Repeat("─", max(w-ansi.StringWidth(title), 0))), w)}
	switch {
	case d.loading:
		lines = append(lines, fitWidth(stDim.Render("  running git diff…"), w))
	case d.err != "":
		lines = append(lines, fitWidth(stBadTxt.Render(ansi.Truncate("  "+oneLine(d.err), w, "…")), w))
	case len(d.lines) == 0:
		lines = append(lines, fitWidth(stDim.Render("  no changes yet on "+string(d.agent)+"'s branch"), w))
	}
	for i := d.scroll; i < len(d.lines) && len(lines) < h; i++ {
		l := ansi.Truncate(ansi.Strip(d.lines[i]), w, "…")
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "):
			l = stDiffFile.Render(l)
		case strings.HasPrefix(l, "+"):
			l = stDiffAdd.Render(l)
		case strings.HasPrefix(l, "-"):
			l = stDiffDel.Render(l)
		case strings.HasPrefix(l, "@@"):
			l = stDiffHunk.Render(l)
		}
		lines = append(lines, fitWidth(l, w))
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines[:h], "\n")
}
