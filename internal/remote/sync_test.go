package remote

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sshtest"
)

// syncSink records what a sync stream delivers.
type syncSink struct {
	mu       sync.Mutex
	files    map[string]string
	problems []string
	ups      int
	changed  chan struct{}
}

func (s *syncSink) Deliver(rel string, data []byte) error {
	s.mu.Lock()
	s.files[rel] = string(data)
	s.mu.Unlock()
	s.kick()
	return nil
}

func (s *syncSink) Problem(rel, msg string) {
	s.mu.Lock()
	s.problems = append(s.problems, rel+": "+msg)
	s.mu.Unlock()
	s.kick()
}

func (s *syncSink) kick() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// wait waits until cond holds on the sink.
func (s *syncSink) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("timed out waiting for %s: files %v problems %v", what, s.files, s.problems)
		}
	}
}

// Files written on the host reach the sink once each, whatever the
// reconnects; a file over the limit and files outside the synced dirs
// are not delivered.
func TestSyncStream(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.Alias)
	inst, err := Install(ctx(t), h, helperBin)
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Home + "/task"
	s.Run("mkdir -p " + dir + "/outputs " + dir + "/friction " + dir + "/assignments && echo hi > " + dir + "/outputs/s1.md && echo no > " + dir + "/assignments/a.json")
	sink := &syncSink{files: map[string]string{}, changed: make(chan struct{}, 1)}
	c, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	var upMu sync.Mutex
	go func() {
		defer close(done)
		SyncFrom(c, h, inst.Path, dir, []string{"outputs", "friction"}, sink, func(up bool, err error) {
			upMu.Lock()
			defer upMu.Unlock()
			if up {
				sink.ups++
			}
		})
	}()
	sink.wait(t, "outputs/s1.md", func() bool { return sink.files["outputs/s1.md"] == "hi\n" })
	s.Run("echo done > " + dir + "/outputs/s1.done && head -c 1100000 /dev/zero > " + dir + "/friction/big.md")
	sink.wait(t, "the done marker and the big file's error", func() bool {
		return sink.files["outputs/s1.done"] == "done\n" && len(sink.problems) == 1
	})
	if !strings.Contains(sink.problems[0], "friction/big.md: 1100000 bytes, more than") {
		t.Errorf("problems %v", sink.problems)
	}
	// Drop the connection: the stream reconnects, sends everything again,
	// and nothing is delivered twice.
	sink.mu.Lock()
	sink.files = map[string]string{}
	sink.mu.Unlock()
	s.Run("pkill -KILL -u " + s.User + " -f [r]emote-sync || true")
	s.Run("echo more > " + dir + "/outputs/s2.md")
	sink.wait(t, "outputs/s2.md after the reconnect", func() bool { return sink.files["outputs/s2.md"] == "more\n" })
	sink.mu.Lock()
	if len(sink.files) != 1 || len(sink.problems) != 1 {
		t.Errorf("after the reconnect: files %v problems %v", sink.files, sink.problems)
	}
	sink.mu.Unlock()
	upMu.Lock()
	if sink.ups < 2 {
		t.Errorf("connected %d times, want 2", sink.ups)
	}
	upMu.Unlock()
	cancel()
	<-done
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("remote processes left: %v", left)
	}
}

func TestValidSyncPath(t *testing.T) {
	subs := []string{"outputs", "friction"}
	for p, want := range map[string]bool{"outputs/a.md": true, "friction/x/y.md": true, "outputs": false, "../outputs/a": false,
		"/outputs/a": false, "outputs/../state.json": false, "assignments/a.json": false, "outputs//a": false} {
		if validSyncPath(p, subs) != want {
			t.Errorf("%s: want %v", p, want)
		}
	}
}
