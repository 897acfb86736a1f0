package flow

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// A done marker seen again for a subtask already done is a no-op, also
// when it comes with Resumed.
func TestResumedDoneMarkerOfDoneSubtaskIsNoop(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	eff := sc.do(Resumed{OnDisk: []Event{SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, When: When{At: sc.now}}}})
	if hasEvent(eff, "subtask_done") || slices.Contains(injectedTo(eff), "worker_1") {
		t.Fatalf("done marker of a done subtask taken again: %s", describe(eff))
	}
}

// On resume, answers already on disk are taken before unfinished work is
// re-sent: a worker whose done marker is there is not asked again, and a
// plan found on disk goes to the Reviewer once, while the Lead is not
// asked for it again.
func TestResumedTakesOnDiskBeforeResending(t *testing.T) {
	t.Run("done marker", func(t *testing.T) {
		sc := newScenario(t)
		sc.toExecuting()
		eff := sc.do(Resumed{OnDisk: []Event{SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, When: When{At: sc.now}}}})
		if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"worker_2"}) {
			t.Fatalf("injected to %v, want only worker_2 (st_2 still running): %s", got, describe(eff))
		}
		if !hasEvent(eff, "subtask_done") || sc.s.Subtasks["st_1"].Status != vocab.SubtaskDone || sc.s.Agents["worker_1"].Pending {
			t.Fatalf("st_1 not taken: %s", describe(eff))
		}
		checkSpawnFirst(t, eff)
	})
	t.Run("plan", func(t *testing.T) {
		sc := newScenario(t)
		sc.submit(2)
		eff := sc.do(Resumed{OnDisk: []Event{TriggerCompleted{Path: "agents/lead/plan.md", Content: validPlan, Agent: "lead", ModTime: sc.now, When: When{At: sc.now}}}})
		sc.expect(vocab.PhasePlanReview)
		if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"reviewer"}) {
			t.Fatalf("injected to %v, want the reviewer once: %s", got, describe(eff))
		}
		if a := effectsOf[ArchiveTrigger](eff); len(a) != 1 || a[0].From != "agents/lead/plan.md" {
			t.Fatalf("archives %v", a)
		}
		checkSpawnFirst(t, eff)
	})
	t.Run("nothing on disk", func(t *testing.T) {
		sc := newScenario(t)
		sc.toExecuting()
		eff := sc.do(Resumed{})
		if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"worker_1", "worker_2"}) {
			t.Fatalf("re-sent to %v", got)
		}
	})
	t.Run("paused", func(t *testing.T) {
		sc := newScenario(t)
		sc.toExecuting()
		sc.do(KeyPressed{Action: KeyPause})
		eff := sc.do(Resumed{OnDisk: []Event{SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true, When: When{At: sc.now}}}})
		if len(effectsOf[Inject](eff)) != 0 || len(sc.s.Deferred) != 1 {
			t.Fatalf("resumed while paused: %s, deferred %d", describe(eff), len(sc.s.Deferred))
		}
		sc.do(KeyPressed{Action: KeyResume})
		if sc.s.Subtasks["st_1"].Status != vocab.SubtaskDone {
			t.Fatalf("deferred marker not taken on resume: %s", describe(sc.eff))
		}
	})
}

// checkSpawnFirst: the agents are started before anything is typed.
func checkSpawnFirst(t *testing.T, eff []Effect) {
	t.Helper()
	lastSpawn, firstInject := -1, len(eff)
	for i, e := range eff {
		switch e.(type) {
		case SpawnAgent:
			lastSpawn = i
		case Inject:
			firstInject = min(firstInject, i)
		}
	}
	if lastSpawn < 0 || lastSpawn > firstInject {
		t.Fatalf("spawns must come before injections: %s", describe(eff))
	}
}
