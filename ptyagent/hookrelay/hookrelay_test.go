package hookrelay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// relay is a test relay: it decodes each line, answers it with what
// answer returns ("" = no answer) and hands the message to the test.
type relay struct {
	path string
	ln   net.Listener
	got  chan Message
}

// ack answers every line "ok"; mute never answers.
func ack(Message) string  { return Ack }
func mute(Message) string { return "" }

func newRelay(t *testing.T, answer func(Message) string) *relay {
	t.Helper()
	dir, err := os.MkdirTemp("", "hr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &relay{path: filepath.Join(dir, "s"), got: make(chan Message, 8)}
	if r.ln, err = net.Listen("unix", r.path); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { r.ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := r.ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			sc.Buffer(make([]byte, 64<<10), MaxLine+1)
			for sc.Scan() {
				var m Message
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					m = Message{Event: "bad line: " + sc.Text()}
				}
				r.got <- m
				if ans := answer(m); ans != "" {
					_, _ = c.Write([]byte(ans))
				}
			}
			c.Close()
		}
	}()
	return r
}

func (r *relay) next(t *testing.T) Message {
	t.Helper()
	select {
	case m := <-r.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("nothing relayed")
		return Message{}
	}
}

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestSendAndRun(t *testing.T) {
	r := newRelay(t, ack)
	if err := Send(r.path, "a", HookStop, []byte(` {"x":1} `)); err != nil {
		t.Fatal(err)
	}
	if m := r.next(t); m.Agent != "a" || m.Event != HookStop || string(m.Payload) != `{"x":1}` {
		t.Errorf("got %+v", m)
	}
	env := envOf(EnvHookSocket, r.path, EnvAgentID, "w1")
	if err := Run(HookNotification, strings.NewReader("not json"), env); err != nil {
		t.Fatal(err)
	}
	if m := r.next(t); m.Agent != "w1" || string(m.Payload) != `"not json"` {
		t.Errorf("got %+v (%s)", m, m.Payload)
	}
	if err := Run(HookStop, strings.NewReader(""), env); err != nil {
		t.Fatal(err)
	}
	if m := r.next(t); string(m.Payload) != "null" {
		t.Errorf("empty payload relayed as %s", m.Payload)
	}
	if err := Run(HookStop, strings.NewReader("{}"), envOf()); !errors.Is(err, ErrNoRelay) {
		t.Errorf("no relay: %v", err)
	}
	if err := Send(filepath.Join(t.TempDir(), "none.sock"), "a", HookStop, nil); err == nil {
		t.Error("no error for a missing socket")
	}
}

// A relay that never acknowledges holds the hook AckTimeout at most.
func TestSendMuteRelay(t *testing.T) {
	r := newRelay(t, mute)
	start := time.Now()
	if err := Send(r.path, "a", HookStop, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > AckTimeout+time.Second {
		t.Errorf("took %v", d)
	}
	r.next(t)
}

func TestCommand(t *testing.T) {
	r := newRelay(t, ack)
	env := envOf(EnvHookSocket, r.path, EnvAgentID, "reviewer")
	var calls int
	decide := func(p []byte, env func(string) string) ([]byte, bool, string) {
		calls++
		if !bytes.Contains(p, []byte("/etc/passwd")) {
			return nil, false, ""
		}
		return []byte(`{"hookSpecificOutput":{"permissionDecision":"deny"}}` + "\n"), true, "outside " + env(EnvAgentID)
	}
	var out, errOut bytes.Buffer

	in := `{"tool_name":"Write","tool_input":{"file_path":"/etc/passwd"}}`
	if code := Command([]string{HookPreToolUse}, strings.NewReader(in), &out, &errOut, env, decide); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), `"deny"`) {
		t.Errorf("stdout %q", out.String())
	}
	if m := r.next(t); m.Event != HookPreToolUse || m.Decision != "deny" || m.Reason != "outside reviewer" || !strings.Contains(string(m.Payload), "passwd") {
		t.Errorf("relayed %+v", m)
	}

	// Allowed: nothing printed, relayed without a decision. The words
	// of `hivemind hook <event>` are accepted too.
	out.Reset()
	if code := Command([]string{"hook", HookPreToolUse}, strings.NewReader(`{"tool_name":"Read"}`), &out, &errOut, env, decide); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	if m := r.next(t); m.Decision != "" || m.Reason != "" {
		t.Errorf("relayed %+v", m)
	}

	// Other events are not decided.
	if code := Command([]string{HookStop}, strings.NewReader(`{"session_id":"s1"}`), &out, &errOut, env, decide); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	if m := r.next(t); m.Event != HookStop || !strings.Contains(string(m.Payload), "s1") {
		t.Errorf("relayed %+v", m)
	}
	if calls != 2 {
		t.Errorf("decide called %d times", calls)
	}

	// Bad usage and no relay: exit 0 all the same, at once.
	if code := Command(nil, strings.NewReader(""), &out, &errOut, env, decide); code != 0 || !strings.Contains(errOut.String(), "usage") {
		t.Errorf("usage: exit %d, stderr %q", code, errOut.String())
	}
	start := time.Now()
	if code := Command([]string{HookStop}, strings.NewReader("{}"), &out, &errOut, envOf(), decide); code != 0 {
		t.Errorf("no relay: exit %d", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("no relay: took %v", d)
	}
}

// A stdin that is never closed does not hold the hook: what was read by
// the timeout is used.
func TestReadStdinTimeout(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"partial":`)) }()
	start := time.Now()
	b, err := readStdin(pr, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("returned after %v", d)
	}
	if string(b) != `{"partial":` {
		t.Errorf("read %q", b)
	}

	// A read error is reported.
	boom := errors.New("boom")
	if _, err := readStdin(io.MultiReader(strings.NewReader("x"), errReader{boom}), time.Second); !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	// Large payloads are cut at MaxPayload and reported.
	b, err = readStdin(io.LimitReader(zeros{}, MaxPayload+100), 5*time.Second)
	if !errors.Is(err, ErrTooLarge) || len(b) != MaxPayload {
		t.Errorf("read %d bytes, %v", len(b), err)
	}
	b, err = readStdin(io.LimitReader(zeros{}, MaxPayload), 5*time.Second)
	if err != nil || len(b) != MaxPayload {
		t.Errorf("exactly MaxPayload: read %d bytes, %v", len(b), err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A line the relay rejects makes the hook say why on stderr (exit 0 all
// the same); a payload too large for a line arrives as a note.
func TestCommandReportsRejection(t *testing.T) {
	r := newRelay(t, func(m Message) string {
		if m.Token != "good" {
			return NackPrefix + "the hook token does not match\n"
		}
		return Ack
	})
	path, got := r.path, r.got
	var stdout, stderr bytes.Buffer
	env := envOf(EnvHookSocket, path, EnvAgentID, "a", EnvHookToken, "bad")
	if code := Command([]string{HookStop}, strings.NewReader(`{}`), &stdout, &stderr, env, nil); code != 0 {
		t.Fatalf("exit %d", code)
	}
	<-got
	if !strings.Contains(stderr.String(), "the hook token does not match") {
		t.Errorf("stderr %q does not say why the relay refused", stderr.String())
	}

	stderr.Reset()
	big := `{"last_assistant_message":"` + strings.Repeat("x", MaxLine) + `"}`
	env = envOf(EnvHookSocket, path, EnvAgentID, "a", EnvHookToken, "good")
	if code := Command([]string{HookStop}, strings.NewReader(big), &stdout, &stderr, env, nil); code != 0 {
		t.Fatalf("exit %d", code)
	}
	m := <-got
	if m.Event != HookStop || !strings.Contains(string(m.Payload), "exceeds the relay limit") || stderr.Len() != 0 {
		t.Errorf("oversized payload relayed as %s %.200s (stderr %q)", m.Event, m.Payload, stderr.String())
	}

	// A tool call too large to read whole cannot be checked: denied.
	// Reading 8 MB is the subject here, not StdinTimeout
	// (TestReadStdinTimeout): a loaded machine may take longer than it.
	defer func(d time.Duration) { commandStdinTimeout = d }(commandStdinTimeout)
	commandStdinTimeout = time.Hour
	stdout.Reset()
	decide := func([]byte, func(string) string) ([]byte, bool, string) {
		t.Error("a truncated tool call was decided")
		return nil, false, ""
	}
	huge := io.LimitReader(zeros{}, MaxPayload+1)
	if code := Command([]string{HookPreToolUse}, huge, &stdout, &stderr, env, decide); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out := stdout.String(); !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "larger than") {
		t.Errorf("oversized PreToolUse printed %q, want a deny that says why", out)
	}
	if m := <-got; m.Decision != "deny" || m.Event != HookPreToolUse {
		t.Errorf("oversized PreToolUse relayed as %+v", m)
	}
}
