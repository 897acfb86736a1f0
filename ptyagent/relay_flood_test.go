package ptyagent

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// floodRelay opens n connections to s that each send half a relay line
// and then wait; it returns them for closing.
func floodRelay(tb testing.TB, s *hookServer, n int) []net.Conn {
	tb.Helper()
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("unix", s.path)
		if err != nil {
			tb.Fatalf("dial %d: %v", len(conns), err)
		}
		_, _ = c.Write([]byte(`{"agent":"worker_1","event":"Stop","pay`))
		conns = append(conns, c)
	}
	return conns
}

func (s *hookServer) open() (n, shed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.shed
}

// 2,000 idle connections that each sent half a line: the server holds at
// most one agent's cap of them (it sheds the oldest unread ones, never
// waiting to accept), and a legitimate hook sent afterwards is read and
// answered. Without the shedding, the hook waits in the listen backlog
// behind connections that each hold a slot until their read deadline.
func TestRelayFloodOfHalfLines(t *testing.T) {
	var got atomic.Int32
	// Only the caps act here: the line deadline is long.
	s, err := listenHooks(t.TempDir(), func(m HookMessage, _ int) error {
		if m.Event == HookStop && m.Agent == "lead" {
			got.Add(1)
		}
		return nil
	}, time.Minute, maxHookConnsPerAgent, maxHookConns)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	conns := floodRelay(t, s, 2000)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	waitFor(t, 20*time.Second, "the flood accepted", func() bool { _, shed := s.open(); return shed >= 2000-s.perAgent })
	if n, _ := s.open(); n > s.perAgent {
		t.Fatalf("%d connections open, cap per agent %d", n, s.perAgent)
	}
	start := time.Now()
	if err := SendHookMessage(s.path, HookMessage{Agent: "lead", Event: HookStop}); err != nil {
		t.Fatalf("legitimate hook: %v", err)
	}
	t.Logf("legitimate hook answered in %v behind 2000 half-line connections", time.Since(start))
	if got.Load() != 1 {
		t.Fatalf("legitimate hook delivered %d times", got.Load())
	}
	// The shed connections were closed by the server: their reads end.
	_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conns[0].Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("the oldest idle connection: read %v, want it closed by the relay", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A connection that sends half a line is closed when its line deadline
// passes, and holds nothing after.
func TestRelayLineDeadline(t *testing.T) {
	s, err := listenHooks(t.TempDir(), func(HookMessage, int) error { return nil }, 200*time.Millisecond, maxHookConnsPerAgent, maxHookConns)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	c := floodRelay(t, s, 1)[0]
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("half-line connection: read %v, want EOF after the line deadline", err)
	}
	waitFor(t, 10*time.Second, "no open connection", func() bool { n, _ := s.open(); return n == 0 })
}

// BenchmarkRelayHookUnderFlood: one legitimate hook (dial, line, ack)
// while 2,000 half-line connections are held open against the relay.
func BenchmarkRelayHookUnderFlood(b *testing.B) {
	s, err := newHookServer(b.TempDir(), func(HookMessage, int) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	conns := floodRelay(b, s, 2000)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		if err := SendHookMessage(s.path, HookMessage{Agent: "lead", Event: HookStop}); err != nil {
			b.Fatal(err)
		}
	}
}
