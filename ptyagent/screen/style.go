package screen

import (
	"strconv"

	"github.com/charmbracelet/x/ansi"
)

// color is a compact SGR colour: 0 is the default, colIndexed|n an indexed
// colour (0-255), colRGB|0xRRGGBB a true colour.
type color uint32

const (
	colIndexed color = 1 << 24
	colRGB     color = 2 << 24
)

// Attribute bits of a style; the underline style (0-5) sits at ulShift.
const (
	atBold uint16 = 1 << iota
	atFaint
	atItalic
	atBlink
	atRapidBlink
	atReverse
	atConceal
	atStrike
	atOverline
	ulShift = 10
	ulMask  = 7 << ulShift
)

// style is the full rendition of a cell. Cells hold an interned id.
type style struct {
	fg, bg, ul color
	attrs      uint16
	link       uint32 // interned OSC 8 target, 0 for none
}

// maxStyles bounds the style table. Past it, new styles lose their colours
// (attributes are kept) so hostile input cannot grow memory without limit.
const maxStyles = 1 << 18

// styleTable interns styles; id 0 is the default style.
type styleTable struct {
	ids    map[style]uint32
	styles []style
	sgr    []string // rendered SGR per id, built lazily
}

func newStyleTable() styleTable {
	return styleTable{
		ids:    map[style]uint32{{}: 0},
		styles: []style{{}},
		sgr:    []string{""},
	}
}

func (t *styleTable) intern(s style) uint32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	if len(t.styles) >= maxStyles {
		s = style{attrs: s.attrs, link: s.link}
		if id, ok := t.ids[s]; ok {
			return id
		}
		s.link = 0
		if id, ok := t.ids[s]; ok {
			return id
		}
		return 0
	}
	id := uint32(len(t.styles))
	t.ids[s] = id
	t.styles = append(t.styles, s)
	t.sgr = append(t.sgr, "")
	return id
}

// render returns the SGR sequence that sets style id from a reset state.
func (t *styleTable) render(id uint32) string {
	if id == 0 {
		return "\x1b[m"
	}
	if s := t.sgr[id]; s != "" {
		return s
	}
	st := t.styles[id]
	b := []byte("\x1b[0")
	a := st.attrs
	for i, code := range []string{"1", "2", "3", "5", "6", "7", "8", "9", "53"} {
		if a&(1<<i) != 0 {
			b = append(b, ';')
			b = append(b, code...)
		}
	}
	switch u := (a & ulMask) >> ulShift; u {
	case 0:
	case 1:
		b = append(b, ";4"...)
	default:
		b = append(b, ";4:"...)
		b = strconv.AppendUint(b, uint64(u), 10)
	}
	b = appendColor(b, st.fg, 30, 90, "38")
	b = appendColor(b, st.bg, 40, 100, "48")
	if st.ul != 0 {
		b = appendColor(b, st.ul, -1, -1, "58")
	}
	b = append(b, 'm')
	t.sgr[id] = string(b)
	return t.sgr[id]
}

func appendColor(b []byte, c color, base, bright int, ext string) []byte {
	switch c & 0xFF000000 {
	case colIndexed:
		n := int(c & 0xFF)
		switch {
		case n < 8 && base >= 0:
			b = append(b, ';')
			return strconv.AppendInt(b, int64(base+n), 10)
		case n < 16 && bright >= 0:
			b = append(b, ';')
			return strconv.AppendInt(b, int64(bright+n-8), 10)
		}
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";5;"...)
		return strconv.AppendInt(b, int64(n), 10)
	case colRGB:
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";2;"...)
		b = strconv.AppendInt(b, int64(c>>16&0xFF), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(c>>8&0xFF), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(c&0xFF), 10)
	}
	return b
}

// sgr applies an SGR sequence to the pen.
func (s *style) sgr(params ansi.Params) {
	if len(params) == 0 {
		*s = style{link: s.link}
		return
	}
	for i := 0; i < len(params); i++ {
		p := params[i].Param(0)
		switch p {
		case 0:
			*s = style{link: s.link}
		case 1:
			s.attrs |= atBold
		case 2:
			s.attrs |= atFaint
		case 3:
			s.attrs |= atItalic
		case 4:
			u := uint16(1)
			if params[i].HasMore() && i+1 < len(params) {
				i++
				u = uint16(min(max(params[i].Param(1), 0), 5))
				for params[i].HasMore() && i+1 < len(params) {
					i++
				}
			}
			s.attrs = s.attrs&^ulMask | u<<ulShift
		case 5:
			s.attrs |= atBlink
		case 6:
			s.attrs |= atBlink // tmux keeps rapid blink as blink
		case 7:
			s.attrs |= atReverse
		case 8:
			s.attrs |= atConceal
		case 9:
			s.attrs |= atStrike
		case 21:
			s.attrs = s.attrs&^ulMask | 2<<ulShift
		case 22:
			s.attrs &^= atBold | atFaint
		case 23:
			s.attrs &^= atItalic
		case 24:
			s.attrs &^= ulMask
		case 25:
			s.attrs &^= atBlink | atRapidBlink
		case 27:
			s.attrs &^= atReverse
		case 28:
			s.attrs &^= atConceal
		case 29:
			s.attrs &^= atStrike
		case 30, 31, 32, 33, 34, 35, 36, 37:
			s.fg = colIndexed | color(p-30)
		case 38, 48, 58:
			var c color
			var ok bool
			c, i, ok = extColor(params, i)
			if ok {
				switch p {
				case 38:
					s.fg = c
				case 48:
					s.bg = c
				default:
					s.ul = c
				}
			}
		case 39:
			s.fg = 0
		case 40, 41, 42, 43, 44, 45, 46, 47:
			s.bg = colIndexed | color(p-40)
		case 49:
			s.bg = 0
		case 53:
			s.attrs |= atOverline
		case 55:
			s.attrs &^= atOverline
		case 59:
			s.ul = 0
		case 90, 91, 92, 93, 94, 95, 96, 97:
			s.fg = colIndexed | color(p-90+8)
		case 100, 101, 102, 103, 104, 105, 106, 107:
			s.bg = colIndexed | color(p-100+8)
		default:
			// Unknown: skip its sub-parameters.
			for params[i].HasMore() && i+1 < len(params) {
				i++
			}
		}
	}
}

// extColor parses the colour after 38/48/58 at params[i], in both the
// ';' form (38;5;n, 38;2;r;g;b) and the ':' form (38:5:n, 38:2:[cs]:r:g:b).
// It returns the index of the last parameter consumed.
func extColor(params ansi.Params, i int) (color, int, bool) {
	if params[i].HasMore() {
		// Colon form: gather the sub-parameters.
		j := i + 1
		var sub []int
		for j < len(params) {
			sub = append(sub, params[j].Param(-1))
			if !params[j].HasMore() {
				break
			}
			j++
		}
		last := min(j, len(params)-1)
		if len(sub) == 0 {
			return 0, last, false
		}
		switch sub[0] {
		case 5:
			if len(sub) >= 2 && sub[1] >= 0 {
				return colIndexed | color(sub[1]&0xFF), last, true
			}
		case 2:
			rgb := sub[1:]
			if len(rgb) >= 4 {
				rgb = rgb[1:] // colour space id
			}
			if len(rgb) >= 3 {
				return colRGB | color(clamp8(rgb[0])<<16|clamp8(rgb[1])<<8|clamp8(rgb[2])), last, true
			}
		}
		return 0, last, false
	}
	if i+1 >= len(params) {
		return 0, i, false
	}
	switch params[i+1].Param(0) {
	case 5:
		if i+2 < len(params) {
			return colIndexed | color(params[i+2].Param(0)&0xFF), i + 2, true
		}
		return 0, len(params) - 1, false
	case 2:
		if i+4 < len(params) {
			r, g, b := params[i+2].Param(0), params[i+3].Param(0), params[i+4].Param(0)
			return colRGB | color(clamp8(r)<<16|clamp8(g)<<8|clamp8(b)), i + 4, true
		}
		return 0, len(params) - 1, false
	}
	return 0, i + 1, false
}

func clamp8(v int) int { return min(max(v, 0), 255) }
