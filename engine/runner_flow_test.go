package engine

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// flowAgents are in-process agents that follow their assignments with the
// sim agent's script: on each Inject they read assignments/<id>.json,
// write what the script says (done marker last) and report idle, the way a
// real agent's Stop hook does. Each agent works through its messages in
// order on its own goroutine.
type flowAgents struct {
	t       *testing.T
	dir     string
	project string
	send    func(Event)

	// hold, when set, keeps workers from doing their subtasks until it is
	// closed (then they finish them, as agents outliving Hivemind do).
	hold chan struct{}

	mu      sync.Mutex
	queues  map[vocab.AgentID]chan int
	starts  map[vocab.AgentID]int
	wg      sync.WaitGroup
	stopped bool
}

func (f *flowAgents) Start(id vocab.AgentID, role vocab.Role, resume bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts[id]++
	if _, ok := f.queues[id]; !ok {
		q := make(chan int, 64)
		f.queues[id] = q
		f.wg.Add(1)
		go f.work(id, q)
	}
	f.send(AgentHealth{Agent: id, Health: "ready", When: When{At: time.Now()}})
	return nil
}

func (f *flowAgents) Stop(id vocab.AgentID) error { return nil }

func (f *flowAgents) Inject(id vocab.AgentID, seq int, text string) error {
	f.mu.Lock()
	q := f.queues[id]
	f.mu.Unlock()
	q <- seq
	return nil
}

func (f *flowAgents) HoldDelivery(vocab.AgentID, bool)  {}
func (f *flowAgents) Withdraw(vocab.AgentID, int) []int { return nil }

func (f *flowAgents) close() {
	f.mu.Lock()
	if !f.stopped {
		f.stopped = true
		for _, q := range f.queues {
			close(q)
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *flowAgents) work(id vocab.AgentID, q chan int) {
	defer f.wg.Done()
	rnd := rand.New(rand.NewPCG(1, uint64(len(id))))
	for seq := range q {
		f.send(InjectionResult{Agent: id, Seq: seq, Delivered: true, When: When{At: time.Now()}})
		f.send(AgentHealth{Agent: id, Health: "busy", When: When{At: time.Now()}})
		b, err := os.ReadFile(filepath.Join(f.dir, "assignments", string(id)+".json"))
		if err != nil {
			f.t.Errorf("%s: assignment for seq %d: %v", id, seq, err)
			continue
		}
		var a vocab.Assignment
		if err := json.Unmarshal(b, &a); err != nil {
			f.t.Errorf("%s: %v", id, err)
			continue
		}
		if f.hold != nil && a.Role == vocab.RoleWorker && a.Subtask != nil {
			<-f.hold
		}
		writes, _ := script.Respond(a, f.dir, f.project, rnd)
		for _, w := range writes {
			if w.Forbidden {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
				f.t.Error(err)
			}
			if err := os.WriteFile(w.Path, []byte(w.Content), 0o644); err != nil {
				f.t.Error(err)
			}
		}
		f.send(AgentHealth{Agent: id, Health: "idle", When: When{At: time.Now()}})
	}
}

// flowRun is one runner over a task directory, as one hivemind process.
type flowRun struct {
	r      *Runner
	agents *flowAgents
	store  *workspace.StateStore
	log    *workspace.EventLog
	phases chan vocab.Phase
	cancel func()
	done   chan error
}

func startFlow(t *testing.T, td *workspace.TaskDir, project string, hold chan struct{}) (*flowRun, State) {
	t.Helper()
	store, st, _, err := workspace.OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	log, err := workspace.OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	fr := &flowRun{store: store, log: log, phases: make(chan vocab.Phase, 1000), done: make(chan error, 1)}
	fr.agents = &flowAgents{t: t, dir: td.Dir(), project: project, hold: hold,
		queues: map[vocab.AgentID]chan int{}, starts: map[vocab.AgentID]int{}}
	cfg := defaultConfig()
	cfg.QuietPeriod = 50 * time.Millisecond
	fr.r = NewRunner(RunnerConfig{
		Machine: Machine{Cfg: cfg}, TaskDir: td, Store: store, Log: log, Agents: fr.agents,
		State: st, QuietPeriod: cfg.QuietPeriod,
		OnSnapshot: func(s Snapshot) {
			select {
			case fr.phases <- s.State.Phase:
			default:
			}
		},
	})
	fr.agents.send = fr.r.Send
	ctx, cancel := context.WithCancel(context.Background())
	fr.cancel = cancel
	go func() { fr.done <- fr.r.Run(ctx) }()
	return fr, st
}

// waitPhase waits until a snapshot shows phase p (or a final phase).
func (fr *flowRun) waitPhase(t *testing.T, p vocab.Phase) vocab.Phase {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case got := <-fr.phases:
			if got == p || got.Terminal() {
				return got
			}
		case <-deadline:
			t.Fatalf("phase %s not reached within 60s (now %s)", p, fr.r.Snapshot().State.Phase)
		}
	}
}

// stop ends the run as an abrupt stop would: no shutdown steps, the
// agents simply gone.
func (fr *flowRun) stop(t *testing.T) {
	t.Helper()
	fr.cancel()
	if err := <-fr.done; err != nil {
		t.Fatal(err)
	}
	if fr.agents.hold != nil {
		close(fr.agents.hold)
	}
	fr.agents.close()
	_ = fr.log.Close()
	_ = fr.store.Close()
}

// The whole workflow runs in process under the race detector: real Step,
// workspace, watcher and runner, agents following the sim script. It is
// stopped while subtasks are in progress and resumed by a new runner from
// state.json; it completes with every subtask done and the revision count
// it had before the stop; outputs written while no runner ran are not
// lost.
func TestRunnerFlowCompletesAcrossRestart(t *testing.T) {
	project := t.TempDir()
	ws, err := workspace.Open(filepath.Join(project, ".hivemind"))
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "build a tiny calculator", Project: project, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	task, err := td.Task()
	if err != nil {
		t.Fatal(err)
	}

	// The first run's workers sit on their subtasks until it is stopped,
	// then finish them while no Hivemind runs: the second run must pick
	// those outputs up from disk (and cope with the re-sent assignments
	// being done again).
	first, _ := startFlow(t, td, project, make(chan struct{}))
	first.r.Send(TaskSubmitted{Task: task, TaskDir: td.Dir()})
	if got := first.waitPhase(t, vocab.PhaseExecuting); got != vocab.PhaseExecuting {
		t.Fatalf("reached %s before executing", got)
	}
	first.stop(t)

	second, st := startFlow(t, td, project, nil)
	defer second.stop(t)
	if st.Phase != vocab.PhaseExecuting {
		t.Fatalf("state.json says %s after the stop, want executing", st.Phase)
	}
	second.r.Send(Resumed{})
	if got := second.waitPhase(t, vocab.PhaseComplete); got != vocab.PhaseComplete {
		s := second.r.Snapshot().State
		t.Fatalf("ended in %s (%s %s)", got, s.Reason, s.Error)
	}
	final := second.r.Snapshot().State
	if final.RevisionCount != st.RevisionCount {
		t.Errorf("revision_count %d after resume, %d at the stop", final.RevisionCount, st.RevisionCount)
	}
	for id, s := range final.Subtasks {
		if s.Status != vocab.SubtaskDone {
			t.Errorf("subtask %s is %s", id, s.Status)
		}
	}
	second.agents.mu.Lock()
	starts := second.agents.starts
	second.agents.mu.Unlock()
	for _, id := range []vocab.AgentID{"lead", "reviewer", "worker_1", "worker_2"} {
		if starts[id] == 0 {
			t.Errorf("%s not re-spawned after the restart", id)
		}
	}
}
