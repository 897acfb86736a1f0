package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpEntry is one line of a help section: a key (or glyph) and what it
// does (or means).
type helpEntry struct{ key, desc string }

// helpSection is a titled group of help entries.
type helpSection struct {
	title   string
	entries []helpEntry
}

// bindingEntries lists the enabled bindings as help entries. Bindings
// with the same help in a row (a line and a page scroll: "↑/pgup scroll")
// share one entry.
func bindingEntries(bs ...key.Binding) []helpEntry {
	out := make([]helpEntry, 0, len(bs))
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		e := helpEntry{h.Key, h.Desc}
		if len(out) > 0 && out[len(out)-1] == e {
			continue
		}
		out = append(out, e)
	}
	return out
}

// sectionLines renders a section as lines no wider than w.
func (s helpSection) lines(w int) []string {
	kw := 0
	for _, e := range s.entries {
		kw = max(kw, ansi.StringWidth(e.key))
	}
	out := []string{stAccent.Render(ansi.Truncate(s.title, w, "…"))}
	for _, e := range s.entries {
		k := e.key + strings.Repeat(" ", kw-ansi.StringWidth(e.key))
		line := stHelpKey.Render(k) + "  " + stHelpDesc.Render(e.desc)
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}

func (s helpSection) width() int {
	kw, dw := 0, 0
	for _, e := range s.entries {
		kw = max(kw, ansi.StringWidth(e.key))
		dw = max(dw, ansi.StringWidth(e.desc))
	}
	return max(kw+2+dw, ansi.StringWidth(s.title))
}

const helpGap = 3 // columns between help columns

// helpColumns packs sections, in order, into as few columns as make them
// fit in h rows (as many as fit in w cells when none do).
func helpColumns(secs []helpSection, w, h int) [][]string {
	var best [][]string
	for n := 1; n <= len(secs); n++ {
		cols := packSections(secs, n)
		total, height := 0, 0
		rendered := make([][]string, len(cols))
		for i, c := range cols {
			cw := 0
			for _, s := range c {
				cw = max(cw, s.width())
			}
			total += cw
			if i > 0 {
				total += helpGap
			}
			for j, s := range c {
				if j > 0 {
					rendered[i] = append(rendered[i], "")
				}
				rendered[i] = append(rendered[i], s.lines(min(cw, w))...)
			}
			height = max(height, len(rendered[i]))
		}
		if best != nil && total > w {
			break
		}
		best = rendered
		if height <= h {
			break
		}
	}
	return best
}

// packSections splits secs into n consecutive groups of balanced height.
func packSections(secs []helpSection, n int) [][]helpSection {
	total := 0
	for _, s := range secs {
		total += len(s.entries) + 2
	}
	target := (total + n - 1) / n
	var cols [][]helpSection
	var cur []helpSection
	h := 0
	for i, s := range secs {
		left := len(secs) - i
		if len(cur) > 0 && (h+len(s.entries)+1 > target || left < n-len(cols)) && len(cols) < n-1 {
			cols = append(cols, cur)
			cur, h = nil, 0
		}
		cur = append(cur, s)
		h += len(s.entries) + 2
	}
	return append(cols, cur)
}

// renderHelpBox draws a help overlay of exactly h lines of exactly w
// cells: a title, the sections in columns, and notes, in a box centred in
// the area. What does not fit is cut, with a line saying how to scroll
// (scroll lines down); the largest useful scroll is returned.
func renderHelpBox(title string, secs []helpSection, notes []string, w, h, scroll int) (string, int) {
	boxed := w >= 24 && h >= 8
	iw, ih := w, h
	if boxed {
		iw, ih = w-4, h-2 // border and padding
	}
	cols := helpColumns(secs, iw, max(ih-2, 1))
	var body []string
	body = append(body, stAccent.Render(ansi.Truncate(title, iw, "…")), "")
	rows := 0
	for _, c := range cols {
		rows = max(rows, len(c))
	}
	widths := make([]int, len(cols))
	for i, c := range cols {
		for _, l := range c {
			widths[i] = max(widths[i], ansi.StringWidth(l))
		}
	}
	for r := 0; r < rows; r++ {
		var sb strings.Builder
		for i, c := range cols {
			if i > 0 {
				sb.WriteString(strings.Repeat(" ", helpGap))
			}
			l := ""
			if r < len(c) {
				l = c[r]
			}
			sb.WriteString(fitWidth(l, widths[i]))
		}
		body = append(body, ansi.Truncate(sb.String(), iw, "…"))
	}
	for _, n := range notes {
		body = append(body, "", stDim.Render(ansi.Truncate(n, iw, "…")))
	}
	maxScroll := 0
	if len(body) > ih {
		maxScroll = len(body) - ih + 1
		scroll = min(max(scroll, 0), maxScroll)
		more := fmt.Sprintf("↑↓ scroll · lines %d–%d of %d", scroll+1, scroll+ih-1, len(body))
		body = append(body[scroll:scroll+ih-1], stAccent.Render(ansi.Truncate(more, iw, "…")))
	}
	bw := 0
	for _, l := range body {
		bw = max(bw, ansi.StringWidth(l))
	}
	for i, l := range body {
		body[i] = fitWidth(l, bw)
	}
	block := strings.Join(body, "\n")
	if boxed {
		block = stHelpBox.Render(block)
	}
	placed := lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, block)
	lines := strings.Split(placed, "\n")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fitWidth(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n"), maxScroll
}

// hintSep separates key hints in footers.
const hintSep = " • "

// shortHints renders enabled bindings as "key desc • key desc" in at most
// w cells (w <= 0: no limit), ending in "…" when some did not fit.
func shortHints(bs []key.Binding, w int) string {
	var sb strings.Builder
	used := 0
	sep := stHelpSep.Render(hintSep)
	sepW := ansi.StringWidth(hintSep)
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		item := stHelpKey.Render(h.Key) + " " + stHelpDesc.Render(h.Desc)
		iw := ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
		if used > 0 {
			iw += sepW
		}
		if w > 0 && used+iw > w {
			if used > 0 && used+2 <= w {
				sb.WriteString(stHelpSep.Render(" …"))
			}
			break
		}
		if used > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(item)
		used += iw
	}
	return sb.String()
}

// helpKeyMap is the keys of the run view's help overlay; the rest go to
// the run view (? closes it there, and p, c, q… keep working).
type helpKeyMap struct {
	Close                      key.Binding
	Up, Down, PageUp, PageDown key.Binding
}

func newHelpKeyMap() helpKeyMap {
	return helpKeyMap{
		Close:    key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("esc", "close help")),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j", "space"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
	}
}

func (k helpKeyMap) helpSections() []helpSection {
	return []helpSection{{"Help", bindingEntries(k.Close, k.Up, k.Down, k.PageUp, k.PageDown)}}
}

// helpView is the help overlay (key ?): the run view's over the panes,
// the front door's over its screens.
type helpView struct {
	show   bool
	scroll int // lines the help is scrolled
}

// helpKey handles the help overlay's own keys; false passes msg on to the
// run view.
func (m *runView) helpKey(msg tea.KeyPressMsg) bool {
	return m.help.update(msg, m.km.help, m.lay.Area.H/2, m.r.helpMax)
}

// update handles a key of the help overlay, page lines a page, scrolled
// at most maxScroll lines; false: msg is none of its keys.
func (h *helpView) update(msg tea.KeyPressMsg, k helpKeyMap, page, maxScroll int) bool {
	switch {
	case key.Matches(msg, k.Close):
		h.show = false
		return true
	case key.Matches(msg, k.Up):
		h.scroll--
	case key.Matches(msg, k.Down):
		h.scroll++
	case key.Matches(msg, k.PageUp):
		h.scroll -= page
	case key.Matches(msg, k.PageDown):
		h.scroll += page
	default:
		return false
	}
	h.scroll = min(max(h.scroll, 0), maxScroll)
	return true
}
