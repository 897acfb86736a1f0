package sim

import (
	"testing"

	"github.com/hivemind-dev/hivemind/ptyagent"
)

// With --usage each turn records its tokens in a session file the Stop
// hook names, as Claude Code does; the usage reader reads it.
func TestMainUsage(t *testing.T) {
	f := newSimFixture(t)
	sink := newHookSink(t)
	home := t.TempDir()
	_, code := run(t, f, "hello\nagain\n", map[string]string{"HIVEMIND_HOOK_SOCKET": sink.ln.Addr().String(), "HOME": home}, "--usage", "1000")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	sink.waitEvents(t, 5)
	sink.mu.Lock()
	var path string
	for _, m := range sink.msgs {
		if p, _ := m["payload"].(map[string]any); m["event"] == "Stop" && p != nil {
			path, _ = p["transcript_path"].(string)
		}
	}
	sink.mu.Unlock()
	u, err := ptyagent.ReadUsage(path)
	if err != nil || u.Model != "sim" || u.Input != 1800 || u.Output != 200 {
		t.Fatalf("usage of %q: %+v %v", path, u, err)
	}
}
