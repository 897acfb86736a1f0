package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/pricing"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/workspace"
)

// usageReader reads an agent's token usage from its CLI's session file
// when a turn ends (the Stop, StopFailure or SessionEnd hook names the
// file: transcript_path) and sends the engine an AgentUsage when it
// changed. Reads run off the agents' event goroutines, one at a time per
// agent; a turn that ends during a read is read again after it.
type usageReader struct {
	prices pricing.Table
	send   func(engine.Event)
	// local, when set, maps the session file a hook names to a local
	// file holding it (an agent on another host: remoteTranscripts).
	local func(agent, path string) (string, error)

	mu    sync.Mutex
	last  map[string]workspace.Usage
	busy  map[string]bool
	again map[string]string // agent → the path to read after the current read
}

func newUsageReader(prices pricing.Table, send func(engine.Event)) *usageReader {
	return &usageReader{prices: prices, send: send,
		last: map[string]workspace.Usage{}, busy: map[string]bool{}, again: map[string]string{}}
}

// onHook takes a relayed hook; turn ends start a read.
func (r *usageReader) onHook(agent, hook string, payload []byte) {
	switch hook {
	case ptyagent.HookStop, ptyagent.HookStopFailure, ptyagent.HookSessionEnd:
	default:
		return
	}
	var p struct {
		Path string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) != nil || !filepath.IsAbs(p.Path) {
		return
	}
	r.mu.Lock()
	if r.busy[agent] {
		r.again[agent] = p.Path
		r.mu.Unlock()
		return
	}
	r.busy[agent] = true
	r.mu.Unlock()
	go r.readLoop(agent, p.Path)
}

func (r *usageReader) readLoop(agent, path string) {
	for {
		r.read(agent, path)
		r.mu.Lock()
		next, ok := r.again[agent]
		delete(r.again, agent)
		if !ok {
			r.busy[agent] = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		path = next
	}
}

// read sends the usage in path if it changed. Only a regular file is
// read (the path comes through the agent's hook).
func (r *usageReader) read(agent, path string) {
	if r.local != nil {
		var err error
		if path, err = r.local(agent, path); err != nil {
			return
		}
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return
	}
	u, err := ptyagent.ReadUsage(path)
	if err != nil {
		return
	}
	wu := r.usage(u)
	r.mu.Lock()
	same := r.last[agent] == wu
	r.last[agent] = wu
	r.mu.Unlock()
	if !same && wu.Tokens() > 0 {
		r.send(engine.AgentUsage{Agent: workspace.AgentID(agent), Usage: wu, When: engine.When{At: time.Now()}})
	}
}

// usage prices what a session file recorded.
func (r *usageReader) usage(u ptyagent.Usage) workspace.Usage {
	cost, ok := r.prices.Cost(u.Model, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	return workspace.Usage{Model: u.Model, Input: u.Input, Output: u.Output, CacheRead: u.CacheRead,
		CacheWrite: u.CacheWrite, CostUSD: cost, CostKnown: ok}
}
