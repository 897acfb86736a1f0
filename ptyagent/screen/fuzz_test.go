package screen

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

// FuzzScreenWrite feeds random escape-heavy bytes and asserts no panic
// (not even one contained by Write's recover), the same state with the
// fast paths off (Term.slow), Lines has rows entries each
// exactly cols wide by ansi.StringWidth, and the cursor is on the screen.
// The first bytes choose the size and chunking; the bytes after them are
// pairs of sizes the screen is resized to between chunks (reflow).
func FuzzScreenWrite(f *testing.F) {
	seeds := []string{
		"\x1b]0;✳ Claude Code\x07",
		"\x1b[1;50r\x1b[3S\x1b[2T\x1b[4L\x1b[3M",
		"日本語🎉e\u0301\u200d👩🇩🇪✔\ufe0f\x1b[5b\x1b[?1049hx\x1b[?1049l",
		"\x1b[38:2::1:2:3m\x1b[4:3m\x1b[58;5;3mx\x1b[0m\x1b[48;2;1;2m",
		"\x1b[?6h\x1b[5;10r\x1b[H\x1b[99B\x1b[6n\x1b[c\x1b7\x1b[r\x1b8",
		"abc\tdef\x1b[3g\x1bH\x1b[Z\x1b[I\x08\x08\x1b[2@\x1b[3P\x1b[4X",
		"\x1bPq#0;2;0;0;0\x1b\\\x1b_Gf=1;\x9c\x1b^x\x07\x1bXy\x18",
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b(0lqk\x1b(B",
		"\x1b[?7lwrap off wrap off wrap off\x1b[?7h\x1b[4hins\x1b[4l",
	}
	data, segs := workload.Generate(workload.Options{Seed: 3, Size: 64 << 10, Cols: 30, Rows: 8})
	for _, s := range segs[:min(len(segs), 12)] {
		seeds = append(seeds, string(data[s.Start:min(s.End, s.Start+4096)]))
	}
	for _, s := range seeds {
		f.Add([]byte{12, 5, 7, 3}, []byte(s))
		f.Add([]byte{12, 5, 7, 3, 5, 3, 30, 9, 2, 11, 20, 2}, []byte(s))
	}
	f.Fuzz(func(t *testing.T, ctl []byte, in []byte) {
		get := func(i int, def byte) int {
			if i < len(ctl) {
				return int(ctl[i])
			}
			return int(def)
		}
		cols, rows := 1+get(0, 12)%40, 1+get(1, 5)%12
		chunk := 1 + get(2, 7)%64
		opts := Options{Cols: cols, Rows: rows, Scrollback: 1 + get(3, 3)%50}
		s, ref := newTerm(opts), newTerm(opts)
		ref.slow = true // no fast paths
		defer func() { _ = s.Close() }()
		resizes := ctl[min(len(ctl), 4):]
		for i := 0; i < len(in); i += chunk {
			var size []byte
			if j := i / chunk; j%2 == 1 && j+1 < len(resizes) {
				size = resizes[j-1 : j+1] // pair j/2
			}
			for _, tm := range []*Term{s, ref} {
				_, _ = tm.Write(in[i:min(i+chunk, len(in))])
				if size != nil {
					tm.Resize(1+int(size[0])%40, 1+int(size[1])%12)
				}
			}
		}
		if err := sameTerm(s, ref); err != nil {
			t.Fatalf("fast paths differ from the general ones: %v", err)
		}
		cols, rows = s.Size()
		for _, scroll := range []int{0, 1, s.ScrollbackLen()} {
			lines := s.Lines(scroll)
			if len(lines) != rows {
				t.Fatalf("Lines(%d): %d lines, want %d", scroll, len(lines), rows)
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != cols {
					t.Fatalf("Lines(%d)[%d] is %d wide, want %d: %q", scroll, i, w, cols, l)
				}
			}
		}
		if x, y, _ := s.Cursor(); x < 0 || x >= cols || y < 0 || y >= rows {
			t.Fatalf("cursor (%d,%d) outside %dx%d", x, y, cols, rows)
		}
		if s.x < 0 || s.x >= cols || s.y < 0 || s.y >= rows || s.top < 0 || s.bot >= rows || s.top > s.bot {
			t.Fatalf("internal state x=%d y=%d region=%d..%d for %dx%d", s.x, s.y, s.top, s.bot, cols, rows)
		}
		_ = s.Text()
	})
}
