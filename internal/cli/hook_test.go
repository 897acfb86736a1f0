package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/ptyagent"
)

// The hook sub-command decides PreToolUse locally (printing Claude's deny
// JSON), relays every hook to the socket, and exits 0 even with no relay.
func TestCmdHook(t *testing.T) {
	sock, lines, stopRelay := testkit.Relay(t)
	task := t.TempDir()
	t.Setenv(ptyagent.EnvHookSocket, sock)
	t.Setenv(ptyagent.EnvAgentID, "reviewer")
	t.Setenv(ptyagent.EnvRole, "reviewer")
	t.Setenv(ptyagent.EnvTaskDir, task)
	t.Setenv(ptyagent.EnvProject, filepath.Dir(task))

	var out bytes.Buffer
	in := strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/passwd","content":"x"}}`)
	if code := cmdHook([]string{"PreToolUse"}, in, &out, os.Stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Errorf("no deny decision printed: %q", out.String())
	}
	select {
	case m := <-lines:
		if m.Agent != "reviewer" || m.Event != "PreToolUse" || m.Decision != "deny" || m.Reason == "" {
			t.Errorf("relayed %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing relayed")
	}

	out.Reset()
	if code := cmdHook([]string{"Stop"}, strings.NewReader(`{"session_id":"s1"}`), &out, os.Stderr); code != 0 || out.Len() != 0 {
		t.Fatalf("Stop: exit %d, output %q", code, out.String())
	}
	if m := <-lines; m.Event != "Stop" || !strings.Contains(string(m.Payload), "s1") {
		t.Errorf("relayed %+v", m)
	}

	// Hivemind gone: still exit 0, at once.
	stopRelay()
	start := time.Now()
	if code := cmdHook([]string{"Stop"}, strings.NewReader(`{}`), &out, os.Stderr); code != 0 {
		t.Fatalf("exit %d without a relay", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v without a relay", d)
	}
}
