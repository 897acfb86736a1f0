package app

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/pricing"
	"github.com/hivemind-dev/hivemind/ptyagent"
)

// A turn's end reads the CLI's session file and sends the priced usage
// when it changed; a hook that is not a turn's end, or a path that is not
// a regular file, reads nothing.
func TestUsageReaderSendsChanges(t *testing.T) {
	var mu sync.Mutex
	var got []engine.AgentUsage
	r := newUsageReader(pricing.Default(), func(e engine.Event) {
		mu.Lock()
		got = append(got, e.(engine.AgentUsage))
		mu.Unlock()
	})
	events := func() []engine.AgentUsage {
		mu.Lock()
		defer mu.Unlock()
		return append([]engine.AgentUsage(nil), got...)
	}
	// idle waits for the agent's read to finish (no clock: the reader's
	// own state).
	idle := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			r.mu.Lock()
			busy := r.busy["lead"]
			r.mu.Unlock()
			if !busy {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("usage read did not finish")
			}
			time.Sleep(time.Millisecond)
		}
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	write := func(out int) {
		line := fmt.Sprintf(`{"type":"assistant","message":{"id":"m1","model":"fake-claude","usage":{"input_tokens":1000000,"output_tokens":%d}}}`+"\n", out)
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := func(hook, p string) {
		r.onHook("lead", hook, []byte(fmt.Sprintf(`{"transcript_path":%q}`, p)))
		idle()
	}
	write(1_000_000)
	stop(ptyagent.HookStop, path)
	if e := events(); len(e) != 1 || e[0].Agent != "lead" || !e[0].Usage.CostKnown || e[0].Usage.CostUSD != 18 || e[0].Usage.Model != "fake-claude" {
		t.Fatalf("first read: %+v", e)
	}
	stop(ptyagent.HookStop, path) // unchanged
	stop(ptyagent.HookUserPromptSubmit, path)
	stop(ptyagent.HookStop, "/dev/zero")
	stop(ptyagent.HookStop, "relative.jsonl")
	if e := events(); len(e) != 1 {
		t.Fatalf("re-sent: %+v", e)
	}
	write(2_000_000)
	stop(ptyagent.HookStopFailure, path)
	if e := events(); len(e) != 2 || e[1].Usage.Output != 2_000_000 || e[1].Usage.CostUSD != 33 {
		t.Fatalf("changed: %+v", e)
	}
}
