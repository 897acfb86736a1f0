package ptyagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// HookCommand prefers hivemind-hook next to the binary, then on PATH,
// then the binary itself (its `hook` sub-command).
func TestHookCommand(t *testing.T) {
	touch := func(p string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := t.TempDir()
	onPath := touch(filepath.Join(root, "path", "hivemind-hook"), 0o755)
	t.Setenv("PATH", filepath.Dir(onPath))

	self := touch(filepath.Join(root, "a", "hivemind"), 0o755)
	next := touch(filepath.Join(root, "a", "hivemind-hook"), 0o755)
	if got := HookCommand(self); got != next {
		t.Errorf("next to self: %q, want %q", got, next)
	}

	// A non-executable file next to self does not count.
	self = touch(filepath.Join(root, "b", "hivemind"), 0o755)
	touch(filepath.Join(root, "b", "hivemind-hook"), 0o644)
	if got := HookCommand(self); got != onPath {
		t.Errorf("on PATH: %q, want %q", got, onPath)
	}

	t.Setenv("PATH", filepath.Join(root, "empty"))
	if got := HookCommand(self); got != self {
		t.Errorf("fallback: %q, want %q", got, self)
	}
}

// Settings run `hivemind-hook <Event>` for the hook binary and
// `<binary> hook <Event>` for anything else.
func TestClaudeSettingsHookBinary(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"/opt/hm/hivemind-hook", "/opt/hm/hivemind-hook Stop"},
		{"/opt/my dir/hivemind-hook", "'/opt/my dir/hivemind-hook' Stop"},
		{"/opt/hm/hivemind", "/opt/hm/hivemind hook Stop"},
	} {
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string }
			} `json:"hooks"`
		}
		if err := json.Unmarshal(ClaudeSettings(c.cmd), &s); err != nil {
			t.Fatal(err)
		}
		if got := s.Hooks[HookStop][0].Hooks[0].Command; got != c.want {
			t.Errorf("%s: %q, want %q", c.cmd, got, c.want)
		}
	}
}
