package screen

// Resizing follows tmux 3.3a (screen_resize_cursor, screen_resize_y and
// grid_reflow), so a pane looks the same as the same program in tmux
// after a zoom, an unzoom or a terminal resize, even when the program
// does not repaint:
//
//   - Height first. A shorter main screen drops the rows below the cursor
//     (whatever they hold), then moves rows from the top into the
//     scrollback; a taller one pulls back the lines that scrolled off
//     (not those a clear pushed there), then adds blank rows.
//   - Then width. The scrollback and the main screen are reflowed: rows
//     soft-wrapped by autowrap re-join and wrap again at the new width,
//     rows ended by a hard line break stay apart, a wide character never
//     straddles two rows, and the cursor stays on the same character (or
//     at the end of its line when it was past the text).
//   - The alternate screen is cut or padded, never reflowed. While it is
//     on, the main screen keeps the size it had; leaving it applies the
//     new size to the main screen then, with its saved cursor.
//
// tmux's position arithmetic is kept as it is, quirks included (the
// scrolled-line count after a join or split, a cursor past the used cells
// going to the end of the line), because the point is to match it.

// Resize changes the screen size.
func (t *Term) Resize(cols, rows int) {
	if cols < 1 || rows < 1 || t.closed || (cols == t.cols && rows == t.rows) {
		return
	}
	t.version++
	defer func() {
		if r := recover(); r != nil {
			t.panics++
			t.clampCursor()
		}
	}()
	// tmux's cursor column: past the last one while a wrap is pending.
	cx, cy := t.x, t.y
	if t.wrapNext {
		cx = t.cols
		if p := t.past; p.set && p.x == t.x && p.y == t.y && p.alt == t.altOn {
			cx = max(cx, p.cx)
		}
	}
	if t.altOn {
		for _, l := range t.alt {
			fitAlt(l, cols)
		}
		t.alt, cy = t.cutRows(t.alt, rows, cy, cols)
		t.scr = t.alt
	} else {
		cx, cy = t.resizeMain(cols, rows, cx, cy)
		t.scr = t.main
	}
	if rows != t.rows {
		t.top, t.bot = 0, rows-1
	}
	t.rows = rows
	if cols != t.cols {
		t.cols = cols
		t.resetTabs()
	}
	t.placeCursor(cx, cy)
	// Without reflow tmux keeps a column past the edge as it is: remember
	// it for a resize that follows before the cursor moves.
	t.past = pastCursor{x: t.x, y: t.y, cx: cx, alt: t.altOn, set: true}
}

// pastCursor is where a resize left the cursor: tmux's column cx, which
// may lie past the right edge, and the cursor it became here.
type pastCursor struct {
	x, y, cx int
	alt, set bool
}

// placeCursor sets the cursor from tmux's coordinates, where a column at
// or past the right edge is a pending wrap.
func (t *Term) placeCursor(cx, cy int) {
	t.y = cy
	t.x, t.wrapNext = max(cx, 0), false
	if cx >= t.cols {
		t.x, t.wrapNext = t.cols-1, true
	}
	t.clampCursor()
}

// leaveAlt puts the main screen back after the alternate screen, at the
// size the terminal has now; cx, cy is the cursor tmux uses for it (the
// one saved by ?1049, or the alternate screen's) and the result is the
// cursor on the main screen.
func (t *Term) leaveAlt(saved bool, cx, cy int) (int, int) {
	mainCols, mainRows := len(t.main[0].c), len(t.main)
	if !saved && mainRows < t.rows {
		// tmux first shrinks the alternate screen back to the main
		// screen's height, which moves its cursor.
		_, above := shrinkRows(t.rows, t.rows-mainRows, cy)
		cy -= above
	}
	cy = max(0, min(cy, mainRows-1))
	if mainCols != t.cols || mainRows != t.rows {
		cx, cy = t.resizeMain(t.cols, t.rows, cx, cy)
		if mainRows != t.rows {
			t.top, t.bot = 0, t.rows-1
		}
	}
	return cx, cy
}

// dropBelow drops the last n rows, which ends the soft wrap of the row
// above them (tmux's grid_clear_lines).
func dropBelow(ls []*line, n int) []*line {
	if n <= 0 {
		return ls
	}
	ls = ls[:len(ls)-n]
	ls[len(ls)-1].wrapped = false
	return ls
}

// shrinkRows returns how many of n rows losing d are taken below the
// cursor row cy (tmux deletes those first) and how many from the top.
func shrinkRows(n, d, cy int) (below, above int) {
	below = max(0, min(d, n-1-cy))
	return below, d - below
}

// cutRows changes the number of rows of a screen without scrollback (the
// alternate screen) as tmux does, and returns the cursor row.
func (t *Term) cutRows(ls []*line, rows, cy, cols int) ([]*line, int) {
	if d := len(ls) - rows; d > 0 {
		below, above := shrinkRows(len(ls), d, cy)
		ls = dropBelow(ls, below)
		if above > 0 {
			// tmux deletes them with grid_move_lines: the scrollback's
			// newest line no longer continues onto the screen.
			t.unwrapAbove(0)
		}
		ls = ls[above:]
		cy -= above
	}
	out := make([]*line, 0, rows)
	out = append(out, ls...)
	for len(out) < rows {
		out = append(out, &line{c: make([]cell, cols)})
	}
	return out, cy
}

// fitAlt cuts or pads a row of the alternate screen to cols cells. As in
// tmux, the cells cut stay in the row, hidden, and come back when the
// screen grows again, unless the row was cleared whole in between; its
// used cells are left as they are.
func fitAlt(l *line, cols int) {
	if cols <= cap(l.c) {
		l.c = l.c[:cols]
		return
	}
	nc := make([]cell, cols)
	copy(nc, l.c[:cap(l.c)])
	l.c = nc
}

// fitLine cuts or pads l to cols cells, without reflow.
func (t *Term) fitLine(l *line, cols int) {
	switch {
	case cols < len(l.c):
		l.c = l.c[:cols:cols]
	case cols > len(l.c):
		nc := make([]cell, cols)
		copy(nc, l.c)
		l.c = nc
	}
	if last := l.c[cols-1].r; last != contCell && t.cellWidth(last) == 2 {
		l.c[cols-1].r = 0 // a wide character without room for its right half
	}
	l.used = min(l.used, cols)
}

// resizeMain resizes the main screen (whatever size it has) to cols x
// rows, height first then width with reflow, and returns the cursor.
func (t *Term) resizeMain(cols, rows, cx, cy int) (int, int) {
	ls := t.main
	oldCols := len(ls[0].c)
	switch d := len(ls) - rows; {
	case d > 0 && t.sb.max > 0:
		below, above := shrinkRows(len(ls), d, cy)
		ls = dropBelow(ls, below)
		for _, l := range ls[:above] {
			t.sb.push(t.encode(l))
		}
		t.hscrolled = min(t.hscrolled+above, t.sb.len())
		ls = ls[above:]
		cy -= above
	case d > 0:
		ls, cy = t.cutRows(ls, rows, cy, oldCols)
	case d < 0:
		pull := min(-d, t.hscrolled, t.sb.len())
		back := make([]*line, pull, rows)
		for i := pull - 1; i >= 0; i-- {
			back[i] = &line{c: make([]cell, oldCols)}
			t.decode(t.sb.pop(), back[i], false)
		}
		t.hscrolled -= pull
		cy += pull
		ls = append(back, ls...)
		for len(ls) < rows {
			ls = append(ls, &line{c: make([]cell, oldCols)})
		}
	}
	if cols == oldCols {
		t.main = append([]*line(nil), ls...)
		return cx, cy
	}
	return t.reflow(ls, cols, cx, cy)
}

// rrow is a row being reflowed: still encoded (a scrollback line not yet
// touched) or decoded. used and wrapped are authoritative while reflowing.
type rrow struct {
	enc     []byte
	l       *line
	used    int
	wrapped bool
	dead    bool // consumed by a join (tmux's GRID_LINE_DEAD)
}

// reflower rewraps the scrollback and the main screen to sx columns: a
// port of tmux's grid_reflow.
type reflower struct {
	t   *Term
	sx  int
	src []rrow
	dst []rrow
	hs  int // tmux's hscrolled, adjusted as tmux does
}

// reflow rewraps the scrollback and the screen rows scr to width sx, puts
// the results back into t.sb and t.main, and returns the cursor.
func (t *Term) reflow(scr []*line, sx, cx, cy int) (int, int) {
	rows := len(scr)
	n := t.sb.len()
	r := &reflower{t: t, sx: sx, src: make([]rrow, 0, n+rows), dst: make([]rrow, 0, n+rows), hs: t.hscrolled}
	for i := range n {
		b := t.sb.get(i)
		used, wrapped := lineHeader(b)
		r.src = append(r.src, rrow{enc: b, used: used, wrapped: wrapped})
	}
	for _, l := range scr {
		r.src = append(r.src, rrow{l: l, used: l.used, wrapped: l.wrapped})
	}

	// The cursor as a position in its unwrapped line (grid_wrap_position).
	py := n + cy
	wx, wy := 0, 0
	for _, s := range r.src[:py] {
		if s.wrapped {
			wx += s.used
		} else {
			wx, wy = 0, wy+1
		}
	}
	if cx >= r.src[py].used {
		wx = -1 // past the text: the end of the line
	} else {
		wx += cx
	}

	r.run()
	dst := r.dst
	for len(dst) < rows {
		dst = append(dst, rrow{l: &line{c: make([]cell, sx)}})
	}
	hsize := len(dst) - rows

	// Back from the unwrapped position (grid_unwrap_position).
	yy, ay := 0, 0
	for ; yy < len(dst)-1; yy++ {
		if ay == wy {
			break
		}
		if !dst[yy].wrapped {
			ay++
		}
	}
	if wx < 0 {
		for dst[yy].wrapped && yy < len(dst)-1 {
			yy++
		}
		wx = dst[yy].used
	} else {
		for dst[yy].wrapped && yy < len(dst)-1 && wx >= dst[yy].used {
			wx -= dst[yy].used
			yy++
		}
	}
	cx, cy = 0, 0
	if yy >= hsize {
		cx, cy = wx, yy-hsize
	}

	// The screen rows first: the scrollback is rebuilt from buffers the
	// encoded rows still point into.
	main := make([]*line, rows)
	for i := range rows {
		main[i] = t.screenLine(dst[hsize+i], sx)
	}
	t.sb.clear()
	for i := range hsize {
		d := &dst[i]
		if d.enc != nil {
			t.sb.push(d.enc)
			continue
		}
		d.l.used, d.l.wrapped = d.used, d.wrapped
		t.sb.push(t.encode(d.l))
	}
	t.main = main
	t.hscrolled = min(r.hs, hsize, t.sb.len())
	return cx, cy
}

// screenLine returns row d as a screen row of cols cells.
func (t *Term) screenLine(d rrow, cols int) *line {
	if d.enc != nil {
		l := &line{c: make([]cell, cols)}
		t.decode(d.enc, l, false)
		return l
	}
	l := d.l
	l.used, l.wrapped = d.used, d.wrapped
	t.fitLine(l, cols)
	return l
}

// cells returns the cells of w, decoding it first if needed.
func (r *reflower) cells(w *rrow) []cell {
	if w.l == nil {
		w.l = &line{}
		r.t.decode(w.enc, w.l, true)
		w.enc = nil
	}
	return w.l.c
}

// set writes c at column x of w (x at most its used cells).
func (r *reflower) set(w *rrow, x int, c cell) {
	l := w.l
	if x < len(l.c) {
		l.c[x] = c
	} else {
		l.c = append(l.c, c)
	}
	w.used = max(w.used, x+1)
}

// width is how many columns cell i of c takes in a reflow, counted as
// tmux counts them: 2 for a wide character (even one whose right half was
// overwritten), 0 for a right half, 1 for anything else.
func (r *reflower) width(c []cell, i int) int {
	switch v := c[i].r; {
	case v == contCell:
		return 0
	case v != 0 && r.t.cellWidth(v) == 2:
		return 2
	}
	return 1
}

func (r *reflower) move(yy int) {
	r.dst = append(r.dst, r.src[yy])
	r.src[yy].dead = true
}

// run is tmux's grid_reflow loop over the source rows.
func (r *reflower) run() {
	for yy := range r.src {
		g := &r.src[yy]
		if g.dead {
			continue
		}
		// A row that is not wrapped and fits moves across unchanged:
		// most of the scrollback, without decoding it.
		if g.enc != nil && (g.used == r.sx || (!g.wrapped && g.used < r.sx)) {
			r.move(yy)
			continue
		}
		c := r.cells(g)
		width, at := 0, 0
		for i := range g.used {
			w := r.width(c, i)
			if at == 0 && width+w > r.sx {
				at = i
			}
			width += w
		}
		switch {
		case width == r.sx:
			r.move(yy)
		case width > r.sx:
			r.split(yy, at)
		case g.wrapped:
			r.join(yy, width, false)
		default:
			r.move(yy)
		}
	}
}

// split is tmux's grid_reflow_split: row yy is wider than sx and is cut
// into as many rows as it needs.
func (r *reflower) split(yy, at int) {
	g := &r.src[yy]
	c := g.l.c
	used, wrapped := g.used, g.wrapped
	lines, width := 2, 0
	for i := at; i < used; i++ {
		w := r.width(c, i)
		if width+w > r.sx {
			lines++
			width = 0
		}
		width += w
	}
	first := len(r.dst)
	for range lines {
		r.dst = append(r.dst, rrow{l: &line{}})
	}
	ln, xx := first+1, 0
	width = 0
	for i := at; i < used; i++ {
		w := r.width(c, i)
		if width+w > r.sx {
			r.dst[ln].wrapped = true
			ln++
			width, xx = 0, 0
		}
		width += w
		r.set(&r.dst[ln], xx, c[i])
		xx++
	}
	if wrapped {
		r.dst[ln].wrapped = true
	}
	g.l.c = c[:at:at]
	g.used, g.wrapped = at, true
	r.dst[first] = *g
	g.dead = true
	if yy <= r.hs {
		r.hs += lines - 1
	}
	if width < r.sx && wrapped {
		r.join(yy, width, true)
	}
}

// join is tmux's grid_reflow_join: as much of the rows after yy as fits
// is pulled onto the target row (a new copy of yy, or with already the
// last row written).
func (r *reflower) join(yy, width int, already bool) {
	to := len(r.dst) - 1
	if !already {
		r.move(yy)
		to = len(r.dst) - 1
	}
	gl := &r.dst[to]
	r.cells(gl)
	at := gl.used
	lines, want, wrapped := 0, 0, true
	var from *rrow
	for yy+1+lines < len(r.src) {
		ln := &r.src[yy+1+lines]
		if !ln.wrapped {
			wrapped = false
		}
		if ln.used == 0 {
			if !wrapped {
				break
			}
			lines++
			continue
		}
		fc := r.cells(ln)
		w := r.width(fc, 0)
		if width+w > r.sx {
			break
		}
		width += w
		r.set(gl, at, fc[0])
		at++
		from = ln
		for want = 1; want < from.used; want++ {
			w := r.width(fc, want)
			if width+w > r.sx {
				break
			}
			width += w
			r.set(gl, at, fc[want])
			at++
		}
		lines++
		if !wrapped || want != from.used || width == r.sx {
			break
		}
	}
	if lines == 0 {
		return
	}
	left := 0
	if from != nil {
		left = from.used - want
	}
	if left != 0 {
		fc := from.l.c
		copy(fc, fc[want:from.used])
		from.l.c = fc[:left:left]
		from.used = left
		lines--
	} else if !wrapped {
		gl.wrapped = false
	}
	for i := yy + 1; i < yy+1+lines; i++ {
		r.src[i] = rrow{dead: true}
	}
	if r.hs > to+lines {
		r.hs -= lines
	} else if r.hs > to {
		r.hs = to
	}
}
