// Command tuicpu measures the CPU of the Hivemind process running its
// full-screen UI (issue 6, issue 8 item 4) and the keystroke latency of an
// attached pane.
//
// It runs the hivemind binary in a detached tmux session of 160×48 with
// --workers 6 (8 agents, 8 panes) and a custom agent command: this program
// in feed mode, which writes agent-like terminal output (the issue-8
// workload generator: Ink-style redraws, colours, wrapping markdown, code,
// diffs, alt-screen episodes) at a fixed rate, and echoes what it is typed
// like an agent in raw mode. A control file switches every feeder between
// silent and streaming, so one Hivemind run gives both figures:
//
//   - idle: feeders silent, every agent idle, for -idle;
//   - busy: all 8 feeders at -rate bytes/s each, for -busy;
//
// The CPU is utime+stime of the hivemind process from /proc/<pid>/stat
// over the window (children excluded), as a percentage of one core. The
// bytes actually fed are read from the feeders' /proc/<pid>/io.
//
// Keystroke latency: the lead's pane is attached (enter) and a short token
// is typed with tmux send-keys. Two times per token: until the lead's
// feeder reads it from its PTY (key → Hivemind → PTY, from the feeder's
// input log), and until capture-pane shows the feeder's echo (the whole
// loop back to the screen). Both start before tmux send-keys runs, so they
// include tmux's own round trips (printed for reference). Measured with the
// other 7 panes streaming and with everything idle.
//
// Usage: go run ./bench/tuicpu [-hivemind BIN] (bench/tui_cpu.sh builds and runs it).
package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/creack/pty"

	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "feed" {
		os.Exit(feedMain(os.Args[2:]))
	}
	hm := flag.String("hivemind", "", "hivemind binary (default: go build it)")
	rate := flag.Int("rate", 20000, "bytes per second each feeder writes while busy")
	busy := flag.Duration("busy", 20*time.Second, "busy measurement window")
	idle := flag.Duration("idle", 20*time.Second, "idle measurement window")
	workers := flag.Int("workers", 6, "hivemind --workers (agents = workers + 2)")
	tick := flag.Duration("tick", 10*time.Millisecond, "how often each feeder writes while busy (rate × tick bytes a write)")
	runs := flag.Int("runs", 1, "idle and busy windows to measure, alternating (median reported)")
	keys := flag.Int("keys", 30, "keystroke latency samples per condition (0: skip)")
	cols := flag.Int("cols", 160, "terminal width")
	rows := flag.Int("rows", 48, "terminal height")
	fps := flag.Int("fps", 0, "TUI frame-rate cap written to the user config (0: hivemind's default)")
	var extraEnv envFlag
	flag.Var(&extraEnv, "env", "extra KEY=VALUE for the hivemind process (repeatable)")
	flag.Parse()
	r := &run{env: extraEnv, tick: *tick, fps: *fps, runs: max(*runs, 1), rate: *rate, busy: *busy, idle: *idle, workers: *workers, keys: *keys, cols: *cols, rows: *rows}
	if err := r.main(*hm); err != nil {
		fmt.Fprintln(os.Stderr, "tuicpu:", err)
		os.Exit(1)
	}
}

// envFlag collects repeated -env values.
type envFlag []string

func (e *envFlag) String() string     { return strings.Join(*e, " ") }
func (e *envFlag) Set(v string) error { *e = append(*e, v); return nil }

type run struct {
	env                             []string
	rate, workers, keys, cols, rows int
	fps, runs                       int
	busy, idle, tick                time.Duration

	dir     string // temp dir: project, home, control file
	project string
	control string
	server  string // tmux -L name
	pid     int    // hivemind
}

func (r *run) main(hm string) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux is not installed")
	}
	var err error
	if r.dir, err = os.MkdirTemp("", "hivemind-tuicpu-"); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(r.dir) }()
	if hm == "" {
		hm = filepath.Join(r.dir, "hivemind")
		build := exec.Command("go", "build", "-o", hm, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build hivemind: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r.project = filepath.Join(r.dir, "project")
	home := filepath.Join(r.dir, "home")
	r.control = filepath.Join(r.dir, "control")
	for _, d := range []string{r.project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := r.setMode("idle"); err != nil {
		return err
	}
	if r.fps > 0 {
		cfg := filepath.Join(home, ".config", "hivemind", "config.toml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("fps = %d\n", r.fps)), 0o644); err != nil {
			return err
		}
	}

	agent := fmt.Sprintf("%s feed -control %s -rate %d -tick %s", shellQuote(self), shellQuote(r.control), r.rate, r.tick)
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"TERM=tmux-256color", "COLORTERM=truecolor"}
	env = append(env, r.env...)
	words := []string{"exec", "env"}
	for _, kv := range env {
		words = append(words, shellQuote(kv))
	}
	words = append(words, shellQuote(hm), "--agent", shellQuote(agent), "--workers", strconv.Itoa(r.workers),
		shellQuote("tui cpu benchmark"))
	r.server = fmt.Sprintf("hivemind-tuicpu-%d", os.Getpid())
	if out, err := r.tmux("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(r.cols), "-y", strconv.Itoa(r.rows),
		"-s", "hm", "-c", r.project, strings.Join(words, " "), ";", "set-option", "-t", "hm", "remain-on-exit", "on"); err != nil {
		return fmt.Errorf("tmux: %v: %s", err, out)
	}
	sock, _ := r.tmux("display-message", "-p", "#{socket_path}")
	stop := func() {
		_, _ = r.tmux("kill-server")
		if sock = strings.TrimSpace(sock); strings.Contains(sock, r.server) {
			_ = os.Remove(sock) // tmux leaves it behind
		}
	}
	defer stop()
	// Ctrl-C: still tear tmux down.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stop()
		_ = os.RemoveAll(r.dir)
		os.Exit(1)
	}()

	pidText, _ := r.tmux("display-message", "-p", "-t", "hm", "#{pane_pid}")
	if r.pid, err = strconv.Atoi(strings.TrimSpace(pidText)); err != nil {
		return fmt.Errorf("hivemind pid: %q", pidText)
	}
	agents := r.workers + 2
	printMachine(r.cols, r.rows, agents, r.rate)

	// Settle: every pane drawn, no agent starting or busy (the lead got
	// its assignment typed in and went quiet).
	if err := r.waitScreen(60*time.Second, "all panes idle", func(s string) bool {
		return strings.Count(s, "worker_") >= r.workers && strings.Contains(s, "lead") &&
			!strings.Contains(s, "starting") && !strings.Contains(s, "busy")
	}); err != nil {
		return err
	}

	fmt.Println("== CPU of the hivemind process (utime+stime / wall, one core = 100 %)")
	var idles, busies []float64
	for i := 0; i < r.runs; i++ {
		if err := r.setMode("idle"); err != nil {
			return err
		}
		// Let the last output drain and the agents go quiet (a steady
		// state to measure, not a condition to wait for).
		time.Sleep(2 * time.Second)
		idleCPU, err := r.measure(r.idle)
		if err != nil {
			return err
		}
		idles = append(idles, idleCPU)
		fmt.Printf("run %d  idle (%d panes, feeders silent, %v):        %6.2f %%\n", i+1, agents, r.idle, idleCPU)

		if err := r.setMode("busy"); err != nil {
			return err
		}
		time.Sleep(2 * time.Second) // warm-up, as above
		fed0 := r.fedBytes()
		t0 := time.Now()
		busyCPU, err := r.measure(r.busy)
		if err != nil {
			return err
		}
		fed := float64(r.fedBytes()-fed0) / time.Since(t0).Seconds()
		busies = append(busies, busyCPU)
		fmt.Printf("run %d  busy (%d panes × %d B/s, %v):        %6.2f %%   (fed %.1f KB/s per pane, %.0f KB/s in all)\n",
			i+1, agents, r.rate, r.busy, busyCPU, fed/float64(agents)/1000, fed/1000)
	}
	mi, lo, hi := stats(idles)
	mb, blo, bhi := stats(busies)
	fmt.Printf("idle: median %.2f %% (min %.2f, max %.2f) of one core — target ≤ 1 %%: %s\n", mi, lo, hi, verdict(mi <= 1))
	fmt.Printf("busy: median %.2f %% (min %.2f, max %.2f) of one core — target ≤ 15 %%: %s\n", mb, blo, bhi, verdict(mb <= 15))
	if err := r.setMode("idle"); err != nil {
		return err
	}

	if r.keys > 0 {
		fmt.Println()
		fmt.Println("== keystroke → agent → screen (attached lead pane; tmux send-keys to capture-pane showing the echo)")
		if err := r.latency(); err != nil {
			return err
		}
	}
	return r.quit()
}

// stats returns the median, minimum and maximum of xs.
func stats(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func printMachine(cols, rows, agents, rate int) {
	fmt.Println("== machine")
	fmt.Printf("date:   %s\n", time.Now().UTC().Format("2006-01-02T15:04Z"))
	var u syscall.Utsname
	_ = syscall.Uname(&u)
	fmt.Printf("kernel: %s %s, %d CPUs, %s\n", utsString(u.Sysname[:]), utsString(u.Release[:]), runtime.NumCPU(), cpuModel())
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			fmt.Printf("load:   %s\n", strings.Join(f[:3], " "))
		}
	}
	fmt.Printf("go:     %s\n", runtime.Version())
	if out, err := exec.Command("tmux", "-V").Output(); err == nil {
		fmt.Printf("tmux:   %s", out)
	}
	fmt.Printf("setup:  tmux %d×%d, %d agent panes, feeders at %d B/s each\n\n", cols, rows, agents, rate)
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func (r *run) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", r.server}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (r *run) capture() string {
	out, _ := r.tmux("capture-pane", "-p", "-t", "hm")
	return out
}

func (r *run) dead() bool {
	out, _ := r.tmux("display-message", "-p", "-t", "hm", "#{pane_dead}")
	return strings.TrimSpace(out) == "1"
}

// waitScreen polls the screen until ok holds.
func (r *run) waitScreen(d time.Duration, what string, ok func(string) bool) error {
	deadline := time.Now().Add(d)
	for {
		s := r.capture()
		if ok(s) {
			return nil
		}
		if r.dead() {
			return fmt.Errorf("hivemind exited while waiting for %s:\n%s", what, s)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setMode writes the feeders' control file (atomically).
func (r *run) setMode(mode string) error {
	tmp := r.control + ".tmp"
	if err := os.WriteFile(tmp, []byte(mode), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.control)
}

// measure returns hivemind's CPU over d as a percentage of one core.
func (r *run) measure(d time.Duration) (float64, error) {
	c0, err := cpuTicks(r.pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(d) // the measurement window
	c1, err := cpuTicks(r.pid)
	if err != nil {
		return 0, err
	}
	wall := time.Since(t0)
	return float64(c1-c0) / clockTicks / wall.Seconds() * 100, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// cpuTicks returns utime+stime of a process.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	// Fields after "(comm)": state is stat field 3; utime 14, stime 15.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return u + s, nil
}

// fedBytes sums the bytes written by every feeder of this run
// (/proc/<pid>/io wchar).
func (r *run) fedBytes() int64 {
	var total int64
	entries, _ := os.ReadDir("/proc")
	needle := []byte("-control\x00" + r.control + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if !bytes.Contains(cmdline, needle) || !bytes.Contains(cmdline, []byte("feed")) {
			continue
		}
		io, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		for _, l := range strings.Split(string(io), "\n") {
			if v, ok := strings.CutPrefix(l, "wchar: "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total
}

// latency types tokens into the attached lead pane. Two times per token,
// from just before tmux send-keys: until the lead's feeder read the token
// from its PTY (its input log: key → Hivemind → PTY), and until
// capture-pane shows the feeder's echo (the whole loop back to the screen,
// including the frame cap and tmux's own round trips). Measured with the
// other 7 panes streaming and with everything idle.
func (r *run) latency() error {
	if _, err := r.tmux("send-keys", "-t", "hm", "1"); err != nil {
		return err
	}
	if _, err := r.tmux("send-keys", "-t", "hm", "Enter"); err != nil {
		return err
	}
	if err := r.waitScreen(10*time.Second, "attached", func(s string) bool {
		return strings.Contains(s, "attached to lead")
	}); err != nil {
		return err
	}
	n := 0
	for _, mode := range []string{"busy-others", "idle"} {
		if err := r.setMode(mode); err != nil {
			return err
		}
		time.Sleep(time.Second) // let the mode settle: a steady state, not a condition
		var toPTY, toScreen []time.Duration
		for i := 0; i < r.keys; i++ {
			n++
			tok := fmt.Sprintf("k%c%c%03d", 'a'+n%26, 'a'+(n/26)%26, n%1000)
			t0 := time.Now()
			if out, err := r.tmux("send-keys", "-t", "hm", "-l", tok); err != nil {
				return fmt.Errorf("send-keys: %v %s", err, out)
			}
			if err := r.waitScreenFast(5*time.Second, tok); err != nil {
				return err
			}
			toScreen = append(toScreen, time.Since(t0))
			at, err := r.inputArrival(tok)
			if err != nil {
				return err
			}
			toPTY = append(toPTY, at.Sub(t0))
			// A new line for the next token (never wraps a token).
			if _, err := r.tmux("send-keys", "-t", "hm", "Enter"); err != nil {
				return err
			}
		}
		label := map[string]string{"busy-others": "7 other panes streaming", "idle": "all idle"}[mode]
		fmt.Printf("%s, n=%d:\n", label, r.keys)
		printDist("  key → agent's PTY", toPTY)
		printDist("  key → echo on screen", toScreen)
	}
	// The tmux round trip alone (a command + capture-pane), for reference.
	var base []time.Duration
	for i := 0; i < 10; i++ {
		t0 := time.Now()
		_, _ = r.tmux("display-message", "-p", "-t", "hm", "#{pane_pid}")
		_ = r.capture()
		base = append(base, time.Since(t0))
	}
	printDist("tmux command + capture-pane alone (included above)", base)
	_, err := r.tmux("send-keys", "-t", "hm", "C-]")
	return err
}

func printDist(label string, d []time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	fmt.Printf("%-52s median %5.1f ms  p90 %5.1f ms  max %5.1f ms\n", label+":",
		ms(s[len(s)/2]), ms(s[len(s)*9/10]), ms(s[len(s)-1]))
}

// inputArrival returns when the lead's feeder read the last byte of tok
// (its input log: one "unixnano hex-bytes" line per read).
func (r *run) inputArrival(tok string) (time.Time, error) {
	b, err := os.ReadFile(r.inputLog())
	if err != nil {
		return time.Time{}, err
	}
	var all []byte
	for _, l := range strings.Split(string(b), "\n") {
		ns, hexb, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		chunk, err := hex.DecodeString(hexb)
		if err != nil {
			continue
		}
		all = append(all, chunk...)
		if bytes.Contains(all, []byte(tok)) {
			t, _ := strconv.ParseInt(ns, 10, 64)
			return time.Unix(0, t), nil
		}
	}
	return time.Time{}, fmt.Errorf("the lead's feeder never read %q", tok)
}

// inputLog is where the lead's feeder logs what it reads.
func (r *run) inputLog() string { return r.control + ".lead-input" }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// waitScreenFast polls capture-pane as fast as it can for text.
func (r *run) waitScreenFast(d time.Duration, text string) error {
	deadline := time.Now().Add(d)
	for {
		if strings.Contains(r.capture(), text) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("typed %q never showed:\n%s", text, r.capture())
		}
	}
}

// quit quits hivemind (q, then y) and waits for it to exit.
func (r *run) quit() error {
	_ = r.setMode("idle")
	if _, err := r.tmux("send-keys", "-t", "hm", "q"); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for !r.dead() {
		if strings.Contains(r.capture(), "[y/n]") {
			_, _ = r.tmux("send-keys", "-t", "hm", "y")
		}
		if time.Now().After(deadline) {
			return errors.New("hivemind did not exit after q, y")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ---- feed mode: the agent ----

// feedMain is one agent: it streams the workload at -rate bytes/s while the
// control file says "busy" (or "busy-others" and this is not the lead),
// is silent otherwise, and echoes its input like a raw-mode TUI.
func feedMain(args []string) int {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	control := fs.String("control", "", "control file: idle, busy, busy-others")
	rate := fs.Int("rate", 20000, "bytes per second while busy")
	every := fs.Duration("tick", 10*time.Millisecond, "write interval while busy")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	id := os.Getenv("HIVEMIND_AGENT_ID")
	if st, err := term.MakeRaw(os.Stdin.Fd()); err == nil {
		defer func() { _ = term.Restore(os.Stdin.Fd(), st) }()
	}
	f := &feeder{id: id, out: os.Stdout}
	if id == "lead" {
		// The driver times keystrokes by when they arrive here.
		if lf, err := os.Create(*control + ".lead-input"); err == nil {
			defer lf.Close()
			f.inputLog = lf
		}
	}
	f.regenerate()

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	inputDone := make(chan struct{})
	go f.echo(os.Stdin, inputDone)

	tick := time.NewTicker(*every)
	defer tick.Stop()
	var mode string
	var modeAt time.Time
	var since time.Time
	var sent int64
	for {
		select {
		case <-inputDone:
			return 0
		case <-winch:
			f.regenerate()
		case now := <-tick.C:
			if now.Sub(modeAt) >= 50*time.Millisecond || mode == "" {
				b, _ := os.ReadFile(*control)
				m := strings.TrimSpace(string(b))
				if m == "busy-others" && id == "lead" {
					m = "idle"
				} else if m == "busy-others" {
					m = "busy"
				}
				if m != mode {
					mode, since, sent = m, now, 0
				}
				modeAt = now
			}
			if mode != "busy" {
				continue
			}
			owed := int64(now.Sub(since).Seconds()*float64(*rate)) - sent
			if owed <= 0 {
				continue
			}
			f.write(owed)
			sent += owed
		}
	}
}

type feeder struct {
	id       string
	out      io.Writer
	inputLog io.Writer // "unixnano hex-bytes" per read (nil: none)

	mu   sync.Mutex
	data []byte
	pos  int
}

// regenerate makes a workload drawn for the terminal's current size.
func (f *feeder) regenerate() {
	rows, cols, err := pty.Getsize(os.Stdout)
	if err != nil || rows <= 0 || cols <= 0 {
		rows, cols = 24, 80
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(f.id))
	data, _ := workload.Generate(workload.Options{Seed: h.Sum64(), Size: 2 << 20, Cols: cols, Rows: rows})
	f.mu.Lock()
	f.data, f.pos = data, 0
	f.mu.Unlock()
}

// write writes the next n bytes of the workload (wrapping around).
func (f *feeder) write(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for n > 0 {
		chunk := min(int(n), len(f.data)-f.pos)
		_, _ = f.out.Write(f.data[f.pos : f.pos+chunk])
		f.pos = (f.pos + chunk) % len(f.data)
		n -= int64(chunk)
	}
}

// echo writes back what is typed (Enter as a new line), like an agent's
// input box; it closes done at EOF.
func (f *feeder) echo(in io.Reader, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 && f.inputLog != nil {
			fmt.Fprintf(f.inputLog, "%d %x\n", time.Now().UnixNano(), buf[:n])
		}
		if n > 0 {
			b := bytes.ReplaceAll(buf[:n], []byte("\r"), []byte("\r\n"))
			f.mu.Lock()
			_, _ = f.out.Write(b)
			f.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}
