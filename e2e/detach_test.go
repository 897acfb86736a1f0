package e2e_test

import (
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// seqAgentEnv names the control file of the sequence agent (this test
// binary run by hivemind as a custom agent, see TestMain).
const seqAgentEnv = "E2E_SEQ_AGENT_CONTROL" // not HIVEMIND_*: Hivemind keeps those from agents

// seqLine is line n of agent id: its number and a checksum of both, so a
// row cut, merged or duplicated anywhere is seen.
func seqLine(id string, n int) string {
	return fmt.Sprintf("%s %07d %08x", id, n, crc32.ChecksumIEEE([]byte(fmt.Sprintf("%s/%d", id, n))))
}

// pauseLine says agent id paused (pause p) after line n.
func pauseLine(id string, p, n int) string { return fmt.Sprintf("%s paused %d at %07d", id, p, n) }

// seqAgent writes seqLine 1, 2, 3… (three every 10 ms, each write whole
// lines) while its control file says "stream"; when it says "pause <p>"
// it writes pauseLine and stops. Its input (Hivemind's injections) is
// read and dropped, never echoed. (Its terminal is its only output: write
// scopes keep agents from writing elsewhere.)
func seqAgent(control string) int {
	id := os.Getenv("HIVEMIND_AGENT_ID")
	if st, err := term.MakeRaw(os.Stdin.Fd()); err == nil {
		defer func() { _ = term.Restore(os.Stdin.Fd(), st) }()
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				os.Exit(0) // the terminal went
			}
		}
	}()
	// What the terminal echoed before the raw mode (Hivemind's first
	// message) goes with the screen.
	_, _ = os.Stdout.WriteString("\x1b[2J\x1b[H")
	n, said := 0, ""
	for tick := time.NewTicker(10 * time.Millisecond); ; <-tick.C {
		b, _ := os.ReadFile(control)
		mode := strings.TrimSpace(string(b))
		if mode == "stream" {
			var out strings.Builder
			for range 3 {
				n++
				out.WriteString(seqLine(id, n) + "\r\n")
			}
			if _, err := os.Stdout.WriteString(out.String()); err != nil {
				return 0
			}
			continue
		}
		if mode != said && strings.HasPrefix(mode, "pause ") {
			said = mode
			p, _ := strconv.Atoi(strings.TrimPrefix(mode, "pause "))
			if _, err := os.Stdout.WriteString(pauseLine(id, p, n) + "\r\n"); err != nil {
				return 0
			}
		}
	}
}

// checkWindow checks one agent's screen rows (as a client mirrors them)
// while it writes seqLines: the rows that are not blank are consecutive
// lines, each whole, a pause line naming the line before it, and only the
// last one may be cut (a line on its way).
func checkWindow(id string, rows []string) error {
	var text []string
	for _, r := range rows {
		text = append(text, strings.TrimRight(ansi.Strip(r), " "))
	}
	first, last := 0, len(text)
	for first < last && text[first] == "" {
		first++
	}
	for last > first && text[last-1] == "" {
		last--
	}
	prev := 0
	for i := first; i < last; i++ {
		f := strings.Fields(text[i])
		n := 0
		if len(f) == 3 {
			n, _ = strconv.Atoi(f[1])
		}
		whole := n > 0 && text[i] == seqLine(id, n)
		next := prev + 1
		if prev == 0 && len(text[i]) >= len(id)+8 {
			next, _ = strconv.Atoi(text[i][len(id)+1 : len(id)+8])
		}
		var pp, pn int
		paused := len(f) == 5 && f[1] == "paused"
		if paused {
			pp, _ = strconv.Atoi(f[2])
			pn, _ = strconv.Atoi(f[4])
		}
		switch {
		case whole && (prev == 0 || n == prev+1):
			prev = n
		case paused && text[i] == pauseLine(id, pp, pn) && (prev == 0 || pn == prev):
			prev = pn
		case i == last-1 && (strings.HasPrefix(seqLine(id, next), text[i]) || strings.HasPrefix(text[i], id+" paused ")):
			// the next line, cut where the emulator had read to
		case i == first && i == last-1 && (strings.HasPrefix(id+" ", text[i]) ||
			strings.HasPrefix(text[i], id+" ") && strings.Trim(text[i][len(id)+1:], "0123456789") == ""):
			// the first line, cut in its number
		default:
			return fmt.Errorf("row %d %q after line %d: not the next line whole\n%s", i, text[i], prev, strings.Join(text, "\n"))
		}
	}
	return nil
}

// mirrorClient is a client of the server as the UI is, over the protocol:
// it shows every pane, mirrors them, and checks every update it applies.
type mirrorClient struct {
	c     *proto.Conn
	check bool

	mu      sync.Mutex
	mirrors map[vocab.AgentID]*proto.Mirror
	updates map[vocab.AgentID]int
	err     error // the first check that failed
	closed  bool
}

// dialMirror attaches a mirrorClient; check: every update is checked.
func dialMirror(t *testing.T, sock string, check bool) *mirrorClient {
	t.Helper()
	nc, err := net.DialTimeout("unix", sock, tuiWait)
	if err != nil {
		t.Fatal(err)
	}
	c := proto.NewConn(nc)
	_ = c.SetDeadline(time.Now().Add(tuiWait))
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Kind: proto.KindUI}); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Recv(); err != nil || m.T != proto.TWelcome {
		t.Fatalf("hello: %+v %v", m, err)
	}
	_ = c.SetDeadline(time.Time{})
	mc := &mirrorClient{c: c, check: check, mirrors: map[vocab.AgentID]*proto.Mirror{}, updates: map[vocab.AgentID]int{}}
	go mc.read()
	return mc
}

func (mc *mirrorClient) read() {
	for {
		m, err := mc.c.Recv()
		mc.mu.Lock()
		if err != nil {
			if !mc.closed && mc.err == nil {
				mc.err = fmt.Errorf("the connection ended: %w", err)
			}
			mc.mu.Unlock()
			return
		}
		var view []proto.Want
		switch m.T {
		case proto.TPanes:
			for _, p := range m.Panes {
				view = append(view, proto.Want{Agent: p.Agent})
			}
		case proto.TPane:
			p := *m.Pane
			mr := mc.mirrors[p.Agent]
			if mr == nil {
				mr = &proto.Mirror{}
				mc.mirrors[p.Agent] = mr
			}
			mr.Apply(p)
			mc.updates[p.Agent]++
			if err := checkWindow(string(p.Agent), mr.Rows); mc.check && err != nil && mc.err == nil {
				mc.err = fmt.Errorf("%s, update %d: %w", p.Agent, mc.updates[p.Agent], err)
			}
		}
		mc.mu.Unlock()
		if m.T == proto.TPanes {
			// Sent here, in the order the lists came: the server keeps
			// the last view it gets. (Sent from a goroutine each, the view
			// of the first agent started once came after the one of all
			// four: the other three were never streamed.)
			_ = mc.c.Send(proto.Msg{T: proto.TView, View: view})
		}
	}
}

// rows is a copy of agent id's mirrored rows and the updates applied.
func (mc *mirrorClient) rows(id string) ([]string, int, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mr := mc.mirrors[vocab.AgentID(id)]
	if mr == nil {
		return nil, 0, mc.err
	}
	return slices.Clone(mr.Rows), mc.updates[vocab.AgentID(id)], mc.err
}

func (mc *mirrorClient) close() {
	mc.mu.Lock()
	mc.closed = true
	mc.mu.Unlock()
	_ = mc.c.Close()
}

// lastLine is the last row of rows that is not blank, as text.
func lastLine(rows []string) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if s := strings.TrimRight(ansi.Strip(rows[i]), " "); s != "" {
			return s
		}
	}
	return ""
}

// Clients detach and attach while the agents stream, over and over: after
// each attach the client's mirrored panes are consecutive whole lines of
// what each agent wrote at every update, and once the agents pause they
// end with the last line written and equal the server's emulators (the
// full screens a new client is sent) row for row, styles included. Most
// cycles use a client of the protocol; a few the real hivemind attach in
// tmux (detached by D and by closing its terminal). At the end the server
// counts no client: every detach was seen.
func TestServerDetachAttachLosesNothing(t *testing.T) {
	parallel(t)
	requireTmux(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	project, home := t.TempDir(), t.TempDir()
	control := filepath.Join(t.TempDir(), "control")
	if err := os.WriteFile(control, []byte("stream"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(serverEnv(t), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), seqAgentEnv+"="+control)
	ids := []string{"lead", "reviewer", "worker_1", "worker_2"}
	out, code := hmIn(t, project, env, 3*tuiWait, "--server", "--agent", self, "--workers", "2", "stream numbered lines")
	if code != 0 {
		t.Fatalf("hivemind --server: exit %d\n%s", code, out)
	}
	infos := servers(t, project, env)
	if len(infos) != 1 {
		t.Fatalf("hivemind ls: %+v, want the server", infos)
	}
	sock, pid := infos[0].Socket, infos[0].PID
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !pollUntil(tuiWait, func() bool { return syscall.Kill(pid, 0) != nil }) {
			t.Errorf("the server (pid %d) still runs %v after SIGTERM", pid, tuiWait)
		}
		noLeftovers(t, project)
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(project, ".hivemind", "server.log"))
			t.Logf("server.log:\n%s", log)
		}
	})
	setMode := func(m string) {
		t.Helper()
		if err := os.WriteFile(control+".tmp", []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(control+".tmp", control); err != nil {
			t.Fatal(err)
		}
	}
	// ended waits until mc shows every pane ending with the line of pause
	// p, and returns the rows.
	ended := func(mc *mirrorClient, p int, what string) map[string][]string {
		t.Helper()
		screens := map[string][]string{}
		var last string
		if !pollUntil(tuiWait, func() bool {
			for _, id := range ids {
				rows, _, err := mc.rows(id)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				last = lastLine(rows)
				if !strings.HasPrefix(last, fmt.Sprintf("%s paused %d at ", id, p)) || len(last) != len(pauseLine(id, p, 0)) {
					return false
				}
				screens[id] = rows
			}
			return true
		}) {
			t.Fatalf("%s: the panes did not end with the line of pause %d in %v (last line %q)", what, p, tuiWait, last)
		}
		return screens
	}
	// emulators are the server's screens once the agents paused: the full
	// rows a client that just attached is sent (it detaches at once).
	emulators := func(p int) map[string][]string {
		t.Helper()
		fresh := dialMirror(t, sock, true)
		defer fresh.close()
		return ended(fresh, p, "a new client")
	}

	// The agents run once each pane shows a line (before, the terminal may
	// have echoed Hivemind's first message, which the agent then clears).
	first := dialMirror(t, sock, false)
	if !pollUntil(3*tuiWait, func() bool {
		for _, id := range ids {
			rows, _, _ := first.rows(id)
			if checkWindow(id, rows) != nil || !strings.HasPrefix(lastLine(rows), id+" ") {
				return false
			}
		}
		return true
	}) {
		// What each pane shows and what each agent wrote (its terminal
		// log), to tell an agent that never wrote from a pane never sent.
		dir := taskDirOf(project)
		for _, id := range ids {
			rows, n, err := first.rows(id)
			raw, _ := os.ReadFile(filepath.Join(dir, "logs", "agents", id+".log"))
			t.Logf("%s: %d updates (%v), window %v, last row %q; terminal log %d bytes, tail %q",
				id, n, err, checkWindow(id, rows), lastLine(rows), len(raw), raw[max(0, len(raw)-200):])
		}
		t.Fatalf("the agents did not stream in %v", 3*tuiWait)
	}
	first.close()

	// Cycles through the protocol: as many as fit in 20 s, at least 10 (a
	// loaded machine takes longer, it does not prove less), at most 100.
	start, cycles := time.Now(), 0
	for ; cycles < 100 && (cycles < 10 || time.Since(start) < 20*time.Second); cycles++ {
		setMode("stream")
		mc := dialMirror(t, sock, true)
		// Attached while the agents stream: each pane's full screen, then
		// at least one row diff on top of it.
		if !pollUntil(tuiWait, func() bool {
			for _, id := range ids {
				if _, n, err := mc.rows(id); err != nil {
					t.Fatalf("cycle %d: %v", cycles, err)
				} else if n < 2 {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("cycle %d: the client was not sent two updates of every pane in %v", cycles, tuiWait)
		}
		p := cycles + 1
		setMode(fmt.Sprintf("pause %d", p))
		got := ended(mc, p, fmt.Sprintf("cycle %d", cycles))
		want := emulators(p)
		for _, id := range ids {
			if !slices.Equal(got[id], want[id]) {
				t.Fatalf("cycle %d: %s's mirrored rows differ from the server's emulator:\nmirror:\n%s\nemulator:\n%s", cycles, id,
					strings.Join(got[id], "\n"), strings.Join(want[id], "\n"))
			}
		}
		mc.close() // detach
	}
	t.Logf("%d detach/attach cycles through the protocol in %v", cycles, time.Since(start).Round(time.Millisecond))

	// A few through the real client in tmux: it resizes the panes to its
	// layout; its panes show the server's emulators.
	for i := range 3 {
		setMode("stream")
		r := startTUI(t, tuiOptions{project: project, env: env, args: []string{"attach"}})
		r.waitScreen(tuiWait, "the four panes", func(s tuiScreen) bool { return len(s.panes()) == len(ids) })
		p := 1000 + i
		setMode(fmt.Sprintf("pause %d", p))
		want := emulators(p)
		var got string
		for _, id := range ids {
			var text []string
			for _, row := range want[id] {
				text = append(text, strings.TrimRight(ansi.Strip(row), " "))
			}
			if !pollUntil(tuiWait, func() bool {
				p, ok := r.capture().paneText(id)
				var rows []string
				for _, l := range strings.Split(strings.TrimSuffix(p, "\n"), "\n") {
					rows = append(rows, strings.TrimRight(l, " "))
				}
				got = strings.Join(rows, "\n")
				return ok && got == strings.Join(text, "\n")
			}) {
				t.Fatalf("attach %d in tmux: pane %s differs from the server's emulator:\nshown:\n%s\nemulator:\n%s", i, id, got, strings.Join(text, "\n"))
			}
		}
		if i%2 == 0 {
			r.keys("D")
			if code := r.waitExit(tuiWait); code != 0 {
				t.Fatalf("attach %d in tmux: exit %d after D, want 0", i, code)
			}
		} else {
			r.mustTmux("kill-session", "-t", r.session) // the terminal closes: SIGHUP
		}
	}
	setMode("stream")
	if !pollUntil(tuiWait, func() bool {
		infos = servers(t, project, env)
		return len(infos) == 1 && infos[0].Clients == 0
	}) {
		t.Fatalf("hivemind ls after every detach: %+v, want the server with no client", infos)
	}
}
