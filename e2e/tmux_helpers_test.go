package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// tmuxCols and tmuxRows are the terminal size of every TUI test.
const (
	tmuxCols = 160
	tmuxRows = 48
)

// tmuxSeq numbers tmux servers, so parallel tests never share one.
var tmuxSeq atomic.Int64

// tuiRun is one hivemind process running in a detached tmux session on a
// tmux server of its own (-L), so the test never touches the user's tmux.
type tuiRun struct {
	t       *testing.T
	server  string // tmux -L socket name
	session string
	project string
	home    string
	status  string // file the pane's shell writes hivemind's exit status to
}

// tuiOptions configure startTUI.
type tuiOptions struct {
	simArgs string   // HIVEMIND_SIM_ARGS (e.g. "--pace 20ms")
	args    []string // hivemind arguments
	env     []string // extra environment for hivemind
	project string   // the project directory (default: a new temp dir)
	// cols and rows are the terminal size (default tmuxCols×tmuxRows).
	cols, rows int
	// clipboard lets the program set tmux's paste buffer with OSC 52
	// (set-clipboard on).
	clipboard bool
}

// requireTmux skips the test when tmux is not installed (CI installs it).
func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the TUI end-to-end tests need it (apt-get install tmux)")
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startTUI runs the built binary in a 160×48 tmux session whose working
// directory is a new temp project, with its own HOME. The pane stays after
// the process exits (remain-on-exit) so its exit status can be read. The
// server is killed when the test ends.
func startTUI(t *testing.T, o tuiOptions) *tuiRun {
	t.Helper()
	requireTmux(t)
	r := &tuiRun{
		t:       t,
		server:  fmt.Sprintf("hivemind-e2e-%d-%d", os.Getpid(), tmuxSeq.Add(1)),
		session: "hm",
		project: o.project,
		home:    t.TempDir(),
	}
	if r.project == "" {
		r.project = t.TempDir()
	}
	env := []string{
		"HOME=" + r.home,
		"XDG_CONFIG_HOME=" + filepath.Join(r.home, ".config"),
		"TERM=tmux-256color",
		"COLORTERM=truecolor",
		"HIVEMIND_SIM_ARGS=" + o.simArgs,
	}
	env = append(env, o.env...)
	// The shell records the exit status in a file: tmux marks the pane dead
	// at the PTY's EOF, which can come well before it reaps the process
	// and fills #{pane_dead_status}.
	r.status = filepath.Join(r.home, "exit-status")
	words := []string{"env"}
	for _, kv := range env {
		words = append(words, shellQuote(kv))
	}
	words = append(words, shellQuote(bin))
	for _, a := range o.args {
		words = append(words, shellQuote(a))
	}
	words = append(words, ";", "echo", "$?", ">", shellQuote(r.status))
	t.Cleanup(func() {
		// Only this test's private server: its sessions and their
		// processes end with it. tmux leaves the socket file behind.
		sock, _ := r.tmuxCmd("display-message", "-p", "#{socket_path}")
		_, _ = r.tmuxCmd("kill-server")
		if sock = strings.TrimSpace(sock); strings.Contains(sock, r.server) {
			_ = os.Remove(sock)
		}
	})
	cols, rows := tmuxCols, tmuxRows
	if o.cols > 0 && o.rows > 0 {
		cols, rows = o.cols, o.rows
	}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"-s", r.session, "-c", r.project, strings.Join(words, " "),
		";", "set-option", "-t", r.session, "remain-on-exit", "on"}
	if o.clipboard {
		args = append(args, ";", "set-option", "-s", "set-clipboard", "on")
	}
	r.mustTmux(args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", r.capture())
		}
	})
	return r
}

// tmuxCmd runs a tmux command on the run's server.
func (r *tuiRun) tmuxCmd(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", r.server}, args...)...)
	cmd.Env = tmuxEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tmuxEnv is the test's environment without TMUX (the tests may run inside
// a tmux session of the user's).
func tmuxEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			env = append(env, kv)
		}
	}
	return env
}

func (r *tuiRun) mustTmux(args ...string) string {
	r.t.Helper()
	out, err := r.tmuxCmd(args...)
	if err != nil {
		r.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// keys sends tmux key names (e.g. "p", "Enter", "C-]").
func (r *tuiRun) keys(keys ...string) {
	r.t.Helper()
	r.mustTmux(append([]string{"send-keys", "-t", r.session}, keys...)...)
}

// typeText sends s literally.
func (r *tuiRun) typeText(s string) {
	r.t.Helper()
	r.mustTmux("send-keys", "-t", r.session, "-l", s)
}

// capture returns the visible screen ("" once the server is gone).
func (r *tuiRun) capture() tuiScreen {
	out, err := r.tmuxCmd("capture-pane", "-p", "-t", r.session)
	if err != nil {
		return nil
	}
	return tuiScreen(strings.Split(strings.TrimRight(out, "\n"), "\n"))
}

// exited reports whether hivemind has exited, and its exit status.
func (r *tuiRun) exited() (bool, int) {
	b, err := os.ReadFile(r.status)
	if err != nil || !strings.HasSuffix(string(b), "\n") {
		return false, 0
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		r.t.Fatalf("exit status file %s: %q", r.status, b)
	}
	return true, code
}

// waitExit waits for hivemind to exit and returns its exit status.
func (r *tuiRun) waitExit(d time.Duration) int {
	r.t.Helper()
	var code int
	waitFor(r.t, d, "hivemind to exit", func() bool {
		var dead bool
		dead, code = r.exited()
		return dead
	})
	return code
}

// waitScreen polls the screen until ok holds and returns that screen. It
// fails at the deadline, or at once if hivemind exited.
func (r *tuiRun) waitScreen(d time.Duration, what string, ok func(tuiScreen) bool) tuiScreen {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := r.capture()
		if ok(s) {
			return s
		}
		if dead, code := r.exited(); dead {
			r.t.Fatalf("hivemind exited (status %d) while waiting for %s; screen:\n%s", code, what, s)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %v waiting for %s; screen:\n%s", d, what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitText waits until the screen contains every one of texts.
func (r *tuiRun) waitText(d time.Duration, texts ...string) tuiScreen {
	r.t.Helper()
	return r.waitScreen(d, fmt.Sprintf("%q on screen", texts), func(s tuiScreen) bool {
		for _, x := range texts {
			if !s.contains(x) {
				return false
			}
		}
		return true
	})
}

// taskDir waits for the run's task directory.
func (r *tuiRun) taskDir() string {
	r.t.Helper()
	var dir string
	waitFor(r.t, 30*time.Second, "the task directory", func() bool {
		dir = taskDirOf(r.project)
		return dir != ""
	})
	return dir
}

// tuiScreen is a captured screen, one string per row (trailing spaces
// trimmed by tmux).
type tuiScreen []string

func (s tuiScreen) String() string { return strings.Join(s, "\n") }

func (s tuiScreen) contains(x string) bool {
	for _, l := range s {
		if strings.Contains(l, x) {
			return true
		}
	}
	return false
}

// header is the first row (workflow state, progress, elapsed time).
func (s tuiScreen) header() string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// footer is the last non-empty row (key help, confirmations, notices).
func (s tuiScreen) footer() string {
	for i := len(s) - 1; i >= 0; i-- {
		if strings.TrimSpace(s[i]) != "" {
			return s[i]
		}
	}
	return ""
}

// phase is the workflow state the header shows, as its state.json name
// ("" if none). The header says it in words ("reviewing plan"): the
// words are mapped back with tui.PhaseOf.
func (s tuiScreen) phase() string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s.header()), "HIVEMIND")
	if !ok {
		return ""
	}
	return phaseNamed(rest)
}

// phaseNamed maps the state words at the start of text (up to a │ or ·)
// to the state's name.
func phaseNamed(text string) string {
	label := strings.TrimSpace(text)
	if i := strings.IndexAny(label, "│·"); i >= 0 {
		label = strings.TrimSpace(label[:i])
	}
	if p, ok := tui.PhaseOf(label); ok {
		return string(p)
	}
	return label
}

// cells splits a row into one string per terminal cell (a wide character
// takes its cell and an empty one after it), so columns line up across
// rows.
func cells(row string) []string {
	var c []string
	for _, r := range row {
		c = append(c, string(r))
		if ansi.StringWidth(string(r)) == 2 {
			c = append(c, "")
		}
	}
	return c
}

func cellAt(c []string, x int) string {
	if x < len(c) {
		return c[x]
	}
	return " "
}

// paneRect is where a pane sits on the screen, border included.
type paneRect struct {
	x, y, w, h int
	title      string
	border     string // the top-left corner: ╭ normal, ┏ focused, ╔ attached
}

const (
	topLeft     = "╭┏╔"
	topRight    = "╮┓╗"
	bottomLeft  = "╰┗╚"
	horizontals = "─━═"
)

// panes finds every bordered agent pane: a top border "╭─ title ─╮" whose
// title names an agent, down to the bottom corner below its top-left one.
func (s tuiScreen) panes() map[string]paneRect {
	found := map[string]paneRect{}
	grid := make([][]string, len(s))
	for i, row := range s {
		grid[i] = cells(row)
	}
	for y, row := range grid {
		for x := 0; x+1 < len(row); x++ {
			if !strings.Contains(topLeft, row[x]) || row[x] == "" || !strings.Contains(horizontals, row[x+1]) || row[x+1] == "" {
				continue
			}
			end := -1
			for e := x + 1; e < len(row); e++ {
				if row[e] != "" && strings.Contains(topRight, row[e]) {
					end = e
					break
				}
			}
			if end < 0 {
				continue
			}
			title := strings.Trim(strings.Join(row[x+1:end], ""), horizontals+" ")
			id := paneAgent(title)
			if id == "" {
				continue
			}
			bottom := -1
			for b := y + 1; b < len(grid); b++ {
				if c := cellAt(grid[b], x); c != "" && strings.Contains(bottomLeft, c) {
					bottom = b
					break
				}
			}
			if bottom < 0 {
				continue
			}
			found[id] = paneRect{x: x, y: y, w: end - x + 1, h: bottom - y + 1, title: title, border: row[x]}
			x = end
		}
	}
	return found
}

// paneAgent returns the agent id a pane title names ("" if none).
func paneAgent(title string) string {
	for _, f := range strings.Fields(title) {
		if vocab.RoleOf(vocab.AgentID(f)) != "" {
			return f
		}
	}
	return ""
}

// paneText is the inside of an agent's pane, one string per row.
func (s tuiScreen) paneText(id string) (string, bool) {
	p, ok := s.panes()[id]
	if !ok {
		return "", false
	}
	var b strings.Builder
	for y := p.y + 1; y < p.y+p.h-1; y++ {
		row := cells(s[y])
		for x := p.x + 1; x < p.x+p.w-1; x++ {
			b.WriteString(cellAt(row, x))
		}
		b.WriteByte('\n')
	}
	return b.String(), true
}
