package flow

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// gitMachine is the test machine of a git project with a check command.
var gitMachine = func() Machine {
	m := Machine{Cfg: defaultConfig()}
	m.Cfg.Git = true
	m.Cfg.Check = "go test ./..."
	return m
}()

// gitScenario is a scenario of a git project.
func gitScenario(t *testing.T) *scenario {
	sc := newScenario(t)
	sc.m = gitMachine
	return sc
}

// stampMerged puts the scenario clock on a CheckpointMerged.
func (sc *scenario) merged(e CheckpointMerged) []Effect {
	sc.t.Helper()
	e.At = sc.tick()
	sc.log = append(sc.log, e)
	sc.s, sc.eff = step(sc.t, sc.m, sc.s, e)
	return sc.eff
}

// toMerging runs a git scenario to checkpoint 1 waiting for its merge.
func (sc *scenario) toMerging() MergeCheckpoint {
	sc.t.Helper()
	sc.toExecuting()
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	eff := sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.expect(vocab.PhaseCheckpoint)
	ms := effectsOf[MergeCheckpoint](eff)
	if len(ms) != 1 {
		sc.t.Fatalf("want one MergeCheckpoint, got %s", describe(eff))
	}
	return ms[0]
}

func cleanMerge(m MergeCheckpoint) CheckpointMerged {
	return CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt, Merged: true,
		DiffFile: "reviews/checkpoint_1_v1-diff.patch", CheckFile: "reviews/checkpoint_1_v1-check.txt",
		Checked: true, CheckOK: true, MergedDir: "/ws/worktrees/.merge"}
}

func conflictMerge(m MergeCheckpoint) CheckpointMerged {
	return CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt,
		Conflicts: []MergeConflict{{Worker: "worker_2", With: []vocab.AgentID{"worker_1"}, Files: []string{"b.go"},
			HunksFile: "reviews/checkpoint_1_v1-a1-conflict-worker_2.md"}}}
}

func TestGitCheckpointWaitsForMerge(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	want := MergeCheckpoint{Checkpoint: 1, Round: 1, Attempt: 1, Workers: []vocab.AgentID{"worker_1", "worker_2"}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("MergeCheckpoint %+v, want %+v", m, want)
	}
	if !hasEvent(sc.eff, "merge_requested") || hasEvent(sc.eff, "checkpoint_review") {
		t.Errorf("events %v", eventTypes(sc.eff))
	}
	if slices.Contains(injectedTo(sc.eff), "reviewer") {
		t.Error("reviewer asked before the merge")
	}
	if !sc.s.Merge.Waiting || sc.s.Merge.Attempt != 1 {
		t.Errorf("merge state %+v", sc.s.Merge)
	}
	// Without git nothing of this happens: straight to the review.
	plain := newScenario(t)
	plain.toCheckpointReview()
	for _, e := range plain.log {
		if _, ok := e.(CheckpointMerged); ok {
			t.Fatal("non-git scenario saw a merge event")
		}
	}
	if plain.s.Merge != (vocab.MergeState{}) {
		t.Errorf("non-git merge state %+v", plain.s.Merge)
	}
}

func TestGitMergeTransitions(t *testing.T) {
	tests := []struct {
		name  string
		event func(MergeCheckpoint) CheckpointMerged
		phase vocab.Phase
		check func(t *testing.T, sc *scenario)
	}{
		{"clean merge starts the review with diff and check", cleanMerge, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			a := assignmentFor(t, sc.eff, "reviewer")
			for _, f := range []string{testTaskDir + "/reviews/checkpoint_1_v1-diff.patch", testTaskDir + "/reviews/checkpoint_1_v1-check.txt"} {
				if !slices.Contains(a.Reads, f) {
					t.Errorf("reviewer reads %v lack %s", a.Reads, f)
				}
			}
			for _, s := range []string{"combined diff", "`go test ./...` passed", "/ws/worktrees/.merge"} {
				if !strings.Contains(a.Instruction, s) {
					t.Errorf("instruction lacks %q:\n%s", s, a.Instruction)
				}
			}
			if !hasEvent(sc.eff, "checkpoint_merged") || sc.s.Merge.Waiting {
				t.Errorf("events %v, merge %+v", eventTypes(sc.eff), sc.s.Merge)
			}
		}},
		{"failed check is input for the reviewer", func(m MergeCheckpoint) CheckpointMerged {
			e := cleanMerge(m)
			e.CheckOK = false
			return e
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			a := assignmentFor(t, sc.eff, "reviewer")
			if !strings.Contains(a.Instruction, "FAILED") || !strings.Contains(a.Instruction, "issue to report") {
				t.Errorf("instruction:\n%s", a.Instruction)
			}
		}},
		{"no check: diff only", func(m MergeCheckpoint) CheckpointMerged {
			e := cleanMerge(m)
			e.Checked, e.CheckFile = false, ""
			return e
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			a := assignmentFor(t, sc.eff, "reviewer")
			if strings.Contains(a.Instruction, "go test") || strings.Contains(a.Instruction, "passed") {
				t.Errorf("check mentioned without a check:\n%s", a.Instruction)
			}
			if !slices.Contains(a.Reads, testTaskDir+"/reviews/checkpoint_1_v1-diff.patch") {
				t.Errorf("reads %v", a.Reads)
			}
		}},
		{"conflict sends a fix to the conflicting worker", conflictMerge, vocab.PhaseCheckpointFix, func(t *testing.T, sc *scenario) {
			a := assignmentFor(t, sc.eff, "worker_2")
			if a.ReadOnly || !strings.HasSuffix(a.DoneMarker, "outputs/merge-cp1-a1-worker_2.done") {
				t.Errorf("fix assignment %+v", a)
			}
			if !slices.Contains(a.Reads, testTaskDir+"/reviews/checkpoint_1_v1-a1-conflict-worker_2.md") {
				t.Errorf("reads %v lack the hunks", a.Reads)
			}
			if !slices.Contains(a.Writes, testProject+"/b.go") {
				t.Errorf("writes %v lack the conflicted file", a.Writes)
			}
			for _, s := range []string{"conflicted with worker_1", "<<<<<<<", "remove every marker"} {
				if !strings.Contains(a.Instruction, s) {
					t.Errorf("instruction lacks %q", s)
				}
			}
			if slices.Contains(injectedTo(sc.eff), "worker_1") {
				t.Error("the other side, with nothing to do, was sent a message")
			}
			if _, ok := sc.s.Fixes["merge-cp1-a1-worker_2"]; !ok || len(sc.s.Fixes) != 1 {
				t.Errorf("fixes %v", sc.s.Fixes)
			}
			if slices.Contains(injectedTo(sc.eff), "reviewer") {
				t.Error("reviewer asked despite the conflict")
			}
		}},
		{"git failure needs a human", func(m MergeCheckpoint) CheckpointMerged {
			return CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt, Error: "git merge: disk full"}
		}, vocab.PhaseNeedsHuman, func(t *testing.T, sc *scenario) {
			if sc.s.Escalation != "git_merge" || !strings.Contains(sc.s.Reason, "disk full") {
				t.Errorf("escalation %q reason %q", sc.s.Escalation, sc.s.Reason)
			}
		}},
		{"neither merged nor conflicting needs a human", func(m MergeCheckpoint) CheckpointMerged {
			return CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt}
		}, vocab.PhaseNeedsHuman, nil},
		{"conflict of an unknown worker needs a human", func(m MergeCheckpoint) CheckpointMerged {
			e := conflictMerge(m)
			e.Conflicts[0].Worker = "worker_9"
			return e
		}, vocab.PhaseNeedsHuman, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := gitScenario(t)
			m := sc.toMerging()
			sc.merged(tc.event(m))
			sc.expect(tc.phase)
			if tc.check != nil {
				tc.check(t, sc)
			}
		})
	}
}

func TestGitMergeResultIgnored(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(sc *scenario) MergeCheckpoint
		event  func(MergeCheckpoint) CheckpointMerged
		reason string
	}{
		{"stale attempt", (*scenario).toMerging, func(m MergeCheckpoint) CheckpointMerged {
			e := cleanMerge(m)
			e.Attempt = m.Attempt + 1
			return e
		}, "stale"},
		{"other checkpoint", (*scenario).toMerging, func(m MergeCheckpoint) CheckpointMerged {
			e := cleanMerge(m)
			e.Checkpoint = 2
			return e
		}, "stale"},
		{"other round", (*scenario).toMerging, func(m MergeCheckpoint) CheckpointMerged {
			e := cleanMerge(m)
			e.Round = 7
			return e
		}, "stale"},
		{"not at a checkpoint", func(sc *scenario) MergeCheckpoint {
			sc.toExecuting()
			return MergeCheckpoint{Checkpoint: 1, Round: 1, Attempt: 1}
		}, cleanMerge, "not waiting at a checkpoint"},
		{"merged twice", func(sc *scenario) MergeCheckpoint {
			m := sc.toMerging()
			sc.s.Merge.Waiting = false // as after a first result
			return m
		}, cleanMerge, "no merge was requested"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := gitScenario(t)
			m := tc.setup(sc)
			before := sc.s.Phase
			eff := sc.merged(tc.event(m))
			if sc.s.Phase != before || !hasEvent(eff, "merge_result_ignored") || len(effectsOf[WriteAssignment](eff)) != 0 {
				t.Fatalf("state %s → %s, effects %s", before, sc.s.Phase, describe(eff))
			}
			for _, e := range effectsOf[AppendEvent](eff) {
				if e.Type == "merge_result_ignored" && !strings.Contains(e.Details["reason"].(string), tc.reason) {
					t.Errorf("reason %q lacks %q", e.Details["reason"], tc.reason)
				}
			}
		})
	}
	// No task: nothing at all.
	if n, eff := step(t, gitMachine, State{}, CheckpointMerged{Merged: true, At: t0}); len(eff) != 0 || n.Phase != "" {
		t.Fatalf("no task: %s", describe(eff))
	}
}

// A conflict round: fix, merge again, clean, review. The run never goes on
// before a clean merge.
func TestGitConflictFixMergesAgain(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	sc.merged(conflictMerge(m))
	sc.expect(vocab.PhaseCheckpointFix)
	eff := sc.do(SubtaskDone{Subtask: "merge-cp1-a1-worker_2", Agent: "worker_2", OK: true})
	sc.expect(vocab.PhaseCheckpoint)
	ms := effectsOf[MergeCheckpoint](eff)
	if len(ms) != 1 || ms[0].Attempt != 2 || ms[0].Round != 1 {
		t.Fatalf("second merge %s", describe(eff))
	}
	if slices.Contains(injectedTo(eff), "reviewer") {
		t.Fatal("reviewer asked before the second merge")
	}
	sc.merged(cleanMerge(ms[0]))
	sc.expect(vocab.PhaseCheckpointReview)
	// The review round's fix is merged before the next review, too.
	sc.trig("checkpoint-issues.md", "- high: b.go:3 bad")
	sc.expect(vocab.PhaseCheckpointFix)
	for id, f := range sc.s.Fixes {
		if !isMergeFix(id) {
			eff = sc.do(SubtaskDone{Subtask: id, Agent: f.Worker, OK: true})
		}
	}
	sc.expect(vocab.PhaseCheckpoint)
	ms = effectsOf[MergeCheckpoint](eff)
	if len(ms) != 1 || ms[0].Attempt != 3 || ms[0].Round != 2 {
		t.Fatalf("merge after the review fix: %s", describe(eff))
	}
	sc.merged(CheckpointMerged{Checkpoint: 1, Round: 2, Attempt: 3, Merged: true, DiffFile: "reviews/checkpoint_1_v2-diff.patch"})
	sc.expect(vocab.PhaseCheckpointReview)
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	// Checkpoint 2 starts a fresh merge count.
	eff = sc.do(SubtaskDone{Subtask: "st_3", Agent: "worker_1", OK: true})
	ms = effectsOf[MergeCheckpoint](eff)
	if len(ms) != 1 || ms[0].Checkpoint != 2 || ms[0].Attempt != 1 || ms[0].Round != 1 {
		t.Fatalf("checkpoint 2 merge: %s", describe(eff))
	}
	sc.merged(CheckpointMerged{Checkpoint: 2, Round: 1, Attempt: 1, Merged: true, DiffFile: "reviews/checkpoint_2_v1-diff.patch"})
	a := assignmentFor(t, sc.eff, "reviewer")
	if slices.Contains(a.Reads, testTaskDir+"/reviews/checkpoint_1_v2-diff.patch") || !slices.Contains(a.Reads, testTaskDir+"/reviews/checkpoint_2_v1-diff.patch") {
		t.Errorf("checkpoint 2 reviewer reads %v", a.Reads)
	}
	sc.trig("checkpoint-approved.md", "ok 2")
	sc.expect(vocab.PhaseComplete)
}

func TestGitConflictRoundsNeedHuman(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	for i := 1; i <= gitMachine.Cfg.MaxRevisionCycles; i++ {
		sc.merged(conflictMerge(m))
		sc.expect(vocab.PhaseCheckpointFix)
		eff := sc.do(SubtaskDone{Subtask: mergeFixID(1, i, "worker_2"), Agent: "worker_2", OK: true})
		m = effectsOf[MergeCheckpoint](eff)[0]
	}
	sc.merged(conflictMerge(m))
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "merge_conflicts" {
		t.Fatalf("escalation %q", sc.s.Escalation)
	}
	// Retry merges again, with a fresh count.
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseCheckpoint)
	ms := effectsOf[MergeCheckpoint](eff)
	if len(ms) != 1 || sc.s.Merge.Conflicts != 0 || !sc.s.Merge.Waiting {
		t.Fatalf("retry: %s, merge %+v", describe(eff), sc.s.Merge)
	}
	sc.merged(cleanMerge(ms[0]))
	sc.expect(vocab.PhaseCheckpointReview)
}

func TestGitMergeErrorRetry(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	sc.merged(CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt, Error: "boom"})
	sc.expect(vocab.PhaseNeedsHuman)
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseCheckpoint)
	if ms := effectsOf[MergeCheckpoint](eff); len(ms) != 1 || ms[0].Attempt != 2 {
		t.Fatalf("retry: %s", describe(eff))
	}
	// A machine that lost git on the way reviews the shared directory.
	sc.merged(CheckpointMerged{Checkpoint: 1, Round: 1, Attempt: 2, Error: "not a git repository"})
	sc.expect(vocab.PhaseNeedsHuman)
	sc.m = testMachine
	sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseCheckpointReview)
}

func TestGitMergeFixRejected(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	sc.merged(conflictMerge(m))
	id := "merge-cp1-a1-worker_2"
	for i := 1; i <= gitMachine.Cfg.MaxRetries; i++ {
		eff := sc.do(SubtaskDone{Subtask: id, Agent: "worker_2", Problem: "conflict markers left in b.go"})
		sc.expect(vocab.PhaseCheckpointFix)
		if i > 1 { // re-sends after the first are backed off (RetryPolicy)
			eff = sc.do(TimerFired{ID: resendTimer("worker_2")})
		}
		a := assignmentFor(t, eff, "worker_2")
		if !strings.Contains(a.Rejected, "refused: conflict markers left in b.go") || !strings.HasSuffix(a.DoneMarker, id+".done") {
			t.Fatalf("resent fix %d: %+v", i, a)
		}
		if sc.s.Fixes[id].Attempts != i {
			t.Fatalf("attempts %d, want %d", sc.s.Fixes[id].Attempts, i)
		}
	}
	sc.do(SubtaskDone{Subtask: id, Agent: "worker_2", Problem: "still"})
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "merge_conflicts" {
		t.Fatalf("escalation %q", sc.s.Escalation)
	}
}

func TestGitMergeDeferredWhilePaused(t *testing.T) {
	sc := gitScenario(t)
	m := sc.toMerging()
	sc.do(KeyPressed{Action: KeyPause})
	sc.expect(vocab.PhasePaused)
	eff := sc.merged(cleanMerge(m))
	sc.expect(vocab.PhasePaused)
	if !hasEvent(eff, "event_deferred") || len(sc.s.Deferred) != 1 {
		t.Fatalf("not deferred: %s", describe(eff))
	}
	sc.do(KeyPressed{Action: KeyResume})
	sc.expect(vocab.PhaseCheckpointReview)
}

func TestGitResumedAsksForTheMergeAgain(t *testing.T) {
	for _, paused := range []bool{false, true} {
		sc := gitScenario(t)
		m := sc.toMerging()
		if paused {
			sc.do(KeyPressed{Action: KeyPause})
		}
		eff := sc.do(Resumed{})
		ms := effectsOf[MergeCheckpoint](eff)
		if len(ms) != 1 || !reflect.DeepEqual(ms[0], m) {
			t.Fatalf("paused=%v: resumed asks %s, want %+v again", paused, describe(eff), m)
		}
		if paused {
			sc.merged(cleanMerge(m))
			sc.do(KeyPressed{Action: KeyResume})
		} else {
			sc.merged(cleanMerge(m))
		}
		sc.expect(vocab.PhaseCheckpointReview)
		// A resume after the merge came back does not merge again.
		if eff := sc.do(Resumed{}); len(effectsOf[MergeCheckpoint](eff)) != 0 {
			t.Fatalf("merged again after review started: %s", describe(eff))
		}
	}
}

func TestCheckpointMergedCodec(t *testing.T) {
	e := CheckpointMerged{Checkpoint: 2, Round: 3, Attempt: 4, Merged: false, Conflicts: []MergeConflict{
		{Worker: "worker_1", With: []vocab.AgentID{"worker_2"}, Files: []string{"a.go"}, HunksFile: "reviews/x.md"}}, At: t0}
	raw, err := MarshalEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalEvent(raw)
	if err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("MarshalEvent round trip: %+v %v", back, err)
	}
	rec := EncodeEvent(e, "t1")
	if rec.Type != vocab.InputPrefix+"checkpoint_merged" {
		t.Fatalf("record type %q", rec.Type)
	}
	dec, ok, err := DecodeEvent(rec)
	if err != nil || !ok || !reflect.DeepEqual(dec, e) {
		t.Fatalf("EncodeEvent round trip: %+v %v %v", dec, ok, err)
	}
}
