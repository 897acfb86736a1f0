package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// benchPlan is a valid plan.md for the latency benchmark.
func benchPlan(i int) string {
	return fmt.Sprintf("# Plan %d\n\n```json\n%s\n```\n", i,
		`{"summary":"calc","checkpoints":[{"id":1,"name":"core"}],`+
			`"subtasks":[{"id":"st_1","description":"add","checkpoint":1,"dependencies":[],"files":["CREATE calc.go"]}]}`)
}

// benchRig is the real runner on a real workspace with the real Machine;
// only the agents are fake (they record when Inject is called).
type benchRig struct {
	r       *Runner
	dir     string
	injects chan time.Time
	cancel  func()
	done    chan error
}

func newBenchRig(b *testing.B, quiet time.Duration) *benchRig {
	b.Helper()
	// HIVEMIND_BENCH_DIR puts the workspace elsewhere (e.g. /dev/shm, to
	// separate the engine's own latency from the disk's fsync latency).
	project := b.TempDir()
	if d := os.Getenv("HIVEMIND_BENCH_DIR"); d != "" {
		var err error
		if project, err = os.MkdirTemp(d, "bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(project) })
	}
	ws, err := workspace.Open(filepath.Join(project, ".hivemind"))
	if err != nil {
		b.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "bench", Project: project, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	store, _, _, err := workspace.OpenStateStore(td)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	log, err := workspace.OpenEventLog(td)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	task, err := td.Task()
	if err != nil {
		b.Fatal(err)
	}
	cfg := defaultConfig()
	cfg.QuietPeriod = quiet
	cfg.MaxRevisionCycles = 1 << 30
	agents := &rtAgents{failNext: map[string]error{}}
	rig := &benchRig{dir: td.Dir(), injects: make(chan time.Time, 16), done: make(chan error, 1)}
	agents.onInject = func(vocab.AgentID, int, string) { rig.injects <- time.Now() }
	rig.r = NewRunner(RunnerConfig{
		Machine: Machine{Cfg: cfg}, TaskDir: td, Store: store, Log: log, Agents: agents, QuietPeriod: quiet,
	})
	ctx, cancel := context.WithCancel(context.Background())
	rig.cancel = cancel
	go func() { rig.done <- rig.r.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-rig.done })
	rig.r.Send(TaskSubmitted{Task: task, TaskDir: td.Dir()})
	rig.waitInject(b) // the Lead's first assignment
	return rig
}

// benchTaskTriggers is how many triggers one task of the benchmark sees
// before a fresh task starts: a real task has tens, and the state (review
// rounds, consumed triggers) grows with each. HIVEMIND_BENCH_TASK_TRIGGERS
// changes it (e.g. 1000: one task for the whole run).
func benchTaskTriggers() int {
	if n, err := strconv.Atoi(os.Getenv("HIVEMIND_BENCH_TASK_TRIGGERS")); err == nil && n > 0 {
		return n
	}
	return 50
}

// next returns the rig for trigger i: a fresh task (runner, workspace)
// every benchTaskTriggers triggers, set up outside the timed region.
func (rig *benchRig) next(b *testing.B, i int, quiet time.Duration) *benchRig {
	if rig != nil && i%benchTaskTriggers() != 0 {
		return rig
	}
	b.StopTimer()
	defer b.StartTimer()
	if rig != nil {
		rig.cancel()
		<-rig.done
		rig.done <- nil // for the Cleanup registered by newBenchRig
	}
	return newBenchRig(b, quiet)
}

func (rig *benchRig) waitInject(b *testing.B) time.Time {
	b.Helper()
	select {
	case t := <-rig.injects:
		return t
	case <-time.After(10 * time.Second):
		b.Fatal("no Inject within 10s")
		return time.Time{}
	}
}

// drain drops Injects that are not the one measured (none are expected,
// but a stray one must not be taken for the next trigger's).
func (rig *benchRig) drain() {
	for {
		select {
		case <-rig.injects:
		default:
			return
		}
	}
}

func (rig *benchRig) write(b *testing.B, rel, content string) time.Time {
	b.Helper()
	if err := os.WriteFile(filepath.Join(rig.dir, rel), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	return time.Now()
}

// trigger returns the i-th trigger of a plan ↔ feedback loop and the role
// that writes it: plan.md (Lead) → Reviewer injected; plan-feedback.md
// (Reviewer) → Lead injected.
func benchTrigger(i int) (rel, content string, agent vocab.AgentID) {
	if i%2 == 0 {
		return "plan.md", benchPlan(i), vocab.AgentLead
	}
	return "plan-feedback.md", fmt.Sprintf("# Feedback %d\n\nSplit st_1.\n", i), vocab.AgentReviewer
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkTriggerToInject measures trigger file complete → Inject called
// when the writer's turn-ended signal makes the file complete (no quiet
// period involved): idle event → watcher flush → TriggerCompleted → Step →
// archive, state + backup, events, assignment (all fsync'd) → Inject.
// Run with -benchtime=1000x for 1000 triggers.
func BenchmarkTriggerToInject(b *testing.B) {
	var rig *benchRig
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		rig = rig.next(b, i, time.Hour)
		rel, content, agent := benchTrigger(i)
		rig.write(b, rel, content)
		rig.drain()
		t0 := time.Now()
		rig.r.Send(AgentHealth{Agent: agent, Health: "idle", When: When{At: t0}})
		lat = append(lat, rig.waitInject(b).Sub(t0))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// BenchmarkTriggerToInjectQuiet measures the other completion path: the
// file is complete once unchanged for the quiet period; the latency is
// measured from the end of the quiet period (last write + quiet).
func BenchmarkTriggerToInjectQuiet(b *testing.B) {
	const quiet = 20 * time.Millisecond
	var rig *benchRig
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		rig = rig.next(b, i, quiet)
		rel, content, _ := benchTrigger(i)
		rig.drain()
		written := rig.write(b, rel, content)
		lat = append(lat, rig.waitInject(b).Sub(written.Add(quiet)))
	}
	b.StopTimer()
	reportLatency(b, lat)
}
