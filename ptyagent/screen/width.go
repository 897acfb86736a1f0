package screen

import (
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Per-rune widths follow wcwidth semantics (one cell per codepoint, zero
// for marks and format characters, two for East Asian wide and emoji), as
// tmux does, measured with x/ansi's WcWidth tables.
//
// wtab holds, for the BMP and the SMP, the width in bits 0-1 and in bit 2
// whether the rune drawn alone is measured differently by x/ansi's grapheme
// width (StringWidth), which the TUI uses for layout: such runes are drawn
// as blanks so rendered lines always measure exactly cols.
var (
	wtab     [0x20000]uint8
	wtabOnce sync.Once
)

const wUnsafe = 4

func initWidths() {
	wtabOnce.Do(func() {
		var buf [4]byte
		for r := rune(0); r < 0x20000; r++ {
			switch {
			case r >= 0x20 && r < 0x7f:
				wtab[r] = 1
				continue
			case r < 0xa0, r >= 0xD800 && r < 0xE000:
				wtab[r] = wUnsafe // controls, surrogates: never stored
				continue
			}
			n := utf8.EncodeRune(buf[:], r)
			s := string(buf[:n])
			w := ansi.StringWidthWc(s)
			v := uint8(w)
			if w > 0 && ansi.StringWidth(s) != w {
				v |= wUnsafe
			}
			wtab[r] = v
		}
	})
}

// runeWidth returns the cells r advances the cursor (0, 1 or 2).
func runeWidth(r rune) int {
	if r < 0x20000 {
		return int(wtab[r] & 3)
	}
	switch {
	case r >= 0x20000 && r <= 0x3FFFD:
		return 2
	case r >= 0xE0000 && r <= 0xE0FFF:
		return 0
	}
	return 1
}

// renderSafe reports whether r drawn alone measures runeWidth(r) cells
// with ansi.StringWidth.
func renderSafe(r rune) bool {
	if r < 0x20000 {
		return wtab[r]&wUnsafe == 0
	}
	return r <= 0x3FFFD
}
