package screen

import (
	"encoding/binary"
	"unicode/utf8"
)

// scrollback is a capped ring of encoded lines, oldest first.
//
// A line is encoded as a flags byte (bit 0: soft-wrapped), the uvarint
// count of cells used (see line.used), then runs of (uvarint style id,
// uvarint byte length, UTF-8 text), one run per style change, with
// trailing default blanks trimmed. A wide character that lost its right
// half is followed by orphanMark. Blank cells are stored as
// spaces and the right halves of wide characters are implied by their
// width, so a 120-column line of prose costs about its text length.
type scrollback struct {
	lines [][]byte
	start int // index of the oldest line once the ring is full
	max   int
}

// orphanMark follows, in an encoded line, a wide character that lost its
// right half; it is never part of UTF-8 text.
const orphanMark = 0xFF

func (s *scrollback) len() int { return len(s.lines) }

func (s *scrollback) push(b []byte) {
	if s.max <= 0 {
		return
	}
	if len(s.lines) < s.max {
		s.lines = append(s.lines, b)
		return
	}
	s.lines[s.start] = b
	s.start++
	if s.start == len(s.lines) {
		s.start = 0
	}
}

// recycled returns the buffer of the line push is about to evict, for reuse.
func (s *scrollback) recycled() []byte {
	if s.max <= 0 || len(s.lines) < s.max {
		return nil
	}
	return s.lines[s.start][:0]
}

// get returns line i, 0 being the oldest.
func (s *scrollback) get(i int) []byte {
	if i < 0 || i >= len(s.lines) {
		return nil
	}
	j := s.start + i
	if j >= len(s.lines) {
		j -= len(s.lines)
	}
	return s.lines[j]
}

// pop removes and returns the newest line.
func (s *scrollback) pop() []byte {
	n := len(s.lines)
	if n == 0 {
		return nil
	}
	if s.start == 0 {
		b := s.lines[n-1]
		s.lines = s.lines[:n-1]
		return b
	}
	// Unroll the ring so the newest line is last.
	ordered := make([][]byte, 0, n)
	for i := range n {
		ordered = append(ordered, s.get(i))
	}
	s.lines, s.start = ordered[:n-1], 0
	return ordered[n-1]
}

func (s *scrollback) clear() {
	s.lines, s.start = nil, 0
}

func isBlank(c cell) bool { return c == cell{} || c == cell{' ', 0} }

// blankEnd returns the length of c without its blank tail (cells isBlank
// reports). Most tails are cells never written (all-zero words), skipped
// four at a time.
func blankEnd(c []cell, slow bool) int {
	end := len(c)
	if wordCells && !slow {
		w := cellWords(c)
		for end >= 4 && w[end-1]|w[end-2]|w[end-3]|w[end-4] == 0 {
			end -= 4
		}
	}
	for end > 0 && isBlank(c[end-1]) {
		end--
	}
	return end
}

// asciiRun copies to out the leading cells of c that have style st and
// hold an ASCII character or a blank, as encode stores them, and returns
// how many it copied (at most len(out)).
func asciiRun(out []byte, c []cell, st uint32) int {
	if wordCells {
		return asciiRunWords(out, c, st)
	}
	return asciiRunCells(out, c, st)
}

// asciiRunWords is asciiRun on words: a cell of style st holding a rune
// below 0x80 is the word cellWord(r, st), which xor st's half makes a
// number below 0x80, so one comparison tests the style and the rune.
func asciiRunWords(out []byte, c []cell, st uint32) int {
	c = c[:min(len(c), len(out))]
	out = out[:len(c)]
	hi := cellWord(0, st)
	for k, v := range cellWords(c) {
		v ^= hi
		if v >= utf8.RuneSelf {
			return k
		}
		b := byte(v)
		if b == 0 {
			b = ' ' // never written
		}
		out[k] = b
	}
	return len(c)
}

func asciiRunCells(out []byte, c []cell, st uint32) int {
	c = c[:min(len(c), len(out))]
	out = out[:len(c)]
	for k, cc := range c {
		if cc.st != st || uint32(cc.r) >= utf8.RuneSelf {
			return k
		}
		b := byte(cc.r)
		if b == 0 {
			b = ' '
		}
		out[k] = b
	}
	return len(c)
}

// encode returns the compact form of l.
func (t *Term) encode(l *line) []byte {
	c := l.c
	end := blankEnd(c, t.slow)
	// Encoded into a scratch buffer first: appending to the line's own
	// buffer would grow it step by step.
	buf := t.encBuf[:0]
	var flags byte
	if l.wrapped {
		flags = 1
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(l.used))
	run := &t.encRun // reused: a fresh array would be zeroed on every line
	const limit = len(run) - maxComboLen - 1
	for i := 0; i < end; {
		st := c[i].st
		n := 0
		for i < end && c[i].st == st && n < limit {
			if !t.slow {
				// Most cells are ASCII or blank: copy them in a loop the
				// compiler keeps free of bounds checks.
				k := asciiRun(run[n:limit], c[i:end], st)
				n += k
				i += k
				if i >= end || c[i].st != st || n >= limit {
					break
				}
			}
			switch r := c[i].r; {
			case r > 0 && r < utf8.RuneSelf: // most cells: test first
				run[n] = byte(r)
				n++
			case r == 0:
				run[n] = ' '
				n++
			case r == contCell:
				if i == 0 || t.cellWidth(c[i-1].r) != 2 {
					run[n] = ' ' // orphaned right half
					n++
				}
			case t.cellWidth(r) == 2 && (i+1 >= len(c) || c[i+1].r != contCell):
				// A wide character whose right half was overwritten
				// (tmux keeps it): the character, then orphanMark.
				if r < contCell {
					n += copy(run[n:], t.combos[-r-2])
				} else {
					n += utf8.EncodeRune(run[n:], rune(r))
				}
				run[n] = orphanMark
				n++
			case r < contCell:
				n += copy(run[n:], t.combos[-r-2])
			default:
				n += utf8.EncodeRune(run[n:], rune(r))
			}
			i++
		}
		buf = binary.AppendUvarint(buf, uint64(st))
		buf = binary.AppendUvarint(buf, uint64(n))
		buf = append(buf, run[:n]...)
	}
	t.encBuf = buf
	out := t.sb.recycled()
	if cap(out) < len(buf) || cap(out) > 2*len(buf)+64 {
		out = make([]byte, 0, len(buf))
	}
	return append(out, buf...)
}

// lineHeader returns the cells used and the soft-wrap flag of an encoded
// line.
func lineHeader(b []byte) (used int, wrapped bool) {
	if len(b) == 0 {
		return 0, false
	}
	u, k := binary.Uvarint(b[1:])
	if k <= 0 {
		u = 0
	}
	return int(min(u, 1<<20)), b[0]&1 != 0
}

// decode fills l (already cols wide) from an encoded line; with grow, l
// is extended to hold the whole line and at least its used cells.
func (t *Term) decode(b []byte, l *line, grow bool) {
	t.clearLine(l, 0)
	if len(b) == 0 {
		return
	}
	used, wrapped := lineHeader(b)
	if grow && len(l.c) < used {
		l.c = append(l.c, make([]cell, used-len(l.c))...)
	}
	l.used, l.wrapped = min(used, len(l.c)), wrapped
	_, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return
	}
	b = b[1+k:]
	x := 0
	zwj := false
	for len(b) > 0 {
		st, k := binary.Uvarint(b)
		if k <= 0 {
			return
		}
		b = b[k:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return
		}
		text := b[k : k+int(n)]
		b = b[k+int(n):]
		for len(text) > 0 {
			if text[0] == orphanMark {
				// The wide character before has no right half.
				text = text[1:]
				if x >= 2 && l.c[x-1].r == contCell {
					x--
					l.c[x] = cell{}
				}
				continue
			}
			r, size := utf8.DecodeRune(text)
			text = text[size:]
			w := runeWidth(r)
			// After a zero-width joiner, a non-ASCII character was joined
			// to the same cell (see printRune).
			if w == 0 || (zwj && r >= utf8.RuneSelf) {
				zwj = r == 0x200D
				if x > 0 {
					t.attach(l.c, x-1, r)
				}
				continue
			}
			zwj = false
			if x+w > len(l.c) {
				if !grow {
					return
				}
				l.c = append(l.c, make([]cell, x+w-len(l.c))...)
			}
			l.c[x] = cell{r, uint32(st)}
			if r == ' ' && st == 0 {
				l.c[x].r = 0
			}
			if w == 2 {
				l.c[x+1] = cell{contCell, uint32(st)}
			}
			x += w
		}
	}
}

// attach adds a zero-width rune to the character at or left of x.
func (t *Term) attach(c []cell, x int, r rune) {
	if c[x].r == contCell && x > 0 {
		x--
	}
	base := c[x].r
	if base == contCell {
		return
	}
	if base == 0 {
		base = ' ' // tmux combines onto blank cells too
	}
	var cur string
	if base < contCell {
		cur = t.combos[-base-2]
	} else {
		cur = string(rune(base))
	}
	if len(cur)+utf8.RuneLen(r) > maxComboLen {
		return
	}
	next := cur + string(r)
	id, ok := t.comboIdx[next]
	if !ok {
		if len(t.combos) >= maxCombos {
			return
		}
		id = int32(len(t.combos))
		t.combos = append(t.combos, next)
		t.comboIdx[next] = id
	}
	c[x].r = -id - 2
}
