package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent"
)

// The hook sub-command decides PreToolUse locally (printing Claude's deny
// JSON), relays every hook to the socket, and exits 0 even with no relay.
func TestCmdHook(t *testing.T) {
	dir, err := os.MkdirTemp("", "hk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lines := make(chan ptyagent.HookMessage, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				var m ptyagent.HookMessage
				if json.Unmarshal(sc.Bytes(), &m) == nil {
					lines <- m
				}
			}
			c.Close()
		}
	}()
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
	ln.Close()
	start := time.Now()
	if code := cmdHook([]string{"Stop"}, strings.NewReader(`{}`), &out, os.Stderr); code != 0 {
		t.Fatalf("exit %d without a relay", code)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v without a relay", d)
	}
}
