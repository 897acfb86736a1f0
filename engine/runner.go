package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

// Stepper is the pure state machine the Runner drives (Machine).
type Stepper interface {
	Step(State, Event) (State, []Effect)
}

// StateSaver persists state.json (workspace.StateStore).
type StateSaver interface {
	Save(State) error
}

// EventAppender appends to events.jsonl (workspace.EventLog).
type EventAppender interface {
	Append(workspace.EventRecord) error
}

// TaskFiles is what the Runner needs from the task directory
// (workspace.TaskDir).
type TaskFiles interface {
	// Dir is the task directory's absolute path.
	Dir() string
	// WriteAssignment writes assignments/<agent>.json + .md.
	WriteAssignment(workspace.Assignment) error
	// Archive moves a consumed trigger (paths relative to the task dir).
	Archive(from, to string) error
	// ReadDone reads and validates outputs/<subtask>.done.
	ReadDone(subtask string) (workspace.DoneMarker, error)
}

// SnapshotEvents is how many recent event records a Snapshot carries.
const SnapshotEvents = 50

// Snapshot is what the UI renders: a copy of the state and the newest
// event records (oldest first).
type Snapshot struct {
	State  State
	Events []workspace.EventRecord
	// Context is the shared context, newest entry first (nil without a
	// RunnerConfig.Context).
	Context []workspace.ContextItem
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
	OnRecord func(workspace.EventRecord)

	// State is the state to start from: zero for a new task (send
	// TaskSubmitted), or the state loaded from state.json (send Resumed).
	State State
	// History is the tail of events.jsonl on resume, shown in snapshots.
	History []workspace.EventRecord
	// QuietPeriod configures the watcher (default 300 ms).
	QuietPeriod time.Duration
	// NoWatch disables the file watcher (tests that feed events directly).
	NoWatch bool
	// Context, when set, is the shared context: its inbox is watched and
	// MergeContext/ArchiveContext are carried out on it (contextwatch.go).
	Context ContextFiles
	// Git, when set (git projects), commits a worker's work on every done
	// subtask and carries out MergeCheckpoint (gitrun.go).
	Git GitWork
}

// Runner carries out the effects of Step. One goroutine (Run) owns the
// state: events from any goroutine are queued by Send and handled one at a
// time, so Step sees a total order and state.json has a single writer.
type Runner struct {
	cfg RunnerConfig

	qmu     sync.Mutex
	queue   []runnerItem
	stopped bool // Run returned: nothing more is handled
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
	cw       *contextWatcher // shared-context inbox (contextwatch.go)
	runCtx   context.Context // Run's context, for merges
	bg       sync.WaitGroup  // merge goroutines

	smu  sync.Mutex
	snap Snapshot
}

// runnerItem is one queued input: an event, or a timer firing (checked
// against the timer's generation so a replaced timer never fires).
type runnerItem struct {
	ev       Event
	rec      *workspace.EventRecord // a record to log, not an event
	barrier  chan struct{}          // closed when reached
	timerID  string
	timerGen uint64
	// republish: only publish the snapshot again.
	republish bool
}

type injectionKey struct {
	agent string
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
func (r *Runner) Log(typ, agent string, details map[string]any) {
	r.enqueue(runnerItem{rec: &workspace.EventRecord{Time: r.cfg.Clock(), Type: typ, Agent: agent, Details: details}})
}

// Barrier returns a channel closed once everything queued before the call
// has been handled (or Run has returned). Used to drain at shutdown.
func (r *Runner) Barrier() <-chan struct{} {
	ch := make(chan struct{})
	r.enqueue(runnerItem{barrier: ch})
	return ch
}

// Pause asks the engine to pause (the TUI's Engine interface).
func (r *Runner) Pause() { r.key(KeyPause) }

// Resume asks the engine to resume after a pause.
func (r *Runner) Resume() { r.key(KeyResume) }

// Cancel asks the engine to stop every agent and end in cancelled.
func (r *Runner) Cancel() { r.key(KeyCancel) }

// Retry asks the engine to retry after an error or needs_human.
func (r *Runner) Retry() { r.key(KeyRetry) }

// Abandon asks the engine to give the task up.
func (r *Runner) Abandon() { r.key(KeyAbandon) }

func (r *Runner) key(action string) {
	r.Send(KeyPressed{Action: action, At: r.cfg.Clock()})
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
	if err := r.startContext(ctx, &wg); err != nil {
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
	for {
		select {
		case <-ctx.Done():
			return nil
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
		ev = TimerFired{ID: it.timerID, At: r.cfg.Clock()}
	}
	ev = stamp(ev, r.cfg.Clock())
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
	r.record(EncodeEvent(ev, r.state.TaskID))

	if h, ok := ev.(AgentHealth); ok && (h.Health == workspace.HealthIdle || h.Health == workspace.HealthExited) {
		// Queue the agent's shared-context entries before anything the
		// task watcher reports for the same turn.
		r.flushContext(h.Agent)
	}
	if h, ok := ev.(AgentHealth); ok && (h.Health == workspace.HealthIdle || h.Health == workspace.HealthExited) && r.watcher != nil {
		// The agent's turn ended: what it wrote is complete now.
		r.watcher.FlushRole(r.roleOf(h.Agent))
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
	if tc.Path != trigPlan || tc.Problem != "" || project == "" {
		return tc
	}
	plan, probs := ParsePlan(tc.Content, project)
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
		if c := strings.Compare(a.agent, b.agent); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for _, k := range keys {
		r.handle(runnerItem{ev: InjectionResult{Agent: k.agent, Seq: k.seq, Cancelled: true, Detail: detail, At: r.cfg.Clock()}})
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

// mustSave reports whether the step of ev must be on disk before the
// runner does anything else, even without an outside effect: it consumed
// something that must never be handled twice or be lost (a trigger file,
// a done marker, a shared-context entry, a merge result, the user's key or
// task). Health updates, injection results and timers are derived again
// after a restart, so their steps may be saved lazily.
func mustSave(ev Event) bool {
	switch ev.(type) {
	case AgentHealth, InjectionResult, TimerFired:
		return false
	case TaskSubmitted, ProjectSelected, Resumed, TriggerCompleted, SubtaskDone,
		KeyPressed, StateNotSaved, ContextSubmitted, CheckpointMerged:
		return true
	}
	return true
}

// execute carries out one step's effects. The order that matters is kept:
// the state is saved before anything outside the runner happens
// (write-ahead: a crash then repeats work instead of losing a trigger),
// and a step that consumed a trigger or a done marker (persist) is saved
// before the runner does anything else, so a kill right after it never
// makes it handle them again; assignments are written before the Inject
// that names them, and agent calls keep Step's order. Around that the
// runner is free to save time on the trigger → inject path:
//   - any other step with no outside effect (a health update, a timer)
//     only marks the state dirty; it is saved with the next step that
//     acts, or when the queue runs empty, so a burst of events costs one
//     fsync'd write;
//   - event records go to a background writer (still fsync'd, in order);
//   - archives and assignment files, independent of each other, are
//     written concurrently (one goroutine per agent or file).
func (r *Runner) execute(effects []Effect, persist bool) {
	var records, files, rest []Effect
	external := false
	for _, e := range effects {
		switch e := e.(type) {
		case WriteState:
			r.toSave, r.dirty = e.State, true
		case AppendEvent:
			records = append(records, e)
		case ArchiveTrigger, WriteAssignment:
			files = append(files, e)
			external = true
		case Inject, SpawnAgent, RestartAgent, StopAgent, MergeCheckpoint:
			rest = append(rest, e)
			external = true
		case NotifyUser, ScheduleTimer, CancelTimer, MergeContext, ArchiveContext:
			rest = append(rest, e)
		}
	}
	if external {
		// The log's fsyncs would queue on the same journal as ours: hold
		// the writer while the trigger → inject path runs.
		r.logw.hold(true)
		defer r.logw.hold(false)
	}
	if external || persist {
		if err := r.saveState(); err != nil && external {
			// Write-ahead: nothing is assigned, typed, archived or started
			// that state.json does not record. Archives are kept for the
			// next successful save (the state already counts the trigger
			// consumed); the rest is re-sent by the retry.
			for _, e := range records {
				r.apply(e)
			}
			for _, e := range files {
				if a, ok := e.(ArchiveTrigger); ok {
					r.heldArchives = append(r.heldArchives, a)
				}
			}
			for _, e := range rest {
				switch e.(type) {
				case StopAgent, ScheduleTimer, CancelTimer, NotifyUser:
					r.apply(e)
				default: // acts outside: re-sent by the retry
				}
			}
			return
		}
	}
	for _, e := range records {
		r.apply(e)
	}
	failed := r.writeFiles(files)
	for _, e := range rest {
		if in, ok := e.(Inject); ok && failed[in.Agent] != nil {
			// Never type a message naming an assignment that is not there.
			r.Send(InjectionResult{Agent: in.Agent, Seq: in.Seq,
				Detail: "assignment not written: " + failed[in.Agent].Error(), At: r.cfg.Clock()})
			continue
		}
		r.apply(e)
	}
}

// saveState writes the pending state, if any. A failure is reported to
// the engine (StateNotSaved), which stops new work until a retry; after
// the next successful save, archives held back meanwhile are done.
func (r *Runner) saveState() error {
	if !r.dirty {
		return nil
	}
	r.dirty = false
	if r.cfg.Store == nil {
		return nil
	}
	if err := r.cfg.Store.Save(r.toSave); err != nil {
		r.fail("write_state", "", err)
		r.Send(StateNotSaved{Error: err.Error(), At: r.cfg.Clock()})
		return err
	}
	if held := r.heldArchives; len(held) > 0 {
		r.heldArchives = nil
		files := make([]Effect, len(held))
		for i, a := range held {
			files[i] = a
		}
		r.writeFiles(files)
	}
	return nil
}

// writeFiles archives triggers and writes assignments, concurrently across
// files and agents but in order for each agent (assignment seqs must
// grow). It returns the agents whose assignment could not be written.
func (r *Runner) writeFiles(files []Effect) map[string]error {
	if len(files) == 0 || r.cfg.TaskDir == nil {
		return nil
	}
	groups := map[string][]Effect{}
	var order []string
	for _, e := range files {
		key := ""
		switch e := e.(type) {
		case WriteAssignment:
			key = "a:" + e.Assignment.Agent
		case ArchiveTrigger:
			key = "t:" + e.From
		default: // execute passes only these two
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], e)
	}
	type result struct {
		op, agent string
		err       error
	}
	results := make([][]result, len(order))
	run := func(i int) {
		for _, e := range groups[order[i]] {
			switch e := e.(type) {
			case WriteAssignment:
				if err := r.cfg.TaskDir.WriteAssignment(e.Assignment); err != nil {
					results[i] = append(results[i], result{"write_assignment", e.Assignment.Agent, err})
				}
			case ArchiveTrigger:
				if err := r.cfg.TaskDir.Archive(e.From, e.To); err != nil {
					results[i] = append(results[i], result{"archive", "", err})
				}
			default: // execute passes only these two
			}
		}
	}
	if len(order) == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for i := range order {
			wg.Go(func() { run(i) })
		}
		wg.Wait()
	}
	var failed map[string]error
	for _, rs := range results {
		for _, res := range rs {
			r.fail(res.op, res.agent, res.err)
			if res.op == "write_assignment" {
				if failed == nil {
					failed = map[string]error{}
				}
				failed[res.agent] = res.err
			}
		}
	}
	return failed
}

// apply carries out one effect that execute does not handle itself
// (WriteState) or batch (writeFiles). Failures are recorded and, where the
// engine must know, fed back as events; they never stop the runner.
func (r *Runner) apply(e Effect) {
	switch e := e.(type) {
	case AppendEvent:
		r.record(workspace.EventRecord{
			Time: r.cfg.Clock(), Type: e.Type, Task: r.state.TaskID, Agent: e.Agent, Details: e.Details,
		})
	case Inject:
		if err := r.cfg.Agents.Inject(e.Agent, e.Seq, e.Text); err != nil {
			r.fail("inject", e.Agent, err)
			r.Send(InjectionResult{Agent: e.Agent, Seq: e.Seq, Detail: err.Error(), At: r.cfg.Clock()})
			return
		}
		r.inflight[injectionKey{e.Agent, e.Seq}] = true
	case SpawnAgent:
		if err := r.cfg.Agents.Start(e.Agent, e.Role, e.Resume); err != nil {
			r.spawnFailed(e.Agent, err)
		}
	case RestartAgent:
		if err := r.cfg.Agents.Stop(e.Agent); err != nil {
			r.fail("stop_agent", e.Agent, err)
		}
		if err := r.cfg.Agents.Start(e.Agent, e.Role, true); err != nil {
			r.spawnFailed(e.Agent, err)
		}
	case StopAgent:
		if err := r.cfg.Agents.Stop(e.Agent); err != nil {
			r.fail("stop_agent", e.Agent, err)
		}
	case NotifyUser:
		if r.cfg.OnNotify != nil {
			r.cfg.OnNotify(e.Level, e.Message)
		}
	case ScheduleTimer:
		r.schedule(e.ID, e.After)
	case CancelTimer:
		if t, ok := r.timers[e.ID]; ok {
			t.t.Stop()
			delete(r.timers, e.ID)
		}
	case MergeCheckpoint:
		r.startMerge(e)
	case MergeContext, ArchiveContext:
		r.applyContext(e)
	default: // WriteState, WriteAssignment, ArchiveTrigger: see execute
		r.fail("effect", "", fmt.Errorf("effect %T is not applied one by one", e))
	}
}

// schedule arms (or re-arms) a timer. A timer that fires after it was
// replaced is dropped by its generation check in handle.
func (r *Runner) schedule(id string, after time.Duration) {
	if t, ok := r.timers[id]; ok {
		t.t.Stop()
	}
	r.gen++
	gen := r.gen
	r.timers[id] = runnerTimer{
		gen: gen,
		t:   time.AfterFunc(max(after, 0), func() { r.enqueue(runnerItem{timerID: id, timerGen: gen}) }),
	}
}

// spawnFailed reports a start failure to the engine as an exit, so its
// crash/backoff rules apply.
func (r *Runner) spawnFailed(agent string, err error) {
	r.fail("start_agent", agent, err)
	r.Send(AgentHealth{Agent: agent, Health: workspace.HealthExited, ExitCode: -1, Detail: err.Error(), At: r.cfg.Clock()})
}

// fail records a failed effect in events.jsonl and tells the user.
func (r *Runner) fail(op, agent string, err error) {
	r.record(workspace.EventRecord{
		Time: r.cfg.Clock(), Type: "runner_error", Task: r.state.TaskID, Agent: agent,
		Details: map[string]any{"op": op, "error": err.Error()},
	})
	if r.cfg.OnNotify != nil {
		r.cfg.OnNotify("error", fmt.Sprintf("%s %s: %v", op, agent, err))
	}
}

// record appends to events.jsonl and to the snapshot's tail.
func (r *Runner) record(rec workspace.EventRecord) {
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
	snap := Snapshot{State: r.snap.State, Events: append([]workspace.EventRecord(nil), r.snap.Events...), Context: r.snap.Context, Stepped: r.stepped}
	r.smu.Unlock()
	if r.cfg.OnSnapshot != nil {
		r.cfg.OnSnapshot(snap)
	}
}

// roleOf returns an agent's role from the state, or from its id.
func (r *Runner) roleOf(agent string) string {
	if a, ok := r.state.Agents[agent]; ok && a.Role != "" {
		return a.Role
	}
	if strings.HasPrefix(agent, "worker") {
		return workspace.RoleWorker
	}
	return agent
}

func appendTail(tail []workspace.EventRecord, rec workspace.EventRecord, n int) []workspace.EventRecord {
	// Copy on overflow so snapshots handed out earlier never change.
	if len(tail) >= n {
		tail = append([]workspace.EventRecord(nil), tail[len(tail)-n+1:]...)
	}
	return append(tail, rec)
}

func tailRecords(recs []workspace.EventRecord, n int) []workspace.EventRecord {
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	return append([]workspace.EventRecord(nil), recs...)
}

// The workspace types are what the runner is built for.
var (
	_ TaskFiles     = (*workspace.TaskDir)(nil)
	_ StateSaver    = (*workspace.StateStore)(nil)
	_ EventAppender = (*workspace.EventLog)(nil)
)

// runnerLog appends records to events.jsonl in order on its own goroutine,
// so the fsync per record stays off the runner's path. flush waits until
// everything added so far is written.
type runnerLog struct {
	log   EventAppender
	onErr func(error)

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []workspace.EventRecord
	added   uint64
	written uint64
	started bool
	closed  bool
	held    bool
	done    chan struct{}
}

// hold pauses (true) or resumes (false) writing; flush and close still
// wait for everything, so a hold never loses or reorders a record.
func (l *runnerLog) hold(on bool) {
	l.mu.Lock()
	l.held = on
	l.mu.Unlock()
	if !on {
		l.cond.Broadcast()
	}
}

func newRunnerLog(log EventAppender, onErr func(error)) *runnerLog {
	l := &runnerLog{log: log, onErr: onErr, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// add queues a record, starting the writer on first use.
func (l *runnerLog) add(rec workspace.EventRecord) {
	if l.log == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		// After Run: write directly, nobody else is writing.
		if err := l.log.Append(rec); err != nil {
			l.onErr(err)
		}
		return
	}
	l.queue = append(l.queue, rec)
	l.added++
	if !l.started {
		l.started = true
		go l.run()
	}
	l.cond.Broadcast()
}

func (l *runnerLog) run() {
	defer close(l.done)
	l.mu.Lock()
	for {
		for (len(l.queue) == 0 || l.held) && !l.closed {
			l.cond.Wait()
		}
		if len(l.queue) == 0 && l.closed {
			l.mu.Unlock()
			return
		}
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		for _, rec := range batch {
			if err := l.log.Append(rec); err != nil {
				l.onErr(err)
			}
		}
		l.mu.Lock()
		l.written += uint64(len(batch))
		l.cond.Broadcast()
	}
}

// flush waits until every record added before the call is written.
func (l *runnerLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	target := l.added
	for l.written < target {
		l.cond.Wait()
	}
}

// close writes what is queued and stops the writer.
func (l *runnerLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	started := l.started
	l.cond.Broadcast()
	l.mu.Unlock()
	if started {
		<-l.done
	}
}
