package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	project := b.TempDir()
	ws, err := workspace.Open(filepath.Join(project, ".hivemind"))
	if err != nil {
		b.Fatal(err)
	}
	td, err := ws.CreateTask(workspace.Task{Description: "bench", Project: project, Workers: 2})
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
	cfg := DefaultConfig()
	cfg.QuietPeriod = quiet
	cfg.MaxRevisionCycles = 1 << 30
	agents := &rtAgents{failNext: map[string]error{}}
	rig := &benchRig{dir: td.Dir(), injects: make(chan time.Time, 16), done: make(chan error, 1)}
	agents.onInject = func(string, int, string) { rig.injects <- time.Now() }
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
func benchTrigger(i int) (rel, content, agent string) {
	if i%2 == 0 {
		return "plan.md", benchPlan(i), workspace.RoleLead
	}
	return "plan-feedback.md", fmt.Sprintf("# Feedback %d\n\nSplit st_1.\n", i), workspace.RoleReviewer
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
	rig := newBenchRig(b, time.Hour)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		rel, content, agent := benchTrigger(i)
		rig.write(b, rel, content)
		rig.drain()
		t0 := time.Now()
		rig.r.Send(AgentHealth{Agent: agent, Health: "idle", At: t0})
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
	rig := newBenchRig(b, quiet)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		rel, content, _ := benchTrigger(i)
		rig.drain()
		written := rig.write(b, rel, content)
		lat = append(lat, rig.waitInject(b).Sub(written.Add(quiet)))
	}
	b.StopTimer()
	reportLatency(b, lat)
}
