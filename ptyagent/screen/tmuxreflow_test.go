package screen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// resizeStep writes out, then resizes the pane to cols x rows (when cols
// is not zero).
type resizeStep struct {
	out        string
	cols, rows int
}

// paneState is what a pane holds after a resize sequence: every row of
// the scrollback and the screen, as plain text, as unwrapped lines and
// with styles, plus the cursor and the scrollback length.
type paneState struct {
	rows, joined, styled []string
	cx, cy, hist         int
}

// tmuxSteps plays steps in a tmux pane that starts at cols x rows and
// returns its state (capture-pane -p, -p -J and -p -e, from the start of
// the history).
func tmuxSteps(t *testing.T, cols, rows int, steps []resizeStep) paneState {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	var script strings.Builder
	script.WriteString("stty raw -echo; ")
	for i, st := range steps {
		f := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(f, []byte(st.out), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, `cat %q; printf '\033]2;S%d\033\\'; tmux -S %q wait-for g%d; `, f, i, sock, i)
	}
	script.WriteString("exec sleep 600")
	tmux := func(args ...string) string {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "kill-server" {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "sh", "-c", script.String())
	t.Cleanup(func() { tmux("kill-server") })
	for i, st := range steps {
		title := "S" + strconv.Itoa(i)
		waitTmux(t, func() bool { return strings.TrimSpace(tmux("display", "-p", "#{pane_title}")) == title })
		if st.cols > 0 {
			tmux("resize-window", "-x", strconv.Itoa(st.cols), "-y", strconv.Itoa(st.rows))
			size := fmt.Sprintf("%dx%d", st.cols, st.rows)
			waitTmux(t, func() bool { return strings.TrimSpace(tmux("display", "-p", "#{pane_width}x#{pane_height}")) == size })
			cols = st.cols
		}
		tmux("wait-for", "-S", "g"+strconv.Itoa(i))
	}
	lines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
	var ps paneState
	ps.rows = lines(tmux("capture-pane", "-p", "-S", "-"))
	ps.joined = lines(tmux("capture-pane", "-p", "-J", "-S", "-"))
	// Parse tmux's SGR codes into cells, to compare styles as cells. The
	// codes carry over from one row to the next, so one parser reads all.
	// One column more: while the alternate screen is on, tmux prints a
	// wide character that starts in the last column of a longer
	// scrollback line whole.
	p := newTerm(Options{Cols: cols + 1, Rows: 1})
	for _, row := range lines(tmux("capture-pane", "-p", "-e", "-S", "-")) {
		_, _ = p.Write([]byte(row))
		ps.styled = append(ps.styled, p.styledText(p.scr[0].c))
		p.clearLine(p.scr[0], 0)
		p.x, p.wrapNext = 0, false
	}
	f := strings.Fields(tmux("display", "-p", "#{cursor_x} #{cursor_y} #{history_size}"))
	ps.cx, _ = strconv.Atoi(f[0])
	ps.cy, _ = strconv.Atoi(f[1])
	ps.hist, _ = strconv.Atoi(f[2])
	ps.cx = min(ps.cx, cols-1)
	return ps
}

// styledText writes c up to its last non-blank cell with the SGR codes of
// each style change (characters as stored: unlike Lines, a wide character
// without its right half is kept, as capture-pane shows it).
func (t *Term) styledText(c []cell) string {
	end := len(c)
	for end > 0 && (c[end-1].r == 0 || c[end-1].r == ' ') {
		end--
	}
	var b []byte
	st := uint32(0)
	for _, cl := range c[:end] {
		if cl.st != st && cl.r != contCell {
			b = append(b, t.styles.render(cl.st)...)
			st = cl.st
		}
		b = t.appendText(b, cl)
	}
	if st != 0 {
		b = append(b, "\x1b[m"...)
	}
	return string(b)
}

// termSteps plays steps on Hivemind's emulator and returns its state in
// the form tmuxSteps gives.
func termSteps(cols, rows int, steps []resizeStep) paneState {
	s := newTerm(Options{Cols: cols, Rows: rows})
	for _, st := range steps {
		_, _ = s.Write([]byte(st.out))
		if st.cols > 0 {
			s.Resize(st.cols, st.rows)
		}
	}
	var all []*line
	for i := range s.sb.len() {
		l := &line{}
		s.decode(s.sb.get(i), l, true)
		all = append(all, l)
	}
	all = append(all, s.scr...)
	var ps paneState
	var join []byte
	for _, l := range all {
		// capture-pane prints cols cells (and a wide character that
		// starts in the last column whole: scrollback lines are longer
		// while the alternate screen is on).
		end := min(s.cols, len(l.c))
		if end < len(l.c) && l.c[end].r == contCell {
			end++
		}
		ps.rows = append(ps.rows, s.lineText(l.c[:end]))
		ps.styled = append(ps.styled, s.styledText(l.c[:end]))
		// capture-pane -J: the cells used, untrimmed, wrapped rows joined.
		for _, c := range l.c[:min(l.used, s.cols)] {
			join = s.appendText(join, c)
		}
		if !l.wrapped {
			ps.joined = append(ps.joined, string(join))
			join = join[:0]
		}
	}
	if len(join) > 0 {
		ps.joined = append(ps.joined, string(join))
	}
	x, y, _ := s.Cursor()
	ps.cx, ps.cy, ps.hist = x, y, s.sb.len()
	return ps
}

// diffPane lists the differences between tmux's state and ours.
func diffPane(want, got paneState) []string {
	var diffs []string
	cmp := func(what string, w, g []string) {
		if len(w) != len(g) {
			diffs = append(diffs, fmt.Sprintf("%s: tmux %d lines, ours %d:\n tmux %q\n ours %q", what, len(w), len(g), w, g))
			return
		}
		for i := range w {
			if w[i] != g[i] {
				diffs = append(diffs, fmt.Sprintf("%s line %d:\n tmux %q\n ours %q", what, i, w[i], g[i]))
			}
		}
	}
	cmp("text", want.rows, got.rows)
	if len(diffs) == 0 {
		cmp("joined", want.joined, got.joined)
		cmp("styled", want.styled, got.styled)
	}
	if want.cx != got.cx || want.cy != got.cy {
		diffs = append(diffs, fmt.Sprintf("cursor (%d,%d), tmux (%d,%d)", got.cx, got.cy, want.cx, want.cy))
	}
	if want.hist != got.hist {
		diffs = append(diffs, fmt.Sprintf("scrollback %d lines, tmux %d", got.hist, want.hist))
	}
	return diffs
}

// reflowCases are resize sequences written for the cases that matter:
// long wrapped lines, hard breaks, wide characters at the wrap point,
// colours, the cursor mid-line, the scrollback, the alternate screen.
var reflowCases = []struct {
	name       string
	cols, rows int
	steps      []resizeStep
}{
	{"narrow-then-wide", 20, 6, []resizeStep{
		{"the quick brown fox jumps over the lazy dog\r\nshort\r\n$ ", 10, 6},
		{"", 30, 6},
		{"x", 0, 0},
	}},
	{"issue-19-revised-plan", 40, 8, []resizeStep{
		{"● Revised plan written (revision 2), addressing the reviewer's feedback.\r\n\r\n> ", 24, 8},
		{"", 80, 8},
		{"", 40, 8},
	}},
	{"hard-breaks-stay", 12, 5, []resizeStep{
		{"abc\r\ndef\r\nghi\r\n", 6, 5},
		{"", 20, 5},
	}},
	{"exact-width-line", 10, 5, []resizeStep{
		{"0123456789\r\nabcdefghij", 5, 5},
		{"", 12, 5},
		{"k", 0, 0},
	}},
	{"pending-wrap-cursor", 10, 4, []resizeStep{
		{"0123456789", 15, 4},
		{"x", 0, 0},
	}},
	{"pending-wrap-narrower", 10, 4, []resizeStep{
		{"0123456789", 4, 4},
		{"x", 0, 0},
	}},
	{"cursor-mid-line", 20, 5, []resizeStep{
		{"one two three four five six seven\x1b[1;4H", 7, 5},
		{"X", 13, 5},
		{"Y", 0, 0},
	}},
	{"cursor-past-text", 20, 5, []resizeStep{
		{"abc\x1b[1;12H", 8, 5},
		{"Z", 0, 0},
	}},
	{"wide-at-wrap-point", 9, 4, []resizeStep{
		{"日本語の文章を書く。ab日本", 8, 4},
		{"", 5, 4},
		{"", 11, 4},
		{"x", 0, 0},
	}},
	{"wide-odd-width", 7, 4, []resizeStep{
		{"a日b本c語d文e章", 4, 4},
		{"", 3, 4},
		{"", 9, 4},
	}},
	{"combining-and-emoji", 10, 4, []resizeStep{
		{"e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301 🎉🎉🎉 ✔\ufe0f", 6, 4},
		{"", 13, 4},
	}},
	{"colours", 16, 5, []resizeStep{
		{"\x1b[31mred red red \x1b[1;44mbold on blue\x1b[m plain \x1b[38;5;208morange orange\x1b[m\r\n", 9, 5},
		{"", 25, 5},
		{"\x1b[32mgreen\x1b[m", 0, 0},
	}},
	{"scrollback-reflow", 12, 4, []resizeStep{
		{"line one is long\r\nline two is longer still\r\nthree\r\nfour four four four\r\nfive\r\nsix\r\nseven", 6, 4},
		{"", 20, 4},
		{"", 9, 4},
	}},
	{"shrink-height-cursor-top", 10, 6, []resizeStep{
		{"a\r\nb\r\nc\r\nd\r\ne\x1b[2;1H", 10, 3},
		{"x", 0, 0},
	}},
	{"shrink-height-cursor-bottom", 10, 6, []resizeStep{
		{"a\r\nb\r\nc\r\nd\r\ne\r\nf", 10, 3},
		{"x", 0, 0},
	}},
	{"grow-height-after-clear", 10, 4, []resizeStep{
		{"1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[2J\x1b[Hnew", 10, 8},
		{"x", 0, 0},
	}},
	{"shrink-both", 20, 8, []resizeStep{
		{"a long line that wraps more than once here\r\nb\r\nc\r\n", 7, 3},
		{"", 20, 8},
	}},
	{"alt-screen-resized", 20, 5, []resizeStep{
		{"main text that is long enough to wrap\r\n$ \x1b[?1049h\x1b[Halt screen line that wraps too", 8, 5},
		{"\x1b[?1049l", 0, 0},
		{"x", 0, 0},
	}},
	{"alt-screen-resized-twice", 12, 6, []resizeStep{
		{"prompt with a long command line\x1b[?1049h\x1b[2;2Halt", 30, 3},
		{"", 6, 8},
		{"\x1b[?1049lx", 0, 0},
	}},
	{"scroll-region-width-only", 10, 6, []resizeStep{
		{"a\r\nb\r\nc\x1b[2;4r\x1b[4;1H", 14, 6},
		{"\n\n\nX", 0, 0},
	}},
	{"many-steps", 30, 10, []resizeStep{
		{"\x1b[1mStep 1\x1b[m: a paragraph of text written by an agent, long enough to wrap a few times.\r\n", 18, 7},
		{"Step 2: another paragraph, \x1b[33mwith colour\x1b[m and 日本語 text.\r\n", 40, 12},
		{"Step 3: prompt> ", 11, 5},
		{"typed text", 30, 10},
		{"\r\n", 0, 0},
	}},
}

// TestDiffTmuxReflow compares resize sequences with tmux: every row of the
// scrollback and the screen (plain, unwrapped and styled), the cursor and
// the scrollback length.
func TestDiffTmuxReflow(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	for _, tc := range reflowCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tmuxSteps(t, tc.cols, tc.rows, tc.steps)
			got := termSteps(tc.cols, tc.rows, tc.steps)
			if diffs := diffPane(want, got); len(diffs) > 0 {
				t.Errorf("%d differences from tmux:\n%s", len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
}

// randomResizeSteps builds a random sequence of output (agent-like prose
// with colours and wide characters, and the random operations of
// randomOps) interleaved with resizes.
func randomResizeSteps(seed uint64, cols, rows int) []resizeStep {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"the", "plan", "revision", "日本語", "reviewer", "a", "build", "✳", "checkpoint", "é", "🎉", "x\u0301"}
	var steps []resizeStep
	for range 3 + r.IntN(5) {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			switch r.IntN(8) {
			case 0, 1, 2:
				for range 1 + r.IntN(3*cols) {
					b.WriteString(words[r.IntN(len(words))])
					b.WriteByte(' ')
				}
			case 3:
				b.WriteString("\r\n")
			case 4:
				fmt.Fprintf(&b, "\x1b[%d;3%dm", r.IntN(2), r.IntN(8))
			case 5:
				b.WriteString(randomOps(r.Uint64(), 4, cols, rows))
			case 6:
				fmt.Fprintf(&b, "\x1b[%dA\x1b[%dG", r.IntN(3), 1+r.IntN(cols))
			case 7:
				b.WriteString("\x1b[m\r\n$ ")
			}
		}
		st := resizeStep{out: b.String()}
		if r.IntN(5) > 0 {
			st.cols, st.rows = 3+r.IntN(30), 2+r.IntN(9)
		}
		steps = append(steps, st)
	}
	return steps
}

// TestDiffTmuxReflowRandom compares random resize sequences with tmux.
// HIVEMIND_DIFF_RANDOM=N runs N seeds instead of 40.
func TestDiffTmuxReflowRandom(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: differential test against tmux skipped")
	}
	seeds := 40
	if v, err := strconv.Atoi(os.Getenv("HIVEMIND_DIFF_RANDOM")); err == nil && v > 0 {
		seeds = v
	}
	for seed := range uint64(seeds) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 11))
			cols, rows := 3+r.IntN(30), 2+r.IntN(9)
			steps := randomResizeSteps(seed, cols, rows)
			want := tmuxSteps(t, cols, rows, steps)
			got := termSteps(cols, rows, steps)
			if diffs := diffPane(want, got); len(diffs) > 0 {
				t.Errorf("start %dx%d, steps %+v:\n%d differences from tmux:\n%s", cols, rows, steps, len(diffs), strings.Join(diffs[:min(len(diffs), 8)], "\n"))
			}
		})
	}
}
