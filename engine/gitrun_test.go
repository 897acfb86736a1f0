package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// rtGit is a GitWork that records calls; Merge blocks until release is
// closed (or its context ends) so tests see it run off the runner
// goroutine.
type rtGit struct {
	mu        sync.Mutex
	commits   []string
	commitErr error
	merges    []MergeCheckpoint
	release   chan struct{}
	ctxErr    chan error
}

func (g *rtGit) Commit(agent, subtask, summary string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.commits = append(g.commits, fmt.Sprintf("%s %s %s", agent, subtask, summary))
	if g.commitErr != nil {
		return "", g.commitErr
	}
	return "abc123", nil
}

func (g *rtGit) Merge(ctx context.Context, m MergeCheckpoint) CheckpointMerged {
	g.mu.Lock()
	g.merges = append(g.merges, m)
	g.mu.Unlock()
	select {
	case <-g.release:
		return CheckpointMerged{Merged: true, DiffFile: "reviews/d.patch"}
	case <-ctx.Done():
		g.ctxErr <- ctx.Err()
		return CheckpointMerged{Error: ctx.Err().Error()}
	}
}

func (g *rtGit) Commits() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.commits...)
}

// gitState is a state executing checkpoint 1 with st_1 on worker_1 and a
// lead fix and a worker merge fix in progress.
func gitState() State {
	return State{TaskID: "t1", Phase: vocab.PhaseExecuting, CurrentCheckpoint: 1,
		Plan: &vocab.Plan{Subtasks: []vocab.Subtask{{ID: "st_1", Description: "write a\nmore", Checkpoint: 1}}},
		Subtasks: map[string]vocab.SubtaskState{
			"st_1": {Status: vocab.SubtaskInProgress, Worker: "worker_1"},
			"st_0": {Status: vocab.SubtaskDone, Worker: "worker_1"},
		},
		Fixes: map[string]vocab.SubtaskState{
			"fix-cp1-r1-lead":       {Status: vocab.SubtaskInProgress, Worker: "lead"},
			"merge-cp1-a1-worker_2": {Status: vocab.SubtaskInProgress, Worker: "worker_2"},
		},
		Agents: map[vocab.AgentID]vocab.AgentState{
			"lead":     {Role: vocab.RoleLead},
			"worker_1": {Role: vocab.RoleWorker},
			"worker_2": {Role: vocab.RoleWorker},
		}}
}

// A done subtask is committed before Step sees it, with the plan's
// description; work already done, or not a worker's, is not committed.
func TestRunnerCommitsBeforeStep(t *testing.T) {
	g := &rtGit{}
	h := rtStart(t, nil, func(c *RunnerConfig) { c.Git, c.State = g, gitState() })
	h.r.Send(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if ev := h.next().(SubtaskDone); !ev.OK {
		t.Fatalf("event changed: %+v", ev)
	}
	if got, want := g.Commits(), []string{"worker_1 st_1 write a"}; !slices.Equal(got, want) {
		t.Fatalf("commits %q, want %q", got, want)
	}
	for _, ev := range []SubtaskDone{
		{Subtask: "st_0", Agent: "worker_1", OK: true},            // seen again after a restart
		{Subtask: "fix-cp1-r1-lead", Agent: "lead", OK: true},     // the lead has no worktree
		{Subtask: "st_1", Agent: "worker_1", Problem: "bad json"}, // not valid: nothing to commit
		{Subtask: "nope", Agent: "worker_1", OK: true},            // unknown
	} {
		h.r.Send(ev)
		h.next()
	}
	h.r.Send(SubtaskDone{Subtask: "merge-cp1-a1-worker_2", Agent: "worker_2", OK: true})
	h.next()
	want := []string{"worker_1 st_1 write a", "worker_2 merge-cp1-a1-worker_2 resolve the merge conflicts of checkpoint 1"}
	if got := g.Commits(); !slices.Equal(got, want) {
		t.Fatalf("commits %q, want %q", got, want)
	}
	recs := waitRecords(t, h, "subtask_committed", 2)
	if recs[0].Agent != "worker_1" || recs[0].Details["sha"] != "abc123" {
		t.Errorf("record %+v", recs[0])
	}
}

// Conflict markers left in a fix turn the event into a rejection before
// Step (and the log) see it.
func TestRunnerCommitRefusedBecomesRejection(t *testing.T) {
	g := &rtGit{commitErr: fmt.Errorf("%w: b.go", ErrUnresolved)}
	h := rtStart(t, nil, func(c *RunnerConfig) { c.Git, c.State = g, gitState() })
	h.r.Send(SubtaskDone{Subtask: "merge-cp1-a1-worker_2", Agent: "worker_2", OK: true})
	ev := h.next().(SubtaskDone)
	if ev.OK || ev.Problem == "" {
		t.Fatalf("event %+v, want a rejection", ev)
	}
	waitRecords(t, h, "commit_refused", 1)
	for _, r := range waitRecords(t, h, vocab.InputPrefix+"subtask_done", 1) {
		if r.Details["ok"] != false {
			t.Errorf("logged input %+v, want ok=false", r.Details)
		}
	}
	// Any other failure (a full disk) is a rejection too: work that is
	// not committed is not done; the worker is told to mark it again.
	g.commitErr = errors.New("disk full")
	h.r.Send(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if ev := h.next().(SubtaskDone); ev.OK || !strings.Contains(ev.Problem, "disk full") {
		t.Fatalf("event %+v, want a rejection naming the cause", ev)
	}
	waitRecords(t, h, "git_commit_failed", 1)
}

// MergeCheckpoint runs off the runner goroutine and comes back as an event
// with the request's identity; ending the run cancels it.
func TestRunnerMergeCheckpoint(t *testing.T) {
	g := &rtGit{release: make(chan struct{}), ctxErr: make(chan error, 1)}
	m := MergeCheckpoint{Checkpoint: 1, Round: 2, Attempt: 3, Workers: []vocab.AgentID{"worker_1"}}
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if k, ok := ev.(KeyPressed); ok && k.Action == flow.KeyRetry {
			return st, []Effect{m}
		}
		return st, nil
	}, func(c *RunnerConfig) { c.Git = g })
	h.r.Retry()
	h.next()
	// The runner is free while the merge runs.
	h.r.Pause()
	if k := h.next().(KeyPressed); k.Action != flow.KeyPause {
		t.Fatalf("got %+v", k)
	}
	close(g.release)
	ev, ok := h.next().(CheckpointMerged)
	if !ok || !ev.Merged || ev.Checkpoint != 1 || ev.Round != 2 || ev.Attempt != 3 || ev.At.IsZero() {
		t.Fatalf("event %+v", ev)
	}
	waitRecords(t, h, vocab.InputPrefix+"checkpoint_merged", 1)
}

func TestRunnerMergeCancelledWithRun(t *testing.T) {
	g := &rtGit{release: make(chan struct{}), ctxErr: make(chan error, 1)}
	r := NewRunner(RunnerConfig{
		Machine: rtStepper{seen: make(chan Event, 10), fn: func(st State, ev Event) (State, []Effect) {
			return st, []Effect{MergeCheckpoint{Checkpoint: 1, Round: 1, Attempt: 1}}
		}},
		Agents: &rtAgents{}, Git: g, NoWatch: true, State: State{TaskID: "t1"},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	r.Retry()
	deadline := time.After(5 * time.Second)
	for {
		g.mu.Lock()
		n := len(g.merges)
		g.mu.Unlock()
		if n == 1 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("merge not started")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-g.ctxErr:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("merge context: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("merge not cancelled with the run")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Without git a MergeCheckpoint fails at once instead of hanging the run.
func TestRunnerMergeWithoutGit(t *testing.T) {
	h := rtStart(t, func(st State, ev Event) (State, []Effect) {
		if _, ok := ev.(KeyPressed); ok {
			return st, []Effect{MergeCheckpoint{Checkpoint: 4, Round: 1, Attempt: 2}}
		}
		return st, nil
	}, nil)
	h.r.Retry()
	h.next()
	ev, ok := h.next().(CheckpointMerged)
	if !ok || ev.Error == "" || ev.Checkpoint != 4 || ev.Attempt != 2 {
		t.Fatalf("event %+v", ev)
	}
}

// Republish publishes the snapshot again without stepping.
func TestRunnerRepublish(t *testing.T) {
	h := rtStart(t, nil, nil)
	h.r.Republish()
	rtWaitSnap(t, h.snaps, func(s Snapshot) bool { return s.State.TaskID == "t1" })
	select {
	case ev := <-h.seen:
		t.Fatalf("Step called: %+v", ev)
	default:
	}
}

// waitRecords waits until n records of type typ were logged and returns them.
func waitRecords(t *testing.T, h *rtHarness, typ vocab.RecordType, n int) []vocab.EventRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		<-h.r.Barrier()
		var out []vocab.EventRecord
		for _, r := range h.log.Records() {
			if r.Type == typ {
				out = append(out, r)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s records, want %d", len(out), typ, n)
		}
	}
}

// CommitTarget, the pure part of a commit (also used by the remote
// workers, whose commit is made on the host before their marker is
// delivered): the worker and summary of work in progress, none for work
// done, unknown or not a worker's.
func TestCommitTarget(t *testing.T) {
	s := gitState()
	s.Fixes["fix-cp1-r1-worker_1"] = vocab.SubtaskState{Status: vocab.SubtaskInProgress, Worker: "worker_1"}
	s.Fixes["fix-cp1-r0-worker_1"] = vocab.SubtaskState{Status: vocab.SubtaskDone, Worker: "worker_1"}
	s.Subtasks["st_2"] = vocab.SubtaskState{Status: vocab.SubtaskInProgress}
	for _, c := range []struct {
		ev            SubtaskDone
		agent, reason string
		ok            bool
	}{
		{SubtaskDone{Subtask: "st_1"}, "worker_1", "write a", true},
		{SubtaskDone{Subtask: "st_0"}, "", "", false},
		{SubtaskDone{Subtask: "st_9"}, "", "", false},
		{SubtaskDone{Subtask: "st_2", Agent: "worker_2"}, "worker_2", "done", true},
		{SubtaskDone{Subtask: "st_2"}, "", "", false},
		{SubtaskDone{Subtask: "fix-cp1-r1-worker_1"}, "worker_1", "fix the checkpoint 1 review issues", true},
		{SubtaskDone{Subtask: "fix-cp1-r0-worker_1"}, "", "", false},
		{SubtaskDone{Subtask: "merge-cp1-a1-worker_2"}, "worker_2", "resolve the merge conflicts of checkpoint 1", true},
		{SubtaskDone{Subtask: "fix-cp1-r1-lead"}, "", "", false},
	} {
		agent, summary, ok := CommitTarget(s, c.ev)
		if string(agent) != c.agent || summary != c.reason || ok != c.ok {
			t.Errorf("CommitTarget(%+v) = %q, %q, %v; want %q, %q, %v", c.ev, agent, summary, ok, c.agent, c.reason, c.ok)
		}
	}
}
