package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/pricing"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
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
	defer r.close()
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
			busy := r.agents["lead"] != nil && r.agents["lead"].busy
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
	write := func(out int) { // the message recorded again, as CLIs do
		appendLine(t, path, fmt.Sprintf(`{"type":"assistant","message":{"id":"m1","model":"fake-claude","usage":{"input_tokens":1000000,"output_tokens":%d}}}`, out))
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

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// The usage follows the session file as it grows, with no hook (a CLI
// records its last message after its Stop hook); after the agents
// stopped, finish reads what they recorded last; an agent's usage sums
// its session files (a restart in a fresh session).
func TestUsageReaderFollowsFiles(t *testing.T) {
	var mu sync.Mutex
	last := map[string]engine.AgentUsage{}
	r := newUsageReader(pricing.Default(), func(e engine.Event) {
		mu.Lock()
		last[string(e.(engine.AgentUsage).Agent)] = e.(engine.AgentUsage)
		mu.Unlock()
	})
	defer r.close()
	out := func(agent string) int64 {
		mu.Lock()
		defer mu.Unlock()
		return last[agent].Usage.Output
	}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	msg := func(id string, n int) string {
		return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"model":"fake-claude","usage":{"input_tokens":1,"output_tokens":%d}}}`, id, n)
	}
	appendLine(t, p1, msg("m1", 10))
	r.onHook("lead", ptyagent.HookUserPromptSubmit, []byte(fmt.Sprintf(`{"transcript_path":%q}`, p1)))
	waitOut := func(want int64, what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for out("lead") != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: output %d, want %d", what, out("lead"), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOut(10, "the hook's read")
	appendLine(t, p1, msg("m2", 5)) // after the hook: no hook names it
	waitOut(15, "the file's growth was not read")
	// A fresh session in a second file adds to the first.
	appendLine(t, p2, msg("n1", 100))
	r.onHook("lead", ptyagent.HookSessionStart, []byte(fmt.Sprintf(`{"transcript_path":%q}`, p2)))
	// Recorded as the agent stopped: finish reads it.
	appendLine(t, p2, msg("n2", 1000))
	r.finish(30 * time.Second)
	if got := out("lead"); got != 1115 {
		t.Fatalf("after finish: output %d, want 1115 (both files, to their last record)", got)
	}
}

// A resumed run takes up the session files the previous run summed
// (state's usage_files): an agent that starts a fresh session keeps the
// tokens of the one before, and a session it resumes counts once.
func TestUsageReaderResumesFiles(t *testing.T) {
	var mu sync.Mutex
	var last engine.AgentUsage
	r := newUsageReader(pricing.Default(), func(e engine.Event) {
		mu.Lock()
		last = e.(engine.AgentUsage)
		mu.Unlock()
	})
	defer r.close()
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	msg := func(id string, n int) string {
		return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"model":"fake-claude","usage":{"input_tokens":1,"output_tokens":%d}}}`, id, n)
	}
	appendLine(t, old, msg("m1", 10))
	appendLine(t, fresh, msg("n1", 100))
	st := vocab.State{Agents: map[vocab.AgentID]vocab.AgentState{
		"lead": {Role: vocab.RoleLead, UsageFiles: []string{old, "relative.jsonl"}}}}
	r.resume(st)
	r.onHook("lead", ptyagent.HookSessionStart, []byte(fmt.Sprintf(`{"transcript_path":%q}`, fresh)))
	r.onHook("lead", ptyagent.HookStop, []byte(fmt.Sprintf(`{"transcript_path":%q}`, old))) // resumed: once
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := last
		mu.Unlock()
		if got.Usage.Output == 110 && slices.Equal(got.Files, []string{old, fresh}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage %+v of files %v, want output 110 of %v", got.Usage, got.Files, []string{old, fresh})
		}
		time.Sleep(10 * time.Millisecond)
	}
}
