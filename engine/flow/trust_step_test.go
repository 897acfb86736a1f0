package flow

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// TestUnreadableTriggerTellsWriter: a trigger that cannot be read (the
// watcher's Problem) is never archived or parsed; its writer is told
// exactly what to fix, boundedly; the same instance never fires twice.
func TestUnreadableTriggerTellsWriter(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(sc *scenario)
		path    string
		problem string
		agent   vocab.AgentID // told; "" none
		phase   vocab.Phase
	}{
		{"plan.md symlink in planning", func(sc *scenario) { sc.submit(2) }, "plan.md", "plan.md is a symbolic link", "lead", vocab.PhasePlanning},
		{"plan.md directory in revision", func(sc *scenario) { sc.toPlanRevision() }, "plan.md", "plan.md is a directory", "lead", vocab.PhasePlanRevision},
		{"verdict too large in plan review", func(sc *scenario) { sc.toPlanReview() }, "plan-approved.md", "plan-approved.md is too large", "reviewer", vocab.PhasePlanReview},
		{"plan.md symlink while executing", func(sc *scenario) { sc.toExecuting() }, "plan.md", "plan.md is a symbolic link", "", vocab.PhaseExecuting},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			c.setup(sc)
			ev := TriggerCompleted{Path: c.path, Problem: c.problem, Inode: 7, ModTime: t0}
			eff := sc.do(ev)
			sc.expect(c.phase)
			if len(effectsOf[ArchiveTrigger](eff)) != 0 || !hasEvent(eff, "trigger_rejected") {
				t.Fatalf("effects: %s", describe(eff))
			}
			if c.agent == "" {
				if len(injectedTo(eff)) != 0 {
					t.Fatalf("told someone: %s", describe(eff))
				}
			} else {
				a := assignmentFor(t, eff, c.agent)
				if !strings.Contains(a.Instruction+a.Rejected, c.problem) {
					t.Fatalf("%s not told the problem: %+v", c.agent, a)
				}
			}
			// The same instance again (a rescan after a restart) is a duplicate.
			ev.At = sc.now
			eff = sc.do(ev)
			if len(injectedTo(eff)) != 0 || hasEvent(eff, "trigger_rejected") {
				t.Fatalf("fired twice: %s", describe(eff))
			}
		})
	}
}

// TestSameBytesSameMtimeNewInodeCounts: a trigger written anew with the
// bytes and mtime of an earlier, consumed one is not taken for a duplicate
// (the run stalled before).
func TestSameBytesSameMtimeNewInodeCounts(t *testing.T) {
	sc := newScenario(t)
	sc.toPlanReview()
	mt := sc.now
	sc.do(TriggerCompleted{Path: "plan-feedback.md", Content: []byte("no"), ModTime: mt, Inode: 1})
	sc.expect(vocab.PhasePlanRevision)
	sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, "\nv2\n"...), Inode: 2})
	sc.expect(vocab.PhasePlanReview)
	eff := sc.do(TriggerCompleted{Path: "plan-feedback.md", Content: []byte("no"), ModTime: mt, Inode: 3})
	sc.expect(vocab.PhasePlanRevision)
	if hasEvent(eff, "trigger_duplicate") || sc.s.RevisionCount != 2 {
		t.Fatalf("second feedback not taken: %s", describe(eff))
	}
	// The very same instance (same inode) is still a duplicate.
	eff = sc.do(TriggerCompleted{Path: "plan-feedback.md", Content: []byte("no"), ModTime: mt, Inode: 3})
	if !hasEvent(eff, "trigger_duplicate") {
		t.Fatalf("same instance handled twice: %s", describe(eff))
	}
}

// TestPlanInputBounded: a deeply nested or oversized plan.md is rejected
// with an exact message, in linear memory (a 200 KB nested plan took GBs).
func TestPlanInputBounded(t *testing.T) {
	deep := func(n int) []byte {
		return planMD(`{"summary": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
	}
	cases := []struct {
		name string
		md   []byte
		want string
	}{
		{"nested 100k", deep(100_000), "nests deeper than 16 levels"},
		{"nested objects", planMD(`{"summary": ` + strings.Repeat(`{"a":`, 50_000) + `1` + strings.Repeat("}", 50_000) + `}`), "nests deeper than 16 levels"},
		{"brackets inside strings do not count", planMD(`{"summary": "` + strings.Repeat("[", 1000) + `", "checkpoints": [], "subtasks": []}`), "no checkpoints"},
		{"description too large", planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "c"}], "subtasks": [{"id": "st_1", "description": "` +
			strings.Repeat("d", 20<<10) + `", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]}]}`), "the description is 20480 bytes (at most 16384)"},
		{"too large", append(planMD(`{"summary": "x", "checkpoints": [], "subtasks": []}`), strings.Repeat("x", MaxTriggerBytes)...), "plan.md is too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, probs := ParsePlan(c.md, testProject)
			runtime.ReadMemStats(&after)
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.String())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
				t.Fatalf("problems %q, want %q", msgs, c.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Fatalf("parsing %d bytes allocated %d bytes", len(c.md), alloc)
			}
		})
	}
}

func TestStateNotSaved(t *testing.T) {
	cases := []struct {
		name  string
		setup func(sc *scenario)
		want  vocab.Phase
		esc   string
	}{
		{"while executing", func(sc *scenario) { sc.toExecuting() }, vocab.PhaseNeedsHuman, "state_write"},
		{"while planning", func(sc *scenario) { sc.submit(2) }, vocab.PhaseNeedsHuman, "state_write"},
		{"no task", func(sc *scenario) {}, vocab.PhaseIdle, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			c.setup(sc)
			sc.do(StateNotSaved{Error: "no space left on device"})
			sc.expect(c.want)
			if sc.s.Escalation != c.esc {
				t.Fatalf("escalation %q", sc.s.Escalation)
			}
			if c.esc == "" {
				return
			}
			if len(sc.s.Timers) != 0 || !strings.Contains(sc.s.Reason, "no space left on device") {
				t.Fatalf("timers %v reason %q", sc.s.Timers, sc.s.Reason)
			}
			// Another failure while waiting changes nothing (no loop).
			if eff := sc.do(StateNotSaved{Error: "again"}); len(eff) != 0 {
				t.Fatalf("second failure: %s", describe(eff))
			}
		})
	}
	// Retry sends every unfinished assignment again.
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(StateNotSaved{Error: "disk full"})
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseExecuting)
	if got := injectedTo(eff); !contains(got, "worker_1") || !contains(got, "worker_2") {
		t.Fatalf("retry re-sent to %v", got)
	}
}

// TestResumeWithRetry: hivemind --resume --retry retries what stopped the
// task as it resumes (headless has no R key).
func TestResumeWithRetry(t *testing.T) {
	sc := newScenario(t)
	sc.toNeedsHuman()
	sc.do(Resumed{Retry: true})
	sc.expect(vocab.PhasePlanning)
	if sc.s.Escalation != "" {
		t.Fatalf("escalation %q after retry", sc.s.Escalation)
	}
	sc = newScenario(t)
	sc.toExecuting()
	eff := sc.do(Resumed{Retry: true})
	sc.expect(vocab.PhaseExecuting)
	if !hasEvent(eff, "key_ignored") {
		t.Fatalf("retry of a running task: %s", describe(eff))
	}
}

// A cancelled injection (the runner stopped) is recorded, never counted
// as the agent's failure.
func TestInjectionCancelledIsNotAFailure(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	eff := sc.do(InjectionResult{Agent: "worker_1", Seq: sc.s.Agents["worker_1"].LastSeq, Cancelled: true, Detail: "cancelled"})
	if !hasEvent(eff, "injection_cancelled") || len(effectsOf[ScheduleTimer](eff)) != 0 || sc.s.Agents["worker_1"].Failures != 0 {
		t.Fatalf("%s", describe(eff))
	}
}

// TestStateStaysSmall: state.json holds the plan and references to what
// agents write, so a plan at every limit keeps it small (a 20 MB
// description once made a 61 MB state.json and 261 MB of backups).
func TestStateStaysSmall(t *testing.T) {
	var subs []string
	for i := 0; ; i++ {
		sub := fmt.Sprintf(`{"id": "st_%d", "description": "%s", "checkpoint": 1, "dependencies": [], "files": ["CREATE f%d.go"]}`,
			i, strings.Repeat("d", maxDescription), i)
		if len(strings.Join(append(subs, sub), ",")) > MaxTriggerBytes-1000 {
			break
		}
		subs = append(subs, sub)
	}
	plan := planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "c"}], "subtasks": [` + strings.Join(subs, ",") + `]}`)
	sc := newScenario(t)
	sc.submit(4)
	sc.do(TriggerCompleted{Path: "plan.md", Content: plan})
	sc.expect(vocab.PhasePlanReview)
	sc.trig("plan-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	b, err := json.Marshal(sc.s)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 2*MaxTriggerBytes {
		t.Fatalf("state.json would be %d bytes for a %d-byte plan", len(b), len(plan))
	}
}
