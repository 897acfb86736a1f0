package ptyagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/term"
	"go.uber.org/goleak"

	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/vocab"
)

// The test binary doubles as the agent programs the tests drive: with
// HM_TEST_HELPER set it runs that helper instead of the tests.
const helperEnv = "HM_TEST_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == GuardCommand {
		os.Exit(RunGuard(os.Args[2:], os.Stdin, os.Stderr))
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	// The spawn thread lives as long as the process (onSpawnThread).
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/hivemind-dev/hivemind/ptyagent.spawnLoop"))
}

// helperSpec returns a spec running the helper in mode.
func helperSpec(id vocab.AgentID, mode string, env ...string) Spec {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return Spec{ID: id, Role: "worker", Argv: []string{exe}, Env: append([]string{helperEnv + "=" + mode}, env...),
		Cols: 80, Rows: 24}
}

func runHelper(mode string) int {
	switch mode {
	case "line":
		return helperLine()
	case "sim", "claude":
		return helperSim(mode == "claude")
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring SIGTERM")
		select {}
	case "setsid":
		return helperSetsid()
	case "manager":
		return helperManager()
	case "subreaper":
		return helperSubreaper()
	case "sleep":
		select {}
	case "flood":
		return helperFlood()
	case "trickle":
		return helperTrickle()
	case "burst":
		return helperBurst()
	case "winch":
		return helperWinch()
	case "hook": // `<test binary> hook <Event>` as Claude Code runs it
		if len(os.Args) < 3 {
			return 2
		}
		_ = RunHook(os.Args[2], os.Stdin, os.Getenv)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper", mode)
	return 2
}

// helperLine is a line-mode (cooked tty) program: it answers each line.
func helperLine() int {
	fmt.Print("line> ")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Printf("got: %s\nline> ", sc.Text())
	}
	return 0
}

// helperSim is a raw-mode agent in the spirit of the sim agent (and, with
// claude set, of Claude Code's screen): it reports SessionStart,
// UserPromptSubmit and Stop through the hook relay, works for
// HM_WORK_MS per message and notes any input that arrives while it works.
//
// HM_SWALLOW_ENTERS=n ignores the first n Enters; HM_DROP_FIRST=1 loses the
// first message entirely (as if the paste went nowhere); HM_NO_STOP=1
// never finishes a turn; HM_NO_HOOKS=1 never reports UserPromptSubmit.
// HM_SPIN=1 redraws a spinner every 50 ms while a turn never finishes, as
// a CLI waiting on a model call that never answers; HM_TRANSCRIPT=path is
// its session file (named in the UserPromptSubmit payload), grown on every
// redraw when HM_GROW=1.
func helperSim(claude bool) int {
	st, err := term.MakeRaw(os.Stdin.Fd())
	if err != nil {
		fmt.Println("raw:", err)
		return 1
	}
	defer term.Restore(os.Stdin.Fd(), st)
	socket, agent := os.Getenv(EnvHookSocket), os.Getenv(EnvAgentID)
	hook := func(ev, payload string) {
		if socket != "" {
			_ = SendHook(socket, agent, ev, []byte(payload))
		}
	}
	work, _ := strconv.Atoi(os.Getenv("HM_WORK_MS"))
	swallow, _ := strconv.Atoi(os.Getenv("HM_SWALLOW_ENTERS"))
	dropFirst := os.Getenv("HM_DROP_FIRST") == "1"
	noStop := os.Getenv("HM_NO_STOP") == "1"
	noHooks := os.Getenv("HM_NO_HOOKS") == "1"
	out := os.Stdout
	title := func(t string) { fmt.Fprintf(out, "\x1b]0;%s\x07", t) }
	prompt := func() {
		if claude {
			fmt.Fprint(out, "\r\n────\r\n❯\u00a0\r\n────\x1b[1A\x1b[3G")
		} else {
			fmt.Fprint(out, "\r\nsim> ")
		}
	}
	if claude {
		fmt.Fprint(out, "\x1b[?2004h")
		title("✳ Claude Code")
	}
	prompt()
	hook(HookSessionStart, `{"source":"startup"}`)

	busy := make(chan bool, 1)
	busy <- false
	n := 0
	var line bytes.Buffer
	buf := make([]byte, 4096)
	for {
		k, err := os.Stdin.Read(buf)
		if err != nil {
			return 0
		}
		in := buf[:k]
		b := <-busy
		busy <- b
		if b {
			fmt.Fprintf(out, "\r\nINPUT WHILE BUSY: %q\r\n", in)
		}
		in = bytes.ReplaceAll(in, []byte("\x1b[200~"), nil)
		in = bytes.ReplaceAll(in, []byte("\x1b[201~"), nil)
		for _, c := range in {
			switch {
			case c == 0x7f && !b: // Backspace, as a line editor does
				if line.Len() > 0 {
					line.Truncate(line.Len() - 1)
					if claude {
						fmt.Fprint(out, "\b \b")
					}
				}
				continue
			case c == 0x15 && !b: // ctrl+u: clear the line
				if claude {
					fmt.Fprint(out, strings.Repeat("\b \b", min(line.Len(), 40)))
				}
				line.Reset()
				continue
			case c == 0x05: // ctrl+e: already at the end
				continue
			}
			if c != '\r' {
				line.WriteByte(c)
				if claude && !b && line.Len() <= 40 {
					out.Write([]byte{c}) // echo into the input box, as Claude does
				}
				continue
			}
			if swallow > 0 {
				swallow--
				continue
			}
			text := line.String()
			line.Reset()
			if claude && text == "/exit" {
				hook(HookSessionEnd, `{}`)
				return 0
			}
			if dropFirst {
				dropFirst = false
				continue
			}
			n++
			<-busy
			busy <- true
			fmt.Fprintf(out, "\r\nsubmitted #%d: %s\r\n", n, text)
			if !noHooks {
				tp, _ := json.Marshal(os.Getenv("HM_TRANSCRIPT"))
				hook(HookUserPromptSubmit, fmt.Sprintf(`{"prompt":%q,"transcript_path":%s}`, text, tp))
			}
			if claude {
				title("◐ Claude Code")
			}
			if noStop {
				if os.Getenv("HM_SPIN") == "1" {
					go spin(out, os.Getenv("HM_TRANSCRIPT"), os.Getenv("HM_GROW") == "1")
				}
				continue
			}
			go func(n int) {
				time.Sleep(time.Duration(work) * time.Millisecond)
				fmt.Fprintf(out, "done #%d\r\n", n)
				if claude {
					title("✳ Claude Code")
				}
				prompt()
				<-busy
				busy <- false
				hook(HookStop, fmt.Sprintf(`{"last_assistant_message":"done %d"}`, n))
			}(n)
		}
	}
}

// helperSetsid starts a grandchild in its own session (like Claude's Bash
// tool), prints its pid and waits.
func helperSetsid() int {
	exe, _ := os.Executable()
	c := exec.Command(exe)
	c.Env = append(os.Environ(), helperEnv+"=sleep")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Println("start:", err)
		return 1
	}
	fmt.Printf("grandchild %d\n", c.Process.Pid)
	if os.Getenv("HM_EXIT") == "1" {
		return 0
	}
	select {}
}

// helperWinch prints the terminal size on every SIGWINCH.
func helperWinch() int {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	fmt.Println("winch ready")
	for range ch {
		w, h, _ := term.GetSize(os.Stdout.Fd())
		fmt.Printf("size %dx%d\n", w, h)
	}
	return 0
}

// helperFlood writes HM_FLOOD_BYTES of agent-like output and exits.
func helperFlood() int {
	total, _ := strconv.Atoi(os.Getenv("HM_FLOOD_BYTES"))
	chunk := agentLikeOutput()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for written := 0; written < total; written += len(chunk) {
		_, _ = w.Write(chunk)
	}
	_ = w.Flush()
	return 0
}

// helperTrickle writes agent-like output at HM_TRICKLE_RATE bytes/s in
// 10 ms pieces until killed.
func helperTrickle() int {
	rate, _ := strconv.Atoi(os.Getenv("HM_TRICKLE_RATE"))
	data := agentLikeOutput()
	pos, sent, t0 := 0, 0, time.Now()
	for now := range time.Tick(10 * time.Millisecond) {
		owed := int(now.Sub(t0).Seconds()*float64(rate)) - sent
		for owed > 0 {
			n := min(owed, len(data)-pos)
			_, _ = os.Stdout.Write(data[pos : pos+n])
			pos, owed, sent = (pos+n)%len(data), owed-n, sent+n
		}
	}
	return 0
}

// helperBurst floods 4 MB of agent-like output, then prints 20 numbered
// lines 10 ms apart (a fast producer turning into a trickle), then waits.
func helperBurst() int {
	chunk := agentLikeOutput()
	for written := 0; written < 4<<20; written += len(chunk) {
		_, _ = os.Stdout.Write(chunk)
	}
	_, _ = os.Stdout.WriteString("\x18\x1b[0m\x1b[r\x1b[?1049l\x1b[2J\x1b[H")
	for i := 0; i < 20; i++ {
		time.Sleep(10 * time.Millisecond) // the producer's pace, not a wait
		fmt.Printf("tail %02d\r\n", i)
	}
	select {}
}

// agentLikeOutput is about 256 KiB of what coding agents print: colours,
// Ink-style redraws of the last lines, long wrapping text, CJK and emoji,
// diffs, and an alternate-screen episode.
func agentLikeOutput() []byte {
	var b strings.Builder
	words := strings.Fields("the quick brown fox jumps over the lazy dog while refactoring engine state machines and 漢字テキスト 🚀 emoji ✳ spinner")
	for i := 0; b.Len() < 256<<10; i++ {
		switch i % 6 {
		case 0: // coloured log lines
			for j := 0; j < 10; j++ {
				fmt.Fprintf(&b, "\x1b[38;5;%dm%s\x1b[0m \x1b[1m%s\x1b[22m %s\r\n", 16+(i+j)%200, words[j%len(words)], words[(j+3)%len(words)], strings.Repeat(words[(i+j)%len(words)]+" ", 6))
			}
		case 1: // Ink redraw: move up, clear lines, redraw a status box
			for j := 0; j < 8; j++ {
				fmt.Fprintf(&b, "\x1b[3A\x1b[2K\r\x1b[38;2;%d;120;200m◐ Working… (%ds)\x1b[0m\r\n\x1b[2K│ %s │\r\n\x1b[2K╰%s╯\r\n", (i*7+j)%255, j, strings.Repeat("·", 40), strings.Repeat("─", 42))
			}
		case 2: // long wrapping paragraph
			for j := 0; j < 400; j++ {
				b.WriteString(words[(i+j)%len(words)])
				b.WriteByte(' ')
			}
			b.WriteString("\r\n")
		case 3: // CJK and emoji
			for j := 0; j < 20; j++ {
				b.WriteString("日本語の文章と中文字符 한국어 😀👍🏽 🇯🇵 混在 テスト\r\n")
			}
		case 4: // diff
			for j := 0; j < 20; j++ {
				fmt.Fprintf(&b, "\x1b[32m+ added line %d: x := compute(%d)\x1b[0m\r\n\x1b[31m- removed line %d\x1b[0m\r\n  context %d\r\n", j, j, j, j)
			}
		case 5: // alternate screen episode
			b.WriteString("\x1b[?1049h\x1b[H\x1b[2J")
			for j := 1; j <= 20; j++ {
				fmt.Fprintf(&b, "\x1b[%d;1H\x1b[7m row %d \x1b[27m %s", j, j, strings.Repeat("▒", 30))
			}
			b.WriteString("\x1b[?1049l")
		}
	}
	return []byte(b.String())
}

// trackModes runs f with cgroup tracking (when this machine allows it) and
// with the mark scan alone.
func trackModes(t *testing.T, f func(t *testing.T, cgroups bool)) {
	t.Run("cgroup", func(t *testing.T) {
		if why := cgroupsUnavailable(); why != "" {
			t.Skipf("cgroups v2 unavailable here: %s", why)
		}
		f(t, true)
	})
	t.Run("mark", func(t *testing.T) {
		withoutCgroups(t)
		f(t, false)
	})
}

// withoutCgroups makes the sessions the test starts track their
// processes by the mark scan (and accept hooks from any process with the
// token, such as the test itself).
func withoutCgroups(t *testing.T) {
	cgroupsOff.Store(true)
	t.Cleanup(func() { cgroupsOff.Store(false) })
}

// waitScreenPID waits until re's first group, a pid, is on the session's
// screen and returns it.
func waitScreenPID(t *testing.T, s *Session, re *regexp.Regexp) int {
	t.Helper()
	var pid int
	waitFor(t, 10*time.Second, "a pid matching "+re.String(), func() bool {
		m := re.FindStringSubmatch(s.Text())
		if m == nil {
			return false
		}
		pid, _ = strconv.Atoi(m[1])
		return true
	})
	return pid
}

// spin redraws a spinner forever, appending a line to transcript on each
// redraw when grow.
func spin(out *os.File, transcript string, grow bool) {
	for i := 0; ; i++ {
		fmt.Fprintf(out, "\r%c Thinking… (%ds)", `|/-\`[i%4], i/20)
		if grow {
			if f, err := os.OpenFile(transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(f, "{\"n\":%d}\n", i)
				f.Close()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
