package screen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// randomOps builds a random sequence of the operations agents use, on a
// small screen where every edge is hit often.
func randomOps(seed uint64, n, cols, rows int) string {
	r := rand.New(rand.NewPCG(seed, 42))
	var b strings.Builder
	texts := []string{"a", "hello", "日本", "x\u0301", "🎉", "✳", "tab\tx", "wide語end", "é", "❤\ufe0f", "👨\u200d👩"}
	for range n {
		switch r.IntN(26) {
		case 0, 1, 2, 3, 4:
			b.WriteString(texts[r.IntN(len(texts))])
		case 5:
			b.WriteString(strings.Repeat("z", r.IntN(2*cols)))
		case 6:
			b.WriteString("\r\n")
		case 7:
			b.WriteString([]string{"\r", "\n", "\b", "\t"}[r.IntN(4)])
		case 8:
			fmt.Fprintf(&b, "\x1b[%d;%dH", r.IntN(rows+2), r.IntN(cols+2))
		case 9:
			fmt.Fprintf(&b, "\x1b[%d%c", r.IntN(4), "ABCDGd"[r.IntN(6)])
		case 10:
			fmt.Fprintf(&b, "\x1b[%dK", r.IntN(3))
		case 11:
			fmt.Fprintf(&b, "\x1b[%dJ", r.IntN(3))
		case 12:
			fmt.Fprintf(&b, "\x1b[%d%c", r.IntN(4), "LMST"[r.IntN(4)])
		case 13:
			fmt.Fprintf(&b, "\x1b[%d;%dr", r.IntN(rows+2), r.IntN(rows+3))
		case 14:
			b.WriteString("\x1b[r")
		case 15:
			fmt.Fprintf(&b, "\x1b[%d%c", r.IntN(5), "@PXb"[r.IntN(4)])
		case 16:
			b.WriteString([]string{"\x1b7", "\x1b8", "\x1bM", "\x1bD", "\x1bE", "\x1b[s", "\x1b[u"}[r.IntN(7)])
		case 17:
			b.WriteString([]string{"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l"}[r.IntN(4)])
		case 18:
			fmt.Fprintf(&b, "\x1b[%d;38;5;%dm", r.IntN(10), r.IntN(256))
		case 19:
			b.WriteString([]string{"\x1b[4h", "\x1b[4l", "\x1b[?7l", "\x1b[?7h", "\x1b[?6h", "\x1b[?6l"}[r.IntN(6)])
		case 20:
			fmt.Fprintf(&b, "\x1b]0;t%d ✳\x07", r.IntN(9))
		case 21:
			b.WriteString([]string{"\x1bH", "\x1b[g", "\x1b[3g", "\x1b[Z"}[r.IntN(4)])
		case 22:
			fmt.Fprintf(&b, "\x1b[%dE", r.IntN(3))
		case 23:
			fmt.Fprintf(&b, "\x1b[%dF", r.IntN(3))
		case 24:
			b.WriteString("\u0301")
		case 25:
			fmt.Fprintf(&b, "\x1b[%d`", r.IntN(cols+2))
		}
	}
	return b.String()
}

// TestDiffTmuxRandom compares random operation sequences with tmux.
// HIVEMIND_DIFF_RANDOM=N runs N seeds instead of 24.
func TestDiffTmuxRandom(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	seeds := 24
	if v, err := strconv.Atoi(os.Getenv("HIVEMIND_DIFF_RANDOM")); err == nil && v > 0 {
		seeds = v
	}
	const cols, rows = 12, 6
	for seed := range uint64(seeds) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			in := randomOps(seed, 60, cols, rows)
			want, wx, wy, walt := tmuxScreen(t, []byte(in), cols, rows)
			s := New(Options{Cols: cols, Rows: rows})
			defer func() { _ = s.Close() }()
			write(s, in)
			gx, gy, _ := s.Cursor()
			wr, gr := normRows(want, rows), normRows(s.Text(), rows)
			var diffs []string
			for i := range rows {
				if wr[i] != gr[i] {
					diffs = append(diffs, fmt.Sprintf("row %d: tmux %q, ours %q", i, wr[i], gr[i]))
				}
			}
			if gx != wx || gy != wy {
				diffs = append(diffs, fmt.Sprintf("cursor (%d,%d), tmux (%d,%d)", gx, gy, wx, wy))
			}
			if alt := s.Modes().AltScreen; alt != walt {
				diffs = append(diffs, fmt.Sprintf("alternate screen %v, tmux %v", alt, walt))
			}
			if len(diffs) > 0 {
				t.Errorf("input %q:\n%s", in, strings.Join(diffs, "\n"))
			}
		})
	}
}
