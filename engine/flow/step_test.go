package flow

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

var t0 = time.Date(2026, 1, 23, 10, 0, 0, 0, time.UTC)

const (
	testTaskDir = "/ws/tasks/t1"
	testProject = "/proj"
)

var testMachine = Machine{Cfg: defaultConfig()}

// planMD wraps a json plan in a plan.md.
func planMD(js string) []byte {
	return []byte("# Plan\n\nSome prose.\n\n```json\n" + js + "\n```\n")
}

// validPlan: checkpoint 1 has st_1 (a.go) and st_2 (b.go); checkpoint 2
// has st_3 (MODIFY a.go, after st_1).
var validPlan = planMD(`{"summary": "build it",
 "checkpoints": [{"id": 1, "name": "core"}, {"id": 2, "name": "polish"}],
 "subtasks": [
  {"id": "st_1", "description": "write a", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]},
  {"id": "st_2", "description": "write b", "checkpoint": 1, "dependencies": [], "files": ["CREATE b.go"]},
  {"id": "st_3", "description": "polish a", "checkpoint": 2, "dependencies": ["st_1"], "files": ["MODIFY a.go"]}
 ]}`)

// ---- effect helpers ----

func effectsOf[T Effect](eff []Effect) []T {
	var out []T
	for _, e := range eff {
		if x, ok := e.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

func eventTypes(eff []Effect) []string {
	var out []string
	for _, e := range effectsOf[AppendEvent](eff) {
		out = append(out, string(e.Type))
	}
	return out
}

func hasEvent(eff []Effect, typ string) bool {
	for _, t := range eventTypes(eff) {
		if t == typ {
			return true
		}
	}
	return false
}

func injectedTo(eff []Effect) []string {
	var out []string
	for _, in := range effectsOf[Inject](eff) {
		out = append(out, string(in.Agent))
	}
	return out
}

func assignmentFor(t *testing.T, eff []Effect, agent vocab.AgentID) vocab.Assignment {
	t.Helper()
	var found []vocab.Assignment
	for _, w := range effectsOf[WriteAssignment](eff) {
		if w.Assignment.Agent == agent {
			found = append(found, w.Assignment)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one assignment for %s, got %d (effects %v)", agent, len(found), describe(eff))
	}
	return found[0]
}

// noticeFor is the one notice injected to agent (its text).
func noticeFor(t *testing.T, eff []Effect, agent vocab.AgentID) string {
	t.Helper()
	var found []string
	for _, in := range effectsOf[Inject](eff) {
		if in.Agent == agent && in.Notice {
			found = append(found, in.Text)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one notice for %s, got %d (effects %v)", agent, len(found), describe(eff))
	}
	return found[0]
}

func describe(eff []Effect) string {
	var b strings.Builder
	for _, e := range eff {
		switch e := e.(type) {
		case WriteState:
			fmt.Fprintf(&b, "WriteState(%s) ", e.State.Phase)
		case AppendEvent:
			fmt.Fprintf(&b, "Event(%s %s) ", e.Type, e.Agent)
		case Inject:
			fmt.Fprintf(&b, "Inject(%s #%d) ", e.Agent, e.Seq)
		default:
			fmt.Fprintf(&b, "%T%+v ", e, e)
		}
	}
	return b.String()
}

var injectRE = regexp.MustCompile(`^\[HIVEMIND\] [^\n]+ — read (\S*assignments/[^\s]+\.json)$`)

// checkEffects verifies the invariants every Step result must hold.
func checkEffects(t *testing.T, before, after State, eff []Effect) {
	t.Helper()
	changed := !sameState(before, after)
	ws := effectsOf[WriteState](eff)
	switch {
	case changed && (len(ws) != 1 || !isWriteState(eff[0])):
		t.Fatalf("state changed but WriteState is not the first effect: %s", describe(eff))
	case !changed && len(ws) != 0:
		t.Fatalf("state unchanged but WriteState emitted: %s", describe(eff))
	}
	if changed && !reflect.DeepEqual(ws[0].State, after) {
		t.Fatalf("WriteState carries a different state than returned")
	}
	// NotifyUser effects are last.
	seenNote := false
	for _, e := range eff {
		if _, ok := e.(NotifyUser); ok {
			seenNote = true
		} else if seenNote {
			t.Fatalf("effect after NotifyUser: %s", describe(eff))
		}
	}
	// Each Inject follows the WriteAssignment of the same agent and seq.
	pending := map[vocab.AgentID]int{}
	for _, e := range eff {
		switch e := e.(type) {
		case WriteAssignment:
			a := e.Assignment
			pending[a.Agent] = a.Seq
			if a.ReadOnly && (len(a.Writes) != 0 || a.DoneMarker != "") {
				t.Fatalf("read-only assignment with writes: %+v", a)
			}
			if !a.ReadOnly && len(a.Writes) == 0 {
				t.Fatalf("writing assignment without writes: %+v", a)
			}
			for _, p := range append(append([]string{}, a.Reads...), a.Writes...) {
				if !filepath.IsAbs(p) {
					t.Fatalf("assignment path %q is not absolute", p)
				}
			}
		case Inject:
			if e.Notice {
				// A notice carries its content; it names no assignment file.
				if !strings.HasPrefix(e.Text, InjectPrefix) || strings.Contains(e.Text, "assignments/") {
					t.Fatalf("notice text %q", e.Text)
				}
				continue
			}
			if pending[e.Agent] != e.Seq {
				t.Fatalf("Inject %s #%d without a preceding WriteAssignment", e.Agent, e.Seq)
			}
			m := injectRE.FindStringSubmatch(e.Text)
			if m == nil || m[1] != AssignmentFile(after.TaskDir, e.Agent, e.Seq) {
				t.Fatalf("inject text %q does not name %s", e.Text, AssignmentFile(after.TaskDir, e.Agent, e.Seq))
			}
			delete(pending, e.Agent)
		}
	}
	if len(pending) > 0 {
		t.Fatalf("WriteAssignment without Inject: %v", pending)
	}
	// The state's own invariants.
	if after.Phase == vocab.PhasePaused && len(effectsOf[Inject](eff)) > 0 {
		t.Fatalf("injection while paused")
	}
}

func isWriteState(e Effect) bool { _, ok := e.(WriteState); return ok }

// step runs one Step and checks that it did not touch its input and that
// the effects are well-formed.
func step(t *testing.T, m Machine, s State, e Event) (State, []Effect) {
	t.Helper()
	before, _ := json.Marshal(s)
	n, eff := m.Step(s, e)
	after, _ := json.Marshal(s)
	if !bytes.Equal(before, after) {
		t.Fatalf("Step changed its input state")
	}
	checkEffects(t, s, n, eff)
	return n, eff
}

// ---- scenario: a runner stand-in that records the events ----

type scenario struct {
	t   *testing.T
	m   Machine
	s   State
	now time.Time
	log []Event
	eff []Effect // effects of the last event
}

// checkAbandoned asserts that an abandoned task is over and keeps the time
// it was abandoned as its finish time (retention and listings use it).
func checkAbandoned(t *testing.T, sc *scenario) {
	t.Helper()
	if !sc.s.Over() || !sc.s.FinishedAt.Equal(sc.now) || len(sc.s.Timers) != 0 {
		t.Fatalf("abandoned: over %v, finished_at %v, timers %v; want over, ended at %v", sc.s.Over(), sc.s.FinishedAt, sc.s.Timers, sc.now)
	}
}

func newScenario(t *testing.T) *scenario {
	return &scenario{t: t, m: testMachine, s: State{Phase: vocab.PhaseIdle}, now: t0}
}

func (sc *scenario) tick() time.Time {
	sc.now = sc.now.Add(time.Second)
	return sc.now
}

// do stamps e with the scenario clock, steps it and records it.
func (sc *scenario) do(e Event) []Effect {
	sc.t.Helper()
	at := sc.tick()
	if x, ok := e.(TriggerCompleted); ok {
		if x.ModTime.IsZero() {
			x.ModTime = at
		}
		x.Path = inOutbox(x.Path, x.Agent)
		e = x
	}
	e = withTime(e, at)
	sc.log = append(sc.log, e)
	sc.s, sc.eff = step(sc.t, sc.m, sc.s, e)
	return sc.eff
}

// inOutbox places a trigger named as the tests of the root layout name it
// (plan.md, friction/x.md) in the outbox of its writer: agent when given,
// else the Lead or the Reviewer by the trigger table, worker_1 for a
// worker's. Paths already in an outbox and the user's are kept.
func inOutbox(p string, agent vocab.AgentID) string {
	if _, ok := triggers.Parse(p); ok || strings.HasPrefix(p, vocab.OutboxesDir+"/") {
		return p
	}
	kind, item := triggers.Kind(p), ""
	if dir, name, ok := strings.Cut(p, "/"); ok {
		kind, item = triggers.Kind(dir+"/*.md"), strings.TrimSuffix(name, ".md")
	}
	spec, ok := triggers.Lookup(kind)
	if !ok || spec.ByUser() {
		return p
	}
	if agent == "" {
		switch {
		case spec.WrittenBy(vocab.RoleWorker):
			agent = "worker_1"
		case spec.WrittenBy(vocab.RoleLead):
			agent = vocab.AgentLead
		default:
			agent = vocab.AgentReviewer
		}
	}
	return triggers.Path(agent, kind, item)
}

func (sc *scenario) trig(p, content string) []Effect {
	return sc.do(TriggerCompleted{Path: p, Content: []byte(content)})
}

func (sc *scenario) expect(p vocab.Phase) {
	sc.t.Helper()
	if sc.s.Phase != p {
		sc.t.Fatalf("state %s, want %s (last effects: %s)", sc.s.Phase, p, describe(sc.eff))
	}
}

func (sc *scenario) submit(workers int) {
	sc.do(TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Workers: workers, Description: "do it"}, TaskDir: testTaskDir})
	sc.expect(vocab.PhasePlanning)
}

// ready reports every starting agent's first prompt: an exit from there
// on is a crash of an agent that ran, not one that never started. The
// last effects stay those of the step before.
func (sc *scenario) ready() {
	eff := sc.eff
	for _, id := range sc.s.AgentIDs() {
		if sc.s.Agents[id].Status == vocab.HealthStarting {
			sc.do(AgentHealth{Agent: id, Health: vocab.HealthReady})
		}
	}
	sc.eff = eff
}

func (sc *scenario) toPlanReview() {
	sc.submit(2)
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	sc.expect(vocab.PhasePlanReview)
}

func (sc *scenario) toExecuting() {
	sc.toPlanReview()
	sc.trig("plan-approved.md", "LGTM")
	sc.expect(vocab.PhaseExecuting)
}

func (sc *scenario) toCheckpointReview() {
	sc.toExecuting()
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.expect(vocab.PhaseCheckpointReview)
}

func (sc *scenario) toCheckpointFix() {
	sc.toCheckpointReview()
	sc.trig("checkpoint-issues.md", "## Issues\n- high: a.go:3 nil check missing")
	sc.expect(vocab.PhaseCheckpointFix)
}

func (sc *scenario) toFrictionResolution() {
	sc.toExecuting()
	sc.trig("friction/slow-tests.md", "tests are slow")
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseFrictionResolution)
}

func (sc *scenario) toPlanRevision() {
	sc.toPlanReview()
	sc.trig("plan-feedback.md", "- high: missing tests")
	sc.expect(vocab.PhasePlanRevision)
}

func (sc *scenario) toComplete() {
	sc.toCheckpointReview()
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	sc.do(SubtaskDone{Subtask: "st_3", Agent: "worker_1", OK: true})
	sc.trig("checkpoint-approved.md", "ok 2")
	sc.expect(vocab.PhaseComplete)
}

func (sc *scenario) toNeedsHuman() {
	sc.toPlanReview()
	for i := 1; i <= 3; i++ {
		sc.trig("plan-feedback.md", fmt.Sprintf("round %d: no", i))
		if i < 3 {
			sc.expect(vocab.PhasePlanRevision)
			sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, fmt.Sprintf("\nv%d\n", i+1)...)})
			sc.expect(vocab.PhasePlanReview)
		}
	}
	sc.expect(vocab.PhaseNeedsHuman)
}

// stateIn returns a state in phase p reached by the scenario (or derived
// from one for phases that only last inside one Step).
func stateIn(t *testing.T, p vocab.Phase) State {
	sc := newScenario(t)
	switch p {
	case vocab.PhaseIdle:
	case vocab.PhaseProjectSelected:
		sc.do(ProjectSelected{Project: testProject})
	case vocab.PhasePlanning:
		sc.submit(2)
	case vocab.PhasePlanReview:
		sc.toPlanReview()
	case vocab.PhasePlanRevision:
		sc.toPlanRevision()
	case vocab.PhasePlanApproval:
		sc.toPlanApproval()
	case vocab.PhaseExecuting:
		sc.toExecuting()
	case vocab.PhaseCheckpoint, vocab.PhaseFrictionLogged, vocab.PhaseFrictionSync:
		// Transient phases (left within the same Step): hand-made.
		sc.toExecuting()
		sc.s.Phase = p
	case vocab.PhaseCheckpointReview:
		sc.toCheckpointReview()
	case vocab.PhaseCheckpointFix:
		sc.toCheckpointFix()
	case vocab.PhaseFrictionResolution:
		sc.toFrictionResolution()
	case vocab.PhaseComplete:
		sc.toComplete()
	case vocab.PhaseNeedsHuman:
		sc.toNeedsHuman()
	case vocab.PhaseError:
		sc.toExecuting()
		sc.s.Phase = vocab.PhaseError
	case vocab.PhasePaused:
		sc.toExecuting()
		sc.do(KeyPressed{Action: KeyPause})
	case vocab.PhaseCancelled:
		sc.toExecuting()
		sc.do(KeyPressed{Action: KeyCancel})
	}
	if sc.s.Phase != p && !(p == vocab.PhaseIdle && sc.s.Phase == "") {
		t.Fatalf("stateIn(%s) reached %s", p, sc.s.Phase)
	}
	return sc.s
}

var allPhases = []vocab.Phase{
	vocab.PhaseIdle, vocab.PhaseProjectSelected, vocab.PhasePlanning, vocab.PhasePlanReview,
	vocab.PhasePlanRevision, vocab.PhasePlanApproval, vocab.PhaseExecuting, vocab.PhaseCheckpoint, vocab.PhaseCheckpointReview,
	vocab.PhaseCheckpointFix, vocab.PhaseFrictionLogged, vocab.PhaseFrictionSync, vocab.PhaseFrictionResolution,
	vocab.PhaseComplete, vocab.PhaseError, vocab.PhasePaused, vocab.PhaseNeedsHuman, vocab.PhaseCancelled,
}

// ---- transitions ----

func TestTransitions(t *testing.T) {
	tests := []struct {
		name string
		run  func(sc *scenario)
		want vocab.Phase
		// check runs after the last event, with its effects.
		check func(t *testing.T, sc *scenario)
	}{
		{"idle → project_selected (user picks folder)", func(sc *scenario) {
			sc.do(ProjectSelected{Project: testProject})
		}, vocab.PhaseProjectSelected, func(t *testing.T, sc *scenario) {
			if sc.s.Project != testProject {
				t.Fatalf("project %q", sc.s.Project)
			}
		}},
		{"project_selected → planning (user gives task)", func(sc *scenario) {
			sc.do(ProjectSelected{Project: testProject})
			sc.submit(3)
		}, vocab.PhasePlanning, func(t *testing.T, sc *scenario) {
			if got := len(effectsOf[SpawnAgent](sc.eff)); got != 5 {
				t.Fatalf("spawned %d agents, want 5", got)
			}
			a := assignmentFor(t, sc.eff, "lead")
			if a.Writes[0] != filepath.Join(testTaskDir, "agents/lead/plan.md") || a.Reads[0] != filepath.Join(testTaskDir, "task.md") {
				t.Fatalf("lead assignment %+v", a)
			}
			if sc.s.TaskDir != testTaskDir || sc.s.TaskID != "t1" || sc.s.StartedAt.IsZero() {
				t.Fatalf("task fields not set: %+v", sc.s)
			}
			if !reflect.DeepEqual(sc.s.ActiveAgents, []vocab.AgentID{"lead"}) {
				t.Fatalf("active %v", sc.s.ActiveAgents)
			}
		}},
		{"idle → planning uses Config.Workers when the task has none", func(sc *scenario) {
			sc.do(TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject}, TaskDir: testTaskDir})
		}, vocab.PhasePlanning, func(t *testing.T, sc *scenario) {
			if got := len(sc.s.Agents); got != 4 {
				t.Fatalf("%d agents, want lead+reviewer+2 workers", got)
			}
		}},
		{"planning → plan_review (Lead writes plan.md)", func(sc *scenario) { sc.toPlanReview() },
			vocab.PhasePlanReview, func(t *testing.T, sc *scenario) {
				ar := effectsOf[ArchiveTrigger](sc.eff)
				if len(ar) != 1 || ar[0] != (ArchiveTrigger{From: "agents/lead/plan.md", To: "reviews/plan_v1.md"}) {
					t.Fatalf("archive %v", ar)
				}
				if sc.s.Plan == nil || sc.s.TotalCheckpoints != 2 || sc.s.Agents["lead"].Pending {
					t.Fatalf("plan not stored or lead still pending")
				}
				a := assignmentFor(t, sc.eff, "reviewer")
				if !contains(a.Reads, filepath.Join(testTaskDir, "reviews/plan_v1.md")) || len(a.Writes) != 2 {
					t.Fatalf("reviewer assignment %+v", a)
				}
			}},
		{"plan_review → plan_revision (Reviewer requests changes)", func(sc *scenario) { sc.toPlanRevision() },
			vocab.PhasePlanRevision, func(t *testing.T, sc *scenario) {
				if sc.s.RevisionCount != 1 || len(sc.s.Rounds) != 1 || sc.s.Rounds[0].Verdict != "feedback" {
					t.Fatalf("revision %d rounds %+v", sc.s.RevisionCount, sc.s.Rounds)
				}
				if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/plan_v1-feedback.md" {
					t.Fatalf("archive %v", ar)
				}
				a := assignmentFor(t, sc.eff, "lead")
				if !contains(a.Reads, filepath.Join(testTaskDir, "reviews/plan_v1-feedback.md")) {
					t.Fatalf("lead does not read the feedback: %v", a.Reads)
				}
			}},
		{"plan_revision → plan_review (Lead updates plan)", func(sc *scenario) {
			sc.toPlanRevision()
			sc.do(TriggerCompleted{Path: "plan.md", Content: append(validPlan, " v2"...)})
		}, vocab.PhasePlanReview, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/plan_v2.md" {
				t.Fatalf("archive %v", ar)
			}
		}},
		{"plan_review → executing (Reviewer approves)", func(sc *scenario) { sc.toExecuting() },
			vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
				if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"worker_1", "worker_2"}) {
					t.Fatalf("injected to %v", got)
				}
				if sc.s.CurrentCheckpoint != 1 || sc.s.Subtasks["st_1"].Worker != "worker_1" || sc.s.Subtasks["st_2"].Worker != "worker_2" {
					t.Fatalf("subtasks %+v", sc.s.Subtasks)
				}
				a := assignmentFor(t, sc.eff, "worker_1")
				if a.Subtask == nil || a.Subtask.ID != "st_1" || a.DoneMarker != filepath.Join(testTaskDir, "agents/worker_1/outputs/st_1.done") ||
					!contains(a.Writes, filepath.Join(testProject, "a.go")) {
					t.Fatalf("worker assignment %+v", a)
				}
				if _, ok := sc.s.Timers["timeout:worker_1"]; !ok {
					t.Fatalf("no timeout timer armed")
				}
			}},
		{"executing → checkpoint → checkpoint_review (all subtasks done)", func(sc *scenario) { sc.toCheckpointReview() },
			vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
				types := eventTypes(sc.eff)
				if !containsSeq(types, "state_changed", "checkpoint_reached", "state_changed") {
					t.Fatalf("events %v", types)
				}
				if sc.s.PreviousPhase != vocab.PhaseCheckpoint {
					t.Fatalf("previous %s", sc.s.PreviousPhase)
				}
				a := assignmentFor(t, sc.eff, "reviewer")
				if !contains(a.Reads, filepath.Join(testTaskDir, "agents/worker_1/outputs/st_1.md")) {
					t.Fatalf("reviewer reads %v", a.Reads)
				}
				// The idle workers are not told: nothing changes for them.
				if in := injectedTo(sc.eff); !slices.Equal(in, []string{"reviewer"}) {
					t.Fatalf("sent to %v, want the reviewer alone", in)
				}
			}},
		{"executing → checkpoint → checkpoint_review (worker writes checkpoint.md)", func(sc *scenario) {
			sc.toExecuting()
			sc.trig("checkpoint.md", "cp 1 done")
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/checkpoint_1_v1.md" {
				t.Fatalf("archive %v", ar)
			}
			// Workers busy with subtasks are not interrupted.
			if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"reviewer"}) {
				t.Fatalf("injected to %v", got)
			}
		}},
		{"checkpoint_review → executing (approved, more work)", func(sc *scenario) {
			sc.toCheckpointReview()
			sc.trig("checkpoint-approved.md", "ok")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if sc.s.CurrentCheckpoint != 2 || sc.s.Subtasks["st_3"].Status != vocab.SubtaskInProgress {
				t.Fatalf("cp %d subtasks %+v", sc.s.CurrentCheckpoint, sc.s.Subtasks)
			}
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/checkpoint_1_v1-approved.md" {
				t.Fatalf("archive %v", ar)
			}
		}},
		{"checkpoint_review → complete (approved, no more work)", func(sc *scenario) { sc.toComplete() },
			vocab.PhaseComplete, func(t *testing.T, sc *scenario) {
				// The task is over: every agent stops at once.
				if stops := effectsOf[StopAgent](sc.eff); len(stops) != len(sc.s.AgentIDs()) || len(stops) == 0 {
					t.Fatalf("complete stops %v, want every agent %v", stops, sc.s.AgentIDs())
				}
				if n := effectsOf[NotifyUser](sc.eff); len(n) != 1 || n[0].Level != "info" {
					t.Fatalf("notify %v", n)
				}
				if sc.s.FinishedAt.IsZero() || len(sc.s.Timers) != 0 {
					t.Fatalf("finished %v timers %v", sc.s.FinishedAt, sc.s.Timers)
				}
			}},
		{"checkpoint_review → checkpoint_fix (issues)", func(sc *scenario) { sc.toCheckpointFix() },
			vocab.PhaseCheckpointFix, func(t *testing.T, sc *scenario) {
				// a.go is named: lead + worker_1 (who wrote a.go) fix; worker_2 not.
				if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"lead", "worker_1"}) {
					t.Fatalf("fixers %v", got)
				}
				a := assignmentFor(t, sc.eff, "worker_1")
				if !contains(a.Reads, filepath.Join(testTaskDir, "reviews/checkpoint_1_v1-issues.md")) ||
					a.DoneMarker != filepath.Join(testTaskDir, "agents/worker_1/outputs/fix-cp1-r1-worker_1.done") {
					t.Fatalf("fix assignment %+v", a)
				}
				if !reflect.DeepEqual(sc.s.ActiveAgents, []vocab.AgentID{"lead", "worker_1"}) {
					t.Fatalf("active %v", sc.s.ActiveAgents)
				}
			}},
		{"checkpoint_fix → checkpoint_review (all fixes done)", func(sc *scenario) {
			sc.toCheckpointFix()
			sc.do(SubtaskDone{Subtask: "fix-cp1-r1-lead", Agent: "lead", OK: true})
			sc.expect(vocab.PhaseCheckpointFix)
			sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", OK: true})
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			a := assignmentFor(t, sc.eff, "reviewer")
			if !contains(a.Reads, filepath.Join(testTaskDir, "agents/worker_1/outputs/fix-cp1-r1-worker_1.md")) {
				t.Fatalf("reviewer does not read the fix output: %v", a.Reads)
			}
			if sc.s.Versions["checkpoint_1"] != 2 {
				t.Fatalf("round %d", sc.s.Versions["checkpoint_1"])
			}
		}},
		{"checkpoint_fix → checkpoint_review (checkpoint.md written again)", func(sc *scenario) {
			sc.toCheckpointFix()
			sc.trig("checkpoint.md", "fixed")
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/checkpoint_1_v2.md" {
				t.Fatalf("archive %v", ar)
			}
			if sc.s.Agents["lead"].Pending || sc.s.Agents["worker_1"].Pending {
				t.Fatalf("fixers still pending after the review started")
			}
		}},
		{"checkpoint_review → friction_logged → friction_sync → friction_resolution", func(sc *scenario) { sc.toFrictionResolution() },
			vocab.PhaseFrictionResolution, func(t *testing.T, sc *scenario) {
				var changes []string
				for _, e := range effectsOf[AppendEvent](sc.eff) {
					if e.Type == "state_changed" {
						changes = append(changes, e.Details["to"].(string))
					}
				}
				if !reflect.DeepEqual(changes, []string{"friction_logged", "friction_sync", "friction_resolution"}) {
					t.Fatalf("changes %v", changes)
				}
				for _, id := range []vocab.AgentID{"reviewer", "worker_1", "worker_2"} {
					if n := noticeFor(t, sc.eff, id); !strings.Contains(n, filepath.Join(testTaskDir, "reviews/friction_v1-slow-tests.md")) {
						t.Fatalf("%s not told the friction: %q", id, n)
					}
				}
				if a := assignmentFor(t, sc.eff, "lead"); a.ReadOnly || a.Writes[0] != filepath.Join(testTaskDir, "agents/lead/friction-resolution.md") {
					t.Fatalf("lead assignment %+v", a)
				}
				if sc.s.FrictionCount != 1 || len(sc.s.FrictionPending) != 0 || len(sc.s.FrictionActive) != 1 {
					t.Fatalf("friction %d pending %v active %v", sc.s.FrictionCount, sc.s.FrictionPending, sc.s.FrictionActive)
				}
			}},
		{"friction_resolution → plan_review (Lead proposes fixes)", func(sc *scenario) {
			sc.toFrictionResolution()
			sc.trig("friction-resolution.md", "run tests in parallel")
		}, vocab.PhasePlanReview, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/friction-resolution_v1.md" {
				t.Fatalf("archive %v", ar)
			}
			a := assignmentFor(t, sc.eff, "reviewer")
			if !contains(a.Reads, filepath.Join(testTaskDir, "reviews/friction-resolution_v1.md")) {
				t.Fatalf("reviewer reads %v", a.Reads)
			}
		}},
		{"plan_review (friction) → executing next checkpoint", func(sc *scenario) {
			sc.toFrictionResolution()
			sc.trig("friction-resolution.md", "run tests in parallel")
			sc.trig("plan-approved.md", "fine")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/friction-resolution_v1-approved.md" {
				t.Fatalf("archive %v", ar)
			}
			if sc.s.CurrentCheckpoint != 2 || len(sc.s.FrictionActive) != 0 {
				t.Fatalf("cp %d active friction %v", sc.s.CurrentCheckpoint, sc.s.FrictionActive)
			}
		}},
		{"plan_review (friction) → plan_revision (feedback)", func(sc *scenario) {
			sc.toFrictionResolution()
			sc.trig("friction-resolution.md", "run tests in parallel")
			sc.trig("plan-feedback.md", "no")
		}, vocab.PhasePlanRevision, func(t *testing.T, sc *scenario) {
			if ar := effectsOf[ArchiveTrigger](sc.eff); ar[0].To != "reviews/friction-resolution_v1-feedback.md" {
				t.Fatalf("archive %v", ar)
			}
		}},
		{"complete → planning (user starts a new task)", func(sc *scenario) {
			sc.toComplete()
			sc.do(TaskSubmitted{Task: vocab.Task{ID: "t2", Project: testProject}, TaskDir: "/ws/tasks/t2"})
		}, vocab.PhasePlanning, func(t *testing.T, sc *scenario) {
			if sc.s.TaskID != "t2" || sc.s.Plan != nil || sc.s.RevisionCount != 0 {
				t.Fatalf("new task kept old state: %+v", sc.s)
			}
		}},
		{"error → planning (user retries)", func(sc *scenario) {
			sc.toExecuting()
			sc.s.Phase = vocab.PhaseError
			sc.do(KeyPressed{Action: KeyRetry})
		}, vocab.PhasePlanning, func(t *testing.T, sc *scenario) {
			if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"lead"}) {
				t.Fatalf("injected %v", got)
			}
		}},
		{"error → idle (user abandons)", func(sc *scenario) {
			sc.toExecuting()
			sc.s.Phase = vocab.PhaseError
			sc.do(KeyPressed{Action: KeyAbandon})
		}, vocab.PhaseIdle, func(t *testing.T, sc *scenario) {
			if len(effectsOf[StopAgent](sc.eff)) != 4 {
				t.Fatalf("abandon must stop all agents: %s", describe(sc.eff))
			}
			checkAbandoned(t, sc)
		}},
		{"needs_human → planning (retry after plan revisions)", func(sc *scenario) {
			sc.toNeedsHuman()
			sc.do(KeyPressed{Action: KeyRetry})
		}, vocab.PhasePlanning, func(t *testing.T, sc *scenario) {
			if sc.s.RevisionCount != 0 || sc.s.Escalation != "" {
				t.Fatalf("revision %d escalation %q", sc.s.RevisionCount, sc.s.Escalation)
			}
			a := assignmentFor(t, sc.eff, "lead")
			if !contains(a.Reads, filepath.Join(testTaskDir, "reviews/plan_v3-feedback.md")) {
				t.Fatalf("lead should read all feedback: %v", a.Reads)
			}
		}},
		{"needs_human → idle (abandon)", func(sc *scenario) {
			sc.toNeedsHuman()
			sc.do(KeyPressed{Action: KeyAbandon})
		}, vocab.PhaseIdle, checkAbandoned},
		{"executing → error (plan cannot progress)", func(sc *scenario) {
			sc.toExecuting()
			// A hand-edited state: st_3 depends on a subtask that will never be done.
			p := *sc.s.Plan
			p.Subtasks = append([]vocab.Subtask(nil), p.Subtasks...)
			p.Subtasks[1].Dependencies = []string{"st_3"}
			sc.s.Plan = &p
			sc.s.Subtasks["st_2"] = vocab.SubtaskState{Status: vocab.SubtaskPending}
			ag := sc.s.Agents["worker_2"]
			ag.Pending, ag.Subtask = false, ""
			sc.s.Agents["worker_2"] = ag
			sc.ready() // no worker is on its way: nothing can move
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
		}, vocab.PhaseError, func(t *testing.T, sc *scenario) {
			if sc.s.Escalation != "deadlock" || sc.s.Error == "" {
				t.Fatalf("escalation %q error %q", sc.s.Escalation, sc.s.Error)
			}
		}},
		{"executing → executing (the only worker waits in its restart backoff: a wait, not a deadlock)", func(sc *scenario) {
			sc.submit(1)
			sc.ready()
			sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1}) // before any work: backoff
			sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
			sc.trig("plan-approved.md", "LGTM")
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if _, ok := sc.s.Timers[restartTimer("worker_1")]; !ok {
				t.Fatalf("no restart pending: %v", sc.s.Timers)
			}
			// Back from the backoff, it takes the ready subtask.
			eff := sc.do(TimerFired{ID: restartTimer("worker_1")})
			if a := assigned(eff); len(effectsOf[RestartAgent](eff)) != 1 || len(a) != 1 || a[0] != "worker_1:st_1" {
				t.Fatalf("after the backoff: assigned %v, %s", a, describe(eff))
			}
		}},
		{"executing → needs_human (an agent exits twice before its prompt appears: no backoff)", func(sc *scenario) {
			sc.toExecuting()
			eff := sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 3, Detail: "exit code 3; last output: boom"})
			if len(effectsOf[RestartAgent](eff)) != 1 {
				sc.t.Fatalf("first early exit not restarted at once: %s", describe(eff))
			}
			sc.do(AgentHealth{Agent: "worker_1", Health: "starting", PID: 7})
			sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 3, PID: 7, Detail: "exit code 3; last output: boom"})
		}, vocab.PhaseNeedsHuman, func(t *testing.T, sc *scenario) {
			for _, want := range []string{"before its prompt appeared, 2 times", "code 3", "boom", "Fix:"} {
				if !strings.Contains(sc.s.Reason, want) {
					t.Errorf("reason %q lacks %q", sc.s.Reason, want)
				}
			}
		}},
		{"executing → executing (Hivemind stops the agents as the user quits, before their prompt: no failure, no restart, no needs_human)", func(sc *scenario) {
			sc.toExecuting()
			for _, id := range []vocab.AgentID{"worker_1", "worker_1", "reviewer"} {
				sc.do(AgentHealth{Agent: id, Health: "starting", PID: 7})
				if eff := sc.do(AgentHealth{Agent: id, Health: "exited", ExitCode: 143, PID: 7, Stopped: true}); len(eff) != 0 && len(effectsOf[RestartAgent](eff)) != 0 {
					sc.t.Fatalf("a stopped agent restarted: %s", describe(eff))
				}
			}
			// A start refused because the agent layer is closing.
			sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: -1, Detail: "ptyagent: manager closed", Stopped: true})
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if ag := sc.s.Agents["worker_1"]; ag.Failures != 0 || ag.EarlyExits != 0 || ag.Status != vocab.HealthExited || len(sc.s.Timers) != 0 && sc.s.Timers[restartTimer("worker_1")].ID != "" {
				t.Errorf("worker_1 after stops: %+v, timers %v", ag, sc.s.Timers)
			}
		}},
		{"executing → needs_human (a cause a restart cannot fix: host down, program missing, not logged in)", func(sc *scenario) {
			sc.toExecuting()
			sc.ready()
			sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 255, Cause: "host gpu1: ssh: connect to host gpu1 port 22: Connection refused"})
		}, vocab.PhaseNeedsHuman, func(t *testing.T, sc *scenario) {
			if !strings.Contains(sc.s.Reason, "Connection refused") || !strings.Contains(sc.s.Reason, "A restart cannot fix this") || len(sc.s.Timers) != 0 {
				t.Errorf("reason %q timers %v", sc.s.Reason, sc.s.Timers)
			}
			for _, c := range []AgentHealth{{ExitCode: 127}, {ExitCode: 1, Detail: "exit code 1; last output: Not logged in · Please run /login"}} {
				sc2 := newScenario(t)
				sc2.toExecuting()
				sc2.ready()
				c.Agent, c.Health = "worker_1", "exited"
				if sc2.do(c); sc2.s.Phase != vocab.PhaseNeedsHuman {
					t.Errorf("%+v: %s, want needs_human", c, sc2.s.Phase)
				}
			}
		}},
		{"needs_human → executing (resume with retry: the agent the resume starts is not started again)", func(sc *scenario) {
			sc.toExecuting()
			sc.ready()
			for range sc.m.Cfg.MaxRetries + 1 {
				sc.do(AgentHealth{Agent: "worker_1", Health: "ready"})
				sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1})
				sc.do(TimerFired{ID: restartTimer("worker_1")})
			}
			sc.expect(vocab.PhaseNeedsHuman)
			sc.do(Resumed{Retry: true})
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			starts := 0
			for _, e := range sc.eff {
				switch e := e.(type) {
				case SpawnAgent:
					starts += map[bool]int{true: 1}[e.Agent == "worker_1"]
				case RestartAgent:
					starts += map[bool]int{true: 1}[e.Agent == "worker_1"]
				}
			}
			if n := len(slices.DeleteFunc(injectedTo(sc.eff), func(a string) bool { return a != "worker_1" })); starts != 1 || n != 1 {
				t.Fatalf("worker_1 started %d times, sent %d messages; want 1, 1: %s", starts, n, describe(sc.eff))
			}
		}},
		{"executing → executing (rate limit cleared: work the limited turn was not about is not sent again)", func(sc *scenario) {
			sc.toExecuting()
			sc.ready()
			// worker_1's subtask message has not reached it (a hold's
			// release sent it, say): the turn that hit the limit was
			// another one, and the message is on its way, once.
			sc.do(AgentHealth{Agent: "worker_1", Health: "busy"})
			sc.do(AgentHealth{Agent: "worker_1", Health: "rate_limited"})
			sc.do(AgentHealth{Agent: "worker_1", Health: "idle"})
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if hasEvent(sc.eff, "agent_rate_limit_cleared") || len(injectedTo(sc.eff)) != 0 {
				t.Fatalf("re-sent work the limited turn was not about: %s", describe(sc.eff))
			}
		}},
		{"executing → executing (one agent paused: its work waits, timers stand still; resumed: sent)", func(sc *scenario) {
			sc.toExecuting()
			sc.do(KeyPressed{Action: KeyPauseAgent, Agent: "worker_1"})
			if hd := effectsOf[HoldDelivery](sc.eff); len(hd) != 1 || hd[0] != (HoldDelivery{Agent: "worker_1", Hold: true}) {
				sc.t.Fatalf("pause agent: %s", describe(sc.eff))
			}
			if sc.s.Timers[timeoutTimer("worker_1")].Left == 0 {
				sc.t.Fatalf("worker_1's timeout not frozen: %+v", sc.s.Timers)
			}
			sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
			sc.do(KeyPressed{Action: KeyResumeAgent, Agent: "worker_1"})
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if hd := effectsOf[HoldDelivery](sc.eff); len(hd) != 1 || hd[0].Hold || !hasEvent(sc.eff, "agent_resumed") {
				t.Fatalf("resume agent: %s", describe(sc.eff))
			}
			if tm := sc.s.Timers[timeoutTimer("worker_1")]; tm.Deadline.IsZero() {
				t.Fatalf("worker_1's timeout not re-armed: %+v", tm)
			}
		}},
		{"executing → executing (toggle: two presses are a pause then a resume, decided on the engine's state)", func(sc *scenario) {
			sc.toExecuting()
			sc.do(KeyPressed{Action: KeyToggleAgent, Agent: "worker_1"})
			if !sc.s.Agents["worker_1"].Paused || !hasEvent(sc.eff, "agent_paused") {
				sc.t.Fatalf("first toggle did not pause: %s", describe(sc.eff))
			}
			sc.do(KeyPressed{Action: KeyToggleAgent, Agent: "worker_1"})
		}, vocab.PhaseExecuting, func(t *testing.T, sc *scenario) {
			if sc.s.Agents["worker_1"].Paused || !hasEvent(sc.eff, "agent_resumed") {
				t.Fatalf("second toggle did not resume: %s", describe(sc.eff))
			}
		}},
		{"executing → executing (a new subtask for a paused agent waits in Held; the team pause holds the agent layer)", func(sc *scenario) {
			sc.toExecuting()
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
			sc.do(KeyPressed{Action: KeyPauseAgent, Agent: "worker_2"})
			sc.do(KeyPressed{Action: KeyPause})
			if hd := effectsOf[HoldDelivery](sc.eff); len(hd) != 4 {
				sc.t.Fatalf("team pause holds %d agents: %s", len(hd), describe(sc.eff))
			}
			sc.do(KeyPressed{Action: KeyResume})
			if hd := effectsOf[HoldDelivery](sc.eff); len(hd) != 3 || slices.ContainsFunc(hd, func(h HoldDelivery) bool { return h.Agent == "worker_2" }) {
				sc.t.Fatalf("unpause lifted the paused agent's hold: %s", describe(sc.eff))
			}
			sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true}) // checkpoint 1 done → review
		}, vocab.PhaseCheckpointReview, func(t *testing.T, sc *scenario) {
			if sc.s.Waiting() != 0 && len(effectsOf[Inject](sc.eff)) == 0 {
				t.Fatalf("nothing sent: %s", describe(sc.eff))
			}
			for _, in := range effectsOf[Inject](sc.eff) {
				if in.Agent == "worker_2" {
					t.Fatalf("injected into the paused worker_2: %s", describe(sc.eff))
				}
			}
		}},
		{"checkpoint_review → complete (what is still queued for agents is withdrawn)", func(sc *scenario) {
			sc.toCheckpointReview()
			sc.trig("checkpoint-approved.md", "ok")
			sc.do(SubtaskDone{Subtask: "st_3", Agent: "worker_1", OK: true})
			sc.trig("checkpoint-approved.md", "ok again")
		}, vocab.PhaseComplete, func(t *testing.T, sc *scenario) {
			if len(effectsOf[Withdraw](sc.eff)) == 0 || len(sc.s.Held) != 0 {
				t.Fatalf("nothing withdrawn at complete: %s", describe(sc.eff))
			}
			for _, ag := range sc.s.Agents {
				if ag.Queued != 0 {
					t.Fatalf("queued left at complete: %+v", sc.s.Agents)
				}
			}
		}},
		{"checkpoint_review → checkpoint_review (no round tells the idle workers \"checkpoint reached\": it changes nothing they do)", func(sc *scenario) {
			sc.toExecuting()
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
			notices := slices.DeleteFunc(effectsOf[Inject](sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})), func(in Inject) bool { return !in.Notice })
			sc.trig("checkpoint-issues.md", "## Issues\n- high: a.go:3 nil check missing")
			for id, f := range sc.s.Fixes {
				sc.do(SubtaskDone{Subtask: id, Agent: f.Worker, OK: true})
			}
			notices = append(notices, slices.DeleteFunc(effectsOf[Inject](sc.eff), func(in Inject) bool { return !in.Notice })...)
			if len(notices) != 0 {
				sc.t.Fatalf("notices at the checkpoint: %+v", notices)
			}
		}, vocab.PhaseCheckpointReview, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScenario(t)
			tc.run(sc)
			sc.expect(tc.want)
			if tc.check != nil {
				tc.check(t, sc)
			}
		})
	}
}

func contains[T ~string](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// containsSeq reports whether want appears in xs in order (not necessarily
// adjacent).
func containsSeq(xs []string, want ...string) bool {
	i := 0
	for _, x := range xs {
		if i < len(want) && x == want[i] {
			i++
		}
	}
	return i == len(want)
}

// ---- triggers ----

// meaningful says which trigger kinds act in which phase.
func meaningful(kind triggers.Kind, p vocab.Phase) bool {
	switch kind {
	case trigPlan:
		return p == vocab.PhasePlanning || p == vocab.PhasePlanRevision
	case trigPlanApproved, trigPlanFeedback:
		return p == vocab.PhasePlanReview
	case triggers.PlanDecision:
		return p == vocab.PhasePlanApproval
	case trigCheckpoint:
		return p == vocab.PhaseExecuting || p == vocab.PhaseCheckpointFix
	case trigCheckpointApproved, trigCheckpointIssues:
		return p == vocab.PhaseCheckpointReview
	case trigFrictionResolution:
		return p == vocab.PhaseFrictionResolution
	case trigFriction:
		return p != vocab.PhaseIdle && p != vocab.PhaseProjectSelected && p != vocab.PhaseComplete && p != vocab.PhaseCancelled
	}
	return false
}

func TestIgnoredTriggersInEveryState(t *testing.T) {
	for _, p := range allPhases {
		base := stateIn(t, p)
		for _, spec := range triggers.Table() {
			if !spec.Watched || spec.Kind == triggers.Done || p == vocab.PhasePaused || meaningful(spec.Kind, p) {
				continue
			}
			name := inOutbox(spec.Kind.Name("x"), "")
			t.Run(string(p)+"/"+name, func(t *testing.T) {
				content := []byte("something")
				if spec.Kind == trigPlan {
					content = validPlan
				}
				n, eff := step(t, testMachine, base, TriggerCompleted{Path: name, Content: content, When: When{At: t0.Add(time.Hour)}, ModTime: t0})
				if n.Phase != base.Phase {
					t.Fatalf("state moved %s → %s", base.Phase, n.Phase)
				}
				if !hasEvent(eff, "trigger_ignored") {
					t.Fatalf("no trigger_ignored event: %v", eventTypes(eff))
				}
				if len(effectsOf[Inject](eff)) != 0 || len(effectsOf[SpawnAgent](eff)) != 0 {
					t.Fatalf("ignored trigger had effects: %s", describe(eff))
				}
				ar := effectsOf[ArchiveTrigger](eff)
				if base.TaskID == "" {
					if len(ar) != 0 {
						t.Fatalf("archived without a task: %v", ar)
					}
					return
				}
				if len(ar) != 1 || !strings.HasPrefix(ar[0].To, "reviews/ignored_v") || ar[0].From != name {
					t.Fatalf("archive %v", ar)
				}
				if !strings.HasSuffix(ar[0].To, strings.ReplaceAll(name, "/", "_")) {
					t.Fatalf("archive name %q", ar[0].To)
				}
				// The same file again is a duplicate: re-archived, nothing else.
				n2, eff2 := step(t, testMachine, n, TriggerCompleted{Path: name, Content: content, When: When{At: t0.Add(2 * time.Hour)}, ModTime: t0})
				if !hasEvent(eff2, "trigger_duplicate") || len(effectsOf[WriteState](eff2)) != 0 || n2.Phase != base.Phase {
					t.Fatalf("duplicate not recognised: %s", describe(eff2))
				}
			})
		}
	}
}

func TestTriggerNeverFiresTwice(t *testing.T) {
	sc := newScenario(t)
	sc.submit(2)
	plan := TriggerCompleted{Path: "plan.md", Content: validPlan, ModTime: t0}
	sc.do(plan)
	sc.expect(vocab.PhasePlanReview)
	// The runner crashed before archiving; after restart the watcher reports
	// the same file again, even across a state.json round trip.
	raw, _ := json.Marshal(sc.s)
	var restored State
	if err := json.Unmarshal(raw, &restored); err != nil {
		t.Fatal(err)
	}
	sc.s = restored
	eff := sc.do(plan)
	sc.expect(vocab.PhasePlanReview)
	if ar := effectsOf[ArchiveTrigger](eff); len(ar) != 1 || ar[0].To != "reviews/plan_v1.md" || !hasEvent(eff, "trigger_duplicate") {
		t.Fatalf("duplicate handling: %s", describe(eff))
	}
	if sc.s.Versions["plan"] != 1 {
		t.Fatalf("plan version %d", sc.s.Versions["plan"])
	}
	// An identical rewrite (new mtime) is a new trigger: in plan_review a
	// plan.md means nothing, so it is ignored, not a duplicate.
	eff = sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, ModTime: t0.Add(time.Minute)})
	if !hasEvent(eff, "trigger_ignored") {
		t.Fatalf("rewrite: %v", eventTypes(eff))
	}
}

func TestUnknownFileIsIgnoredNotArchived(t *testing.T) {
	s := stateIn(t, vocab.PhaseExecuting)
	n, eff := step(t, testMachine, s, TriggerCompleted{Path: "notes.md", Content: []byte("x"), When: When{At: t0.Add(time.Hour)}})
	if !hasEvent(eff, "trigger_ignored") || len(effectsOf[ArchiveTrigger](eff)) != 0 || n.Phase != s.Phase {
		t.Fatalf("%s", describe(eff))
	}
}

func TestInvalidPlanStaysAndTellsLead(t *testing.T) {
	for _, start := range []vocab.Phase{vocab.PhasePlanning, vocab.PhasePlanRevision} {
		t.Run(string(start), func(t *testing.T) {
			s := stateIn(t, start)
			bad := planMD(`{"summary": "x", "checkpoints": [{"id": 1, "name": "a"}],
 "subtasks": [{"id": "st_1", "description": "d", "checkpoint": 2, "dependencies": ["zz"], "files": ["CREATE ../x.go"]}]}`)
			n, eff := step(t, testMachine, s, TriggerCompleted{Path: "agents/lead/plan.md", Content: bad, When: When{At: t0.Add(time.Hour)}})
			if n.Phase != start {
				t.Fatalf("state %s", n.Phase)
			}
			ar := effectsOf[ArchiveTrigger](eff)
			if len(ar) != 1 || ar[0].To != "reviews/plan_v1-invalid.md" {
				t.Fatalf("archive %v", ar)
			}
			if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"lead"}) {
				t.Fatalf("injected %v", got)
			}
			a := assignmentFor(t, eff, "lead")
			for _, want := range []string{"line 7: subtask st_1: checkpoint 2 does not exist", "depends on unknown subtask \"zz\"", "contains \"..\""} {
				if !strings.Contains(a.Instruction, want) {
					t.Errorf("instruction lacks %q:\n%s", want, a.Instruction)
				}
			}
			if !hasEvent(eff, "plan_invalid") || !reflect.DeepEqual(n.Plan, s.Plan) {
				t.Fatalf("events %v", eventTypes(eff))
			}
		})
	}
}

// ---- limits ----

func TestMaxRevisionCyclesNeedsHuman(t *testing.T) {
	sc := newScenario(t)
	sc.toNeedsHuman()
	if sc.s.Escalation != "plan_revisions" || sc.s.RevisionCount != 3 {
		t.Fatalf("escalation %q revisions %d", sc.s.Escalation, sc.s.RevisionCount)
	}
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf("round %d: feedback — round %d: no [reviews/plan_v%d-feedback.md]", i, i, i)
		if !strings.Contains(sc.s.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, sc.s.Reason)
		}
	}
	if n := effectsOf[NotifyUser](sc.eff); len(n) != 1 || n[0].Level != "error" {
		t.Fatalf("notify %v", n)
	}
	if len(sc.s.Timers) != 0 {
		t.Fatalf("timers left: %v", sc.s.Timers)
	}
}

func TestMaxRevisionCyclesConfigurable(t *testing.T) {
	sc := newScenario(t)
	sc.m = Machine{Cfg: Config{MaxRevisionCycles: 1}}
	sc.toPlanReview()
	sc.trig("plan-feedback.md", "no")
	sc.expect(vocab.PhaseNeedsHuman)
}

func TestInvalidPlansNeedHuman(t *testing.T) {
	sc := newScenario(t)
	sc.submit(2)
	for i := 0; i < 3; i++ {
		sc.trig("plan.md", fmt.Sprintf("no json here %d", i))
	}
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "plan_invalid" {
		t.Fatalf("escalation %q", sc.s.Escalation)
	}
}

func TestCheckpointFixRoundsNeedHuman(t *testing.T) {
	sc := newScenario(t)
	sc.toCheckpointFix()
	for i := 2; i <= 3; i++ {
		sc.trig("checkpoint.md", fmt.Sprintf("fixed %d", i))
		sc.expect(vocab.PhaseCheckpointReview)
		sc.trig("checkpoint-issues.md", fmt.Sprintf("a.go still broken %d", i))
	}
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "checkpoint_revisions" || !strings.Contains(sc.s.Reason, "reviews/checkpoint_1_v3-issues.md") {
		t.Fatalf("escalation %q reason %q", sc.s.Escalation, sc.s.Reason)
	}
	// Retry: the reviewer looks again (round 4).
	sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseCheckpointReview)
	if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"reviewer"}) || sc.s.Versions["checkpoint_1"] != 4 {
		t.Fatalf("retry: %v round %d", got, sc.s.Versions["checkpoint_1"])
	}
}

func TestAgentCrashBackoffAndMaxRetries(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.ready()
	wantDelays := []time.Duration{5 * time.Second, 15 * time.Second, 45 * time.Second}
	for i, d := range wantDelays {
		eff := sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1})
		sched := effectsOf[ScheduleTimer](eff)
		if len(sched) != 1 || sched[0] != (ScheduleTimer{ID: "restart:worker_1", After: d}) {
			t.Fatalf("crash %d: schedule %v", i+1, sched)
		}
		if !hasEvent(eff, "agent_restart_scheduled") || len(effectsOf[RestartAgent](eff)) != 0 {
			t.Fatalf("crash %d: %s", i+1, describe(eff))
		}
		// A second exit report while the restart is pending changes nothing.
		eff = sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1})
		if len(effectsOf[ScheduleTimer](eff)) != 0 {
			t.Fatalf("double exit rescheduled: %s", describe(eff))
		}
		eff = sc.do(TimerFired{ID: "restart:worker_1"})
		if r := effectsOf[RestartAgent](eff); len(r) != 1 || r[0].Agent != "worker_1" {
			t.Fatalf("restart %v", describe(eff))
		}
		// The unfinished subtask is re-sent under a new seq.
		a := assignmentFor(t, eff, "worker_1")
		if a.Subtask == nil || a.Subtask.ID != "st_1" || !strings.Contains(a.Instruction, "st_1") {
			t.Fatalf("re-sent %+v", a)
		}
		if in := effectsOf[Inject](eff); !strings.HasPrefix(in[0].Text, "[HIVEMIND] (re-sent) Do subtask st_1") {
			t.Fatalf("re-send text %q", in[0].Text)
		}
		// Exits reported while our restart runs are not failures.
		eff = sc.do(AgentHealth{Agent: "worker_1", Health: "exited", PID: 4242})
		if len(effectsOf[ScheduleTimer](eff)) != 0 {
			t.Fatalf("own restart counted as crash")
		}
		sc.do(AgentHealth{Agent: "worker_1", Health: "ready"})
	}
	if got := sc.s.Agents["worker_1"].Restarts; got != 3 {
		t.Fatalf("restarts %d", got)
	}
	sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthExited, ExitCode: 1})
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "agent:worker_1" {
		t.Fatalf("escalation %q", sc.s.Escalation)
	}
	// Retry restarts the agent, re-sends its work, back to executing.
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseExecuting)
	if len(effectsOf[RestartAgent](eff)) != 1 || assignmentFor(t, eff, "worker_1").Subtask.ID != "st_1" {
		t.Fatalf("retry: %s", describe(eff))
	}
}

func TestFailuresResetWhenWorkFinishes(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(AgentHealth{Agent: "worker_1", Health: "exited"})
	sc.do(TimerFired{ID: "restart:worker_1"})
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if f := sc.s.Agents["worker_1"].Failures; f != 0 {
		t.Fatalf("failures %d after finishing work", f)
	}
}

func TestHangAndTimeout(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	eff := sc.do(AgentHealth{Agent: "worker_1", Health: "hang_warning"})
	if n := effectsOf[NotifyUser](eff); len(n) != 1 || n[0].Level != "warn" || len(effectsOf[RestartAgent](eff)) != 0 {
		t.Fatalf("hang warning: %s", describe(eff))
	}
	eff = sc.do(AgentHealth{Agent: "worker_1", Health: "hung"})
	if len(effectsOf[RestartAgent](eff)) != 1 || assignmentFor(t, eff, "worker_1").Subtask.ID != "st_1" {
		t.Fatalf("hung: %s", describe(eff))
	}
	// Hung while idle (no work) is not acted on.
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	eff = sc.do(AgentHealth{Agent: "worker_2", Health: "hung"})
	if len(effectsOf[RestartAgent](eff)) != 0 {
		t.Fatalf("idle hung agent restarted")
	}
	// Timeout: the per-agent timer armed at assignment fires.
	deadline := sc.s.Timers["timeout:worker_1"].Deadline
	if deadline.IsZero() {
		t.Fatalf("no timeout for worker_1: %v", sc.s.Timers)
	}
	eff = sc.do(TimerFired{ID: "timeout:worker_1"})
	if !hasEvent(eff, "agent_timeout") || len(effectsOf[RestartAgent](eff)) != 1 {
		t.Fatalf("timeout: %s", describe(eff))
	}
	// A stale or unknown timer does nothing.
	eff = sc.do(TimerFired{ID: "timeout:nobody"})
	if len(eff) != 0 {
		t.Fatalf("stale timer: %s", describe(eff))
	}
}

func TestTimeoutClearedWhenWorkCompletes(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	eff := sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	if _, ok := sc.s.Timers["timeout:worker_2"]; ok {
		t.Fatalf("timeout still armed")
	}
	if c := effectsOf[CancelTimer](eff); len(c) != 1 || c[0].ID != "timeout:worker_2" {
		t.Fatalf("cancel %v", c)
	}
}

func TestHealthNotices(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	eff := sc.do(AgentHealth{Agent: "worker_1", Health: "waiting_permission"})
	if n := effectsOf[NotifyUser](eff); len(n) != 1 || n[0].Level != "warn" || !hasEvent(eff, "agent_waiting_permission") {
		t.Fatalf("permission: %s", describe(eff))
	}
	eff = sc.do(AgentHealth{Agent: "worker_1", Health: "rate_limited"})
	if !hasEvent(eff, "agent_rate_limited") || len(effectsOf[RestartAgent](eff)) != 0 || len(effectsOf[NotifyUser](eff)) != 0 {
		t.Fatalf("rate limit: %s", describe(eff))
	}
	if sc.s.Agents["worker_1"].Status != "rate_limited" {
		t.Fatalf("status %q", sc.s.Agents["worker_1"].Status)
	}
	// Unknown agents are ignored.
	if _, eff := step(t, testMachine, sc.s, AgentHealth{Agent: "ghost", Health: "exited"}); len(eff) != 0 {
		t.Fatalf("ghost: %s", describe(eff))
	}
}

func TestSubtaskRejectedMarker(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	// The first re-send is at once, the next ones after the backoff.
	for i, after := range []time.Duration{0, 5 * time.Second, 15 * time.Second} {
		eff := sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: false, Problem: "output file missing"})
		if after > 0 {
			if sch := effectsOf[ScheduleTimer](eff); len(sch) != 1 || sch[0] != (ScheduleTimer{ID: "resend:worker_1", After: after}) || len(effectsOf[Inject](eff)) != 0 {
				t.Fatalf("rejection %d: %s", i+1, describe(eff))
			}
			eff = sc.do(TimerFired{ID: "resend:worker_1"})
		}
		a := assignmentFor(t, eff, "worker_1")
		if !strings.Contains(a.Instruction, "output file missing") || a.Rejected != "output file missing" {
			t.Fatalf("re-assignment lacks the problem: %+v", a)
		}
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: false, Problem: "output file missing"})
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "subtask:st_1" {
		t.Fatalf("escalation %q", sc.s.Escalation)
	}
	sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseExecuting)
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if sc.s.Subtasks["st_1"].Status != vocab.SubtaskDone {
		t.Fatalf("st_1 %+v", sc.s.Subtasks["st_1"])
	}
}

func TestDuplicateSubtaskDoneIsNoop(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	before := sc.s
	eff := sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	if len(eff) != 0 || !sameState(before, sc.s) {
		t.Fatalf("duplicate done: %s", describe(eff))
	}
}

// ---- pause / resume / cancel ----

func TestPauseResumeFromEveryState(t *testing.T) {
	for _, p := range allPhases {
		t.Run(string(p), func(t *testing.T) {
			s := stateIn(t, p)
			pauseAt := s.Timestamp.Add(time.Second)
			n, eff := step(t, testMachine, s, KeyPressed{Action: KeyPause, When: When{At: pauseAt}})
			if !running(p) {
				if n.Phase != p || !hasEvent(eff, "key_ignored") {
					t.Fatalf("pause in %s: %s → %s", p, describe(eff), n.Phase)
				}
				return
			}
			if n.Phase != vocab.PhasePaused || n.PreviousPhase != p {
				t.Fatalf("paused %s previous %s", n.Phase, n.PreviousPhase)
			}
			if len(effectsOf[CancelTimer](eff)) != len(s.Timers) {
				t.Fatalf("timers not frozen: %s", describe(eff))
			}
			for id, tm := range n.Timers {
				if tm.Left <= 0 || !tm.Deadline.IsZero() {
					t.Fatalf("timer %s not frozen: %+v", id, tm)
				}
			}
			// Pause again: ignored.
			if n2, eff2 := step(t, testMachine, n, KeyPressed{Action: KeyPause, When: When{At: t0.Add(2 * time.Hour)}}); n2.Phase != vocab.PhasePaused || !hasEvent(eff2, "key_ignored") {
				t.Fatalf("double pause")
			}
			// Resume after an hour: the timers keep their remaining time.
			r, eff := step(t, testMachine, n, KeyPressed{Action: KeyResume, When: When{At: t0.Add(3 * time.Hour)}})
			want := p
			if p == vocab.PhaseCheckpoint || p == vocab.PhaseFrictionLogged || p == vocab.PhaseFrictionSync {
				want = p // hand-made transient states return where they were
			}
			if r.Phase != want {
				t.Fatalf("resumed to %s, want %s", r.Phase, want)
			}
			sched := effectsOf[ScheduleTimer](eff)
			if len(sched) != len(s.Timers) {
				t.Fatalf("re-armed %d timers, want %d", len(sched), len(s.Timers))
			}
			for _, sc := range sched {
				left := s.Timers[sc.ID].Deadline.Sub(pauseAt)
				if sc.After != left {
					t.Fatalf("timer %s re-armed for %v, want %v", sc.ID, sc.After, left)
				}
			}
		})
	}
}

func TestPauseDefersEventsUntilResume(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.ready()
	sc.do(KeyPressed{Action: KeyPause})
	eff := sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	eff = append(eff, sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})...)
	eff = append(eff, sc.trig("friction/x.md", "hmm")...)
	eff = append(eff, sc.do(AgentHealth{Agent: "reviewer", Health: "exited"})...)
	sc.expect(vocab.PhasePaused)
	if len(effectsOf[Inject](eff)) != 0 || len(effectsOf[ArchiveTrigger](eff)) != 0 || len(effectsOf[ScheduleTimer](eff)) != 0 {
		t.Fatalf("paused machine acted: %s", describe(eff))
	}
	if len(sc.s.Deferred) != 4 {
		t.Fatalf("deferred %d", len(sc.s.Deferred))
	}
	// Survives a state.json round trip.
	raw, _ := json.Marshal(sc.s)
	var restored State
	_ = json.Unmarshal(raw, &restored)
	sc.s = restored
	eff = sc.do(KeyPressed{Action: KeyResume})
	sc.expect(vocab.PhaseCheckpointReview)
	if len(sc.s.Deferred) != 0 || sc.s.FrictionCount != 1 {
		t.Fatalf("deferred %d friction %d", len(sc.s.Deferred), sc.s.FrictionCount)
	}
	if !hasEvent(eff, "agent_restart_scheduled") || !containsSeq(injectedTo(eff), "reviewer") {
		t.Fatalf("resume effects: %s", describe(eff))
	}
}

func TestCancelFromEveryState(t *testing.T) {
	for _, p := range allPhases {
		t.Run(string(p), func(t *testing.T) {
			s := stateIn(t, p)
			n, eff := step(t, testMachine, s, KeyPressed{Action: KeyCancel, When: When{At: t0.Add(time.Hour)}})
			switch {
			case s.TaskID == "" || p == vocab.PhaseIdle || p == vocab.PhaseCancelled:
				if n.Phase != p || !hasEvent(eff, "key_ignored") {
					t.Fatalf("cancel in %s: %s", p, describe(eff))
				}
			case p == vocab.PhaseComplete:
				if n.Phase != p || len(effectsOf[StopAgent](eff)) != len(s.Agents) {
					t.Fatalf("cancel after complete: %s", describe(eff))
				}
			default:
				if n.Phase != vocab.PhaseCancelled {
					t.Fatalf("state %s", n.Phase)
				}
				if got := len(effectsOf[StopAgent](eff)); got != len(s.Agents) {
					t.Fatalf("stopped %d of %d agents", got, len(s.Agents))
				}
				if len(n.Timers) != 0 || len(n.Deferred) != 0 || n.FinishedAt.IsZero() {
					t.Fatalf("timers %v deferred %d", n.Timers, len(n.Deferred))
				}
			}
		})
	}
}

func TestRetryAbandonOnlyWhenStuck(t *testing.T) {
	for _, p := range allPhases {
		if p == vocab.PhaseNeedsHuman || p == vocab.PhaseError {
			continue
		}
		for _, k := range []string{KeyRetry, KeyAbandon, KeyResume, "dance"} {
			if k == KeyResume && p == vocab.PhasePaused {
				continue
			}
			t.Run(string(p)+"/"+k, func(t *testing.T) {
				s := stateIn(t, p)
				n, eff := step(t, testMachine, s, KeyPressed{Action: k, When: When{At: t0.Add(time.Hour)}})
				if n.Phase != s.Phase || !hasEvent(eff, "key_ignored") || len(effectsOf[WriteState](eff)) != 0 {
					t.Fatalf("%s in %s: %s", k, p, describe(eff))
				}
			})
		}
	}
}

// ---- restart ----

func TestResumedRespawnsAndResends(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	seq := sc.s.Seq
	eff := sc.do(Resumed{})
	sp := effectsOf[SpawnAgent](eff)
	if len(sp) != 4 || !sp[0].Resume {
		t.Fatalf("spawn %v", sp)
	}
	if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"worker_1", "worker_2"}) {
		t.Fatalf("re-sent to %v", got)
	}
	if a := assignmentFor(t, eff, "worker_1"); a.Seq <= seq || a.Subtask.ID != "st_1" {
		t.Fatalf("re-sent %+v", a)
	}
	sc.expect(vocab.PhaseExecuting)
}

func TestResumedWhilePausedResendsOnResume(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(KeyPressed{Action: KeyPause})
	eff := sc.do(Resumed{})
	if len(effectsOf[Inject](eff)) != 0 || len(effectsOf[SpawnAgent](eff)) != 4 {
		t.Fatalf("resumed while paused: %s", describe(eff))
	}
	eff = sc.do(KeyPressed{Action: KeyResume})
	if got := injectedTo(eff); !reflect.DeepEqual(got, []string{"worker_1", "worker_2"}) {
		t.Fatalf("re-sent to %v", got)
	}
}

func TestInjectionFailureRestartsAgent(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	seq := sc.s.Agents["worker_1"].LastSeq
	eff := sc.do(InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true})
	if sc.s.Agents["worker_1"].Delivered != seq || len(effectsOf[ScheduleTimer](eff)) != 0 || len(effectsOf[AppendEvent](eff)) != 0 {
		t.Fatalf("delivered: %s", describe(eff))
	}
	eff = sc.do(InjectionResult{Agent: "worker_1", Seq: seq - 1, Delivered: false})
	if len(eff) != 0 {
		t.Fatalf("stale failure acted on: %s", describe(eff))
	}
	eff = sc.do(InjectionResult{Agent: "worker_1", Seq: seq, Delivered: false, Detail: "not ready"})
	if !hasEvent(eff, "injection_failed") || len(effectsOf[ScheduleTimer](eff)) != 1 {
		t.Fatalf("failure: %s", describe(eff))
	}
}

func TestSchedulerNeverRunsConflictingSubtasks(t *testing.T) {
	sc := newScenario(t)
	sc.submit(3)
	sc.do(TriggerCompleted{Path: "plan.md", Content: planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}],
 "subtasks": [
  {"id": "a", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE x.go", "MODIFY shared.go"]},
  {"id": "b", "description": "d", "checkpoint": 1, "dependencies": ["a"], "files": ["MODIFY ./shared.go"]},
  {"id": "c", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE c.go"]},
  {"id": "d", "description": "d", "checkpoint": 1, "dependencies": ["c"], "files": ["CREATE d.go"]}
 ]}`)})
	sc.expect(vocab.PhasePlanReview)
	// Plan validation refuses parallel subtasks on one file
	// (TestPlanParallelFileConflicts); the scheduler still never runs
	// them together, for a plan that has them (a state of an older
	// version): drop b's dependency behind validation's back.
	sc.s.Plan.Subtasks[1].Dependencies = nil
	sc.trig("plan-approved.md", "ok")
	// a and c run; b waits for shared.go, d for c; worker_3 stays free.
	if got := injectedTo(sc.eff); !reflect.DeepEqual(got, []string{"worker_1", "worker_2"}) {
		t.Fatalf("injected %v", got)
	}
	if sc.s.Subtasks["a"].Worker != "worker_1" || sc.s.Subtasks["c"].Worker != "worker_2" || sc.s.Subtasks["b"].Status != vocab.SubtaskPending {
		t.Fatalf("subtasks %+v", sc.s.Subtasks)
	}
	sc.do(SubtaskDone{Subtask: "c", Agent: "worker_2", OK: true})
	if sc.s.Subtasks["d"].Worker != "worker_2" || sc.s.Subtasks["b"].Status != vocab.SubtaskPending {
		t.Fatalf("after c: %+v", sc.s.Subtasks)
	}
	sc.do(SubtaskDone{Subtask: "a", Agent: "worker_1", OK: true})
	if sc.s.Subtasks["b"].Worker != "worker_1" {
		t.Fatalf("after a: %+v", sc.s.Subtasks)
	}
}

func TestNoAssignmentsWhenNotExecuting(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.trig("checkpoint.md", "early")
	sc.expect(vocab.PhaseCheckpointReview)
	// st_1 finishes during the review: recorded, nothing new assigned.
	eff := sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if len(effectsOf[Inject](eff)) != 0 || sc.s.Subtasks["st_1"].Status != vocab.SubtaskDone {
		t.Fatalf("%s", describe(eff))
	}
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	// Approval continues with checkpoint 2.
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	if sc.s.CurrentCheckpoint != 2 {
		t.Fatalf("cp %d", sc.s.CurrentCheckpoint)
	}
}

func TestEarlyCheckpointApprovalKeepsUnfinishedWork(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.trig("checkpoint.md", "early")
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	if sc.s.CurrentCheckpoint != 1 {
		t.Fatalf("moved on with unfinished subtasks: cp %d", sc.s.CurrentCheckpoint)
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.expect(vocab.PhaseCheckpointReview)
	if sc.s.Versions["checkpoint_1"] != 2 {
		t.Fatalf("round %d", sc.s.Versions["checkpoint_1"])
	}
}

func TestEventCodecRoundTrip(t *testing.T) {
	events := []Event{
		TaskSubmitted{Task: vocab.Task{ID: "x", Project: "/p"}, TaskDir: "/d", When: When{At: t0}},
		ProjectSelected{Project: "/p", When: When{At: t0}},
		Resumed{When: When{At: t0}},
		Resumed{When: When{At: t0}, OnDisk: []Event{SubtaskDone{Subtask: "st", Agent: "w", OK: true, When: When{At: t0}}}},
		TriggerCompleted{Path: "plan.md", Content: []byte("a\x00b"), Agent: "lead", ModTime: t0, When: When{At: t0}},
		SubtaskDone{Subtask: "st", Agent: "w", OK: true, When: When{At: t0}},
		AgentHealth{Agent: "w", Health: "exited", ExitCode: 2, When: When{At: t0}},
		InjectionResult{Agent: "w", Seq: 3, Delivered: true, When: When{At: t0}},
		TimerFired{ID: "restart:w", When: When{At: t0}},
		KeyPressed{Action: KeyPause, When: When{At: t0}},
	}
	for _, e := range events {
		raw, err := MarshalEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalEvent(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, e) {
			t.Fatalf("round trip %T: %+v != %+v", e, back, e)
		}
	}
	if _, err := UnmarshalEvent([]byte(`{"type":"nope","event":{}}`)); err == nil {
		t.Fatal("unknown type accepted")
	}
}

func TestStepWithoutTaskDoesNothing(t *testing.T) {
	for _, e := range []Event{
		Resumed{When: When{At: t0}}, SubtaskDone{Subtask: "x", OK: true, When: When{At: t0}}, AgentHealth{Agent: "lead", Health: "exited", When: When{At: t0}},
		TimerFired{ID: "restart:lead", When: When{At: t0}}, InjectionResult{Agent: "lead", When: When{At: t0}},
	} {
		n, eff := step(t, testMachine, State{}, e)
		if len(eff) != 0 || n.Phase != "" {
			t.Fatalf("%T: %s", e, describe(eff))
		}
	}
}

// ---- replay ----

var update = flag.Bool("update", false, "rewrite testdata/replay.jsonl and its golden final state")

const (
	replayLog    = "testdata/replay.jsonl"
	replayGolden = "testdata/replay_final.golden.json"
)

// happyPath drives a whole task like the runner would: one plan revision,
// friction logged during the build, one checkpoint fix, two checkpoints.
func happyPath(t *testing.T) *scenario {
	sc := newScenario(t)
	sc.submit(2)
	for _, a := range []vocab.AgentID{"lead", "reviewer", "worker_1", "worker_2"} {
		sc.do(AgentHealth{Agent: a, Health: "ready", PID: 100 + len(a)})
	}
	sc.do(InjectionResult{Agent: "lead", Seq: sc.s.Agents["lead"].LastSeq, Delivered: true})
	sc.do(AgentHealth{Agent: "lead", Health: "busy"})
	sc.do(TriggerCompleted{Path: "plan.md", Content: planMD(`{"summary": "first try", "checkpoints": [{"id": 1, "name": "core"}],
 "subtasks": [{"id": "st_1", "description": "all of it", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]}]}`), Agent: "lead"})
	sc.do(AgentHealth{Agent: "lead", Health: "idle"})
	sc.trig("plan-feedback.md", "## Feedback\n- high: one subtask is too big; split it and add a polish checkpoint")
	sc.expect(vocab.PhasePlanRevision)
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	sc.trig("plan-approved.md", "Approved: good split.")
	sc.expect(vocab.PhaseExecuting)
	sc.do(AgentHealth{Agent: "worker_1", Health: "busy"})
	sc.trig("friction/slow-build.md", "The build takes 3 minutes each time.")
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.expect(vocab.PhaseCheckpointReview)
	sc.trig("checkpoint-issues.md", "- high: a.go:12 error ignored; return it")
	sc.expect(vocab.PhaseCheckpointFix)
	sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "fix-cp1-r1-lead", Agent: "lead", OK: true})
	sc.expect(vocab.PhaseCheckpointReview)
	sc.trig("checkpoint-approved.md", "Approved.")
	sc.expect(vocab.PhaseFrictionResolution)
	sc.trig("friction-resolution.md", "Cache the build.")
	sc.trig("plan-approved.md", "Fine.")
	sc.expect(vocab.PhaseExecuting)
	sc.do(SubtaskDone{Subtask: "st_3", Agent: "worker_1", OK: true})
	sc.trig("checkpoint-approved.md", "All good.")
	sc.expect(vocab.PhaseComplete)
	return sc
}

func TestReplayGolden(t *testing.T) {
	if *update {
		sc := happyPath(t)
		var b bytes.Buffer
		for _, e := range sc.log {
			line, err := json.Marshal(EncodeEvent(e, "t1"))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		writeFile(t, replayLog, b.Bytes())
		writeFile(t, replayGolden, marshalState(t, sc.s))
	}
	data := readFile(t, replayLog)
	s := State{Phase: vocab.PhaseIdle}
	n := 0
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec vocab.EventRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		ev, ok, err := DecodeEvent(rec)
		if err != nil || !ok {
			t.Fatalf("line %d: not an input event (%v)", i+1, err)
		}
		s, _ = step(t, testMachine, s, ev)
		n++
	}
	if s.Phase != vocab.PhaseComplete || s.RevisionCount != 1 || s.FrictionCount != 1 {
		t.Fatalf("after %d events: state %s revisions %d friction %d", n, s.Phase, s.RevisionCount, s.FrictionCount)
	}
	if got, want := marshalState(t, s), readFile(t, replayGolden); !bytes.Equal(got, want) {
		t.Fatalf("final state differs from %s (run with -update after checking the change):\n%s", replayGolden, got)
	}
	// The scenario still produces the recorded log.
	sc := happyPath(t)
	if len(sc.log) != n {
		t.Fatalf("scenario has %d events, %s has %d: run with -update", len(sc.log), replayLog, n)
	}
}

// TestReplayIsDeterministic folds the same events twice and compares every
// effect: the machine must not depend on map order or anything else.
func TestReplayIsDeterministic(t *testing.T) {
	a, b := happyPath(t), happyPath(t)
	sa, sb := State{Phase: vocab.PhaseIdle}, State{Phase: vocab.PhaseIdle}
	for i := range a.log {
		var ea, eb []Effect
		sa, ea = testMachine.Step(sa, a.log[i])
		sb, eb = testMachine.Step(sb, b.log[i])
		if !reflect.DeepEqual(ea, eb) {
			t.Fatalf("event %d: effects differ:\n%s\n%s", i, describe(ea), describe(eb))
		}
	}
}

func marshalState(t *testing.T, s State) []byte {
	t.Helper()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReplayGolden -update)", err)
	}
	return b
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkStepTrigger measures one Step that consumes a plan.md (parse,
// validate, archive, assignment) — the engine's share of trigger→inject.
func BenchmarkStepTrigger(b *testing.B) {
	sc := newScenario(&testing.T{})
	sc.submit(2)
	ev := TriggerCompleted{Path: "agents/lead/plan.md", Content: validPlan, When: When{At: t0.Add(time.Minute)}, ModTime: t0}
	b.ReportAllocs()
	for b.Loop() {
		testMachine.Step(sc.s, ev)
	}
}

func TestPackageStepUsesDefaults(t *testing.T) {
	s, eff := testMachine.Step(State{}, ProjectSelected{Project: testProject, When: When{At: t0}})
	if s.Phase != vocab.PhaseProjectSelected || !hasEvent(eff, "project_selected") {
		t.Fatalf("%s: %s", s.Phase, describe(eff))
	}
	s2, eff := testMachine.Step(stateIn(t, vocab.PhaseExecuting), ProjectSelected{Project: "/other", When: When{At: t0}})
	if s2.Project != testProject || !hasEvent(eff, "project_ignored") {
		t.Fatalf("project changed during a task: %s", describe(eff))
	}
}

func TestFixRejectedIsResent(t *testing.T) {
	sc := newScenario(t)
	sc.toCheckpointFix()
	eff := sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", OK: false, Problem: "no output"})
	if !hasEvent(eff, "fix_rejected") || assignmentFor(t, eff, "worker_1").DoneMarker != filepath.Join(testTaskDir, "agents/worker_1/outputs/fix-cp1-r1-worker_1.done") {
		t.Fatalf("%s", describe(eff))
	}
	sc.expect(vocab.PhaseCheckpointFix)
}
