package screen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDiffTmuxResize feeds before, resizes the pane from 20x8 to
// cols x rows, feeds after, and compares with tmux doing the same.
func TestDiffTmuxResize(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	lines := "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n9\r\n10\r\n11"
	cases := []struct {
		name, before string
		cols, rows   int
		after        string
		knownDiff    string
	}{
		{"shrink-scrolls-top", lines, 20, 4, "x", ""},
		{"shrink-drops-blank-bottom", "1\r\n2\r\n3\x1b[H", 20, 4, "x", ""},
		{"grow-pulls-history", lines, 20, 12, "x", ""},
		{"alt-shrink-then-leave", lines + "\x1b[?1049hA\r\nB\r\nC\r\nD\r\nE", 20, 4, "\x1b[?1049lx", ""},
		{"alt-grow-then-leave", lines + "\x1b[?1049hA\r\nB\r\nC\r\nD\r\nE", 20, 12, "\x1b[?1049lx", ""},
		{"narrower-short-lines", "ab\r\ncd\r\nef", 10, 8, "x", ""},
		{"wider", "ab\r\ncd\r\nef", 30, 8, "x", ""},
		{"narrower-wrapped", "abcdefghijklmnopqrstuvwxyz", 10, 8, "x", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.knownDiff != "" {
				t.Skip("documented difference: " + tc.knownDiff)
			}
			t.Parallel()
			want, wx, wy := tmuxResized(t, tc.before, tc.after, tc.cols, tc.rows)
			s := New(Options{Cols: 20, Rows: 8})
			defer func() { _ = s.Close() }()
			write(s, tc.before)
			s.Resize(tc.cols, tc.rows)
			write(s, tc.after)
			gx, gy, _ := s.Cursor()
			wr, gr := normRows(want, tc.rows), normRows(s.Text(), tc.rows)
			for i := range tc.rows {
				if wr[i] != gr[i] {
					t.Errorf("row %d: tmux %q, ours %q", i, wr[i], gr[i])
				}
			}
			if gx != wx || gy != wy {
				t.Errorf("cursor (%d,%d), tmux (%d,%d)", gx, gy, wx, wy)
			}
		})
	}
}

func tmuxResized(t *testing.T, before, after string, cols, rows int) (string, int, int) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{"a": before, "b": after} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "s")
	tmux := func(args ...string) string {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "kill-server" {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf(`stty raw -echo; cat %q; printf '\033]2;ONE\033\\'; tmux -S %q wait-for go; cat %q; printf '\033]2;TWO\033\\'; exec sleep 600`,
		filepath.Join(dir, "a"), sock, filepath.Join(dir, "b"))
	tmux("new-session", "-d", "-x", "20", "-y", "8", "sh", "-c", script)
	t.Cleanup(func() { tmux("kill-server") })
	waitTmux(t, func() bool { return strings.TrimSpace(tmux("display", "-p", "#{pane_title}")) == "ONE" })
	tmux("resize-window", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows))
	size := fmt.Sprintf("%dx%d", cols, rows)
	waitTmux(t, func() bool { return strings.TrimSpace(tmux("display", "-p", "#{pane_width}x#{pane_height}")) == size })
	tmux("wait-for", "-S", "go")
	waitTmux(t, func() bool { return strings.TrimSpace(tmux("display", "-p", "#{pane_title}")) == "TWO" })
	out := tmux("capture-pane", "-p")
	f := strings.Split(strings.TrimSpace(tmux("display", "-p", "#{cursor_x},#{cursor_y}")), ",")
	x, _ := strconv.Atoi(f[0])
	y, _ := strconv.Atoi(f[1])
	return out, min(x, cols-1), y
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
