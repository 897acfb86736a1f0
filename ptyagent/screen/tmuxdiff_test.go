package screen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

// cutPoint is a prefix length of the workload to compare at.
type cutPoint struct {
	name string
	n    int
}

// diffCuts returns the 25/50/75/100 % prefixes (moved to the next
// sequence start) and cuts inside an alternate-screen episode, a
// main-screen scroll region and a progress bar.
func diffCuts(data []byte, segs []workload.Segment, fracs []float64) []cutPoint {
	starts := []int{}
	for _, s := range segs {
		starts = append(starts, s.Start)
		starts = append(starts, s.Cuts...)
	}
	next := func(n int) int {
		for _, s := range starts {
			if s >= n {
				return s
			}
		}
		return len(data)
	}
	cuts := []cutPoint{
		{"25%", next(len(data) / 4)},
		{"50%", next(len(data) / 2)},
		{"75%", next(len(data) * 3 / 4)},
		{"100%", len(data)},
	}
	for _, kind := range []workload.Kind{workload.Pager, workload.Region, workload.Progress, workload.Status} {
		for _, frac := range fracs {
			for _, seg := range segs {
				if seg.Kind != kind || seg.Start < int(frac*float64(len(data))) || len(seg.Cuts) < 2 {
					continue
				}
				c := seg.Cuts[len(seg.Cuts)/2]
				cuts = append(cuts, cutPoint{fmt.Sprintf("in-%s@%d", kind, c), c})
				break
			}
		}
	}
	return cuts
}

// tmuxScreen feeds data to a detached tmux pane of cols x rows and returns
// its visible text (capture-pane -p), cursor and alternate-screen flag.
func tmuxScreen(t *testing.T, data []byte, cols, rows int) (text string, cx, cy int, alt bool) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "in.bin")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Raw mode so the tty does not turn \n into \r\n; the title set last
	// tells when tmux has consumed everything before it.
	script := fmt.Sprintf(`stty raw -echo; cat %q; printf '\033]2;HIVEMIND-DIFF-DONE\033\\'; exec sleep 600`, file)
	if out, err := tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := tmux("display", "-p", "#{pane_title}")
		if err == nil && strings.TrimSpace(out) == "HIVEMIND-DIFF-DONE" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux did not consume the input (title %q, err %v)", out, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	out, err := tmux("capture-pane", "-p")
	if err != nil {
		t.Fatalf("capture-pane: %v: %s", err, out)
	}
	info, err := tmux("display", "-p", "#{cursor_x} #{cursor_y} #{alternate_on}")
	if err != nil {
		t.Fatalf("display: %v: %s", err, info)
	}
	f := strings.Fields(info)
	cx, _ = strconv.Atoi(f[0])
	cy, _ = strconv.Atoi(f[1])
	return out, min(cx, cols-1), cy, f[2] == "1"
}

func normRows(s string, rows int) []string {
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	out := make([]string, rows)
	for i := range out {
		if i < len(ls) {
			out[i] = strings.TrimRight(ls[i], " ")
		}
	}
	return out
}

// TestDiffTmux compares Hivemind's emulator with tmux row by row at cut
// points of the workload: 2 MB (1 MB with -short, HIVEMIND_DIFF_MB=20 for
// the full issue-8 workload). HIVEMIND_DIFF_IMPL=xvt runs it against the x/vt
// reference instead, to document where x/vt differs.
func TestDiffTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	size, fracs := 2<<20, []float64{0.1, 0.4, 0.7, 0.95}
	if testing.Short() {
		size, fracs = 1<<20, []float64{0.5}
	}
	mk, impl := New, "hivemind"
	if os.Getenv("HIVEMIND_DIFF_IMPL") == "xvt" {
		mk, impl = NewVT, "xvt"
	}
	if v, err := strconv.Atoi(os.Getenv("HIVEMIND_DIFF_MB")); err == nil && v > 0 {
		size = v << 20
	}
	const cols, rows = 120, 40
	data, segs := workload.Generate(workload.Options{Seed: 1, Size: size, Cols: cols, Rows: rows})
	for _, c := range diffCuts(data, segs, fracs) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prefix := data[:c.n]
			want, wx, wy, walt := tmuxScreen(t, prefix, cols, rows)
			s := mk(Options{Cols: cols, Rows: rows})
			defer func() { _ = s.Close() }()
			feed(s, prefix)
			got := s.Text()
			gx, gy, _ := s.Cursor()
			wr, gr := normRows(want, rows), normRows(got, rows)
			var diffs []string
			for i := range rows {
				if wr[i] != gr[i] {
					diffs = append(diffs, fmt.Sprintf("row %d:\n tmux: %q\n ours: %q", i, wr[i], gr[i]))
				}
			}
			if len(diffs) > 0 {
				t.Errorf("%s: %d of %d rows differ from tmux at byte %d:\n%s", impl, len(diffs), rows, c.n, strings.Join(diffs[:min(len(diffs), 6)], "\n"))
			}
			if gx != wx || gy != wy {
				t.Errorf("cursor (%d,%d), tmux (%d,%d)", gx, gy, wx, wy)
			}
			if alt := s.Modes().AltScreen; alt != walt {
				t.Errorf("alternate screen %v, tmux %v", alt, walt)
			}
			if t.Failed() {
				_ = os.WriteFile(filepath.Join(os.TempDir(), "hivemind-diff-"+c.name+".bin"), bytes.Clone(prefix), 0o600)
			}
		})
	}
}
