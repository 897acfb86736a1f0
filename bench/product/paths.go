package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/hivemind-dev/hivemind/vocab"
)

// agentTime is one flood agent's record.
type agentTime struct {
	bytes          int64
	start, written time.Time // first write, last write returned
	shown          time.Time // the terminal answered the final CSI 6n
}

// drainRate is MB/s as the agent saw its writes go.
func (a agentTime) drainRate() float64 { return mbps(a.bytes, a.written.Sub(a.start)) }

// doneRate is MB/s until the terminal had processed everything.
func (a agentTime) doneRate() float64 { return mbps(a.bytes, a.shown.Sub(a.start)) }

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// trial is one throughput measurement: n agents flooding through one path.
type trial struct {
	b    *bench
	n    int
	dir  string // control directory (ready, go, time files)
	ids  []string
	rss0 int64 // the consumer's RSS with every agent ready, before "go"
	rss1 int64 // and after every agent was answered
	cpu  int64 // the consumer's CPU ticks from "go" until every agent was answered (-1: unknown)
	sys  int64 // of which in the kernel
	// client is a second process of the consumer (the attached client of
	// a server; 0: none): its ticks are in cpu too, and alone in clientCPU.
	client    int
	clientCPU int64
}

// floodCmd is the shell command of a flood agent (id "" = $HIVEMIND_AGENT_ID).
func (t *trial) floodCmd(id string) string {
	w := []string{"exec", shellQuote(t.b.self), "flood", "-dir", shellQuote(t.dir), "-file", shellQuote(t.b.workload),
		"-writers", strings.Join(t.ids, ",")}
	if id != "" {
		w = append(w, "-id", id)
	}
	return strings.Join(w, " ")
}

// run starts the agents with start, lets them go at once, and returns
// their records. pid is the process whose memory is measured (0: none).
func (t *trial) run(start func() (pid int, stop func(), err error)) ([]agentTime, error) {
	pid, stop, err := start()
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := waitFiles(t.dir, t.ids, ".ready", 2*time.Minute); err != nil {
		return nil, err
	}
	t.rss0 = rssKB(pid)
	user0, sys0, cpuErr := procTimes(pid)
	var client0 int64
	if t.client > 0 {
		client0, _ = cpuTicks(t.client)
	}
	if err := touch(filepath.Join(t.dir, "go")); err != nil {
		return nil, err
	}
	if err := waitFiles(t.dir, t.ids, ".time", 10*time.Minute); err != nil {
		return nil, err
	}
	t.rss1 = rssKB(pid)
	t.cpu = -1
	if user1, sys1, err := procTimes(pid); pid > 0 && cpuErr == nil && err == nil {
		t.cpu, t.sys = user1+sys1-user0-sys0, sys1-sys0
	}
	if t.client > 0 && t.cpu >= 0 {
		client1, err := cpuTicks(t.client)
		if err != nil {
			t.cpu = -1
		} else {
			t.clientCPU = client1 - client0
			t.cpu += t.clientCPU
		}
	}
	var out []agentTime
	for _, id := range t.ids {
		b, err := os.ReadFile(filepath.Join(t.dir, id+".time"))
		if err != nil {
			return nil, err
		}
		var n, t0, t1, t2 int64
		if _, err := fmt.Sscan(string(b), &n, &t0, &t1, &t2); err != nil {
			return nil, fmt.Errorf("%s: %q: %v", id, b, err)
		}
		out = append(out, agentTime{bytes: n, start: time.Unix(0, t0), written: time.Unix(0, t1), shown: time.Unix(0, t2)})
	}
	return out, nil
}

// waitFiles polls until <dir>/<id><suffix> exists for every id.
func waitFiles(dir string, ids []string, suffix string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		missing := ""
		for _, id := range ids {
			if !exists(filepath.Join(dir, id+suffix)) {
				missing = id
				break
			}
		}
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s%s", d, missing, suffix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ---- raw PTY reads: the physical limit ----

func (t *trial) raw() (int, func(), error) {
	var cmds []*exec.Cmd
	var ptys []*os.File
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		for _, p := range ptys {
			_ = p.Close()
		}
	}
	for _, id := range t.ids {
		c := exec.Command("/bin/sh", "-c", t.floodCmd(id))
		p, err := pty.StartWithSize(c, &pty.Winsize{Cols: uint16(t.b.cols), Rows: uint16(t.b.rows)})
		if err != nil {
			stop()
			return 0, nil, err
		}
		cmds, ptys = append(cmds, c), append(ptys, p)
		go drainAnswering(p)
	}
	return 0, stop, nil
}

// drainAnswering reads a PTY to the end, answering CSI 6n (and nothing else).
func drainAnswering(p *os.File) {
	q := []byte("\x1b[6n")
	buf := make([]byte, 32<<10)
	var tail []byte // the last bytes read, for a query split across reads
	for {
		n, err := p.Read(buf)
		if n > 0 {
			seam := append(slices.Clone(tail), buf[:min(n, len(q)-1)]...)
			if bytes.Contains(seam, q) || bytes.Contains(buf[:n], q) {
				_, _ = p.WriteString("\x1b[1;1R")
			}
			tail = append(tail, buf[max(0, n-len(q)+1):n]...)
			tail = tail[max(0, len(tail)-len(q)+1):]
		}
		if err != nil {
			return
		}
	}
}

// ---- tmux: N windows of one detached session ----

func (t *trial) tmux() (int, func(), error) {
	sock := fmt.Sprintf("hm-product-%d", os.Getpid())
	args := []string{"-f", "/dev/null", "start-server", ";", "set-option", "-g", "history-limit", strconv.Itoa(t.b.scrollback), ";",
		"new-session", "-d", "-x", strconv.Itoa(t.b.cols), "-y", strconv.Itoa(t.b.rows), "-s", "b", t.floodCmd(t.ids[0])}
	for _, id := range t.ids[1:] {
		args = append(args, ";", "new-window", "-t", "b", t.floodCmd(id))
	}
	if out, err := tmuxCmd(sock, args...); err != nil {
		return 0, nil, fmt.Errorf("tmux: %v: %s", err, out)
	}
	pidText, _ := tmuxCmd(sock, "display-message", "-p", "#{pid}")
	pid, _ := strconv.Atoi(strings.TrimSpace(pidText))
	return pid, func() { killTmux(sock) }, nil
}

// ---- Hivemind: headless, and full screen in a tmux-hosted terminal ----

// hivemindIDs are Hivemind's agent ids for n agents (at least 3: a lead, a
// reviewer and a worker) in the order the first n flood.
func hivemindIDs(n int) (ids []string, workers int) {
	workers = max(1, n-2)
	all := []string{"lead", "reviewer"}
	for i := 1; i <= workers; i++ {
		all = append(all, string(vocab.WorkerID(i)))
	}
	return all[:n], workers
}

// hivemindArgv is the hivemind command line with agent command agent.
func (b *bench) hivemindArgv(project, agent string, workers int, headless bool) []string {
	argv := []string{b.hivemind, "--project", project, "--agent", agent}
	if workers > 16 {
		// Beyond the flag's range, the config file carries it.
		argv = append(argv, "--config", b.writeConfig(project, fmt.Sprintf("workers = %d\n", workers)))
	} else {
		argv = append(argv, "--workers", strconv.Itoa(workers))
	}
	if headless {
		argv = append(argv, "--headless")
	}
	return append(argv, "product benchmark")
}

// hivemindEnv is the environment of a Hivemind run: its own HOME with a
// config that keeps b.scrollback lines per pane and lets the agents write
// the benchmark's control files (outside their write scope).
func (b *bench) hivemindEnv(home string, extra ...string) []string {
	cfg := filepath.Join(home, ".config", "hivemind", "config.toml")
	_ = os.MkdirAll(filepath.Dir(cfg), 0o755)
	text := fmt.Sprintf("scrollback_lines = %d\n", b.scrollback)
	for _, r := range vocab.Roles() {
		text += fmt.Sprintf("\n[roles.%s]\nwritable = [%q]\n", r, b.tmp)
	}
	_ = os.WriteFile(cfg, []byte(text), 0o644)
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TERM=tmux-256color", "COLORTERM=truecolor"}
	return append(env, extra...)
}

func (b *bench) writeConfig(project, text string) string {
	p := filepath.Join(project, "bench-config.toml")
	_ = os.WriteFile(p, []byte(text), 0o644)
	return p
}

func (t *trial) hivemindHeadless() (int, func(), error) {
	project, home, err := t.projectHome()
	if err != nil {
		return 0, nil, err
	}
	_, workers := hivemindIDs(t.n)
	argv := t.b.hivemindArgv(project, t.floodCmd(""), workers, true)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = project
	c.Env = append(os.Environ(), t.b.hivemindEnv(home)...)
	log, err := os.Create(filepath.Join(t.dir, "hivemind.log"))
	if err != nil {
		return 0, nil, err
	}
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		return 0, nil, err
	}
	stop := func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
		_ = log.Close()
	}
	return c.Process.Pid, stop, nil
}

func (t *trial) hivemindTUI() (int, func(), error) {
	project, home, err := t.projectHome()
	if err != nil {
		return 0, nil, err
	}
	_, workers := hivemindIDs(t.n)
	h, err := t.b.startTUI(project, t.b.hivemindEnv(home), t.b.hivemindArgv(project, t.floodCmd(""), workers, false))
	if err != nil {
		return 0, nil, err
	}
	return h.pid, h.stop, nil
}

// hivemindAttached runs the team in a Hivemind server (hivemind --server,
// no terminal: it starts the server and returns) and shows it in one
// `hivemind attach` client in a tmux terminal of the same size as the UI's.
// The consumer is the server (pid) plus the client (t.client).
func (t *trial) hivemindAttached() (int, func(), error) {
	project, home, err := t.projectHome()
	if err != nil {
		return 0, nil, err
	}
	_, workers := hivemindIDs(t.n)
	srv, err := t.b.startServer(project, home, t.floodCmd(""), workers)
	if err != nil {
		return 0, nil, err
	}
	h, err := srv.attach(t.b)
	if err != nil {
		srv.stop()
		return 0, nil, err
	}
	t.client = h.pid
	return srv.pid, func() { h.stop(); srv.stop() }, nil
}

// served is a team in a Hivemind server started by the benchmark.
type served struct {
	project string
	env     []string
	pid     int
	out     string // what hivemind --server printed
}

// startServer starts `hivemind --server` (and flags) for project with
// agent command agent (its own HOME and server registry) and returns once
// it serves.
func (b *bench) startServer(project, home, agent string, workers int, flags ...string) (*served, error) {
	env := b.hivemindEnv(home, "XDG_RUNTIME_DIR="+filepath.Join(home, "run"))
	argv := b.hivemindArgv(project, agent, workers, false)
	argv = append(argv[:1], append(append([]string{"--server"}, flags...), argv[1:]...)...)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = project
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("hivemind --server: %v: %s", err, out)
	}
	pidText, err := os.ReadFile(filepath.Join(project, ".hivemind", "server.pid"))
	if err != nil {
		return nil, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		return nil, fmt.Errorf("server pid: %q", pidText)
	}
	return &served{project: project, env: env, pid: pid, out: string(out)}, nil
}

// attach starts `hivemind attach` in a tmux terminal and waits until it
// shows the lead's pane.
func (s *served) attach(b *bench) (*hosted, error) {
	h, err := b.startTUI(s.project, s.env, []string{b.hivemind, "attach", "--project", s.project})
	if err != nil {
		return nil, err
	}
	if err := h.waitScreen(time.Minute, "the attached client", func(sc string) bool { return strings.Contains(sc, "lead") }); err != nil {
		h.stop()
		return nil, err
	}
	return h, nil
}

// stop stops the team and its server (SIGTERM), then waits for it to go.
func (s *served) stop() { terminate(s.pid) }

// terminate sends pid SIGTERM and waits for it to end (30 s, then SIGKILL).
func terminate(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hosted is Hivemind's full-screen UI running in a detached tmux terminal.
type hosted struct {
	sock string
	pid  int
}

func (b *bench) startTUI(project string, env, argv []string) (*hosted, error) {
	h := &hosted{sock: fmt.Sprintf("hm-product-ui-%d-%d", os.Getpid(), time.Now().UnixNano())}
	words := []string{"exec", "env"}
	for _, kv := range env {
		words = append(words, shellQuote(kv))
	}
	for _, a := range argv {
		words = append(words, shellQuote(a))
	}
	if out, err := tmuxCmd(h.sock, "-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(b.cols), "-y", strconv.Itoa(b.rows),
		"-s", "hm", "-c", project, strings.Join(words, " "), ";", "set-option", "-t", "hm", "remain-on-exit", "on"); err != nil {
		return nil, fmt.Errorf("tmux: %v: %s", err, out)
	}
	pidText, _ := tmuxCmd(h.sock, "display-message", "-p", "-t", "hm", "#{pane_pid}")
	pid, err := strconv.Atoi(strings.TrimSpace(pidText))
	if err != nil {
		killTmux(h.sock)
		return nil, fmt.Errorf("hivemind pid: %q", pidText)
	}
	h.pid = pid
	return h, nil
}

// stop ends Hivemind (SIGTERM: the UI quits and stops its agents), then
// its terminal.
func (h *hosted) stop() {
	terminate(h.pid)
	killTmux(h.sock)
}

func (h *hosted) capture() string {
	out, _ := tmuxCmd(h.sock, "capture-pane", "-p", "-t", "hm")
	return out
}

func (h *hosted) send(keys ...string) error {
	out, err := tmuxCmd(h.sock, append([]string{"send-keys", "-t", "hm"}, keys...)...)
	if err != nil {
		return fmt.Errorf("send-keys: %v %s", err, out)
	}
	return nil
}

// waitScreen polls the hosted screen until ok holds.
func (h *hosted) waitScreen(d time.Duration, what string, ok func(string) bool) error {
	deadline := time.Now().Add(d)
	for {
		s := h.capture()
		if ok(s) {
			return nil
		}
		if !alive(h.pid) {
			return fmt.Errorf("hivemind exited while waiting for %s:\n%s", what, s)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s:\n%s", d, what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- helpers ----

func tmuxCmd(sock string, args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", sock}, args...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func killTmux(sock string) {
	path, _ := tmuxCmd(sock, "display-message", "-p", "#{socket_path}")
	_, _ = tmuxCmd(sock, "kill-server")
	if path = strings.TrimSpace(path); strings.Contains(path, sock) {
		_ = os.Remove(path) // tmux leaves it behind
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// rssKB is a process's resident set (VmRSS) in KiB; 0 if unknown.
func rssKB(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times.
const clockTicks = 100

// cpuTicks returns utime+stime of a process.
func cpuTicks(pid int) (int64, error) {
	u, s, err := procTimes(pid)
	return u + s, err
}

// procTimes returns utime and stime of a process.
func procTimes(pid int) (user, sys int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, errors.New("short /proc/<pid>/stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return u, s, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
