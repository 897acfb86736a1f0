package screen

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Lines renders the visible rows (or, with scroll > 0 on the main screen,
// a view that many lines back into the scrollback) as styled strings each
// exactly cols cells wide by ansi.StringWidth.
func (t *Term) Lines(scroll int) []string {
	out := make([]string, t.rows)
	if len(t.rcache) != t.rows {
		t.rcache = make([]rowCache, t.rows)
	}
	if t.altOn {
		scroll = 0
	}
	scroll = max(0, min(scroll, t.sb.len()))
	var buf []byte
	var tmp *line
	for y := range t.rows {
		var c []cell
		if y < scroll {
			if tmp == nil {
				tmp = &line{c: make([]cell, t.cols)}
			}
			t.decode(t.sb.get(t.sb.len()-scroll+y), tmp, false)
			c = tmp.c
		} else {
			c = t.scr[y-scroll].c
			// Unchanged rows (same cells) reuse their last rendering.
			h := hashCells(c)
			if rc := &t.rcache[y-scroll]; rc.ok && rc.hash == h && rc.n == len(c) {
				out[y] = rc.s
				continue
			}
			buf = t.renderLine(buf[:0], c, false)
			out[y] = string(buf)
			t.rcache[y-scroll] = rowCache{hash: h, n: len(c), s: out[y], ok: true}
			continue
		}
		buf = t.renderLine(buf[:0], c, false)
		out[y] = string(buf)
	}
	return out
}

// rowCache is the last rendering of a screen row and the hash of the
// cells it was made from.
type rowCache struct {
	hash uint64
	n    int
	s    string
	ok   bool
}

func hashCells(c []cell) uint64 {
	h := uint64(14695981039346656037)
	for _, cl := range c {
		h ^= uint64(uint32(cl.r)) | uint64(cl.st)<<32
		h *= 1099511628211
	}
	return h
}

// renderLine appends the styled rendering of c. Characters whose width
// x/ansi's grapheme measure disagrees with are drawn as blanks, so the
// line is exactly len(c) cells wide; plain forces that for all non-ASCII.
func (t *Term) renderLine(dst []byte, c []cell, plain bool) []byte {
	start := len(dst)
	cur := uint32(0)
	wide := false
	for x := 0; x < len(c); x++ {
		cl := c[x]
		if cl.r == contCell {
			if x > 0 && t.cellWidth(c[x-1].r) == 2 {
				continue
			}
			cl.r = 0
		}
		if cl.st != cur {
			dst = append(dst, t.styles.render(cl.st)...)
			cur = cl.st
		}
		r := cl.r
		switch {
		case r == 0:
			dst = append(dst, ' ')
			continue
		case r > 0 && r < utf8.RuneSelf:
			dst = append(dst, byte(r))
			continue
		}
		w := t.cellWidth(r)
		if w == 2 && (x+1 >= len(c) || c[x+1].r != contCell) {
			dst = append(dst, ' ')
			continue
		}
		wide = true
		switch {
		case plain:
		case r < contCell:
			if s := t.comboRender(-r - 2); s != "" {
				dst = append(dst, s...)
				continue
			}
		case renderSafe(rune(r)):
			dst = utf8.AppendRune(dst, rune(r))
			continue
		}
		for range w {
			dst = append(dst, ' ')
		}
	}
	if cur != 0 {
		dst = append(dst, "\x1b[m"...)
	}
	if wide && !plain && ansi.StringWidth(string(dst[start:])) != len(c) {
		// Neighbouring characters merged into one grapheme (regional
		// indicators, spacing marks...): draw the non-ASCII as blanks.
		return t.renderLine(dst[:start], c, true)
	}
	return dst
}

// comboRender returns how combo i is drawn, or "" to draw blanks: the full
// sequence when x/ansi measures it as wide as the cell, else the base rune
// alone when that is safe.
func (t *Term) comboRender(i int32) string {
	s := t.combos[i]
	base, _ := utf8.DecodeRuneInString(s)
	w := runeWidth(base)
	if !strings.HasSuffix(s, "\u200d") && ansi.StringWidth(s) == w {
		return s
	}
	if renderSafe(base) {
		return string(base)
	}
	return ""
}

// Text returns the visible screen as plain text, trailing spaces trimmed.
func (t *Term) Text() string {
	var b strings.Builder
	for y, l := range t.scr {
		if y > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.lineText(l.c))
	}
	return b.String()
}

func (t *Term) lineText(c []cell) string {
	var buf []byte
	for _, cl := range c {
		buf = t.appendText(buf, cl)
	}
	return strings.TrimRight(string(buf), " ")
}

// appendText appends the text of one cell: nothing for the right half of
// a wide character, a space for a blank.
func (t *Term) appendText(buf []byte, cl cell) []byte {
	switch r := cl.r; {
	case r == contCell:
	case r == 0:
		buf = append(buf, ' ')
	case r < contCell:
		buf = append(buf, t.combos[-r-2]...)
	default:
		buf = utf8.AppendRune(buf, rune(r))
	}
	return buf
}

// Size returns the screen size.
func (t *Term) Size() (int, int) { return t.cols, t.rows }

// Cursor returns the cursor position and visibility.
func (t *Term) Cursor() (int, int, bool) {
	return max(0, min(t.x, t.cols-1)), max(0, min(t.y, t.rows-1)), t.modes.CursorVisible
}

// Title returns the last OSC 0/2 title.
func (t *Term) Title() string { return t.title }

// Modes returns the private modes currently set.
func (t *Term) Modes() Modes { return t.modes }

// ScrollbackLen returns the lines held above the main screen.
func (t *Term) ScrollbackLen() int { return t.sb.len() }

// Version increases on every Write with bytes and every Resize.
func (t *Term) Version() uint64 { return t.version }

// Close stops the reply writer goroutine; the screen stays readable.
func (t *Term) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	if t.replies != nil {
		close(t.replies)
		<-t.replyDone
	}
	return nil
}
