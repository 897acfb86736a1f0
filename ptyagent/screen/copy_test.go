package screen

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// wrappedText is output whose lines are often longer than cols: paths,
// words, wide characters, trailing blanks, lines of exactly cols cells.
func wrappedText(seed uint64, cols, lines int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"/tmp/hivemind-demo-3f9a/worktrees/worker_1/src/main.go", "hello", "日本語", "wrapped", "x", "🎉", "a  b", "end   "}
	var b strings.Builder
	for range lines {
		switch r.IntN(6) {
		case 0:
			b.WriteString(strings.Repeat("z", cols)) // exactly full
		case 1:
			b.WriteString(strings.Repeat("y", cols+r.IntN(3)))
		default:
			for n := r.IntN(12); n >= 0; n-- {
				b.WriteString(words[r.IntN(len(words))])
				if r.IntN(3) > 0 {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

// TestCopyTextLikeTmux compares a copy of the whole history and screen
// with tmux's capture-pane -J (wrapped rows joined) of the same output,
// each line's trailing blanks trimmed.
func TestCopyTextLikeTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	for _, c := range []struct {
		seed             uint64
		cols, rows, n    int
		resizeC, resizeR int
	}{
		{1, 30, 10, 6, 0, 0},
		{2, 23, 12, 25, 0, 0},
		{3, 41, 8, 30, 0, 0},
		{4, 30, 10, 20, 19, 10}, // re-wrapped narrower
		{5, 19, 10, 20, 47, 10}, // re-wrapped wider
	} {
		t.Run(fmt.Sprint(c.seed), func(t *testing.T) {
			steps := []resizeStep{{out: wrappedText(c.seed, c.cols, c.n), cols: c.resizeC, rows: c.resizeR}}
			want := tmuxSteps(t, c.cols, c.rows, steps)
			s := newTerm(Options{Cols: c.cols, Rows: c.rows})
			for _, st := range steps {
				_, _ = s.Write([]byte(st.out))
				if st.cols > 0 {
					s.Resize(st.cols, st.rows)
				}
			}
			hist := s.ScrollbackLen()
			got := strings.Split(s.CopyText(hist, 0, hist+c.rows-1), "\n")
			var tmux []string
			for _, l := range want.joined {
				tmux = append(tmux, strings.TrimRight(l, " "))
			}
			trim := func(l []string) []string {
				for len(l) > 0 && l[len(l)-1] == "" {
					l = l[:len(l)-1]
				}
				return l
			}
			got, tmux = trim(got), trim(tmux)
			if strings.Join(got, "\n") != strings.Join(tmux, "\n") {
				t.Errorf("copy differs from tmux's:\n tmux %q\n ours %q", tmux, got)
			}
			joined := 0
			for y := range c.rows - 1 {
				if s.scr[y].wrapped {
					joined++
				}
			}
			if joined == 0 {
				t.Error("no soft-wrapped row on the screen: the case tests nothing")
			}
		})
	}
}

func TestCopyTextRange(t *testing.T) {
	s := newTerm(Options{Cols: 10, Rows: 4})
	_, _ = s.Write([]byte("one\r\n/tmp/hivemind-x  \r\nlast"))
	// Rows: "one", "/tmp/hivem" (wrapped), "ind-x", "last".
	for _, c := range []struct {
		from, to int
		want     string
	}{
		{0, 3, "one\n/tmp/hivemind-x\nlast"},
		{1, 1, "/tmp/hivem"}, // the selection ends inside the line
		{1, 2, "/tmp/hivemind-x"},
		{2, 3, "ind-x\nlast"},
	} {
		if got := s.CopyText(0, c.from, c.to); got != c.want {
			t.Errorf("rows %d..%d: %q, want %q", c.from, c.to, got, c.want)
		}
	}
}
