package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// search is a search in one pane's scrollback (key /): the prompt while
// typing, then the matches, walked with n and N.
type search struct {
	typing  bool          // the prompt in the footer takes the keys
	query   string        // typed, then searched
	agent   vocab.AgentID // the pane searched
	hits    []int         // matching lines, counted from the top of the scrollback
	cur     int           // the hit shown (index into hits)
	running bool          // a searchCmd is outstanding
}

// active reports whether matches are shown over the agent's pane.
func (s search) active(id vocab.AgentID) bool {
	return !s.typing && s.query != "" && s.agent == id
}

// label is the search's note in the pane's bottom border.
func (s search) label() string {
	switch {
	case s.running:
		return "/" + s.query + " searching…"
	case len(s.hits) == 0:
		return "/" + s.query + " no match · esc"
	}
	return fmt.Sprintf("/%s %d/%d · n N · esc", s.query, len(s.hits)-s.cur, len(s.hits))
}

// searchedMsg carries the matches of a searchCmd.
type searchedMsg struct {
	agent vocab.AgentID
	query string
	hits  []int
}

// searchCmd finds the lines of t's scrollback and screen that contain
// query (case-insensitive). It reads the screen a page at a time off the
// UI goroutine: the cost is one pass over the scrollback per search, never
// per frame.
func searchCmd(t Terminal, agent vocab.AgentID, query string, rows int) tea.Cmd {
	return func() tea.Msg {
		q := strings.ToLower(query)
		back := t.ScrollbackLen()
		var hits []int
		seen := map[int]bool{}
		for scroll := back; ; scroll -= rows {
			scroll = max(scroll, 0)
			for i, l := range t.Lines(scroll) {
				abs := back - scroll + i
				if !seen[abs] && strings.Contains(strings.ToLower(ansi.Strip(l)), q) {
					seen[abs] = true
					hits = append(hits, abs)
				}
			}
			if scroll == 0 {
				break
			}
		}
		return searchedMsg{agent: agent, query: query, hits: hits}
	}
}

// searchKeyMap is the keys of the search prompt; every other key types
// its text into the query.
type searchKeyMap struct {
	Cancel, Run, Erase key.Binding
}

func newSearchKeyMap() searchKeyMap {
	return searchKeyMap{
		Cancel: key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel the search")),
		Run:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "search")),
		Erase:  key.NewBinding(key.WithKeys("backspace"), key.WithHelp("backspace", "erase a character")),
	}
}

func (k searchKeyMap) helpSections() []helpSection {
	return []helpSection{{"Search prompt", bindingEntries(k.Run, k.Cancel, k.Erase)}}
}

// handleSearchKey edits the search prompt, and starts the search on
// enter.
func (m *runView) handleSearchKey(msg tea.KeyPressMsg) tea.Cmd {
	if !m.find.update(msg, m.km.search) {
		return nil
	}
	t, ok := m.terminal(m.find.agent)
	if !ok {
		m.find = search{}
		m.notice = notice{level: "warn", text: "no live terminal to search"}
		return nil
	}
	m.find.running, m.find.hits = true, nil
	_, rows := m.lay.paneRect(m.focusIndex()).inner()
	return searchCmd(t, m.find.agent, m.find.query, max(rows, 1))
}

// update edits the prompt: every key that is none of k types its text.
// It reports enter on a query: the caller starts the search.
func (s *search) update(msg tea.KeyPressMsg, k searchKeyMap) (run bool) {
	switch {
	case key.Matches(msg, k.Cancel):
		*s = search{}
	case key.Matches(msg, k.Run):
		s.typing = false
		if s.query == "" {
			*s = search{}
			return false
		}
		return true
	case key.Matches(msg, k.Erase):
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
		}
	default:
		s.query += msg.Text
	}
	return false
}

// handleSearched shows the newest match of a finished search.
func (m *runView) handleSearched(msg searchedMsg) {
	if msg.agent != m.find.agent || msg.query != m.find.query || m.find.typing {
		return // an older search
	}
	m.find.running = false
	m.find.hits = msg.hits
	if len(msg.hits) == 0 {
		return
	}
	m.find.cur = len(msg.hits) - 1
	m.showHit()
}

// stepHit moves to the next older (d = -1) or newer (d = +1) match.
func (m *runView) stepHit(d int) {
	if len(m.find.hits) == 0 {
		return
	}
	n := len(m.find.hits)
	m.find.cur = (m.find.cur + d + n) % n
	m.showHit()
}

// showHit scrolls the searched pane so the current match is mid-pane.
func (m *runView) showHit() {
	id := m.find.agent
	t, ok := m.terminal(id)
	if !ok {
		return
	}
	i := -1
	for j, a := range m.agents {
		if a == id {
			i = j
		}
	}
	if i < 0 || m.lay.TooSmall || len(m.lay.Rects) == 0 {
		return
	}
	_, rows := m.lay.paneRect(i).inner()
	back := t.ScrollbackLen()
	m.scroll[id] = min(max(back-m.find.hits[m.find.cur]+rows/2, 0), back)
}

// ---- selection and copy ----

// selection is a range of screen rows of one pane chosen with the mouse
// (press, drag, release); on release the rows are copied.
type selection struct {
	agent        vocab.AgentID
	anchor, head int // body rows (0 = the pane's first screen row)
	dragging     bool
}

// marks are the highlights over an agent's pane.
func (m runView) marks(id vocab.AgentID) paneMarks {
	mk := paneMarks{From: 1, To: 0}
	if m.sel.agent == id {
		mk.From, mk.To = min(m.sel.anchor, m.sel.head), max(m.sel.anchor, m.sel.head)
	}
	if m.find.active(id) {
		mk.Query = m.find.query
	}
	return mk
}

// textCopier is implemented by terminals that know soft wraps (like
// *ptyagent.Session): a copy joins a wrapped line as tmux does.
type textCopier interface {
	CopyText(scroll, from, to int) string
}

// copyRows copies rows from..to (inclusive) of the agent's screen, as it
// shows now (scrolled or live), to the clipboard with OSC 52: soft-wrapped
// rows joined into their line, trailing blanks and empty last lines
// trimmed.
func (m *runView) copyRows(id vocab.AgentID, from, to int) tea.Cmd {
	t, ok := m.terminal(id)
	if !ok {
		m.notice = notice{level: "warn", text: "nothing to copy: " + string(id) + " has no terminal"}
		return nil
	}
	var out []string
	if c, ok := t.(textCopier); ok {
		out = strings.Split(c.CopyText(m.scroll[id], max(from, 0), to), "\n")
	} else {
		lines := t.Lines(m.scroll[id])
		for i := max(from, 0); i <= min(to, len(lines)-1); i++ {
			out = append(out, strings.TrimRight(ansi.Strip(lines[i]), " "))
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	text := strings.Join(out, "\n")
	if text == "" {
		m.notice = notice{level: "info", text: "nothing to copy: the rows are empty"}
		return nil
	}
	m.notice = notice{level: "info", text: fmt.Sprintf("copied %d line(s) of %s to the clipboard (OSC 52)", len(out), id)}
	return tea.SetClipboard(text)
}
