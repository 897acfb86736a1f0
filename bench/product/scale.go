package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// scaleRow is what one agent count costs Hivemind's UI.
type scaleRow struct {
	n, agents         int
	idleCPU, busyCPU  float64 // % of one core
	rssMiB            float64 // at the end of the busy window
	viewP50, viewP99  float64 // ms per View
	fps               float64 // Views per second while busy
	keyPTY, keyScreen float64 // ms, medians, the others streaming
	floodPTY          float64 // ms, median, the others flooding
	fed               float64 // KB/s per streaming agent actually written
}

// scale runs Hivemind's UI with n agents streaming b.rate bytes/s each, for
// each n: idle and busy CPU, memory, frame cost and keystroke latency.
func (b *bench) scale(ns []int) error {
	fmt.Printf("== scale: Hivemind's UI in tmux %d×%d, N agents streaming %d B/s each of agent-like output (at least 3 agents run: lead, reviewer, worker)\n",
		b.cols, b.rows, b.rate)
	fmt.Printf("   CPU of the hivemind process (utime+stime / wall; one core = 100 %%) over %v busy and %v idle windows; keystrokes typed into the attached lead pane with the others streaming\n", b.busy, b.idle)
	var rows []scaleRow
	for _, n := range ns {
		r, err := b.scaleOne(n)
		if err != nil {
			return fmt.Errorf("scale N=%d: %w", n, err)
		}
		rows = append(rows, r)
		fmt.Printf("   N=%-3d done\n", n)
	}
	fmt.Println()
	fmt.Printf("   %3s %6s  %8s  %8s  %11s  %7s  %9s  %8s  %8s  %7s  %10s  %10s  %14s\n",
		"N", "panes", "idle CPU", "busy CPU", "busy CPU/N", "RSS MiB", "RSS/agent", "view p50", "view p99", "views/s", "key→agent", "key→screen", "key→agent (*)")
	for _, r := range rows {
		fmt.Printf("   %3d %6d  %7.2f%%  %7.2f%%  %10.2f%%  %7.1f  %9.2f  %6.2fms  %6.2fms  %7.1f  %8.1fms  %8.1fms  %12.1fms\n",
			r.n, r.agents, r.idleCPU, r.busyCPU, r.busyCPU/float64(r.n), r.rssMiB, r.rssMiB/float64(r.agents), r.viewP50, r.viewP99, r.fps, r.keyPTY, r.keyScreen, r.floodPTY)
	}
	fmt.Println("   (*) with every other agent flooding (writing as fast as its terminal takes it) instead of streaming 20 KB/s")
	if len(rows) > 1 {
		first, last := rows[0], rows[len(rows)-1]
		fmt.Printf("\n   growth %d → %d agents (%.0f×): busy CPU %.1f×, RSS %.1f×, view p50 %.1f×, key→agent %.1f×\n",
			first.n, last.n, float64(last.n)/float64(first.n), last.busyCPU/first.busyCPU, last.rssMiB/first.rssMiB,
			last.viewP50/first.viewP50, last.keyPTY/first.keyPTY)
	}
	for _, r := range rows {
		if r.n == 8 {
			fmt.Printf("   8 agents × %d B/s: %.2f %% of one core (goal ≤ 15 %%: %s); idle %.2f %% (goal ≤ 1 %%: %s)\n",
				b.rate, r.busyCPU, verdict(r.busyCPU <= 15), r.idleCPU, verdict(r.idleCPU <= 1))
			fmt.Printf("   key → agent with the other 7 flooding: %.1f ms (goal ≤ one frame, 33 ms: %s)\n", r.floodPTY, verdict(r.floodPTY <= 1000.0/30))
		}
	}
	fmt.Println()
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func (b *bench) scaleOne(n int) (scaleRow, error) {
	row := scaleRow{n: n, agents: max(n, 3)}
	dir := filepath.Join(b.tmp, fmt.Sprintf("scale-%d", n))
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return row, err
		}
	}
	defer func() { _ = os.RemoveAll(dir) }()
	control := filepath.Join(dir, "control")
	setMode := func(m string) error { return writeAtomic(control, m) }
	if err := setMode("idle"); err != nil {
		return row, err
	}
	// Who streams: workers first, then the reviewer, the lead last (the
	// lead's pane is the one typed into).
	workers := row.agents - 2
	var order []string
	for i := 1; i <= workers; i++ {
		order = append(order, string(vocab.WorkerID(i)))
	}
	order = append(order, "reviewer", "lead")
	streamers := order[:n]
	agent := strings.Join([]string{"exec", shellQuote(b.self), "feed", "-control", shellQuote(control),
		"-rate", strconv.Itoa(b.rate), "-streamers", strings.Join(streamers, ",")}, " ")
	frames := filepath.Join(dir, "frames")
	h, err := b.startTUI(project, b.hivemindEnv(home, "HIVEMIND_FRAME_LOG="+frames), b.hivemindArgv(project, agent, workers, false))
	if err != nil {
		return row, err
	}
	defer h.stop()

	// Settle: every agent process runs and the lead's pane is drawn; then
	// a few seconds for starts and the first assignment to pass (a steady
	// state to measure, not a condition to wait for).
	if err := h.waitScreen(2*time.Minute, "the lead's pane", func(s string) bool { return strings.Contains(s, "lead") }); err != nil {
		return row, err
	}
	if err := waitProcs(control, row.agents, 2*time.Minute); err != nil {
		return row, err
	}
	time.Sleep(3 * time.Second)

	measure := func(d time.Duration) (float64, error) {
		c0, err := cpuTicks(h.pid)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		time.Sleep(d) // the measurement window
		c1, err := cpuTicks(h.pid)
		if err != nil {
			return 0, err
		}
		return float64(c1-c0) / clockTicks / time.Since(t0).Seconds() * 100, nil
	}
	if row.idleCPU, err = measure(b.idle); err != nil {
		return row, err
	}
	if err := setMode("busy"); err != nil {
		return row, err
	}
	time.Sleep(2 * time.Second) // warm-up
	fed0, t0 := fedBytes(control), time.Now()
	if row.busyCPU, err = measure(b.busy); err != nil {
		return row, err
	}
	t1 := time.Now()
	row.fed = float64(fedBytes(control)-fed0) / t1.Sub(t0).Seconds() / float64(n) / 1000
	row.rssMiB = float64(rssKB(h.pid)) / 1024
	views := frameTimes(frames, t0, t1)
	if len(views) > 0 {
		slices.Sort(views)
		row.viewP50, row.viewP99 = views[len(views)/2], views[len(views)*99/100]
		row.fps = float64(len(views)) / t1.Sub(t0).Seconds()
	}
	if b.keys > 0 {
		if err := setMode("busy-others"); err != nil {
			return row, err
		}
		if row.keyPTY, row.keyScreen, err = b.keyLatency(h, control+".lead-input", true); err != nil {
			return row, err
		}
		if err := setMode("flood-others"); err != nil {
			return row, err
		}
		if row.floodPTY, _, err = b.keyLatency(h, control+".lead-input", false); err != nil {
			return row, fmt.Errorf("keys while the others flood: %w", err)
		}
	}
	_ = setMode("idle")
	return row, nil
}

// keyLatency types tokens into the lead's pane (attaching it first if
// attach): medians of key → the lead's PTY (its input log) and key → echo
// on screen, both from just before tmux send-keys.
func (b *bench) keyLatency(h *hosted, inputLog string, attach bool) (toPTY, toScreen float64, err error) {
	if attach {
		if err := h.send("1"); err != nil {
			return 0, 0, err
		}
		if err := h.send("Enter"); err != nil {
			return 0, 0, err
		}
		if err := h.waitScreen(30*time.Second, "attached", func(s string) bool { return strings.Contains(s, "attached to lead") }); err != nil {
			return 0, 0, err
		}
	}
	time.Sleep(time.Second) // let the others' streaming settle
	var pty, scr []float64
	for i := 0; i < b.keys; i++ {
		b.typed++ // tokens unique across calls: arrivals are found by content
		tok := fmt.Sprintf("k%c%c%03d", 'a'+b.typed%26, 'a'+(b.typed/26)%26, b.typed%1000)
		t0 := time.Now()
		if err := h.send("-l", tok); err != nil {
			return 0, 0, err
		}
		// The agent's read first, from its log (the read's own time; a
		// cheap poll), then the echo: polling the screen runs a tmux
		// client after another, which must not load the machine while
		// the key is on its way to the agent.
		deadline := time.Now().Add(10 * time.Second)
		at, err := inputArrival(inputLog, tok)
		for ; err != nil; at, err = inputArrival(inputLog, tok) {
			if time.Now().After(deadline) {
				return 0, 0, err
			}
			time.Sleep(time.Millisecond)
		}
		pty = append(pty, ms(at.Sub(t0)))
		for !strings.Contains(h.capture(), tok) {
			if time.Now().After(deadline) {
				return 0, 0, fmt.Errorf("typed %q never showed", tok)
			}
		}
		scr = append(scr, ms(time.Since(t0)))
		if err := h.send("Enter"); err != nil {
			return 0, 0, err
		}
	}
	return median(pty), median(scr), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// frameTimes returns the View durations (ms) logged between t0 and t1.
func frameTimes(path string, t0, t1 time.Time) []float64 {
	b, _ := os.ReadFile(path)
	var out []float64
	for _, l := range strings.Split(string(b), "\n") {
		at, d, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		ns, err1 := strconv.ParseInt(at, 10, 64)
		dur, err2 := strconv.ParseInt(d, 10, 64)
		if err1 != nil || err2 != nil || ns < t0.UnixNano() || ns > t1.UnixNano() {
			continue
		}
		out = append(out, float64(dur)/1e6)
	}
	return out
}

// feedProcs returns the pids of this run's feed agents.
func feedProcs(control string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	needle := []byte("\x00feed\x00-control\x00" + control + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, needle) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitProcs(control string, n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for len(feedProcs(control)) < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d agents started after %v", len(feedProcs(control)), n, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// fedBytes sums what this run's feed agents wrote (/proc/<pid>/io wchar).
func fedBytes(control string) int64 {
	var total int64
	for _, pid := range feedProcs(control) {
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
