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
	"github.com/hivemind-dev/hivemind/vocab"
)

// usageReader follows each agent's token usage in its CLI's session files
// (every hook names the file: transcript_path) and sends the engine an
// AgentUsage whenever it changed. A local file is looked at every
// usagePoll and read when it grew, appended bytes only
// (ptyagent.UsageFile), so the figures follow the CLI's own records while
// it works, not only at turn ends; every hook and the agent's exit read
// it too, and finish reads every file once more after all agents stopped,
// so a turn recorded just before a stop counts. An agent's usage is the
// sum over the session files it had (a restart without resume starts a
// new one). Reads run off the agents' event goroutines, one at a time per
// agent; a trigger during a read reads again after it.
type usageReader struct {
	prices pricing.Table
	send   func(engine.Event)
	// local, when set, maps the session file a hook names to a local
	// file holding it (an agent on another host: remoteTranscripts);
	// remote tells such agents, whose files are read at hooks and exit
	// only (each look costs an ssh round trip).
	local  func(agent, path string) (string, error)
	remote func(agent string) bool

	mu     sync.Mutex
	agents map[string]*agentFiles
	reads  sync.WaitGroup
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// agentFiles are one agent's session files and the state of its reads.
type agentFiles struct {
	files []*usageSrc      // in the order first named
	size  map[string]int64 // path → size at the last poll
	last  vocab.Usage
	sent  int // how many files the last usage sent summed
	busy  bool
	again bool
}

// usageSrc is one session file: the path its hook named, and the reader
// of the file holding it here (the path itself, or a remote agent's
// local copy), made at its first read.
type usageSrc struct {
	path string
	f    *ptyagent.UsageFile
}

// usagePoll spaces the looks at local session files (a stat each).
const usagePoll = time.Second

func newUsageReader(prices pricing.Table, send func(engine.Event)) *usageReader {
	r := &usageReader{prices: prices, send: send, agents: map[string]*agentFiles{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.poll()
	return r
}

// onHook takes a relayed hook: it names the agent's session file, and a
// read follows.
func (r *usageReader) onHook(agent, hook string, payload []byte) {
	var p struct {
		Path string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) == nil {
		r.addFile(agent, p.Path)
	}
	r.trigger(agent)
}

// addFile adds a session file of agent (an absolute path; others are
// ignored).
func (r *usageReader) addFile(agent, path string) {
	if !filepath.IsAbs(path) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.agentLocked(agent)
	if !a.has(path) {
		if r.remote != nil && r.remote(agent) {
			// One local copy per remote agent: its newest file.
			a.files = a.files[:0]
		}
		a.files = append(a.files, &usageSrc{path: path})
	}
}

// onEvent takes the agent layer's events: an agent that exited has
// written all it will; its files are read once more.
func (r *usageReader) onEvent(ev ptyagent.Event) {
	if ev.Kind == ptyagent.EventHealth && ev.Health == vocab.HealthExited {
		r.trigger(string(ev.Agent))
	}
}

func (r *usageReader) agentLocked(agent string) *agentFiles {
	a := r.agents[agent]
	if a == nil {
		a = &agentFiles{size: map[string]int64{}}
		r.agents[agent] = a
	}
	return a
}

func (a *agentFiles) has(path string) bool {
	for _, f := range a.files {
		if f.path == path {
			return true
		}
	}
	return false
}

// trigger starts a read of agent's files, or asks the running one to read
// again when it ends.
func (r *usageReader) trigger(agent string) {
	r.mu.Lock()
	a := r.agents[agent]
	if a == nil || len(a.files) == 0 {
		r.mu.Unlock()
		return
	}
	if a.busy {
		a.again = true
		r.mu.Unlock()
		return
	}
	a.busy = true
	r.reads.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.reads.Done()
		for {
			r.read(agent, a)
			r.mu.Lock()
			if !a.again {
				a.busy = false
				r.mu.Unlock()
				return
			}
			a.again = false
			r.mu.Unlock()
		}
	}()
}

// poll looks at the local agents' session files every usagePoll and
// reads those that changed size.
func (r *usageReader) poll() {
	defer close(r.done)
	t := time.NewTicker(usagePoll)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		var grew []string
		for agent, a := range r.agents {
			if r.remote != nil && r.remote(agent) {
				continue
			}
			for _, f := range a.files {
				if fi, err := os.Stat(f.path); err == nil && fi.Size() != a.size[f.path] {
					a.size[f.path] = fi.Size()
					grew = append(grew, agent)
				}
			}
		}
		r.mu.Unlock()
		for _, agent := range grew {
			r.trigger(agent)
		}
	}
}

// finish ends the polling and reads every agent's files once more (the
// agents have stopped: what they recorded last counts), waiting at most
// d for the reads.
func (r *usageReader) finish(d time.Duration) {
	r.close()
	r.mu.Lock()
	agents := make([]string, 0, len(r.agents))
	for agent := range r.agents {
		agents = append(agents, agent)
	}
	r.mu.Unlock()
	for _, agent := range agents {
		r.trigger(agent)
	}
	ended := make(chan struct{})
	go func() {
		r.reads.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(d):
	}
}

// close ends the polling (idempotent).
func (r *usageReader) close() {
	r.closed.Do(func() { close(r.stop) })
	<-r.done
}

// read sends agent's usage, summed over its files, if it changed. Only a
// regular file is read (the path comes through the agent's hook).
func (r *usageReader) read(agent string, a *agentFiles) {
	r.mu.Lock()
	files := append([]*usageSrc(nil), a.files...)
	r.mu.Unlock()
	var sum vocab.Usage
	sum.CostKnown = true
	var paths []string // the files read
	for _, f := range files {
		u, ok := r.readFile(agent, f)
		if !ok {
			continue
		}
		paths = append(paths, f.path)
		wu := r.usage(u)
		if wu.Model != "" {
			sum.Model = wu.Model
		}
		sum.Input += wu.Input
		sum.Output += wu.Output
		sum.CacheRead += wu.CacheRead
		sum.CacheWrite += wu.CacheWrite
		sum.CostUSD += wu.CostUSD
		sum.CostKnown = sum.CostKnown && (wu.CostKnown || wu.Tokens() == 0)
	}
	if sum.Tokens() == 0 {
		return
	}
	r.mu.Lock()
	same := a.last == sum && a.sent == len(paths)
	a.last, a.sent = sum, len(paths)
	r.mu.Unlock()
	if !same {
		r.send(engine.AgentUsage{Agent: vocab.AgentID(agent), Usage: sum, Files: paths, When: engine.When{At: time.Now()}})
	}
}

// resume takes up the session files a previous run of the task summed
// for each agent (vocab.AgentState.UsageFiles): read with the files
// this run's hooks name, a session the agent does not resume still
// counts, and one it resumes counts once. The next poll reads them. An
// agent on another host is read from its newest file only (onHook), so
// its files are not taken up.
func (r *usageReader) resume(st vocab.State) {
	for _, id := range st.AgentIDs() {
		if r.remote != nil && r.remote(string(id)) {
			continue
		}
		for _, p := range st.Agents[id].UsageFiles {
			r.addFile(string(id), p)
		}
	}
}

// readFile brings src up to date: a remote agent's file through its
// local copy.
func (r *usageReader) readFile(agent string, src *usageSrc) (ptyagent.Usage, bool) {
	path := src.path
	if r.local != nil {
		var err error
		if path, err = r.local(agent, path); err != nil {
			return ptyagent.Usage{}, false
		}
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return ptyagent.Usage{}, false
	}
	if src.f == nil || src.f.Path() != path {
		src.f = ptyagent.NewUsageFile(path)
	}
	u, err := src.f.Read()
	return u, err == nil
}

// usage prices what a session file recorded.
func (r *usageReader) usage(u ptyagent.Usage) vocab.Usage {
	cost, ok := r.prices.Cost(u.Model, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	return vocab.Usage{Model: u.Model, Input: u.Input, Output: u.Output, CacheRead: u.CacheRead,
		CacheWrite: u.CacheWrite, CostUSD: cost, CostKnown: ok}
}
