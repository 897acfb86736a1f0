package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// Faults of remote workers (issue 18, docs/REMOTE.md "Faults"), and the
// host operations kept off the runner's goroutine:
//
//   - a remote agent whose ssh failed (exit 255) is reported to the engine
//     with the host's Check diagnosis as the reason, so the restart notice,
//     the agent_exited detail and, past the restart budget, the
//     needs_human reason say what is wrong with which host;
//   - --resume reaps the previous run's sessions on every host the task
//     used, before any agent starts there;
//   - assignment pushes and commit fetches run in a queue per worker (in
//     order: an assignment is on the host before the line naming it is
//     typed; a commit is here before the done marker naming it is).

// sshFailed is ssh's exit status for a connection failure (and the
// launcher's when it cannot reach the host).
const sshFailed = 255

// diagnoseTimeout bounds the Check run after an ssh failure: a host that
// does not answer at all (a dropped packet filter) takes ssh's
// ConnectTimeout (10 s) per connection.
const diagnoseTimeout = 25 * time.Second

// reapTimeout bounds the reap of one host on --resume.
const reapTimeout = 30 * time.Second

// hostQueue runs each worker's host operations one after another, in the
// order they were queued, off the caller's goroutine.
type hostQueue struct {
	mu   sync.Mutex
	tail map[string]chan struct{} // worker → its last job's end
	wg   sync.WaitGroup
}

// do queues job after the worker's earlier jobs.
func (q *hostQueue) do(agent string, job func()) {
	q.mu.Lock()
	if q.tail == nil {
		q.tail = map[string]chan struct{}{}
	}
	prev, done := q.tail[agent], make(chan struct{})
	q.tail[agent] = done
	q.wg.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.wg.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		job()
	}()
}

// wait waits for every queued job.
func (q *hostQueue) wait() { q.wg.Wait() }

// ---- an ssh failure diagnosed ----

// remoteEvents passes the agent layer's events on to next, a remote
// worker's ssh failure once its host is checked (on a goroutine of its
// own, bounded by diagnoseTimeout: the agent layer and the runner never
// wait on a host).
func (w *wiring) remoteEvents(next func(ptyagent.Event)) func(ptyagent.Event) {
	if w.git == nil || w.git.remote == nil {
		return next
	}
	rw := w.git.remote
	return func(ev ptyagent.Event) {
		if ev.Kind != ptyagent.EventHealth || ev.Health != vocab.HealthExited || ev.ExitCode != sshFailed || !rw.has(string(ev.Agent)) {
			next(ev)
			return
		}
		rw.bg.Add(1)
		go func() {
			defer rw.bg.Done()
			if d := rw.diagnose(string(ev.Agent), ev.Detail); d != ev.Detail {
				// The host does not answer: a restart cannot fix it.
				ev.Detail, ev.Cause = d, strings.TrimPrefix(d, fmt.Sprintf("exit code %d; ", sshFailed))
			}
			next(ev)
		}()
	}
}

// diagnose checks the worker's host after its ssh failed and returns the
// exit's detail: the host's one-line diagnosis when Check fails, else
// detail as it was (the connection dropped, the host answers again).
func (rw *remoteWork) diagnose(agent, detail string) string {
	rh := rw.workers[agent]
	ctx, cancel := context.WithTimeout(rw.ctx, diagnoseTimeout)
	defer cancel()
	start := time.Now()
	_, err := remote.Check(ctx, rh.h)
	if rw.ctx.Err() != nil {
		return detail // the run ended: the check was cut short, not the host
	}
	d := map[string]any{"host": rh.h.Name, "ms": time.Since(start).Milliseconds()}
	if err == nil {
		d["ok"] = true
		rw.log(vocab.RecordRemoteHostChecked, agent, d)
		return detail
	}
	d["error"] = err.Error()
	rw.log(vocab.RecordRemoteHostChecked, agent, d)
	return fmt.Sprintf("exit code %d; %v", sshFailed, err)
}

// unreachable returns the host's one-line diagnosis when ssh cannot
// reach it, else err: a git push or fetch over ssh fails with git's
// words, which do not say which host or what to check.
func (rw *remoteWork) unreachable(ctx context.Context, rh *remoteHost, err error) error {
	_, sshErr := rh.h.Exec(ctx, ":", nil)
	var se *remote.SSHError
	if errors.As(sshErr, &se) {
		return se
	}
	return err
}

// ---- the previous run's sessions reaped on --resume ----

// reapPrevious kills, on each host the task used (this run's and those
// of earlier runs, from its records), what the previous run's remote
// sessions left: their marks are the names of the local process records
// that run left (they outlive a SIGKILL), and the helper's remote-reap
// also ends sessions whose helper is gone. A host that saw the drop has
// nothing left: the reap is idempotent. One record per host.
func (w *wiring) reapPrevious(rw *remoteWork) {
	if !w.resumed {
		return
	}
	marks := recordedMarks(filepath.Join(w.td.Dir(), vocab.ProcsDir))
	helpers := map[string]string{} // host → its helper, newest last
	for _, r := range w.history {
		if r.Type == vocab.RecordRemoteHostReady {
			name, _ := r.Details["host"].(string)
			helper, _ := r.Details["helper"].(string)
			if name != "" && helper != "" {
				helpers[name] = helper
			}
		}
	}
	for _, rh := range rw.hosts {
		helpers[rh.h.Name] = rh.helper
	}
	var wg sync.WaitGroup
	for _, name := range slices.Sorted(maps.Keys(helpers)) {
		if _, ok := w.cfg.Hosts[name]; !ok {
			w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordRemoteReaped, Details: map[string]any{
				"host": name, "error": "not in the config any more: what the task left there is not reaped"}})
			continue
		}
		d := map[string]any{"host": name, "marks": len(marks)}
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordRemoteReaped, Details: d})
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), reapTimeout)
			defer cancel()
			said, err := remote.ReapHost(ctx, RemoteHost(w.cfg, name), helpers[name], marks...)
			if err != nil {
				d["error"] = err.Error()
			} else {
				d["said"] = said
			}
		})
	}
	wg.Wait()
}

// maxReapMarks bounds the marks named to a host's reap (one command line).
const maxReapMarks = 256

// recordedMarks are the session marks of the process records in dir
// (ptyagent names each record <agent>-<mark>.json). A remote session's
// run dir on its host is named by the same mark.
func recordedMarks(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	reaped, _ := filepath.Glob(filepath.Join(dir, "*.json"+ptyagent.ReapedSuffix)) // by the guard of a killed run
	var marks []string
	for _, n := range append(names, reaped...) {
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(n), ptyagent.ReapedSuffix), ".json")
		parts := strings.Split(base, "-")
		if len(parts) < 3 {
			continue
		}
		mark := parts[len(parts)-2] + "-" + parts[len(parts)-1]
		if remote.ValidMark(mark) && len(marks) < maxReapMarks {
			marks = append(marks, mark)
		}
	}
	return marks
}

// ---- assignments pushed off the runner's path ----

// pushAssignment queues the copy of a worker's assignment (the files
// already read, so a later assignment cannot overtake their content) to
// its host. A failure is kept for the injection that follows it.
func (rw *remoteWork) pushAssignment(agent string, push func(context.Context) error) {
	rw.queue.do(agent, func() {
		if rw.ctx.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(rw.ctx, remoteOpTimeout)
		defer cancel()
		start := time.Now()
		err := push(ctx)
		var se *remote.SSHError
		if errors.As(err, &se) {
			// A connection cut during the copy says little ("ssh printed
			// nothing"): say what stops a new one.
			if probe := rw.unreachable(ctx, rw.workers[agent], err); probe != err {
				err = fmt.Errorf("assignment of %s to %s: %w", agent, rw.workers[agent].h.Name, probe)
			}
		}
		rw.mu.Lock()
		rw.pushErr[agent] = err
		rw.mu.Unlock()
		d := map[string]any{"host": rw.workers[agent].h.Name, "ms": time.Since(start).Milliseconds()}
		if err != nil {
			d["error"] = err.Error()
			rw.log(vocab.RecordRemoteAssignmentFailed, agent, d)
		}
	})
}

// inject types a remote worker's line once the assignments queued before
// it are on its host; the outcome reaches the runner as an
// InjectionResult, as a local agent's does.
func (a remoteAgents) inject(id string, seq int, text string) {
	rw := a.rw
	rw.queue.do(id, func() {
		if rw.ctx.Err() != nil {
			return // the run is over: the runner cancels what is in flight
		}
		rw.mu.Lock()
		err := rw.pushErr[id]
		delete(rw.pushErr, id)
		rw.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("assignment not on the host: %w", err)
		} else {
			err = a.Manager.Inject(vocab.AgentID(id), seq, rw.translate(id, text))
		}
		if err != nil {
			rw.send(engine.InjectionResult{Agent: vocab.AgentID(id), Seq: seq, Detail: err.Error(), When: engine.When{At: time.Now()}})
		}
	})
}

// ---- commits fetched before the done marker is delivered ----

// pulled is the outcome of a commit fetched for a done subtask.
type pulled struct {
	sha string
	err error
}

// deliverDone writes a remote worker's done marker into the local task
// dir once its work is committed on the host and fetched here (in the
// worker's queue): when the runner sees the marker, the commit is local
// and Commit only takes its outcome. A marker of work not in progress (a
// resend, a subtask done already) is written as it is.
func (rw *remoteWork) deliverDone(rel string, write func() error) {
	ref, _ := triggers.Parse(rel)
	subtask := ref.Item
	var agent, summary string
	ok := false
	if rw.snapshot != nil {
		var id vocab.AgentID
		id, summary, ok = engine.CommitTarget(rw.snapshot().State, engine.SubtaskDone{Subtask: subtask})
		agent = string(id)
	}
	if !ok || !rw.has(agent) {
		if err := write(); err != nil {
			rw.log(vocab.RecordRemoteSyncRefused, "", map[string]any{"file": rel, "error": err.Error()})
		}
		return
	}
	rw.queue.do(agent, func() {
		sha, err := rw.pullRetrying(agent, subtask, summary)
		if rw.ctx.Err() != nil {
			return // the run is over: the resumed run's stream sends the marker again
		}
		rw.mu.Lock()
		rw.pulled[agent+"/"+subtask] = pulled{sha, err}
		rw.mu.Unlock()
		if err := write(); err != nil {
			rw.log(vocab.RecordRemoteSyncRefused, agent, map[string]any{"file": rel, "error": err.Error()})
		}
	})
}

// pullBackoff is the wait before each new attempt at fetching a done
// subtask's commit from a host that cannot be reached (about a minute in
// all); the marker waits for it, so the engine never sees work done that
// is not here.
var pullBackoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 30 * time.Second}

// pullRetrying is pull, again after each pullBackoff while the host
// cannot be reached (its one-line diagnosis then is the error).
func (rw *remoteWork) pullRetrying(agent, subtask, summary string) (string, error) {
	rh := rw.workers[agent]
	for attempt := 0; ; attempt++ {
		sha, err := rw.pull(agent, subtask, summary)
		if err == nil {
			return sha, nil
		}
		ctx, cancel := context.WithTimeout(rw.ctx, remoteOpTimeout)
		err = rw.unreachable(ctx, rh, err)
		cancel()
		var se *remote.SSHError
		if !errors.As(err, &se) || attempt == len(pullBackoff) {
			return "", err
		}
		rw.log(vocab.RecordRemoteFetchRetry, agent, map[string]any{"host": rh.h.Name, "subtask": subtask, "attempt": attempt + 1,
			"after": pullBackoff[attempt].String(), "error": err.Error()})
		select {
		case <-rw.ctx.Done():
			return "", rw.ctx.Err()
		case <-time.After(pullBackoff[attempt]):
		}
	}
}

// takePulled returns (once) the commit fetched for the worker's subtask
// before its marker was delivered; none ("", nil) when the marker came
// without one (written by an earlier run, whose fetch it followed).
func (rw *remoteWork) takePulled(agent, subtask string) (string, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	p := rw.pulled[agent+"/"+subtask]
	delete(rw.pulled, agent+"/"+subtask)
	return p.sha, p.err
}

// remoteMarker reports whether a synced file is a done marker.
func remoteMarker(rel string) bool {
	ref, ok := triggers.Parse(rel)
	return ok && ref.Kind == triggers.Done
}

// writeSynced writes a synced file unless it holds that content already
// (sent again after a reconnect or a resume: rewriting it would make it
// look new to the trigger watcher).
func writeSynced(p string, data []byte) error {
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return workspace.WriteFileAtomic(p, data, 0o644)
}
