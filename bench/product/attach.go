package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
)

// attachRow is what attaching to a running team costs.
type attachRow struct {
	n                 int
	attach            []float64 // ms from `hivemind attach` start to every pane's full screen shown
	keyPTY, keyScreen float64   // ms, medians, the 7 others streaming
	keyProto          float64   // ms, median: an input message of the protocol → the agent's PTY
	floodPTY          float64   // ms, median, the others flooding
	busyServer        float64   // % of one core, every agent streaming
	busyClient        float64
	zoomClient        float64 // % of one core, the lead's pane zoomed (idle), the 7 others streaming hidden
	viewP50, viewP99  float64 // the client's View, ms
	fps               float64 // the client's Views per second
}

// markRe is a row of a feed agent's "mark" screen: "<id> r<row>/<rows>".
var markRe = regexp.MustCompile(`\b(lead|reviewer|worker_\d+) r(\d+)/(\d+)\b`)

// attachSection runs a team of n agents in a Hivemind server and attaches
// to it: the time from `hivemind attach` start to every pane's full screen
// shown (each agent draws a static screen whose every row names it), the
// CPU of the server and the client while every agent streams, and
// keystroke → agent's PTY through the client with the others streaming,
// then flooding.
func (b *bench) attachSection(n, samples int) error {
	fmt.Printf("== attach: a team of %d agents in a Hivemind server (hivemind --server), shown by `hivemind attach` in tmux %d×%d\n", n, b.cols, b.rows)
	r := attachRow{n: n}
	dir := filepath.Join(b.tmp, "attach")
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	defer func() { _ = os.RemoveAll(dir) }()
	control := filepath.Join(dir, "control")
	setMode := func(m string) error { return writeAtomic(control, m) }
	if err := setMode("idle"); err != nil {
		return err
	}
	ids, workers := hivemindIDs(max(n, 3))
	agent := strings.Join([]string{"exec", shellQuote(b.self), "feed", "-control", shellQuote(control),
		"-rate", strconv.Itoa(b.rate)}, " ")
	srv, err := b.startServer(project, home, agent, workers)
	if err != nil {
		return err
	}
	defer srv.stop()
	h, err := srv.attach(b)
	if err != nil {
		return err
	}
	defer func() { h.stop() }()
	if err := waitProcs(control, len(ids), 2*time.Minute); err != nil {
		return err
	}
	// The first client sized the panes; every agent now draws its mark
	// screen, and the first client must show it whole.
	if err := setMode("mark"); err != nil {
		return err
	}
	if err := h.waitScreen(time.Minute, "every pane's mark screen", func(s string) bool { return marked(s, ids) }); err != nil {
		return err
	}
	started, frames := filepath.Join(dir, "attach-started"), filepath.Join(dir, "frames")
	for i := 0; i < samples; i++ {
		h.stop() // SIGTERM: the client detaches
		_ = os.Remove(started)
		// The clock starts when the client is exec'd (its terminal, a
		// new tmux server, is not counted): the shell notes the time,
		// then becomes hivemind attach.
		argv := []string{"sh", "-c", `date +%s%N > "$0" && exec "$@"`, started, b.hivemind, "attach", "--project", project}
		if h, err = b.startTUI(project, append(slices.Clone(srv.env), "HIVEMIND_FRAME_LOG="+frames), argv); err != nil {
			return err
		}
		if err := h.waitScreen(time.Minute, "every pane's mark screen", func(s string) bool { return marked(s, ids) }); err != nil {
			return err
		}
		shown := time.Now()
		bs, err := os.ReadFile(started)
		ns, perr := strconv.ParseInt(strings.TrimSpace(string(bs)), 10, 64)
		if err != nil || perr != nil {
			return fmt.Errorf("attach start time: %q %v", bs, err)
		}
		r.attach = append(r.attach, ms(shown.Sub(time.Unix(0, ns))))
	}

	if err := setMode("busy"); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // warm-up
	s0, err1 := cpuTicks(srv.pid)
	c0, err2 := cpuTicks(h.pid)
	t0 := time.Now()
	time.Sleep(b.busy) // the measurement window
	s1, err3 := cpuTicks(srv.pid)
	c1, err4 := cpuTicks(h.pid)
	if err := cmpErr(err1, err2, err3, err4); err != nil {
		return err
	}
	wall := time.Since(t0).Seconds()
	r.busyServer, r.busyClient = float64(s1-s0)/clockTicks/wall*100, float64(c1-c0)/clockTicks/wall*100
	if views := frameTimes(frames, t0, t0.Add(b.busy)); len(views) > 0 {
		slices.Sort(views)
		r.viewP50, r.viewP99, r.fps = views[len(views)/2], views[len(views)*99/100], float64(len(views))/wall
	}

	// The lead's pane zoomed and idle, the others streaming unseen: what
	// the hidden panes cost the client (nothing of them is sent to it).
	if r.zoomClient, err = zoomedCPU(h, setMode, b.busy); err != nil {
		return err
	}

	if b.keys > 0 {
		if err := setMode("busy-others"); err != nil {
			return err
		}
		if r.keyPTY, r.keyScreen, err = b.keyLatency(h, control+".lead-input", true); err != nil {
			return err
		}
		if r.keyProto, err = b.protoKeyLatency(filepath.Join(project, ".hivemind", "server.sock"), control+".lead-input"); err != nil {
			return err
		}
		if err := setMode("flood-others"); err != nil {
			return err
		}
		if r.floodPTY, _, err = b.keyLatency(h, control+".lead-input", false); err != nil {
			return fmt.Errorf("keys while the others flood: %w", err)
		}
	}
	_ = setMode("idle")

	slices.Sort(r.attach)
	fmt.Printf("   hivemind attach exec'd → every pane's full screen on the terminal (tmux capture-pane), %d attaches: median %.0f ms, max %.0f ms (goal < 300 ms: %s)\n",
		len(r.attach), median(r.attach), slices.Max(r.attach), verdict(median(r.attach) < 300))
	fmt.Printf("   CPU, %d agents streaming %d B/s each: server %.2f %%, client %.2f %% of one core; the client's View %.2f ms p50, %.2f ms p99, %.1f views/s\n",
		len(ids), b.rate, r.busyServer, r.busyClient, r.viewP50, r.viewP99, r.fps)
	fmt.Printf("   CPU of the client, the lead's pane zoomed (z) and idle, the %d others streaming hidden: %.2f %% of one core (goal ≤ 1 %%: %s)\n",
		len(ids)-1, r.zoomClient, verdict(r.zoomClient <= 1))
	if b.keys > 0 {
		fmt.Printf("   key → agent's PTY through the client, the %d others streaming: %.1f ms median (goal ≤ 16 ms: %s); key → echo on screen %.1f ms\n",
			len(ids)-1, r.keyPTY, verdict(r.keyPTY <= 16), r.keyScreen)
		fmt.Printf("   of which the server: an input message sent on its socket → agent's PTY, the others streaming: %.1f ms median\n", r.keyProto)
		fmt.Printf("   key → agent's PTY through the client, the %d others flooding: %.1f ms median\n", len(ids)-1, r.floodPTY)
	}
	fmt.Println()
	return nil
}

// zoomedCPU zooms the focused pane (the lead's) of the client h, has the
// others stream, and returns the client's CPU (% of one core) over window;
// it leaves every pane shown again.
func zoomedCPU(h *hosted, setMode func(string) error, window time.Duration) (float64, error) {
	shown := func(s string) bool { return strings.Contains(s, "worker_1") }
	if err := h.send("z"); err != nil {
		return 0, err
	}
	if err := h.waitScreen(30*time.Second, "the lead's pane zoomed", func(s string) bool { return !shown(s) }); err != nil {
		return 0, err
	}
	if err := setMode("busy-others"); err != nil {
		return 0, err
	}
	time.Sleep(2 * time.Second) // warm-up
	c0, err := cpuTicks(h.pid)
	t0 := time.Now()
	time.Sleep(window)
	c1, err2 := cpuTicks(h.pid)
	if err := cmpErr(err, err2); err != nil {
		return 0, err
	}
	cpu := float64(c1-c0) / clockTicks / time.Since(t0).Seconds() * 100
	if err := h.send("z"); err != nil {
		return 0, err
	}
	return cpu, h.waitScreen(30*time.Second, "every pane shown again", shown)
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// marked reports whether screen shows every row of every agent's mark
// screen.
func marked(screen string, ids []string) bool {
	seen := map[string]map[int]bool{}
	want := map[string]int{}
	for _, m := range markRe.FindAllStringSubmatch(screen, -1) {
		row, _ := strconv.Atoi(m[2])
		rows, _ := strconv.Atoi(m[3])
		if seen[m[1]] == nil {
			seen[m[1]] = map[int]bool{}
		}
		seen[m[1]][row] = true
		want[m[1]] = rows
	}
	for _, id := range ids {
		if want[id] == 0 || len(seen[id]) != want[id] {
			return false
		}
		for i := 1; i <= want[id]; i++ {
			if !seen[id][i] {
				return false
			}
		}
	}
	return true
}

// protoKeyLatency types tokens into the lead as a client of the server's
// protocol (no terminal, no UI): the median ms from the input message sent
// to the lead's PTY read, the server's share of key → agent.
func (b *bench) protoKeyLatency(sock, inputLog string) (float64, error) {
	nc, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return 0, err
	}
	c := proto.NewConn(nc)
	defer c.Close()
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Kind: proto.KindUI}); err != nil {
		return 0, err
	}
	go func() { // the server's updates, read and dropped
		for {
			if _, err := c.Recv(); err != nil {
				return
			}
		}
	}()
	var lat []float64
	for i := 0; i < b.keys; i++ {
		b.typed++
		tok := fmt.Sprintf("p%c%c%03d", 'a'+b.typed%26, 'a'+(b.typed/26)%26, b.typed%1000)
		t0 := time.Now()
		if err := c.Send(proto.Msg{T: proto.TInput, Agent: "lead", Data: []byte(tok)}); err != nil {
			return 0, err
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			at, err := inputArrival(inputLog, tok)
			if err == nil {
				lat = append(lat, ms(at.Sub(t0)))
				break
			}
			if time.Now().After(deadline) {
				return 0, err
			}
			time.Sleep(time.Millisecond)
		}
		if err := c.Send(proto.Msg{T: proto.TInput, Agent: "lead", Data: []byte("\r")}); err != nil {
			return 0, err
		}
		time.Sleep(50 * time.Millisecond) // keys are typed, not flooded
	}
	return median(lat), nil
}
