package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// StateSaver persists state.json (workspace.StateStore).
type StateSaver interface {
	Save(State) error
}

// EventAppender appends to events.jsonl (workspace.EventLog).
type EventAppender interface {
	Append(vocab.EventRecord) error
}

// TaskFiles is what the Runner needs from the task directory
// (workspace.TaskDir).
type TaskFiles interface {
	// Dir is the task directory's absolute path.
	Dir() string
	// WriteAssignment writes assignments/<agent>.json + .md.
	WriteAssignment(vocab.Assignment) error
	// Archive moves a consumed trigger (paths relative to the task dir).
	Archive(from, to string) error
	// ReadDone reads and validates agent's done marker of subtask.
	ReadDone(agent vocab.AgentID, subtask string) (vocab.DoneMarker, error)
}

// SnapshotEvents is how many recent event records a Snapshot carries.
const SnapshotEvents = 50

// Snapshot is what the UI renders: a copy of the state and the newest
// event records (oldest first).
type Snapshot struct {
	State  State
	Events []vocab.EventRecord
	// Knowledge is the shared knowledge, newest entry first (nil without a
	// RunnerConfig.Knowledge).
	Knowledge []workspace.KnowledgeItem
	// Stepped is true once the runner has stepped an event: before that,
	// State is the state it was started from (a resumed task's loaded
	// state, which the first step may change, e.g. --retry).
	Stepped bool
}

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	Machine Stepper
	TaskDir TaskFiles
	Store   StateSaver
	Log     EventAppender
	Agents  Agents
	// Clock stamps events and records (default time.Now).
	Clock func() time.Time
	// OnSnapshot receives a snapshot after every step, on the runner's
	// goroutine; it must not block.
	OnSnapshot func(Snapshot)
	// OnNotify receives NotifyUser effects (level: info, warn, error).
	OnNotify func(level, msg string)
	// OnRecord receives every record written to events.jsonl, in order.
	OnRecord func(vocab.EventRecord)

	// State is the state to start from: zero for a new task (send
	// TaskSubmitted), or the state loaded from state.json (send Resumed).
	State State
	// History is the tail of events.jsonl on resume, shown in snapshots.
	History []vocab.EventRecord
	// QuietPeriod configures the watchers, as given (config's
	// quiet_period_ms).
	QuietPeriod time.Duration
	// NoWatch disables the file watcher (tests that feed events directly).
	NoWatch bool
	// Knowledge, when set, is the shared knowledge: its inbox is watched and
	// MergeKnowledge/ArchiveKnowledge are carried out on it (knowledgewatch.go).
	Knowledge KnowledgeFiles
	// Git, when set (git projects), commits a worker's work on every done
	// subtask and carries out MergeCheckpoint (gitrun.go).
	Git GitWork
	// Heartbeat, when set, bounds the age of state.json while the task's
	// elapsed clock runs: looked at every half heartbeat, a state no step
	// wrote for a heartbeat is written again, stamped now. A run killed
	// without a word is counted up to its last write (vocab.RunClock),
	// so less than a heartbeat and a half of it is lost.
	Heartbeat time.Duration
}

// Runner carries out the effects of Step. One goroutine (Run) owns the
// state: events from any goroutine are queued by Send and handled one at a
// time, so Step sees a total order and state.json has a single writer.
type Runner struct {
	cfg RunnerConfig

	qmu     sync.Mutex
	queue   []runnerItem
	stopped bool // Run returned: nothing more is handled
	// closing: the agent layer is being shut down (Closing), so a start
	// that fails is the end of the run, not a failure.
	closing atomic.Bool
	wakeup  chan struct{}

	logw *runnerLog // events.jsonl writer

	// Owned by the Run goroutine.
	dirty  bool  // toSave has not been written yet
	toSave State // the state of the last WriteState
	// heldArchives are archives of steps whose state could not be saved,
	// done after the next successful save.
	heldArchives []ArchiveTrigger
	stepped      bool // an event was stepped (Snapshot.Stepped)
	// inflight are the injections handed to the agent layer that have
	// no InjectionResult yet; at shutdown each gets a cancelled one.
	inflight map[injectionKey]bool
	ended    map[injectionKey]bool // cancelled by cancelInflight
	state    State
	timers   map[string]runnerTimer
	gen      uint64
	watcher  *Watcher
	cw       *knowledgeWatcher // shared-knowledge inbox (knowledgewatch.go)
	runCtx   context.Context   // Run's context, for merges
	bg       sync.WaitGroup    // merge goroutines

	smu  sync.Mutex
	snap Snapshot
}

// runnerItem is one queued input: an event, or a timer firing (checked
// against the timer's generation so a replaced timer never fires).
type runnerItem struct {
	ev       Event
	rec      *vocab.EventRecord // a record to log, not an event
	barrier  chan struct{}      // closed when reached
	timerID  string
	timerGen uint64
	// republish: only publish the snapshot again.
	republish bool
}

type injectionKey struct {
	agent vocab.AgentID
	seq   int
}

type runnerTimer struct {
	t   *time.Timer
	gen uint64
}

// NewRunner returns a Runner; call Run to start it.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	r := &Runner{
		cfg:      cfg,
		wakeup:   make(chan struct{}, 1),
		state:    cfg.State.Clone(),
		timers:   map[string]runnerTimer{},
		inflight: map[injectionKey]bool{},
		ended:    map[injectionKey]bool{},
	}
	r.snap = Snapshot{State: r.state.Clone(), Events: tailRecords(cfg.History, SnapshotEvents)}
	r.logw = newRunnerLog(cfg.Log, func(err error) {
		if cfg.OnNotify != nil {
			cfg.OnNotify("error", "events.jsonl: "+err.Error())
		}
	})
	return r
}

// Send queues an event. It never blocks and is safe from any goroutine.
func (r *Runner) Send(ev Event) { r.enqueue(runnerItem{ev: ev}) }

func (r *Runner) enqueue(it runnerItem) {
	r.qmu.Lock()
	if r.stopped {
		r.qmu.Unlock()
		if it.barrier != nil {
			close(it.barrier)
		}
		return
	}
	r.queue = append(r.queue, it)
	r.qmu.Unlock()
	select {
	case r.wakeup <- struct{}{}:
	default:
	}
}

// Log queues a record for events.jsonl that is not an engine input (a
// hook denial, a stale lock taken over, a restored state.json). Safe from
// any goroutine; Time and Task are filled in when empty.
func (r *Runner) Log(typ vocab.RecordType, agent vocab.AgentID, details map[string]any) {
	r.enqueue(runnerItem{rec: &vocab.EventRecord{Time: r.cfg.Clock(), Type: typ, Agent: agent, Details: details}})
}

// Closing says the agent layer is being shut down with the run (called
// before closing it): from now on a start that fails reaches the engine
// as a stop (AgentHealth.Stopped), not as a crash.
func (r *Runner) Closing() { r.closing.Store(true) }

// Barrier returns a channel closed once everything queued before the call
// has been handled (or Run has returned). Used to drain at shutdown.
func (r *Runner) Barrier() <-chan struct{} {
	ch := make(chan struct{})
	r.enqueue(runnerItem{barrier: ch})
	return ch
}

// Pause asks the engine to pause (the TUI's Engine interface).
func (r *Runner) Pause() { r.key(flow.KeyPause) }

// Resume asks the engine to resume after a pause.
func (r *Runner) Resume() { r.key(flow.KeyResume) }

// Cancel asks the engine to stop every agent and end in cancelled.
func (r *Runner) Cancel() { r.key(flow.KeyCancel) }

// Retry asks the engine to retry after an error or needs_human.
func (r *Runner) Retry() { r.key(flow.KeyRetry) }

// Abandon asks the engine to give the task up.
func (r *Runner) Abandon() { r.key(flow.KeyAbandon) }

// PauseAgent pauses one agent (nothing is typed into it), or resumes it
// when it is paused: the engine decides on its own state, not on a
// snapshot that may be behind.
func (r *Runner) PauseAgent(id vocab.AgentID) {
	r.Send(KeyPressed{Action: flow.KeyToggleAgent, Agent: id, When: When{At: r.cfg.Clock()}})
}

// DecidePlan records the user's decision at the plan gate: it writes
// plan-decision.md (atomically) into the task dir, where the watcher finds
// it like any trigger, so the decision is on disk before anything acts on
// it and survives a crash. A decision outside plan_approval is archived as
// ignored by the engine.
func (r *Runner) DecidePlan(approve bool, feedback string) error {
	data := flow.FormatPlanDecision(PlanDecision{Approve: approve, Feedback: feedback})
	if len(data) > flow.MaxPlanDecision {
		return fmt.Errorf("the feedback is %d bytes; at most %d", len(data), flow.MaxPlanDecision)
	}
	return workspace.WriteFileAtomic(filepath.Join(r.cfg.TaskDir.Dir(), flow.PlanDecisionFile), data, 0o644)
}

func (r *Runner) key(action string) {
	r.Send(KeyPressed{Action: action, When: When{At: r.cfg.Clock()}})
}

// Snapshot returns the latest snapshot. Safe from any goroutine.
func (r *Runner) Snapshot() Snapshot {
	r.smu.Lock()
	defer r.smu.Unlock()
	return r.snap
}

// Run handles events until ctx is done. It starts the file watcher on the
// task directory and stops every pending timer on return.
func (r *Runner) Run(ctx context.Context) error {
	if r.cfg.Machine == nil {
		return errors.New("engine: runner: no Machine")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.runCtx = ctx
	var wg sync.WaitGroup
	if !r.cfg.NoWatch && r.cfg.TaskDir != nil {
		w, err := NewWatcher(WatcherConfig{
			Dir:         r.cfg.TaskDir.Dir(),
			QuietPeriod: r.cfg.QuietPeriod,
			Clock:       r.cfg.Clock,
			ReadDone:    r.cfg.TaskDir.ReadDone,
			Emit:        r.Send,
		})
		if err != nil {
			return err
		}
		r.watcher = w
		wg.Go(func() { _ = w.Run(ctx) })
	}
	if err := r.startKnowledge(ctx, &wg); err != nil {
		r.fail("watch_context", "", err)
	}
	defer func() {
		cancel()
		wg.Wait()
		r.bg.Wait()
		for id, t := range r.timers {
			t.t.Stop()
			delete(r.timers, id)
		}
		r.cancelInflight("cancelled: hivemind stopped before the agent layer confirmed it")
		_ = r.saveState() // a failure was reported (StateNotSaved, events.jsonl)
		r.logw.close()
		r.closeBarriers()
	}()
	var beat <-chan time.Time
	if r.cfg.Heartbeat > 0 {
		t := time.NewTicker(r.cfg.Heartbeat / 2)
		defer t.Stop()
		beat = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat:
			r.heartbeat()
			continue
		case <-r.wakeup:
		}
		for ctx.Err() == nil {
			it, ok := r.dequeue()
			if !ok {
				// Idle: persist what effect-free steps left dirty.
				_ = r.saveState() // a failure is reported to the engine
				break
			}
			r.handle(it)
		}
	}
}

// heartbeat writes the state again, stamped now, when its clock runs and
// nothing wrote it for a heartbeat (RunnerConfig.Heartbeat). A state not
// saved yet is left to the save that is due.
func (r *Runner) heartbeat() {
	now := r.cfg.Clock()
	if r.dirty || !r.state.Counting() || now.Sub(r.state.Timestamp) < r.cfg.Heartbeat {
		return
	}
	r.state.Timestamp = now
	r.toSave, r.dirty = r.state, true
	_ = r.saveState() // a failure is reported to the engine
}

// closeBarriers releases the barriers still queued when Run returns, so
// nobody waits on a runner that is gone. Later ones are released by
// enqueue.
func (r *Runner) closeBarriers() {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	r.stopped = true
	for _, it := range r.queue {
		if it.barrier != nil {
			close(it.barrier)
		}
	}
	r.queue = nil
}

func (r *Runner) dequeue() (runnerItem, bool) {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	if len(r.queue) == 0 {
		return runnerItem{}, false
	}
	it := r.queue[0]
	r.queue[0] = runnerItem{}
	r.queue = r.queue[1:]
	return it, true
}

// handle logs one input, steps the machine and carries out the effects.
func (r *Runner) handle(it runnerItem) {
	if it.barrier != nil {
		_ = r.saveState() // a failure is reported to the engine
		r.logw.flush()
		close(it.barrier)
		return
	}
	if it.republish {
		r.publish()
		return
	}
	if it.rec != nil {
		rec := *it.rec
		if rec.Task == "" {
			rec.Task = r.state.TaskID
		}
		r.record(rec)
		r.publish()
		return
	}
	ev := it.ev
	if it.timerID != "" {
		t, ok := r.timers[it.timerID]
		if !ok || t.gen != it.timerGen {
			return // cancelled or replaced after it fired
		}
		delete(r.timers, it.timerID)
		ev = TimerFired{ID: it.timerID, When: When{At: r.cfg.Clock()}}
	}
	ev = flow.Stamp(ev, r.cfg.Clock())
	if res, ok := ev.(Resumed); ok && r.watcher != nil {
		// Files written while no runner ran (triggers, done markers) are
		// taken by the Resumed step itself, before it re-sends unfinished
		// work: an agent whose answer is on disk is not asked again.
		if found := r.watcher.ScanComplete(r.runCtx); len(found) > 0 {
			for i, e := range found {
				if tc, ok := e.(TriggerCompleted); ok {
					found[i] = vetPlanPaths(tc, r.state.Project)
				}
			}
			res.OnDisk = r.commitAll(append(res.OnDisk, found...))
			ev = res
		}
	}
	if tc, ok := ev.(TriggerCompleted); ok {
		ev = vetPlanPaths(tc, r.state.Project)
	}
	if d, ok := ev.(SubtaskDone); ok && r.cfg.Git != nil {
		// Commit first and record what Step sees (a refused commit
		// turns the event into a rejection), so a replay matches.
		ev = r.gitCommit(d)
	}
	if ir, ok := ev.(InjectionResult); ok {
		k := injectionKey{ir.Agent, ir.Seq}
		if r.ended[k] {
			return // its result is recorded already: cancelled when the task ended
		}
		delete(r.inflight, k)
	}
	r.record(flow.EncodeEvent(ev, r.state.TaskID))

	if h, ok := ev.(AgentHealth); ok && (h.Health == vocab.HealthIdle || h.Health == vocab.HealthExited) {
		// Queue the agent's shared knowledge entries before anything the
		// task watcher reports for the same turn.
		r.flushKnowledge(h.Agent)
	}
	if h, ok := ev.(AgentHealth); ok && (h.Health == vocab.HealthIdle || h.Health == vocab.HealthExited) && r.watcher != nil {
		// The agent's turn ended: what it wrote is complete now.
		r.watcher.FlushAgent(h.Agent)
	}

	wasOver := r.state.Phase.Terminal()
	next, effects := r.cfg.Machine.Step(r.state, ev)
	r.state = next
	r.stepped = true
	r.execute(effects, mustSave(ev))
	if !wasOver && next.Phase.Terminal() {
		// The task ended (complete, cancelled, error, needs_human):
		// messages still on their way are moot, and their results are
		// recorded now, with the end, not whenever the agent layer says.
		r.cancelInflight("cancelled: the task reached " + string(next.Phase))
	}
	r.publish()
}

// vetPlanPaths checks, on disk, what the pure plan parser cannot: that no
// file a plan.md names leads outside the project through a symlink inside
// it. Such a plan comes back with a Problem (recorded with the event, so a
// replay sees the same), and the Lead is told.
func vetPlanPaths(tc TriggerCompleted, project string) TriggerCompleted {
	if ref, ok := triggers.Parse(tc.Path); !ok || ref.Kind != triggers.Plan || tc.Problem != "" || project == "" {
		return tc
	}
	plan, probs := flow.ParsePlan(tc.Content, project)
	if len(probs) > 0 {
		return tc // the engine reports these
	}
	var bad []string
	for _, sub := range plan.Subtasks {
		for _, f := range sub.Files {
			_, p, _ := strings.Cut(strings.TrimSpace(f), " ")
			p = strings.TrimSpace(p)
			if err := workspace.CheckInside(project, filepath.FromSlash(p)); err != nil {
				bad = append(bad, fmt.Sprintf("subtask %s: %q leads outside the project through a symbolic link; name a path inside the project", sub.ID, p))
			}
		}
	}
	if len(bad) > 0 {
		tc.Problem = "plan.md: " + strings.Join(bad, "; ")
	}
	return tc
}

// cancelInflight ends every injection still without a result when the
// task ends or the runner stops: each gets a recorded InjectionResult,
// Cancelled, stepped like any input so a replay agrees; a result the
// agent layer reports later for it is dropped (one result each).
func (r *Runner) cancelInflight(detail string) {
	keys := make([]injectionKey, 0, len(r.inflight))
	for k := range r.inflight {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b injectionKey) int {
		if c := strings.Compare(string(a.agent), string(b.agent)); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for _, k := range keys {
		r.handle(runnerItem{ev: InjectionResult{Agent: k.agent, Seq: k.seq, Cancelled: true, Detail: detail, When: When{At: r.cfg.Clock()}}})
		r.ended[k] = true
	}
}

// commitAll is gitCommit for the done markers among evs.
func (r *Runner) commitAll(evs []Event) []Event {
	if r.cfg.Git == nil {
		return evs
	}
	for i, e := range evs {
		if d, ok := e.(SubtaskDone); ok {
			evs[i] = r.gitCommit(d)
		}
	}
	return evs
}

// record appends to events.jsonl and to the snapshot's tail.
func (r *Runner) record(rec vocab.EventRecord) {
	r.logw.add(rec)
	r.smu.Lock()
	r.snap.Events = appendTail(r.snap.Events, rec, SnapshotEvents)
	r.smu.Unlock()
	if r.cfg.OnRecord != nil {
		r.cfg.OnRecord(rec)
	}
}

func (r *Runner) publish() {
	r.smu.Lock()
	r.snap.State = r.state.Clone()
	r.snap.Stepped = r.stepped
	snap := Snapshot{State: r.snap.State, Events: append([]vocab.EventRecord(nil), r.snap.Events...), Knowledge: r.snap.Knowledge, Stepped: r.stepped}
	r.smu.Unlock()
	if r.cfg.OnSnapshot != nil {
		r.cfg.OnSnapshot(snap)
	}
}

func appendTail(tail []vocab.EventRecord, rec vocab.EventRecord, n int) []vocab.EventRecord {
	// Copy on overflow so snapshots handed out earlier never change.
	if len(tail) >= n {
		tail = append([]vocab.EventRecord(nil), tail[len(tail)-n+1:]...)
	}
	return append(tail, rec)
}

func tailRecords(recs []vocab.EventRecord, n int) []vocab.EventRecord {
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	return append([]vocab.EventRecord(nil), recs...)
}
