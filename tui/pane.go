package tui

import (
	"image/color"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// borderKind selects a pane border's shape and colour.
type borderKind uint8

const (
	borderNormal borderKind = iota
	borderFocus
	borderAttach
	borderWarn // an unfocused pane whose agent needs attention
	borderBad
	borderRate
	numBorderKinds
)

// borderSet is a border with its pieces pre-styled, so drawing a row is
// only string concatenation.
type borderSet struct {
	style                  lipgloss.Style
	h                      string // unstyled horizontal piece
	left, right            string // styled verticals
	tl, tr, bl, br         string // unstyled corners
	titleStyle, labelStyle lipgloss.Style
}

var borders [numBorderKinds]borderSet

func init() {
	mk := func(b lipgloss.Border, c color.Color, bold bool) borderSet {
		st := lipgloss.NewStyle().Foreground(c).Bold(bold)
		return borderSet{
			style: st, h: b.Top,
			left: st.Render(b.Left), right: st.Render(b.Right),
			tl: b.TopLeft, tr: b.TopRight, bl: b.BottomLeft, br: b.BottomRight,
			titleStyle: lipgloss.NewStyle().Foreground(c).Bold(true),
			labelStyle: lipgloss.NewStyle().Foreground(c),
		}
	}
	borders[borderNormal] = mk(lipgloss.RoundedBorder(), colDim, false)
	borders[borderFocus] = mk(lipgloss.ThickBorder(), colFocus, true)
	borders[borderAttach] = mk(lipgloss.DoubleBorder(), colAttach, true)
	borders[borderWarn] = mk(lipgloss.RoundedBorder(), colWarn, false)
	borders[borderBad] = mk(lipgloss.RoundedBorder(), colBad, false)
	borders[borderRate] = mk(lipgloss.RoundedBorder(), colRate, false)
}

// titleData is everything a pane's title shows; it is also the title's
// cache key, so it must stay comparable.
type titleData struct {
	Num      int // 1-based pane number (0: none)
	ID       vocab.AgentID
	Role     vocab.Role
	Agent    string // the CLI running the agent ("" not shown)
	Health   vocab.Health
	Spinner  string // current spinner frame when the agent is busy
	Subtask  string
	Changed  int    // files a worker changed on its git branch, not merged yet (0: not shown)
	Usage    string // tokens and cost, e.g. "12.3k tok $0.04" ("" before any)
	Activity string // ●, ○ or –
	Attached bool
	Zoomed   bool
	Scroll   int    // lines scrolled back (shown in the bottom border)
	Back     int    // scrollback length
	Search   string // the search shown in the bottom border ("" none)
}

// paneMarks are what is highlighted over a pane's screen: the matches of a
// search and the rows of a mouse selection (From > To: none).
type paneMarks struct {
	Query    string
	From, To int
}

type bodyKey struct {
	term    Terminal
	version uint64
	w, h    int
	scroll  int
	border  borderKind
	marks   paneMarks
}

type edgeKey struct {
	title  titleData
	w      int
	border borderKind
}

// paneCache holds one pane's rendered block. Each part is rebuilt only when
// its key changes: the body when the screen (version), size, scroll or
// border changes; the edges when the title data changes.
type paneCache struct {
	bodyKey  bodyKey
	body     []string // h-2 rows, each exactly w wide
	topKey   edgeKey
	top      string
	botKey   edgeKey
	bot      string
	rows     []string // top, body..., bottom
	rowsOK   bool
	hasBody  bool
	hasEdges bool
}

// block returns the pane's rows (exactly h rows, each exactly w cells wide),
// rebuilding only the parts whose inputs changed.
func (pc *paneCache) block(t Terminal, version uint64, w, h int, kind borderKind, td titleData, mk paneMarks) []string {
	bk := bodyKey{term: t, version: version, w: w, h: h, scroll: td.Scroll, border: kind, marks: mk}
	if !pc.hasBody || bk != pc.bodyKey {
		pc.body = renderBody(pc.body[:0], t, w, h, td.Scroll, kind, mk)
		pc.bodyKey, pc.hasBody, pc.rowsOK = bk, true, false
	}
	ek := edgeKey{title: td, w: w, border: kind}
	if !pc.hasEdges || ek != pc.topKey {
		pc.top = renderTop(w, kind, td)
		pc.bot = renderBottom(w, kind, td)
		pc.topKey, pc.botKey, pc.hasEdges, pc.rowsOK = ek, ek, true, false
	}
	if !pc.rowsOK {
		pc.rows = append(pc.rows[:0], pc.top)
		pc.rows = append(pc.rows, pc.body...)
		pc.rows = append(pc.rows, pc.bot)
		pc.rowsOK = true
	}
	return pc.rows
}

// renderBody draws the bordered screen rows of a pane.
func renderBody(dst []string, t Terminal, w, h, scroll int, kind borderKind, mk paneMarks) []string {
	b := &borders[kind]
	iw, ih := max(w-2, 0), max(h-2, 0)
	var lines []string
	if t != nil {
		lines = t.Lines(scroll)
	}
	// The Terminal promises rows exactly iw wide. Check one row (cheap) and
	// only if it is off (e.g. a resize not yet applied) fit every row.
	fit := len(lines) > 0 && ansi.StringWidth(lines[0]) != iw
	blank := strings.Repeat(" ", iw)
	for i := 0; i < ih; i++ {
		var line string
		switch {
		case i < len(lines):
			line = lines[i]
			if fit {
				line = fitWidth(line, iw)
			}
			switch {
			case i >= mk.From && i <= mk.To:
				line = stSelected.Render(ansi.Strip(line))
			case mk.Query != "":
				line = highlight(line, mk.Query)
			}
		case t == nil && i == ih/2:
			line = fitWidth(stDim.Render(center("no terminal yet", iw)), iw)
		default:
			line = blank
		}
		dst = append(dst, b.left+line+b.right)
	}
	return dst
}

// renderTop draws the top border with the title.
func renderTop(w int, kind borderKind, td titleData) string {
	b := &borders[kind]
	if w < 2 {
		return strings.Repeat(" ", max(w, 0))
	}
	avail := w - 6 // "╭─ " + title + " " + "─…╮" needs at least one fill cell
	if avail < 1 {
		return b.style.Render(b.tl + strings.Repeat(b.h, w-2) + b.tr)
	}
	title, tw := titleText(td, kind, avail)
	fill := w - 5 - tw
	return b.style.Render(b.tl+b.h) + " " + title + " " + b.style.Render(strings.Repeat(b.h, fill)+b.tr)
}

// renderBottom draws the bottom border, with the scroll position when the
// pane is scrolled back.
func renderBottom(w int, kind borderKind, td titleData) string {
	b := &borders[kind]
	if w < 2 {
		return strings.Repeat(" ", max(w, 0))
	}
	var label string
	switch {
	case td.Search != "":
		label = td.Search
	case td.Scroll > 0:
		label = "↑ " + strconv.Itoa(td.Scroll) + "/" + strconv.Itoa(td.Back) + " · pgdn/end"
	case td.Zoomed:
		label = "zoom · z to restore"
	}
	if label != "" && ansi.StringWidth(label) > w-6 && w > 8 {
		label = ansi.Truncate(label, w-6, "…")
	}
	lw := ansi.StringWidth(label)
	if label == "" || lw > w-6 {
		return b.style.Render(b.bl + strings.Repeat(b.h, w-2) + b.br)
	}
	fill := w - 5 - lw
	return b.style.Render(b.bl+strings.Repeat(b.h, fill)) + " " + b.labelStyle.Render(label) + " " + b.style.Render(b.h+b.br)
}

// titleText renders the title (styled) within avail cells and returns its
// width.
func titleText(td titleData, kind borderKind, avail int) (string, int) {
	b := &borders[kind]
	look := lookOf(td.Health)
	hs := lipgloss.NewStyle().Foreground(look.colour).Bold(look.strong)

	type seg struct {
		text string
		st   lipgloss.Style
		drop int // segments with drop > 0 go first (highest first) when space is short
	}
	segs := make([]seg, 0, 8)
	if td.Attached {
		segs = append(segs, seg{"ATTACHED · ctrl+] detach", stAttachBar, 0}, seg{" ", lipgloss.Style{}, 0})
	}
	if td.Num > 0 {
		segs = append(segs, seg{strconv.Itoa(td.Num) + " ", stDim, 3})
	}
	actStyle := stDim
	if td.Activity == "●" {
		actStyle = lipgloss.NewStyle().Foreground(colOK)
	} else if td.Activity == "○" {
		actStyle = lipgloss.NewStyle().Foreground(colBusy)
	}
	segs = append(segs, seg{td.Activity + " ", actStyle, 0}, seg{string(td.ID), b.titleStyle, 0})
	switch {
	case td.Role != "" && string(td.Role) != string(td.ID) && td.Agent != "":
		segs = append(segs, seg{" (" + string(td.Role) + " · " + td.Agent + ")", stDim, 4})
	case td.Role != "" && string(td.Role) != string(td.ID):
		segs = append(segs, seg{" (" + string(td.Role) + ")", stDim, 4})
	case td.Agent != "":
		segs = append(segs, seg{" (" + td.Agent + ")", stDim, 4})
	}
	glyph := look.glyph
	if glyph == "" {
		glyph = td.Spinner
	}
	segs = append(segs, seg{" " + glyph + " " + look.label, hs, 0})
	if td.Subtask != "" {
		segs = append(segs, seg{" · " + td.Subtask, stText, 2})
	}
	if td.Changed > 0 {
		files := " files"
		if td.Changed == 1 {
			files = " file"
		}
		segs = append(segs, seg{" · ±" + strconv.Itoa(td.Changed) + files, stDim, 4})
	}
	if td.Usage != "" {
		segs = append(segs, seg{" · " + td.Usage, stDim, 5})
	}
	// Drop the least important segments until the rest fits; what still
	// does not fit is truncated below.
	total := 0
	widths := make([]int, len(segs))
	for i, sg := range segs {
		widths[i] = ansi.StringWidth(sg.text)
		total += widths[i]
	}
	for level := 5; level >= 1 && total > avail; level-- {
		for i := range segs {
			if segs[i].drop == level && widths[i] > 0 {
				total -= widths[i]
				segs[i].text, widths[i] = "", 0
			}
		}
	}

	var sb strings.Builder
	width := 0
	for i, s := range segs {
		if s.text == "" {
			continue
		}
		sw := widths[i]
		if width+sw > avail {
			rest := avail - width
			if rest > 0 {
				cut := ansi.Truncate(s.text, rest, "…")
				sb.WriteString(s.st.Render(cut))
				width += ansi.StringWidth(cut)
			}
			break
		}
		sb.WriteString(s.st.Render(s.text))
		width += sw
	}
	return sb.String(), width
}

// fitWidth cuts or pads a styled string to exactly w cells.
func fitWidth(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

func center(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return s
	}
	return strings.Repeat(" ", (w-sw)/2) + s
}

// highlight marks every case-insensitive occurrence of query in a screen
// row. A row without one keeps its colours; a row with one is drawn plain
// with the matches in reverse video.
func highlight(line, query string) string {
	plain := ansi.Strip(line)
	lp, lq := strings.ToLower(plain), strings.ToLower(query)
	if lq == "" || !strings.Contains(lp, lq) || len(lp) != len(plain) {
		return line
	}
	var sb strings.Builder
	for {
		i := strings.Index(lp, lq)
		if i < 0 {
			sb.WriteString(plain)
			return sb.String()
		}
		sb.WriteString(plain[:i])
		sb.WriteString(stMatch.Render(plain[i : i+len(lq)]))
		plain, lp = plain[i+len(lq):], lp[i+len(lq):]
	}
}
