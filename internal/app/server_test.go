package app

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// syncScreen is an emulator the test writes while the server reads it.
type syncScreen struct {
	mu sync.Mutex
	s  screen.Screen
}

func (s *syncScreen) write(b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.s.Write([]byte(b))
}

func (s *syncScreen) Lines(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Lines(n)
}

func (s *syncScreen) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Version()
}

func (s *syncScreen) Modes() screen.Modes {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Modes()
}

func (s *syncScreen) ScrollbackLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.ScrollbackLen()
}

type fakePanes map[vocab.AgentID]*syncScreen

func (f fakePanes) Resize(id vocab.AgentID, cols, rows int) error {
	if s, ok := f[id]; ok {
		s.mu.Lock()
		s.s.Resize(cols, rows)
		s.mu.Unlock()
	}
	return nil
}

func (f fakePanes) IDs() []vocab.AgentID {
	var ids []vocab.AgentID
	for id := range f {
		ids = append(ids, id)
	}
	return ids
}

func (f fakePanes) Screen(id vocab.AgentID) (proto.Screen, bool) {
	s, ok := f[id]
	if !ok {
		return nil, false
	}
	return s, true
}

// testServer serves fake panes on a socket of its own.
func testServer(t *testing.T, panes fakePanes) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hmsrv") // short: a unix socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := newServer()
	s.src, s.fps, s.binary = panes, 1000, "test"
	s.describe = func() proto.Info { return proto.Info{Version: proto.Version, Binary: "test"} }
	sock := filepath.Join(dir, "s.sock")
	if s.ln, err = net.Listen("unix", sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.ln.Close() })
	go s.accept()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() { // the agents' screens changed (ptyagent.Manager.Changed)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				s.pokeAll()
			case <-done:
				return
			}
		}
	}()
	return sock
}

// TestServerClientReattachLosesNothing attaches a client (the UI's
// serverLink) to a server 100 times while the agents' screens change;
// after each burst the client's copy of the shown pane equals the
// server's emulator (no row lost, stale or doubled), and the hidden pane
// is never streamed.
func TestServerClientReattachLosesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lead := &syncScreen{s: screen.New(screen.Options{Cols: 50, Rows: 10, Scrollback: 40})}
	worker := &syncScreen{s: screen.New(screen.Options{Cols: 50, Rows: 10})}
	sock := testServer(t, fakePanes{"lead": lead, "worker_1": worker})
	for i := range 100 {
		c, _, err := dialServer(sock, proto.KindUI, "test", false)
		if err != nil {
			t.Fatal(err)
		}
		link := newServerLink(c, false)
		link.Showing(tui.Shown{Panes: []vocab.AgentID{"lead"}, Fast: "lead"})
		for range 1 + rng.IntN(5) {
			lead.write(burst(rng))
			worker.write(burst(rng))
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		for {
			if rows, ok := mirrored(link, "lead"); ok && slices.Equal(rows, lead.Lines(0)) {
				break
			}
			m, err := c.Recv()
			if err != nil {
				rows, _ := mirrored(link, "lead")
				t.Fatalf("attach %d: %v before the client's copy matched:\nclient: %q\nserver: %q", i, err, rows, lead.Lines(0))
			}
			if m.T == proto.TPane && m.Pane.Agent != "lead" {
				t.Fatalf("attach %d: the hidden pane %s was streamed", i, m.Pane.Agent)
			}
			link.receive(m, func(tea.Msg) {})
		}
		_ = c.Close()
	}
}

// TestServerRefusesReadOnlyInput: a read-only client's keys never reach
// the agent; it is told why.
func TestServerRefusesReadOnlyInput(t *testing.T) {
	sock := testServer(t, fakePanes{"lead": {s: screen.New(screen.Options{Cols: 20, Rows: 4})}})
	c, _, err := dialServer(sock, proto.KindUI, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(proto.Msg{T: proto.TInput, Agent: "lead", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	for {
		m, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.T == proto.TNotice && strings.Contains(m.Text, "read-only client") {
			return
		}
	}
}

func mirrored(l *serverLink, id vocab.AgentID) ([]string, bool) {
	t, ok := l.Terminal(id)
	if !ok {
		return nil, false
	}
	rt := t.(*remoteTerm)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.m.Rows), rt.ver > 0
}

// burst is random terminal output: text, colours, cursor moves, clears.
func burst(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(10) {
		switch rng.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "\x1b[%d;%dH", 1+rng.IntN(12), 1+rng.IntN(60))
		case 1:
			fmt.Fprintf(&b, "\x1b[3%dm", rng.IntN(8))
		case 2:
			b.WriteString("\r\n")
		case 3:
			b.WriteString("\x1b[2K")
		default:
			fmt.Fprintf(&b, "out %d %x ", rng.IntN(1000), rng.Uint32())
		}
	}
	return b.String()
}

// TestServerFitsPanesToSmallestClient: two clients of different sizes
// (one read-only) both see the pane whole: it takes the smallest size
// asked for, and grows back when the smaller client goes.
func TestServerFitsPanesToSmallestClient(t *testing.T) {
	lead := &syncScreen{s: screen.New(screen.Options{Cols: 100, Rows: 40})}
	sock := testServer(t, fakePanes{"lead": lead})
	size := func() paneSize {
		lead.mu.Lock()
		defer lead.mu.Unlock()
		c, r := lead.s.Size()
		return paneSize{c, r}
	}
	until := func(want paneSize) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for size() != want {
			if time.Now().After(deadline) {
				t.Fatalf("the pane is %v, want %v", size(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	big, _, err := dialServer(sock, proto.KindUI, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	small, _, err := dialServer(sock, proto.KindUI, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	_ = big.Send(proto.Msg{T: proto.TResize, Agent: "lead", Cols: 80, Rows: 24})
	until(paneSize{80, 24})
	_ = small.Send(proto.Msg{T: proto.TResize, Agent: "lead", Cols: 60, Rows: 30})
	until(paneSize{60, 24})
	_ = small.Close()
	until(paneSize{80, 24})
}

// A server that closes a client's connection during the hello (it was
// stopping: its listener closed with the client in its queue) is a server
// that is gone, which wait answers from the workspace; not an error.
func TestHelloToAStoppingServerIsGone(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, read := range []bool{false, true} {
		go func() {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			if read { // EOF after the hello; without reading it: a reset
				_, _ = bufio.NewReader(nc).ReadString('\n')
			}
			_ = nc.Close()
		}()
		_, _, err := dialServer(sock, proto.KindWait, "test", true)
		if !errors.Is(err, errServerGone) {
			t.Errorf("hello read=%v: %v, want errServerGone", read, err)
		}
	}
}

// A client whose UI has not laid out its panes yet asks for every pane,
// so their rows arrive while the UI starts (an attach shows full screens
// in its first frames); once the UI says what it shows, only that.
func TestServerLinkAsksEveryPaneUntilLaidOut(t *testing.T) {
	lead := &syncScreen{s: screen.New(screen.Options{Cols: 20, Rows: 4})}
	worker := &syncScreen{s: screen.New(screen.Options{Cols: 20, Rows: 4})}
	lead.write("the lead's screen")
	worker.write("the worker's screen")
	sock := testServer(t, fakePanes{"lead": lead, "worker_1": worker})
	c, _, err := dialServer(sock, proto.KindUI, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	link := newServerLink(c, false)
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	for {
		l, lok := mirrored(link, "lead")
		w, wok := mirrored(link, "worker_1")
		if lok && wok && slices.Equal(l, lead.Lines(0)) && slices.Equal(w, worker.Lines(0)) {
			break
		}
		m, err := c.Recv()
		if err != nil {
			t.Fatalf("%v before the client was sent every pane (lead %q, worker %q)", err, l, w)
		}
		link.receive(m, func(tea.Msg) {})
	}
	// Once the view reaches the server, the worker is no longer sent:
	// rounds that change both screens bring the lead's rows alone.
	link.Showing(tui.Shown{Panes: []vocab.AgentID{"lead"}, Fast: "lead"})
	clean := 0
	for round := 0; clean < 5; round++ {
		if round == 200 {
			t.Fatalf("the worker's pane was still streamed %d rounds after the UI showed the lead alone", round)
		}
		worker.write(fmt.Sprintf(" w%d", round))
		lead.write(fmt.Sprintf(" l%d", round))
		workerSent := false
		for {
			if l, _ := mirrored(link, "lead"); slices.Equal(l, lead.Lines(0)) {
				break
			}
			m, err := c.Recv()
			if err != nil {
				t.Fatalf("round %d: %v before the lead's change came", round, err)
			}
			workerSent = workerSent || m.T == proto.TPane && m.Pane.Agent == "worker_1"
			link.receive(m, func(tea.Msg) {})
		}
		if clean++; workerSent {
			clean = 0
		}
	}
}

// A pane the client draws slowly (an unfocused pane: Want.FPS) is sent at
// that rate however fast its screen changes, while the attached pane
// beside it is sent at the server's; and once the screens stop, the slow
// pane's last content arrives (held, never dropped).
func TestServerSendsSlowPanesAtTheirRate(t *testing.T) {
	lead := &syncScreen{s: screen.New(screen.Options{Cols: 40, Rows: 6})}
	worker := &syncScreen{s: screen.New(screen.Options{Cols: 40, Rows: 6})}
	sock := testServer(t, fakePanes{"lead": lead, "worker_1": worker})
	const slowFPS = 10
	start := time.Now()
	c, _, err := dialServer(sock, proto.KindUI, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	link := newServerLink(c, false)
	link.Showing(tui.Shown{Panes: []vocab.AgentID{"lead", "worker_1"}, Fast: "lead", SlowFPS: slowFPS})
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() { // both screens change every millisecond for half a second
		defer close(wrote)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			lead.write(fmt.Sprintf(" l%d", i))
			worker.write(fmt.Sprintf(" w%d", i))
		}
	}()
	time.AfterFunc(500*time.Millisecond, func() { close(stop) })
	count := map[vocab.AgentID]int{}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	for done := false; ; {
		if !done {
			select {
			case <-wrote:
				done = true
			default:
			}
		}
		if done {
			l, _ := mirrored(link, "lead")
			w, _ := mirrored(link, "worker_1")
			if slices.Equal(l, lead.Lines(0)) && slices.Equal(w, worker.Lines(0)) {
				break
			}
		}
		m, err := c.Recv()
		if err != nil {
			w, _ := mirrored(link, "worker_1")
			t.Fatalf("%v before the client's copies matched (worker: client %q, server %q)", err, w, worker.Lines(0))
		}
		if m.T == proto.TPane {
			count[m.Pane.Agent]++
		}
		link.receive(m, func(tea.Msg) {})
	}
	// The slow pane's updates are 1/slowFPS apart after the first.
	elapsed := time.Since(start)
	if most := 1 + int(elapsed*slowFPS/time.Second); count["worker_1"] > most {
		t.Fatalf("the unfocused pane was sent %d times in %v: at %d fps, at most %d", count["worker_1"], elapsed, slowFPS, most)
	}
	t.Logf("in %v: the attached pane sent %d times, the unfocused one %d", elapsed, count["lead"], count["worker_1"])
}
