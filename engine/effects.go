package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// mustSave reports whether the step of ev must be on disk before the
// runner does anything else, even without an outside effect: it consumed
// something that must never be handled twice or be lost (a trigger file,
// a done marker, a shared knowledge entry, a merge result, the user's key or
// task). Health updates, injection results, timers and usage are derived again
// after a restart, so their steps may be saved lazily.
func mustSave(ev Event) bool {
	switch ev.(type) {
	case AgentHealth, InjectionResult, TimerFired, AgentUsage:
		return false
	case TaskSubmitted, ProjectSelected, Resumed, TriggerCompleted, SubtaskDone,
		KeyPressed, StateNotSaved, KnowledgeSubmitted, CheckpointMerged:
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
		case Inject, SpawnAgent, RestartAgent, StopAgent, MergeCheckpoint, HoldDelivery, Withdraw:
			rest = append(rest, e)
			external = true
		case NotifyUser, ScheduleTimer, CancelTimer, MergeKnowledge, ArchiveKnowledge:
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
				case StopAgent, ScheduleTimer, CancelTimer, NotifyUser, HoldDelivery, Withdraw:
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
				Detail: "assignment not written: " + failed[in.Agent].Error(), When: When{At: r.cfg.Clock()}})
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
		r.Send(StateNotSaved{Error: err.Error(), When: When{At: r.cfg.Clock()}})
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
func (r *Runner) writeFiles(files []Effect) map[vocab.AgentID]error {
	if len(files) == 0 || r.cfg.TaskDir == nil {
		return nil
	}
	groups := map[string][]Effect{}
	var order []string
	for _, e := range files {
		key := ""
		switch e := e.(type) {
		case WriteAssignment:
			key = "a:" + string(e.Assignment.Agent)
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
		op    string
		agent vocab.AgentID
		err   error
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
	var failed map[vocab.AgentID]error
	for _, rs := range results {
		for _, res := range rs {
			r.fail(res.op, res.agent, res.err)
			if res.op == "write_assignment" {
				if failed == nil {
					failed = map[vocab.AgentID]error{}
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
		r.record(vocab.EventRecord{
			Time: r.cfg.Clock(), Type: e.Type, Task: r.state.TaskID, Agent: e.Agent, Details: e.Details,
		})
	case Inject:
		if err := r.cfg.Agents.Inject(e.Agent, e.Seq, e.Text); err != nil {
			r.fail("inject", e.Agent, err)
			r.Send(InjectionResult{Agent: e.Agent, Seq: e.Seq, Detail: err.Error(), When: When{At: r.cfg.Clock()}})
			return
		}
		r.inflight[injectionKey{e.Agent, e.Seq}] = true
	case HoldDelivery:
		r.cfg.Agents.HoldDelivery(e.Agent, e.Hold)
	case Withdraw:
		for _, seq := range r.cfg.Agents.Withdraw(e.Agent, e.Before) {
			// Taken back before it was typed: its one result, now.
			delete(r.inflight, injectionKey{e.Agent, seq})
			r.Send(InjectionResult{Agent: e.Agent, Seq: seq, Cancelled: true,
				Detail: "withdrawn before it was typed: " + e.Why, When: When{At: r.cfg.Clock()}})
		}
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
	case MergeKnowledge, ArchiveKnowledge:
		r.applyKnowledge(e)
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
// crash/backoff rules apply; a missing or not executable program is a
// cause a restart cannot fix, said so.
func (r *Runner) spawnFailed(agent vocab.AgentID, err error) {
	r.fail("start_agent", agent, err)
	r.Send(AgentHealth{Agent: agent, Health: vocab.HealthExited, ExitCode: -1, Detail: err.Error(), Cause: startCause(err),
		Stopped: r.closing.Load(), When: When{At: r.cfg.Clock()}})
}

// startCause names a start failure no restart can fix ("" for others).
func startCause(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return "its program was not found (" + err.Error() + "); fix: install it, put it on PATH, or name the right command in --agent or [profiles]"
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOEXEC):
		return "its program cannot be executed (" + err.Error() + "); fix: make it executable (chmod +x) with a valid #! line, or name the right file"
	}
	return ""
}

// fail records a failed effect in events.jsonl and tells the user.
func (r *Runner) fail(op string, agent vocab.AgentID, err error) {
	r.record(vocab.EventRecord{
		Time: r.cfg.Clock(), Type: vocab.RecordRunnerError, Task: r.state.TaskID, Agent: agent,
		Details: map[string]any{"op": op, "error": err.Error()},
	})
	if r.cfg.OnNotify != nil {
		r.cfg.OnNotify("error", fmt.Sprintf("%s %s: %v", op, agent, err))
	}
}
