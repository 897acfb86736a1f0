package sim

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/vocab"
)

// AssignmentRE finds the assignment path in an injected line.
var AssignmentRE = script.AssignmentRE

// sendHook is the relay client; tests may replace it.
var sendHook = hookrelay.Send

// DefaultPace is the delay per output line of the sim agent.
const DefaultPace = 40 * time.Millisecond

// ANSI styles (256 colours, like Claude Code's palette).
const (
	reset  = "\x1b[0m"
	bold   = "\x1b[1m"
	italic = "\x1b[3m"
	orange = "\x1b[38;5;208m"
	green  = "\x1b[38;5;71m"
	red    = "\x1b[38;5;167m"
	grey   = "\x1b[38;5;244m"
	blue   = "\x1b[38;5;75m"
)

var spinFrames = []string{"·", "✢", "✳", "✶", "✻", "✽"}

var verbs = []string{"Thinking", "Pondering", "Reticulating", "Considering", "Synthesizing", "Musing", "Brewing"}

// Main runs the sim agent: `hivemind sim-agent [flags]`. It reads lines from
// stdin (a PTY in cooked mode, or a pipe in tests), follows every
// `[HIVEMIND]` assignment, and exits 0 on EOF or "/exit". env supplies the
// HIVEMIND_* variables (os.Getenv in production).
func Main(args []string, stdin io.Reader, stdout io.Writer, env func(string) string) int {
	fs := flag.NewFlagSet("sim-agent", flag.ContinueOnError)
	fs.SetOutput(stdout)
	seed := fs.Int64("seed", 1, "random seed (same seed, same output)")
	pace := fs.Duration("pace", DefaultPace, "delay per output line (0: no delays)")
	reject := fs.Int("reject-plans", 1, "plan reviews that ask for changes before approving")
	issues := fs.Int("checkpoint-issues", 1, "checkpoint reviews that report issues before approving")
	friction := fs.Bool("friction", false, "worker_1 logs one friction file")
	forbidden := fs.Bool("forbidden-write", false, "the reviewer tries to write a project source file")
	decisions := fs.Bool("decisions", true, "the lead and worker_1 each record one decision in the shared knowledge")
	notes := fs.Bool("shared-notes", false, "every worker subtask also appends to NOTES.md (git worktrees then conflict)")
	usage := fs.Int("usage", 0, "tokens each turn records (9/10 input, 1/10 output, model \"sim\") in a Claude Code-style session file that the Stop hook names (0: none)")
	agentFlag := fs.String("agent", "", "agent id (default $HIVEMIND_AGENT_ID)")
	roleFlag := fs.String("role", "", "role (default $HIVEMIND_ROLE)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if env == nil {
		env = os.Getenv
	}
	a := &agent{
		out:     bufio.NewWriter(stdout),
		pace:    *pace,
		env:     env,
		id:      firstNonEmpty(*agentFlag, env("HIVEMIND_AGENT_ID"), "sim"),
		role:    vocab.Role(firstNonEmpty(*roleFlag, env("HIVEMIND_ROLE"), string(vocab.RoleWorker))),
		taskDir: env("HIVEMIND_TASK_DIR"),
		project: env("HIVEMIND_PROJECT"),
		socket:  env(hookrelay.EnvHookSocket),
		usage:   max(*usage, 0),
		sc: script.Scenario{RejectPlans: *reject, CheckpointIssues: *issues,
			WriteFriction: *friction, ForbiddenWrite: *forbidden, RecordDecisions: *decisions, SharedNotes: *notes, Pace: *pace},
	}
	h := fnv.New64a()
	h.Write([]byte(a.id))
	a.rnd = rand.New(rand.NewPCG(uint64(*seed), h.Sum64()))
	a.session = fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a.rnd.Uint32(), a.rnd.IntN(1<<16), a.rnd.IntN(1<<12), a.rnd.IntN(1<<12), a.rnd.Uint64()&(1<<48-1))
	a.cwd, _ = os.Getwd()
	if a.usage > 0 {
		// The agent's private temp dir where write scopes give it one
		// (its home is not its to write then), else its home.
		dir := firstNonEmpty(env("TMPDIR"), env("HOME"), os.TempDir())
		a.transcript = filepath.Join(dir, ".hivemind-sim", "sessions", a.session+".jsonl")
	}
	return a.run(stdin, *seed)
}

type agent struct {
	out     *bufio.Writer
	pace    time.Duration
	env     func(string) string
	id      string
	role    vocab.Role
	taskDir string
	project string
	socket  string
	session string
	cwd     string
	sc      script.Scenario
	rnd     *rand.Rand
	// usage is the tokens each turn records in transcript (0: none).
	usage      int
	transcript string
	turns      int
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func (a *agent) run(stdin io.Reader, seed int64) int {
	a.title("✳")
	a.banner(seed)
	a.hook(hookrelay.HookSessionStart, map[string]any{"source": "startup"})
	a.prompt()
	lines := newLineReader(stdin)
	for {
		line, err := lines.next()
		if err != nil {
			a.printf("\n")
			a.flush()
			return 0
		}
		line = cleanLine(line)
		if line == "" {
			continue
		}
		if line == "/exit" || line == "/quit" {
			a.printf("\n%sBye!%s\n", grey, reset)
			a.hook(hookrelay.HookSessionEnd, map[string]any{"reason": "prompt_input_exit"})
			a.flush()
			return 0
		}
		a.turn(line)
		a.prompt()
	}
}

// lineReader splits input on \n or \r (a \r\n pair is one line end).
type lineReader struct {
	r      *bufio.Reader
	lastCR bool
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReader(r)} }

func (l *lineReader) next() (string, error) {
	var b []byte
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			if len(b) > 0 {
				return string(b), nil
			}
			return "", err
		}
		if c == '\n' && l.lastCR && len(b) == 0 {
			l.lastCR = false
			continue
		}
		l.lastCR = c == '\r'
		if c == '\n' || c == '\r' {
			return string(b), nil
		}
		b = append(b, c)
	}
}

// cleanLine removes bracketed-paste markers and control characters.
func cleanLine(s string) string {
	s = strings.NewReplacer("\x1b[200~", "", "\x1b[201~", "").Replace(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

func (a *agent) printf(format string, args ...any) { fmt.Fprintf(a.out, format, args...) }

func (a *agent) flush() { _ = a.out.Flush() }

// line prints one line and waits the pace, so output streams like a real
// agent's.
func (a *agent) line(format string, args ...any) {
	a.printf(format+"\n", args...)
	a.flush()
	if a.pace > 0 {
		time.Sleep(a.pace)
	}
}

func (a *agent) title(glyph string) {
	a.printf("\x1b]0;%s Hivemind sim · %s\x07", glyph, a.id)
}

func (a *agent) prompt() {
	a.title("✳")
	a.printf("\n%s❯ %s", bold, reset)
	a.flush()
}

func (a *agent) banner(seed int64) {
	const w = 58
	row := func(s string) {
		pad := w - 2 - utf8.RuneCountInString(stripANSI(s))
		if pad < 0 {
			pad = 0
		}
		a.printf("%s│%s %s%s %s│%s\n", orange, reset, s, strings.Repeat(" ", pad), orange, reset)
	}
	cwd := a.cwd
	if utf8.RuneCountInString(cwd) > w-10 {
		cwd = "…" + cwd[len(cwd)-(w-11):]
	}
	a.printf("%s╭%s╮%s\n", orange, strings.Repeat("─", w), reset)
	row(orange + "✻" + reset + " " + bold + "Hivemind sim agent" + reset)
	row("")
	row(grey + fmt.Sprintf("agent %s · role %s · seed %d", a.id, a.role, seed) + reset)
	row(grey + "cwd: " + cwd + reset)
	a.printf("%s╰%s╯%s\n", orange, strings.Repeat("─", w), reset)
	a.printf("\n%s  Waiting for [HIVEMIND] assignments. /exit to quit.%s\n", grey, reset)
	a.flush()
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// spin draws a spinner line redrawn in place with \r, then clears it.
func (a *agent) spin(verb string) {
	frames := 1
	if a.pace > 0 {
		frames = 4 + a.rnd.IntN(6)
	}
	for i := 0; i < frames; i++ {
		f := spinFrames[i%len(spinFrames)]
		a.printf("\r\x1b[K%s%s %s…%s %s(esc to interrupt)%s", orange, f, verb, reset, grey, reset)
		a.flush()
		if a.pace > 0 {
			time.Sleep(a.pace)
		}
	}
	a.printf("\r\x1b[K")
}

func (a *agent) hook(event string, fields map[string]any) {
	if a.socket == "" {
		return
	}
	p := map[string]any{"session_id": a.session, "cwd": a.cwd, "hook_event_name": event}
	for k, v := range fields {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	// Never block or fail the agent on the relay: Hivemind may be gone.
	_ = sendHook(a.socket, a.id, event, b)
}

// minTurn is the shortest turn. The relay serves each hook connection on
// its own goroutine, so a Stop sent right after UserPromptSubmit could be
// handled first and leave the agent looking busy forever; real agents never
// finish a turn this fast either.
const minTurn = 150 * time.Millisecond

func (a *agent) turn(line string) {
	start := time.Now()
	a.hook(hookrelay.HookUserPromptSubmit, map[string]any{"prompt": line})
	a.title("◐")
	a.printf("\n")
	summary := a.work(line)
	if d := minTurn - time.Since(start); d > 0 {
		time.Sleep(d)
	}
	stop := map[string]any{"stop_hook_active": false, "last_assistant_message": summary}
	if a.recordUsage() {
		stop["transcript_path"] = a.transcript
	}
	a.hook(hookrelay.HookStop, stop)
}

// recordUsage appends this turn's usage to the session file, as Claude
// Code records a message's usage; false when it records none.
func (a *agent) recordUsage() bool {
	if a.usage <= 0 {
		return false
	}
	a.turns++
	out := a.usage / 10
	line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
		"id": fmt.Sprintf("sim-%d", a.turns), "model": "sim",
		"usage": map[string]any{"input_tokens": a.usage - out, "output_tokens": out}}})
	if err := os.MkdirAll(filepath.Dir(a.transcript), 0o700); err != nil {
		return false
	}
	f, err := os.OpenFile(a.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close()) == nil
}

// work handles one submitted line and returns the turn's final message.
func (a *agent) work(line string) string {
	m := AssignmentRE.FindString(line)
	if m == "" {
		a.spin(verbs[a.rnd.IntN(len(verbs))])
		msg := "I follow Hivemind assignments: send a [HIVEMIND] line naming an assignments/<agent>-<seq>.json file."
		a.line("%s●%s %s", blue, reset, msg)
		return msg
	}
	path := a.resolve(m)
	b, err := os.ReadFile(path)
	var asg vocab.Assignment
	if err == nil {
		err = json.Unmarshal(b, &asg)
	}
	if err != nil {
		msg := fmt.Sprintf("Cannot read assignment %s: %v", path, err)
		a.line("%s●%s %s%s%s", red, reset, red, msg, reset)
		return msg
	}
	if asg.Agent == "" {
		asg.Agent = vocab.AgentID(a.id)
	}
	if asg.Role == "" {
		asg.Role = a.role
	}
	taskDir := a.taskDir
	if taskDir == "" {
		taskDir = filepath.Dir(filepath.Dir(path))
	}
	project := a.project
	if project == "" {
		project = filepath.Dir(filepath.Dir(filepath.Dir(taskDir)))
	}
	a.spin(verbs[a.rnd.IntN(len(verbs))])
	a.line("%s●%s %sRead%s(%s)", green, reset, bold, reset, a.show(path, project))
	a.line("  %s⎿%s  %sRead %d lines · seq %d · %s%s", grey, reset, grey, strings.Count(string(b), "\n")+1, asg.Seq, asg.State, reset)
	writes, narr := a.sc.Respond(asg, taskDir, project, a.rnd)
	for _, t := range narr.Thoughts {
		a.line("%s✻ %s%s%s", grey, italic, t, reset)
	}
	for _, w := range writes {
		a.spin(verbs[a.rnd.IntN(len(verbs))])
		a.write(w, project)
	}
	a.line("")
	a.line("%s●%s %s", blue, reset, narr.Summary)
	return narr.Summary
}

func (a *agent) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	for _, base := range []string{a.taskDir, a.cwd} {
		if base == "" {
			continue
		}
		if c := filepath.Join(base, p); fileExists(c) {
			return c
		}
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// show prints a path relative to the project when it is inside it.
func (a *agent) show(p, project string) string {
	if r, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func (a *agent) write(w FileWrite, project string) {
	name := a.show(w.Path, project)
	old, oerr := os.ReadFile(w.Path)
	tool := "Write"
	if oerr == nil {
		tool = "Update"
	}
	a.line("%s●%s %s%s%s(%s)", green, reset, bold, tool, reset, name)
	if w.Forbidden {
		a.line("  %s⎿%s  %sError: %s may not modify project sources — write denied%s", grey, reset, red, a.role, reset)
		return
	}
	if err := atomicWrite(w.Path, []byte(w.Content)); err != nil {
		a.line("  %s⎿%s  %sError: %v%s", grey, reset, red, err, reset)
		return
	}
	newLines := strings.Split(strings.TrimRight(w.Content, "\n"), "\n")
	shown, start := newLines, 0
	if oerr == nil {
		// Show only what was added after the old content.
		start = len(strings.Split(strings.TrimRight(string(old), "\n"), "\n"))
		if strings.HasPrefix(w.Content, string(old)) && start < len(newLines) {
			shown = newLines[start:]
		} else {
			start = 0
		}
	}
	a.line("  %s⎿%s  %s %d lines to %s", grey, reset, map[bool]string{true: "Added", false: "Wrote"}[oerr == nil], len(shown), name)
	const maxShown = 8
	if strings.HasSuffix(w.Path, ".done") {
		// The marker holds a timestamp and absolute paths: keep the
		// transcript reproducible.
		return
	}
	for i, l := range shown {
		if i == maxShown {
			a.line("     %s… +%d lines%s", grey, len(shown)-maxShown, reset)
			break
		}
		l = strings.ReplaceAll(l, "\t", "    ")
		if utf8.RuneCountInString(l) > 90 {
			l = string([]rune(l)[:90])
		}
		a.line("     %s%4d%s %s+ %s%s", grey, start+i+1, reset, green, l, reset)
	}
}

// atomicWrite writes a temp file in the same directory, fsyncs it and
// renames it into place, so watchers never see a half-written file.
func atomicWrite(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
