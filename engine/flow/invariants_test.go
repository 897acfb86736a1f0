package flow

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The send invariants of the engine, as properties over random event
// sequences: a seeded generator plays a plausible world (an agent layer
// with queues that honours HoldDelivery and Withdraw, agents that get
// ready, busy, crash and hit rate limits, triggers and done markers for
// the work they were given, the user's keys, timers) through Machine.Step
// and checks, after every step:
//
//	(a) no dispatch id (Inject seq) is typed twice, and an agent's work is
//	    sent again only after its last send failed (a failed or cancelled
//	    delivery, an exit, a hang, a turn lost to a rate limit, a timer, a
//	    rejected completion, a resume or retry);
//	(b) nothing is injected while the team or that agent is paused, and
//	    the agent layer holds every paused agent's queue;
//	(c) nothing is injected once the task is cancelled or complete, and
//	    nothing is left in the agent layer's queues to be typed;
//	(d) no notice is sent after newer work to that agent;
//	(e) no agent is started twice for one restart: a start is answered
//	    (the agent runs, exits or hangs, or its start timed out) before
//	    the agent is started again;
//	(f) error only when no agent is running work, starting, paused or
//	    waiting to restart;
//	(g) the elapsed clock counts exactly while the task is under way
//	    (a running phase), and what it counted never shrinks.
//	(h) every message names exactly the content it was sent with: the
//	    assignment file its line names holds that dispatch's assignment
//	    when it is typed, and no later write (as the runner writes them,
//	    vocab.AssignmentRel) changes a file a message named.
//	(i) the step that ends the task (complete, cancelled, abandoned:
//	    vocab.State.Over) stops every agent, after any start it makes,
//	    and no step of a task that is over starts one (a resume included).
//
// HIVEMIND_PROPERTY_SEQS sets the number of sequences (default 1000; 60
// with -short or -race: sequences go through the whole workflow, about
// 0.4 s each under the race detector); HIVEMIND_PROPERTY_SEED the seed
// (default fixed, for CI).
func TestSendInvariants(t *testing.T) {
	n := 1000
	if testing.Short() || raceEnabled {
		n = 60
	}
	if v, err := strconv.Atoi(os.Getenv("HIVEMIND_PROPERTY_SEQS")); err == nil && v > 0 {
		n = v
	}
	seed := uint64(20261128)
	if v, err := strconv.ParseUint(os.Getenv("HIVEMIND_PROPERTY_SEED"), 10, 64); err == nil {
		seed = v
	}
	cfg := defaultConfig()
	cfg.MaxRetries = 3
	m := Machine{Cfg: cfg}
	for i := range n {
		w := newWorld(seed, uint64(i))
		if err := w.run(m, 120); err != nil {
			t.Fatalf("sequence %d (seed %d): %v\nevents:\n%s", i, seed, err, strings.Join(w.trace, "\n"))
		}
	}
}

// world is the generator's picture of everything around the engine.
type world struct {
	rnd   *rand.Rand
	s     State
	now   time.Time
	trace []string
	n     int // instance counter: every trigger file is new

	queue map[vocab.AgentID][]int // the agent layer's queues (seqs)
	hold  map[vocab.AgentID]bool  // HoldDelivery
	armed map[string]bool         // timers the runner has armed
	next  []Event                 // results the world owes the engine (cancelled, failed)

	// property bookkeeping
	typed     map[vocab.AgentID]map[int]bool // every seq ever injected
	delivered map[vocab.AgentID]map[int]bool
	lastWork  map[vocab.AgentID]int  // seq of the last work injected
	failedOK  map[vocab.AgentID]bool // its last work's send failed since
	starting  map[vocab.AgentID]bool // a start not yet answered by an exit/hang
	files     map[string]string      // assignment files as the runner writes them: path → content
	named     map[string]string      // the content of each file when a message named it
}

// assignmentPathRE finds the assignment file an injected line names.
var assignmentPathRE = regexp.MustCompile(`\S*/` + vocab.AssignmentsDir + `/\S+\.json`)

// writeAssignment plays a WriteAssignment as the runner does
// (workspace.TaskDir.WriteAssignment: the versioned file and the newest
// copy) and checks (h) for each file.
func (w *world) writeAssignment(a vocab.Assignment) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	for _, seq := range []int{a.Seq, 0} {
		p := filepath.Join(testTaskDir, vocab.AssignmentRel(a.Agent, seq))
		if was, ok := w.named[p]; ok && was != string(b) {
			return fmt.Errorf("(h) %s #%d rewrites %s, which a message named when it said #%s", a.Agent, a.Seq, p, seqOfJSON(was))
		}
		w.files[p] = string(b)
	}
	return nil
}

// seqOfJSON is the seq of an assignment's JSON (for messages).
func seqOfJSON(content string) string {
	var a vocab.Assignment
	_ = json.Unmarshal([]byte(content), &a)
	return strconv.Itoa(a.Seq)
}

func newWorld(seed, stream uint64) *world {
	return &world{
		rnd:       rand.New(rand.NewPCG(seed, stream)),
		s:         State{Phase: vocab.PhaseIdle},
		now:       t0,
		queue:     map[vocab.AgentID][]int{},
		hold:      map[vocab.AgentID]bool{},
		armed:     map[string]bool{},
		typed:     map[vocab.AgentID]map[int]bool{},
		delivered: map[vocab.AgentID]map[int]bool{},
		lastWork:  map[vocab.AgentID]int{},
		failedOK:  map[vocab.AgentID]bool{},
		starting:  map[vocab.AgentID]bool{},
		files:     map[string]string{},
		named:     map[string]string{},
	}
}

func (w *world) run(m Machine, steps int) error {
	if err := w.step(m, TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Workers: 2, Description: "do it"}, TaskDir: testTaskDir}); err != nil {
		return err
	}
	for range steps {
		var ev Event
		if len(w.next) > 0 {
			ev, w.next = w.next[0], w.next[1:]
		} else {
			ev = w.pick()
		}
		if ev == nil {
			continue
		}
		if err := w.step(m, ev); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) agents() []vocab.AgentID { return w.s.AgentIDs() }

func (w *world) anyAgent() vocab.AgentID {
	ids := w.agents()
	return ids[w.rnd.IntN(len(ids))]
}

// pick chooses the next event the world produces.
func (w *world) pick() Event {
	s := w.s
	switch r := w.rnd.IntN(100); {
	case r < 22: // the agent layer types the next message of an agent
		var ready []vocab.AgentID
		for _, id := range w.agents() {
			if len(w.queue[id]) > 0 && !w.hold[id] {
				ready = append(ready, id)
			}
		}
		if len(ready) == 0 {
			return nil
		}
		id := ready[w.rnd.IntN(len(ready))]
		seq := w.queue[id][0]
		w.queue[id] = w.queue[id][1:]
		if w.rnd.IntN(10) == 0 {
			return InjectionResult{Agent: id, Seq: seq, Detail: "not confirmed"}
		}
		return InjectionResult{Agent: id, Seq: seq, Delivered: true}
	case r < 45: // an agent's health
		id := w.anyAgent()
		healths := []vocab.Health{vocab.HealthReady, vocab.HealthIdle, vocab.HealthBusy, vocab.HealthIdle,
			vocab.HealthRateLimited, vocab.HealthExited, vocab.HealthHung, vocab.HealthHangWarning, vocab.HealthStarting}
		h := healths[w.rnd.IntN(len(healths))]
		e := AgentHealth{Agent: id, Health: h}
		if h == vocab.HealthExited {
			e.ExitCode = []int{1, 1, 1, 143, 127}[w.rnd.IntN(5)]
			if w.rnd.IntN(2) == 0 {
				e.PID = 1000 + w.rnd.IntN(10) // a process's exit (0: a start that failed)
			}
			// The agent layer fails what the process had queued.
			for _, seq := range w.queue[id] {
				w.next = append(w.next, InjectionResult{Agent: id, Seq: seq, Detail: "agent exited before delivery"})
			}
			w.queue[id] = nil
		}
		return e
	case r < 70: // an agent writes what its assignment asks (or gets it wrong)
		return w.answer()
	case r < 82: // a timer the runner armed fires
		ids := make([]string, 0, len(w.armed))
		for id := range w.armed {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil
		}
		slices.Sort(ids)
		return TimerFired{ID: ids[w.rnd.IntN(len(ids))]}
	case r < 94: // the user
		keys := []string{KeyPause, KeyResume, KeyPauseAgent, KeyResumeAgent, KeyToggleAgent, KeyToggleAgent, KeyRetry, KeyRetry, KeyCancel, KeyAbandon}
		k := keys[w.rnd.IntN(len(keys))]
		if (k == KeyCancel || k == KeyAbandon) && w.rnd.IntN(4) != 0 {
			k = KeyResume // rarer: they end the sequence's interest
		}
		e := KeyPressed{Action: k}
		if k == KeyPauseAgent || k == KeyResumeAgent || k == KeyToggleAgent {
			e.Agent = w.anyAgent()
		}
		return e
	case r < 97: // the runner restarts (the agent layer's queues go with it)
		w.queue = map[vocab.AgentID][]int{}
		w.armed = map[string]bool{}
		w.next = nil
		return Resumed{Retry: w.rnd.IntN(2) == 0}
	default:
		if s.Phase == vocab.PhasePlanning {
			return TriggerCompleted{Path: "plan.md", Content: []byte("no json here " + w.count()), Agent: vocab.AgentLead}
		}
		return AgentHealth{Agent: w.anyAgent(), Health: vocab.HealthIdle}
	}
}

func (w *world) count() string { w.n++; return strconv.Itoa(w.n) }

// answer is what some agent writes for its current assignment.
func (w *world) answer() Event {
	s := w.s
	trig := func(p, content string, by vocab.AgentID) Event {
		return TriggerCompleted{Path: p, Content: []byte(content + "\n" + w.count()), Agent: by}
	}
	switch s.Phase {
	case vocab.PhasePlanning, vocab.PhasePlanRevision:
		return TriggerCompleted{Path: "plan.md", Content: append(validPlan, []byte("\n"+w.count())...), Agent: vocab.AgentLead}
	case vocab.PhasePlanReview:
		if w.rnd.IntN(3) == 0 {
			return trig("plan-feedback.md", "## Issues\n- split st_1", vocab.AgentReviewer)
		}
		return trig("plan-approved.md", "LGTM", vocab.AgentReviewer)
	case vocab.PhaseCheckpointReview:
		if w.rnd.IntN(3) == 0 {
			return trig("checkpoint-issues.md", "## Issues\n- high: a.go:3 nil check missing", vocab.AgentReviewer)
		}
		return trig("checkpoint-approved.md", "ok", vocab.AgentReviewer)
	case vocab.PhaseFrictionResolution:
		return trig("friction-resolution.md", "do less", vocab.AgentLead)
	}
	if w.rnd.IntN(8) == 0 {
		return trig("friction/slow-"+w.count()+".md", "tests are slow", w.anyAgent())
	}
	// A done marker for some agent's current work (or a wrong one).
	var busy []vocab.AgentID
	for _, id := range w.agents() {
		if a, ok := s.Assignments[id]; ok && s.Agents[id].Pending && a.DoneMarker != "" {
			busy = append(busy, id)
		}
	}
	if len(busy) == 0 {
		return nil
	}
	id := busy[w.rnd.IntN(len(busy))]
	a := s.Assignments[id]
	sub := strings.TrimSuffix(a.DoneMarker[strings.LastIndex(a.DoneMarker, "/")+1:], ".done")
	if w.rnd.IntN(6) == 0 {
		return SubtaskDone{Subtask: sub, Agent: id, Problem: "output file missing"}
	}
	return SubtaskDone{Subtask: sub, Agent: id, OK: true}
}

// step stamps e, steps the machine, plays the effects into the world and
// checks the properties.
func (w *world) step(m Machine, e Event) error {
	w.now = w.now.Add(time.Duration(1+w.rnd.IntN(3000)) * time.Millisecond)
	if tc, ok := e.(TriggerCompleted); ok {
		tc.ModTime = w.now
		tc.Path = inOutbox(tc.Path, tc.Agent) // where its writer writes it
		e = tc
	}
	e = withTime(e, w.now)
	if tf, ok := e.(TimerFired); ok {
		delete(w.armed, tf.ID)
	}
	w.trace = append(w.trace, fmt.Sprintf("%s %s", w.s.Phase, describeEvent(e)))
	before := w.s
	w.resolve(e)
	next, eff := m.Step(w.s, e)
	w.s = next
	if len(eff) > 0 {
		w.trace = append(w.trace, "    → "+brief(eff))
	}
	return w.check(before, e, eff)
}

func describeEvent(e Event) string {
	switch e := e.(type) {
	case TriggerCompleted:
		return fmt.Sprintf("TriggerCompleted{%s by %s}", e.Path, e.Agent)
	case TaskSubmitted:
		return "TaskSubmitted"
	}
	s := fmt.Sprintf("%T%+v", e, e)
	if i := strings.Index(s, " When:"); i > 0 {
		s = s[:i] + "}"
	}
	return strings.TrimPrefix(s, "flow.")
}

// resolve records what an event says about the sends and starts before
// the engine sees it.
func (w *world) resolve(e Event) {
	switch e := e.(type) {
	case InjectionResult:
		if e.Delivered {
			if w.delivered[e.Agent] == nil {
				w.delivered[e.Agent] = map[int]bool{}
			}
			w.delivered[e.Agent][e.Seq] = true
		} else if e.Seq == w.lastWork[e.Agent] {
			w.failedOK[e.Agent] = true
			w.starting[e.Agent] = false // an undelivered message restarts the agent
		}
	case AgentHealth:
		if e.Health != vocab.HealthStarting {
			w.starting[e.Agent] = false // the start is over: it runs, or ended
		}
		switch e.Health {
		case vocab.HealthExited, vocab.HealthHung:
			w.failedOK[e.Agent] = true
		case vocab.HealthRateLimited:
			if w.delivered[e.Agent][w.lastWork[e.Agent]] {
				w.failedOK[e.Agent] = true // the turn of its work was lost
			}
		}
	case TimerFired:
		if _, name, ok := strings.Cut(e.ID, ":"); ok {
			id := vocab.AgentID(name)
			w.failedOK[id] = true
			if strings.HasPrefix(e.ID, "timeout:") {
				w.starting[id] = false
			}
		}
	case SubtaskDone:
		if !e.OK {
			w.failedOK[e.Agent] = true
		}
	case TriggerCompleted:
		w.failedOK[e.Agent] = true // a rejected trigger is sent back to its writer
	case Resumed:
		for _, id := range w.agents() {
			w.failedOK[id] = true
			w.starting[id] = false
		}
	case KeyPressed:
		if e.Action == KeyRetry {
			for _, id := range w.agents() {
				w.failedOK[id] = true
			}
		}
	}
}

// check plays eff into the world and checks the properties.
func (w *world) check(before State, e Event, eff []Effect) error {
	s := w.s
	startedNow := map[vocab.AgentID]bool{}
	for _, x := range eff {
		switch x := x.(type) {
		case Inject:
			id := x.Agent
			if w.typed[id] == nil {
				w.typed[id] = map[int]bool{}
			}
			if w.typed[id][x.Seq] { // (a)
				return fmt.Errorf("(a) dispatch %s #%d injected twice", id, x.Seq)
			}
			w.typed[id][x.Seq] = true
			if s.Phase == vocab.PhasePaused || s.Agents[id].Paused { // (b)
				return fmt.Errorf("(b) %s #%d injected while paused (team %v, agent %v)", id, x.Seq, s.Phase == vocab.PhasePaused, s.Agents[id].Paused)
			}
			if p := before.Phase; p == vocab.PhaseComplete || p == vocab.PhaseCancelled || s.Phase == vocab.PhaseComplete || s.Phase == vocab.PhaseCancelled { // (c)
				return fmt.Errorf("(c) %s #%d injected at %s → %s", id, x.Seq, before.Phase, s.Phase)
			}
			if x.Notice { // (d)
				if w.lastWork[id] > x.Seq || (s.Agents[id].Pending && s.Assignments[id].Seq > x.Seq) {
					return fmt.Errorf("(d) notice %s #%d after newer work #%d", id, x.Seq, max(w.lastWork[id], s.Assignments[id].Seq))
				}
			} else {
				p := assignmentPathRE.FindString(x.Text) // (g)
				content, ok := w.files[p]
				if !ok || seqOfJSON(content) != strconv.Itoa(x.Seq) {
					return fmt.Errorf("(h) %s #%d names %q, which holds %q", id, x.Seq, p, content)
				}
				w.named[p] = content
				if x.Resend && !w.failedOK[id] { // (a)
					return fmt.Errorf("(a) %s's work #%d sent again as #%d though its send did not fail", id, w.lastWork[id], x.Seq)
				}
				w.lastWork[id] = x.Seq
				w.failedOK[id] = false
			}
			w.queue[id] = append(w.queue[id], x.Seq)
		case WriteAssignment:
			if err := w.writeAssignment(x.Assignment); err != nil {
				return err
			}
		case HoldDelivery:
			w.hold[x.Agent] = x.Hold
		case Withdraw:
			var keep []int
			for _, seq := range w.queue[x.Agent] {
				if seq < x.Before {
					w.next = append(w.next, InjectionResult{Agent: x.Agent, Seq: seq, Cancelled: true, Detail: "withdrawn"})
				} else {
					keep = append(keep, seq)
				}
			}
			w.queue[x.Agent] = keep
		case SpawnAgent, RestartAgent:
			var id vocab.AgentID
			if sp, ok := x.(SpawnAgent); ok {
				id = sp.Agent
			} else {
				id = x.(RestartAgent).Agent
			}
			_, submitted := e.(TaskSubmitted)
			if startedNow[id] || (w.starting[id] && !submitted) { // (e)
				return fmt.Errorf("(e) %s started again before its last start ended", id)
			}
			startedNow[id] = true
			w.starting[id] = true
			w.failedOK[id] = true // a fresh process has not got its work
		case ScheduleTimer:
			w.armed[x.ID] = true
		case CancelTimer:
			delete(w.armed, x.ID)
		}
	}
	for _, id := range w.agents() { // (b): the agent layer holds what is paused
		if want := s.Phase == vocab.PhasePaused || s.Agents[id].Paused; w.hold[id] != want && (want || w.hold[id]) {
			return fmt.Errorf("(b) %s: agent layer hold %v, paused team %v agent %v", id, w.hold[id], s.Phase == vocab.PhasePaused, s.Agents[id].Paused)
		}
	}
	if s.Phase == vocab.PhaseComplete || s.Phase == vocab.PhaseCancelled { // (c)
		for _, id := range w.agents() {
			if len(w.queue[id]) > 0 {
				return fmt.Errorf("(c) %s's messages %v left to be typed at %s", id, w.queue[id], s.Phase)
			}
		}
	}
	if s.Over() { // (i)
		stops := lastStartOrStop(eff)
		for _, id := range w.agents() {
			switch stop, ok := stops[id]; {
			case !before.Over() && !stop:
				return fmt.Errorf("(i) the task ended (%s) and %s was not stopped: %s", s.Phase, id, brief(eff))
			case before.Over() && ok && !stop:
				return fmt.Errorf("(i) %s started though the task is over (%s)", id, s.Phase)
			}
		}
	}
	if s.Phase == vocab.PhaseError && before.Phase != vocab.PhaseError { // (f)
		for _, id := range w.agents() {
			a := s.Agents[id]
			_, restart := s.Timers[restartTimer(id)]
			if a.Pending || a.Paused || restart || a.Status == vocab.HealthStarting || a.Status == vocab.HealthRestarting {
				return fmt.Errorf("(f) error while %s is on its way (pending %v, paused %v, restart timer %v, status %s)", id, a.Pending, a.Paused, restart, a.Status)
			}
		}
	}
	if s.TaskID != "" && s.Counting() != s.Phase.Running() { // (g)
		return fmt.Errorf("(g) clock %+v in phase %s", s.Clock, s.Phase)
	}
	if before.TaskID == s.TaskID && s.Clock.Ran < before.Clock.Ran {
		return fmt.Errorf("(g) clock went back from %v to %v", before.Clock.Ran, s.Clock.Ran)
	}
	if s.Phase.Terminal() && !before.Phase.Terminal() {
		// The runner ends what is still in flight when the task ends
		// (what it was typing, once the engine withdrew the rest).
		for _, id := range w.agents() {
			for _, seq := range w.queue[id] {
				w.next = append(w.next, InjectionResult{Agent: id, Seq: seq, Cancelled: true, Detail: "cancelled: the task ended"})
			}
			w.queue[id] = nil
		}
	}
	return nil
}

// brief names effects in one short line each.
func brief(eff []Effect) string {
	var b strings.Builder
	for _, e := range eff {
		switch e := e.(type) {
		case WriteState, NotifyUser:
		case AppendEvent:
			fmt.Fprintf(&b, "%s(%s) ", e.Type, e.Agent)
		case WriteAssignment:
		case Inject:
			fmt.Fprintf(&b, "Inject(%s #%d resend=%v notice=%v) ", e.Agent, e.Seq, e.Resend, e.Notice)
		default:
			fmt.Fprintf(&b, "%s ", strings.TrimPrefix(fmt.Sprintf("%T%+v", e, e), "flow."))
		}
	}
	return b.String()
}
