package screen

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDiffTmuxResize feeds before, resizes the pane from 20x8 to
// cols x rows, feeds after, and compares with tmux doing the same (every
// row of the scrollback and the screen, the cursor).
func TestDiffTmuxResize(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	lines := "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n9\r\n10\r\n11"
	cases := []struct {
		name, before string
		cols, rows   int
		after        string
	}{
		{"shrink-scrolls-top", lines, 20, 4, "x"},
		{"shrink-drops-blank-bottom", "1\r\n2\r\n3\x1b[H", 20, 4, "x"},
		{"grow-pulls-history", lines, 20, 12, "x"},
		{"alt-shrink-then-leave", lines + "\x1b[?1049hA\r\nB\r\nC\r\nD\r\nE", 20, 4, "\x1b[?1049lx"},
		{"alt-grow-then-leave", lines + "\x1b[?1049hA\r\nB\r\nC\r\nD\r\nE", 20, 12, "\x1b[?1049lx"},
		{"narrower-short-lines", "ab\r\ncd\r\nef", 10, 8, "x"},
		{"wider", "ab\r\ncd\r\nef", 30, 8, "x"},
		{"narrower-wrapped", "abcdefghijklmnopqrstuvwxyz", 10, 8, "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps := []resizeStep{{tc.before, tc.cols, tc.rows}, {tc.after, 0, 0}}
			want := tmuxSteps(t, 20, 8, steps)
			got := termSteps(20, 8, steps)
			if diffs := diffPane(want, got); len(diffs) > 0 {
				t.Errorf("%d differences from tmux:\n%s", len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
}

func waitTmux(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for tmux")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
