package tui

import "math"

// Minimum outer pane size; below it fewer panes go on a page.
const (
	minPaneW = 16
	minPaneH = 5
	maxPanes = 8 // panes per page
)

type rect struct{ X, Y, W, H int }

// inner is the size of the terminal inside a pane's border.
func (r rect) inner() (cols, rows int) { return max(r.W-2, 1), max(r.H-2, 1) }

// gridRow is one row of panes on screen, stitched line by line.
type gridRow struct {
	Y, H  int
	Cells []gridCell
}

type gridCell struct {
	Agent int // index into runView.agents
	X, W  int
}

// layout says where everything goes for one terminal size and model state.
type layout struct {
	W, H     int
	TooSmall bool

	BannerY int // -1 when there is no banner
	BannerH int // its lines
	Area    rect
	EventsY int // first line of the event strip
	EventsH int // 0 when hidden
	// The shared-knowledge strip (key x) sits between the panes and the
	// events: as tall as its entries need, at most half the room.
	KnowledgeY, KnowledgeH int
	FooterY                int

	PerPage, Pages, Page int
	// Rects is every agent's pane on its own page (index = agent index).
	Rects []rect
	// Rows are the panes drawn now (the current page, or the zoomed pane).
	Rows []gridRow
	// Zoomed is the agent index drawn full-area, or -1.
	Zoomed int
}

// paneRect is where agent i is (or would be) drawn, and so the size its
// terminal should have.
func (l layout) paneRect(i int) rect {
	if l.Zoomed == i {
		return l.Area
	}
	return l.Rects[i]
}

// visible reports whether agent i is drawn now.
func (l layout) visible(i int) bool {
	for _, r := range l.Rows {
		for _, c := range r.Cells {
			if c.Agent == i {
				return true
			}
		}
	}
	return false
}

// hit returns the agent whose pane is at (x, y), or -1.
func (l layout) hit(x, y int) int {
	for _, r := range l.Rows {
		if y < r.Y || y >= r.Y+r.H {
			continue
		}
		for _, c := range r.Cells {
			if x >= c.X && x < c.X+c.W {
				return c.Agent
			}
		}
	}
	return -1
}

type layoutInput struct {
	W, H       int
	Agents     int
	Focus      int
	Zoom       bool
	Banner     int // banner lines (0: none)
	Events     bool
	EventLines int
	Knowledge  int // lines the shared-knowledge strip asks for (0: hidden)
}

func computeLayout(in layoutInput) layout {
	l := layout{W: in.W, H: in.H, BannerY: -1, Zoomed: -1, Rects: make([]rect, in.Agents)}
	if in.W < 20 || in.H < 6 {
		l.TooSmall = true
		return l
	}
	top := 1 // header
	if in.Banner > 0 {
		l.BannerY, l.BannerH = top, in.Banner
		top += in.Banner
	}
	l.FooterY = in.H - 1
	bottom := l.FooterY
	if in.Events {
		l.EventsH = min(in.EventLines, max((in.H-top-1)/3, 2))
		bottom -= l.EventsH
		l.EventsY = bottom
	}
	if in.Knowledge > 0 {
		l.KnowledgeH = min(in.Knowledge, max((bottom-top)/2, 3))
		bottom -= l.KnowledgeH
		l.KnowledgeY = bottom
	}
	l.Area = rect{X: 0, Y: top, W: in.W, H: bottom - top}
	if l.Area.H < 3 {
		l.TooSmall = true
		return l
	}
	if in.Agents == 0 {
		return l
	}

	// Panes per page: the most (up to 8) that still fit the minimum size.
	n := in.Agents
	l.PerPage = 1
	for k := min(n, maxPanes); k >= 1; k-- {
		if _, ok := gridFor(k, l.Area); ok {
			l.PerPage = k
			break
		}
	}
	l.Pages = (n + l.PerPage - 1) / l.PerPage
	// Balance the pages (10 agents → 5 + 5, not 8 + 2).
	l.PerPage = (n + l.Pages - 1) / l.Pages
	focus := min(max(in.Focus, 0), n-1)
	l.Page = focus / l.PerPage

	for p := 0; p < l.Pages; p++ {
		first := p * l.PerPage
		count := min(l.PerPage, n-first)
		rows, _ := gridFor(count, l.Area)
		for _, r := range rows {
			for ci := range r.Cells {
				r.Cells[ci].Agent += first
				c := r.Cells[ci]
				l.Rects[c.Agent] = rect{X: c.X, Y: r.Y, W: c.W, H: r.H}
			}
		}
		if p == l.Page {
			l.Rows = rows
		}
	}
	if in.Zoom {
		l.Zoomed = focus
		l.Rows = []gridRow{{Y: l.Area.Y, H: l.Area.H, Cells: []gridCell{{Agent: focus, X: 0, W: l.Area.W}}}}
	}
	return l
}

// gridFor lays out k panes in area: 1 → full, 2 → side by side, 3–4 → 2×2,
// 5–8 → 4×2 or 2×4, whichever gives panes closer to a terminal's usual
// shape. Rows share the panes evenly, so no cell is left empty. ok is false
// when the panes would be smaller than the minimum.
func gridFor(k int, area rect) (rows []gridRow, ok bool) {
	var candidates []int // column counts, preferred first
	switch {
	case k == 1:
		// One pane always fits: it gets the whole area.
		return split(1, 1, 1, area), true
	case k == 2:
		candidates = []int{2, 1}
	case k <= 4:
		candidates = []int{2, 1}
	default:
		if shapeScore(area, 4, 2) <= shapeScore(area, 2, 4) {
			candidates = []int{4, 2}
		} else {
			candidates = []int{2, 4}
		}
	}
	for _, cols := range candidates {
		nrows := (k + cols - 1) / cols
		if area.W/cols < minPaneW || area.H/nrows < minPaneH {
			continue
		}
		return split(k, cols, nrows, area), true
	}
	return nil, false
}

// shapeScore is how far panes of a cols×rows grid are from an 80×24-like
// shape (log distance; smaller is better).
func shapeScore(area rect, cols, rows int) float64 {
	w := float64(area.W) / float64(cols)
	h := float64(area.H) / float64(rows)
	return math.Abs(math.Log((w / h) / 3.0))
}

func split(k, cols, nrows int, area rect) []gridRow {
	rows := make([]gridRow, nrows)
	y := area.Y
	for r := 0; r < nrows; r++ {
		h := area.H / nrows
		if r < area.H%nrows {
			h++
		}
		// Spread k panes over the rows as evenly as possible, fuller rows first.
		count := k / nrows
		if r < k%nrows {
			count++
		}
		count = min(count, cols)
		cells := make([]gridCell, count)
		x := area.X
		first := 0
		for i := 0; i < r; i++ {
			c := k / nrows
			if i < k%nrows {
				c++
			}
			first += min(c, cols)
		}
		for c := 0; c < count; c++ {
			w := area.W / count
			if c < area.W%count {
				w++
			}
			cells[c] = gridCell{Agent: first + c, X: x, W: w}
			x += w
		}
		rows[r] = gridRow{Y: y, H: h, Cells: cells}
		y += h
	}
	return rows
}
