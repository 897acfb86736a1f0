package screen

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// tmuxCases are edge cases of the sequence set, each compared with tmux on
// a 20x6 pane (text, cursor, alternate screen).
var tmuxCases = []struct{ name, in string }{
	{"wide-last-column", "123456789012345678日本x"},
	{"wide-overwrite-halves", "日本語\x1b[1;2Hab\x1b[2;1H日本\x1b[2;4Hc"},
	{"wide-overwrite-left-half", "日本語\x1b[1;3Hab\x1b[2;1H日本\x1b[2;3Hc"},
	{"pending-wrap-lf", "12345678901234567890\nx"},
	{"pending-wrap-bs", "12345678901234567890\bx"},
	{"pending-wrap-el", "12345678901234567890\x1b[Kx"},
	{"pending-wrap-cr", "12345678901234567890\rx"},
	{"pending-wrap-cuf", "12345678901234567890\x1b[Cx"},
	{"pending-wrap-tab", "12345678901234567890\tx"},
	{"tabs", "a\tb\tc\x1b[3g\x1b[5G\x1bH\r\td\x1b[2I|\x1b[Z<"}, // tmux ignores CHT
	{"tab-last-column", "\x1b[19Ga\tb\tc"},
	{"insert-mode", "abcdef\x1b[3G\x1b[4hXY\x1b[4lZ"},
	{"ich-dch-ech", "abcdefghij\x1b[3G\x1b[2@\x1b[8G\x1b[3P\x1b[1G\x1b[2X"},
	{"il-dl-cursor-x", "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4H\x1b[LA\x1b[4;3H\x1b[2MB"},
	{"il-outside-region", "1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[2;3r\x1b[5;2H\x1b[LX"},
	{"region-scroll", "a\r\nb\r\nc\r\nd\r\ne\r\nf\x1b[2;4r\x1b[4;1H\n\nX\x1b[r"},
	{"region-taller-than-screen", "a\r\nb\r\nc\x1b[2;60r\x1b[2S\x1b[1T\x1b[3;1H\x1b[2L\x1b[M"},
	{"su-sd", "a\r\nb\r\nc\r\nd\r\ne\r\nf\x1b[2S\x1b[1T"},
	{"ri-at-top", "a\r\nb\x1b[H\x1bM\x1bMx"},
	{"cuu-cud-in-region", "\x1b[2;4r\x1b[3;1H\x1b[9Aa\x1b[9Bb\x1b[6;1H\x1b[9Ac"},
	{"origin-mode", "\x1b[2;4r\x1b[?6h\x1b[1;1Ha\x1b[9;1Hb\x1b[?6l\x1b[r"},
	{"decsc-decrc", "ab\x1b7\x1b[4;5Hcd\x1b8ef"},
	{"alt-1049", "main\x1b[?1049h\x1b[2;2Halt\x1b[?1049lX"},
	{"alt-47", "main\x1b[?47h\x1b[2;2Halt\x1b[?47lX"},
	{"alt-1047-decsc", "main\x1b7\x1b[?1047h\x1b[3;3Halt\x1b8Y\x1b[?1047lX"},
	{"rep", "ab\x1b[3b\r\n日\x1b[2b\r\nx\x1b[99b\r\ny\x1b[1Cz\x1b[2b"},
	{"combining-start", "\u0301a\u0301\r\n\x1b[20Ge\u0301x"},
	{"vs16-zwj", "✔\ufe0f|❤\ufe0f|👨\u200d👩|🇩🇪|x"},
	{"zwj-pending-across-ascii", "a\u200db|é\r\n日\u200d\u0301x|ab\u200d"},
	{"zwj-cell-full", "xx👨\u200d👩\u200d👧\u200d👦|"},
	{"combining-overflow", "e\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301|"},
	{"zwj-chain", "👨\u200d👩\u200d👧|\u200dx|a\u200db|é\u200d日|日\u200d\u0301x|👨\u200dx|日\u200d"},
	{"autowrap-off", "\x1b[?7l12345678901234567890abc\x1b[?7h\r\nok"},
	{"erase-display", "aaaa\r\nbbbb\r\ncccc\x1b[2;2H\x1b[1J\x1b[3;3H\x1b[0J"},
	{"el-modes", "abcdefgh\x1b[4G\x1b[1K\r\nabcdefgh\x1b[4G\x1b[2K"},
	{"cup-clamp", "\x1b[99;99Hx\x1b[0;0Hy"},
	{"cha-vpa-hpr-vpr", "\x1b[5Ga\x1b[3db\x1b[2ac\x1b[2ed"}, // tmux ignores HPR/VPR
	{"cnl-cpl", "\x1b[3;5Ha\x1b[Eb\x1b[2Fc"},
	{"dec-graphics", "\x1b(0lqqk\x1b(Bx"},
	{"c1-and-invalid", "a\x9bb\xffc\xc3(d\x1b]0;t\x9c✳e"},
	{"osc-unterminated-then-esc", "a\x1b]0;title\x1b[31mb"},
	{"can-in-csi", "a\x1b[3\x18Bb"},
	{"lf-scrolls-into-history", "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n9"},
	{"ris", "abc\x1b[?1049h\x1bcX"},
	{"decaln", "\x1b#8\x1b[3;3Hx"},
	{"cursor-hidden", "\x1b[?25lab"},
}

// knownDiffs are the documented differences from tmux 3.3a, by case.
var knownDiffs = map[string]string{
	"dec-graphics": "capture-pane -p prints tmux's line-drawing cells as their ASCII codes (lqqk); Hivemind stores the Unicode box characters (┌──┐), which is what both display",
}

// TestDiffTmuxCases compares edge cases with tmux.
func TestDiffTmuxCases(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	const cols, rows = 20, 6
	for _, tc := range tmuxCases {
		t.Run(tc.name, func(t *testing.T) {
			if why := knownDiffs[tc.name]; why != "" {
				t.Skip("documented difference: " + why)
			}
			t.Parallel()
			want, wx, wy, walt := tmuxScreen(t, []byte(tc.in), cols, rows)
			s := New(Options{Cols: cols, Rows: rows})
			defer func() { _ = s.Close() }()
			write(s, tc.in)
			gx, gy, _ := s.Cursor()
			wr, gr := normRows(want, rows), normRows(s.Text(), rows)
			var diffs []string
			for i := range rows {
				if wr[i] != gr[i] {
					diffs = append(diffs, fmt.Sprintf("row %d: tmux %q, ours %q", i, wr[i], gr[i]))
				}
			}
			if len(diffs) > 0 {
				t.Errorf("rows differ from tmux:\n%s", strings.Join(diffs, "\n"))
			}
			if gx != wx || gy != wy {
				t.Errorf("cursor (%d,%d), tmux (%d,%d)", gx, gy, wx, wy)
			}
			if alt := s.Modes().AltScreen; alt != walt {
				t.Errorf("alternate screen %v, tmux %v", alt, walt)
			}
		})
	}
}
