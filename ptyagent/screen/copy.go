package screen

import "strings"

// Copier is a screen that copies text as a user expects (Term does).
type Copier interface {
	CopyText(scroll, from, to int) string
}

// CopyText is the text of view rows from..to (inclusive; 0 is the top row
// of the view scroll lines back, as Lines(scroll) shows it; to may reach
// past the view into the rows below it) as a user copies it, like tmux's
// copy mode and capture-pane -J: a soft-wrapped row continues on the next
// one without a line break, and each line's trailing blanks are trimmed.
func (t *Term) CopyText(scroll, from, to int) string {
	if t.altOn {
		scroll = 0
	}
	hist := t.sb.len()
	scroll = max(0, min(scroll, hist))
	top := hist - scroll // absolute index of view row 0
	from = max(from+top, 0)
	to = min(to+top, hist+t.rows-1)
	var b strings.Builder
	var buf []byte // the logical line so far
	tmp := &line{c: make([]cell, t.cols)}
	for a := from; a <= to; a++ {
		l := tmp
		if a < hist {
			t.decode(t.sb.get(a), tmp, true)
		} else {
			l = t.scr[a-hist]
		}
		if l.wrapped && a < to {
			// The cells written, blanks included: the line goes on.
			for _, c := range l.c[:min(l.used, len(l.c), t.cols)] {
				buf = t.appendText(buf, c)
			}
			continue
		}
		for _, c := range l.c[:min(len(l.c), t.cols)] {
			buf = t.appendText(buf, c)
		}
		b.WriteString(strings.TrimRight(string(buf), " "))
		buf = buf[:0]
		if a < to {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
