package ptyagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Each relay line must prove which agent sent it: a line naming agent a
// with b's token, no token or a made-up one is rejected with the reason,
// and never reaches a's session.
func TestHookRelayRejectsForgedIdentity(t *testing.T) {
	withoutCgroups(t) // the test process sends the lines
	var rec recorder
	cat := Spec{Argv: []string{"sh", "-c", "exec cat"}, Kind: ProfileSim}
	m := newTestManager(t, &rec, map[vocab.AgentID]Spec{"a": cat, "b": cat})
	for _, id := range []vocab.AgentID{"a", "b"} {
		if err := m.Start(id, "worker", false); err != nil {
			t.Fatal(err)
		}
	}
	sa, _ := m.Session("a")
	sb, _ := m.Session("b")
	if sa.Spec().HookToken == "" || sa.Spec().HookToken == sb.Spec().HookToken {
		t.Fatalf("tokens not per session: %q %q", sa.Spec().HookToken, sb.Spec().HookToken)
	}
	for _, c := range []struct{ name, token string }{
		{"other agent's token", sb.Spec().HookToken},
		{"no token", ""},
		{"made-up token", strings.Repeat("0", 32)},
		{"token prefix", sa.Spec().HookToken[:8]},
	} {
		err := SendHookMessage(m.SocketPath(), HookMessage{Agent: "a", Token: c.token, Event: HookStop, Payload: json.RawMessage(`{"forged":true}`)})
		if err == nil || !strings.Contains(err.Error(), "token does not match") {
			t.Errorf("%s: error %v, want a token rejection", c.name, err)
		}
	}
	if err := SendHookMessage(m.SocketPath(), HookMessage{Agent: "nobody", Token: sa.Spec().HookToken, Event: HookStop}); err == nil ||
		!strings.Contains(err.Error(), `no running agent "nobody"`) {
		t.Errorf("unknown agent: %v", err)
	}
	// The genuine line passes; only it reaches the session.
	if err := SendHookMessage(m.SocketPath(), HookMessage{Agent: "a", Token: sa.Spec().HookToken, Event: HookStop, Payload: json.RawMessage(`{"genuine":true}`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "genuine hook", func() bool {
		_, ok := rec.find(func(e Event) bool { return e.Kind == EventHook && strings.Contains(string(e.Payload), "genuine") })
		return ok
	})
	if e, ok := rec.find(func(e Event) bool { return e.Kind == EventHook && strings.Contains(string(e.Payload), "forged") }); ok {
		t.Errorf("forged hook delivered: %+v", e)
	}
}

// A relay line longer than hookrelay.MaxLine is rejected with a clear
// answer after at most MaxLine bytes are buffered; the relay keeps serving.
func TestHookRelayRejectsOversizedLine(t *testing.T) {
	withoutCgroups(t) // the test process sends the lines
	var rec recorder
	m := newTestManager(t, &rec, map[vocab.AgentID]Spec{"a": {Argv: []string{"sh", "-c", "exec cat"}, Kind: ProfileSim}})
	if err := m.Start("a", "worker", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("a")

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	c, err := net.Dial("unix", m.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 256 MiB without a newline, written until the relay gives up on us.
	const total = 256 << 20
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	_, _ = c.Write([]byte(`{"agent":"a","token":"` + s.Spec().HookToken + `","event":"Stop","payload":"`))
	written := 0
	for written < total {
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Write(chunk)
		written += n
		if err != nil {
			break
		}
	}
	if written >= total {
		t.Errorf("the relay read all %d bytes of one line", written)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var ans bytes.Buffer
	_, _ = ans.ReadFrom(c)
	if want := hookrelay.NackPrefix + "relay line exceeds " + strconv.Itoa(hookrelay.MaxLine) + " bytes"; !strings.HasPrefix(ans.String(), want) {
		t.Errorf("answer %q, want %q…", ans.String(), want)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.TotalAlloc) - int64(before.TotalAlloc)
	if grew > 32<<20 {
		t.Errorf("the relay allocated %d MiB for one oversized line", grew>>20)
	}
	t.Logf("a %d MiB line: rejected after %d MiB written by the client, %.1f MiB allocated", total>>20, written>>20, float64(grew)/(1<<20))
	if _, ok := rec.find(func(e Event) bool { return e.Kind == EventHook }); ok {
		t.Error("oversized line delivered")
	}

	// A client with an oversized payload sends a note in its place, so the
	// event itself arrives.
	big := append([]byte(`"`), append(bytes.Repeat([]byte("y"), hookrelay.MaxLine), '"')...)
	if err := SendHookMessage(m.SocketPath(), HookMessage{Agent: "a", Token: s.Spec().HookToken, Event: HookStop, Payload: big}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "Stop with the oversize note", func() bool {
		_, ok := rec.find(func(e Event) bool {
			return e.Kind == EventHook && strings.Contains(string(e.Payload), "exceeds the relay limit")
		})
		return ok
	})
}

// With cgroups, a line must also come from a process of the agent: a
// process outside it is rejected even with the agent's token (which any
// process of the same user can read from the agent's environment).
func TestHookRelayRejectsOutsider(t *testing.T) {
	if why := cgroupsUnavailable(); why != "" {
		t.Skipf("cgroups v2 unavailable here: %s", why)
	}
	var rec recorder
	spec := helperSpec("sim", "sim")
	spec.Kind = ProfileSim // ready only once its SessionStart hook got through
	m := newTestManager(t, &rec, map[vocab.AgentID]Spec{"sim": spec})
	if err := m.Start("sim", "worker", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("sim")
	// Its own SessionStart hook, sent from inside its cgroup, got through.
	waitFor(t, 10*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
	err := SendHookMessage(m.SocketPath(), HookMessage{Agent: "sim", Token: s.Spec().HookToken, Event: HookStop,
		Payload: json.RawMessage(`{"outsider":true}`)})
	if err == nil || !strings.Contains(err.Error(), "is not one of agent \"sim\"'s processes") {
		t.Errorf("outsider with the token: %v", err)
	}
	if _, ok := rec.find(func(e Event) bool { return e.Kind == EventHook && strings.Contains(string(e.Payload), "outsider") }); ok {
		t.Error("outsider's hook delivered")
	}
}

// Sockets left by Hivemind processes that are gone are removed when a
// relay starts; live owners' sockets and other files stay.
func TestStaleHookSocketsRemoved(t *testing.T) {
	dir, err := os.MkdirTemp("", "hms")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dead := deadPID(t)
	var stale []string
	for i := range 50 {
		p := filepath.Join(dir, "hm-"+strconv.Itoa(dead)+"-"+strconv.Itoa(i)+".sock")
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		stale = append(stale, p)
	}
	live := filepath.Join(dir, "hm-1-live.sock") // pid 1 is alive
	lln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer lln.Close()
	other := filepath.Join(dir, "hm-"+strconv.Itoa(dead)+"-notasocket.sock")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	hs, err := newHookServer(dir, func(HookMessage, int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer hs.close()
	for _, p := range stale {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale socket %s left: %v", filepath.Base(p), err)
		}
	}
	for _, p := range []string{live, other, hs.path} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}

// deadPID returns the pid of a child that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
