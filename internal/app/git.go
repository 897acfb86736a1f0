package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// This file wires internal/gitwork into a run (issue 9): in a git project
// the task gets a branch hivemind/<task_id>, every worker a worktree and
// branch of its own (its agent runs there), each done subtask a commit,
// each checkpoint a merge of the workers' branches (engine.GitWork), and
// the end of the task a summary of where the result is. Not a git
// repository: the workers share the project directory, as without it.

// gitWire is one run's git integration: engine.GitWork for the runner,
// worktrees for the agent factory, changed-file counts for the UI.
type gitWire struct {
	repo    *gitwork.Repo
	td      *workspace.TaskDir
	project string
	root    string
	check   string
	// log records an event in events.jsonl (through the runner).
	log func(typ vocab.RecordType, agent string, details map[string]any)
	// remote are the workers placed on other hosts (remotework.go).
	remote *remoteWork

	mu      sync.Mutex
	changed map[string]int // worker → files changed and not merged
	notify  func()         // counts changed: publish them

	kick     chan struct{}
	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}
}

// changedPoll is how often the workers' changed-file counts are refreshed
// besides after every commit and merge.
const changedPoll = 2 * time.Second

// GitOptions are the gitwork options from the configuration.
func GitOptions(cfg config.Config) gitwork.Options {
	return gitwork.Options{CopyGlobs: cfg.WorktreeCopy, Check: cfg.Check}
}

// setupGit prepares the git integration of a run, after the workspace lock
// is taken: stale worktrees of crashed runs are pruned, the task branch is
// created (or kept on resume). w.git stays nil, and a git_disabled record
// is noted, when the project is not a git repository (or git cannot be
// used); that record is written once per task.
func (w *wiring) setupGit() error {
	opts := GitOptions(w.cfg)
	disabled := func(reason string) error {
		for _, r := range w.history {
			if r.Type == vocab.RecordGitDisabled {
				return nil // said already
			}
		}
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordGitDisabled, Details: map[string]any{
			"reason": reason, "effect": "workers share the project directory (no worktrees, no merges)"}})
		return nil
	}
	if !gitwork.IsRepo(w.project) {
		return disabled("not a git repository")
	}
	// The workspace lock is held: no other run of this workspace is live,
	// so every worktree but this task's (on resume) is a crashed run's.
	live := func(id string) bool { return w.resumed && id == w.td.ID() }
	removed, err := gitwork.PruneStale(w.project, w.root, live, opts)
	if err != nil {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordWorktreesPruneFailed, Details: map[string]any{"error": err.Error()}})
	} else if len(removed) > 0 {
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordWorktreesPruned, Details: map[string]any{"dirs": removed}})
	}
	repo, err := gitwork.Open(w.project, w.root, w.td.ID(), opts)
	base := ""
	if err == nil && !w.resumed {
		if base, err = w.checkDirty(repo); err != nil {
			return err // said before anything starts
		}
	}
	if err == nil {
		err = repo.StartTask(base)
	}
	if err != nil {
		reason := err.Error()
		if errors.Is(err, gitwork.ErrNoCommits) {
			reason = "the repository has no commit yet"
		}
		return disabled(reason)
	}
	base, _ = repo.Base()
	w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordGitTaskBranch, Details: map[string]any{
		"branch": repo.TaskBranch(), "base": base, "worktrees": filepath.Join(w.root, "worktrees")}})
	w.git = &gitWire{repo: repo, td: w.td, project: w.project, root: w.root, check: w.cfg.Check, log: w.toRunner.Log,
		changed: map[string]int{}, kick: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
	return nil
}

// checkDirty says what the user's checkout holds that HEAD does not, before
// a new task starts from it, and returns the task branch's base: with
// --dirty include a commit of the checkout's edits, else "" (HEAD). A
// rebase, merge or other operation in progress refuses to start unless
// --dirty ignore says to go on from HEAD anyway.
func (w *wiring) checkDirty(repo *gitwork.Repo) (string, error) {
	d, err := repo.CheckDirty()
	if err != nil {
		return "", fmt.Errorf("check the checkout for uncommitted edits: %w", err)
	}
	if d.Clean() {
		return "", nil
	}
	mode := w.o.Dirty
	if d.Operation != "" && mode != DirtyIgnore {
		return "", fmt.Errorf("%s: %s: finish or abort the %s first, or start from HEAD anyway with --dirty ignore",
			w.project, d, d.Operation)
	}
	rec := vocab.EventRecord{Type: vocab.RecordCheckoutDirty, Details: map[string]any{"files": d.Files}}
	if d.Operation != "" {
		rec.Details["operation"] = d.Operation
	}
	base := ""
	switch {
	case mode == DirtyInclude && len(d.Files) > 0:
		sha, err := repo.SnapshotWorkTree("[hivemind] the checkout's uncommitted edits at the start of the task")
		if err != nil {
			return "", err
		}
		base = sha
		rec.Details["effect"] = fmt.Sprintf("included: the task branch starts from commit %s, HEAD plus these edits", sha[:min(12, len(sha))])
	default:
		rec.Details["effect"] = "not part of the task: it starts from HEAD (--dirty include commits them on the task branch)"
	}
	rec.Details["summary"] = d.String()
	w.notes = append(w.notes, rec)
	return base, nil
}

// ---- agents ----

// placeWorker puts a worker's agent in its worktree: its PTY runs there
// and HIVEMIND_PROJECT names it (roles.PreToolUse and the sim agent take
// it as the project root). Called on every start and restart (AddWorker
// is idempotent and keeps the worktree's changes).
func (g *gitWire) placeWorker(base *ptyagent.Spec, id string) error {
	dir, err := g.repo.AddWorker(id)
	if err != nil {
		return fmt.Errorf("worktree for %s: %w", id, err)
	}
	base.Dir = dir
	for i, kv := range base.Env {
		if strings.HasPrefix(kv, ptyagent.EnvProject+"=") {
			base.Env[i] = ptyagent.EnvProject + "=" + dir
		}
	}
	g.kickCounts()
	return nil
}

// ---- assignments ----

// gitTaskFiles is the task directory as the runner sees it in a git
// project: a worker's assignment names project files inside its own
// worktree.
type gitTaskFiles struct {
	*workspace.TaskDir
	g *gitWire
}

// WriteAssignment rewrites a worker's project paths into its worktree.
func (t gitTaskFiles) WriteAssignment(a vocab.Assignment) error {
	if a.Role == vocab.RoleWorker {
		wd := t.g.repo.WorkerDir(string(a.Agent))
		a.Reads = t.g.remap(a.Reads, wd)
		a.Writes = t.g.remap(a.Writes, wd)
	}
	if err := t.TaskDir.WriteAssignment(a); err != nil || !t.g.remote.has(string(a.Agent)) {
		return err
	}
	return t.g.remote.sendAssignment(a)
}

// remap maps paths under the project, and not under the workspace, into
// the worktree wd; other paths are kept.
func (g *gitWire) remap(paths []string, wd string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if within(g.root, p) {
			continue
		}
		if rel, err := filepath.Rel(g.project, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			out[i] = filepath.Join(wd, rel)
		}
	}
	return out
}

// within reports whether p is dir or below it (lexically).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// ---- engine.GitWork ----

var _ engine.GitWork = (*gitWire)(nil)

// Commit commits a worker's work for a finished subtask.
func (g *gitWire) Commit(agent, subtask, summary string) (string, error) {
	var pulled string
	if g.remote.has(agent) {
		var err error
		// Fetched before the done marker was delivered (deliverDone).
		if pulled, err = g.remote.takePulled(agent, subtask); err != nil {
			return "", err
		}
	}
	sha, err := g.repo.CommitSubtask(agent, subtask, summary)
	if sha == "" && err == nil {
		sha = pulled
	}
	g.kickCounts()
	if errors.Is(err, gitwork.ErrUnresolved) {
		return "", fmt.Errorf("%w: %v", engine.ErrUnresolved, err)
	}
	return sha, err
}

// Merge merges a checkpoint and writes what the Reviewer (or the fixing
// workers) read: reviews/checkpoint_<cp>_v<round>-diff.patch and -check.txt
// on success, reviews/checkpoint_<cp>_v<round>-a<attempt>-conflict-<worker>.md
// per conflicting worker.
func (g *gitWire) Merge(ctx context.Context, m engine.MergeCheckpoint) engine.CheckpointMerged {
	defer g.kickCounts()
	ev := engine.CheckpointMerged{Checkpoint: m.Checkpoint, Round: m.Round, Attempt: m.Attempt}
	fail := func(err error) engine.CheckpointMerged {
		ev.Error = err.Error()
		g.log(vocab.RecordGitMergeFailed, "", map[string]any{"checkpoint": m.Checkpoint, "attempt": m.Attempt, "error": ev.Error})
		return ev
	}
	start := time.Now()
	res, err := g.repo.MergeCheckpointContext(ctx, m.Checkpoint, convertIDs[vocab.AgentID, string](m.Workers))
	if err != nil {
		return fail(err)
	}
	name := fmt.Sprintf("%s/checkpoint_%d_v%d", vocab.ReviewsDir, m.Checkpoint, m.Round)
	if res.Merged {
		ev.DiffFile = name + "-diff.patch"
		if err := g.writeTaskFile(ev.DiffFile, res.DiffReport()); err != nil {
			return fail(err)
		}
		if res.Checked {
			ev.CheckFile = name + "-check.txt"
			if err := g.writeTaskFile(ev.CheckFile, res.CheckReport(g.check)); err != nil {
				return fail(err)
			}
		}
		ev.Merged, ev.Checked, ev.CheckOK, ev.MergedDir = true, res.Checked, res.CheckOK, g.repo.MergedDir()
		g.remote.refresh(convertIDs[vocab.AgentID, string](m.Workers))
		d := map[string]any{"checkpoint": m.Checkpoint, "attempt": m.Attempt, "after": res.After,
			"stat": res.StatSummary(), "ms": time.Since(start).Milliseconds()}
		if res.Checked {
			d["check_ok"] = res.CheckOK
		}
		if len(res.Warnings) > 0 {
			d["warnings"] = res.Warnings
		}
		g.log(vocab.RecordGitMerge, "", d)
		return ev
	}
	for _, c := range res.Conflicts {
		files, err := g.repo.PrepareFix(c.Worker)
		if err != nil {
			return fail(fmt.Errorf("prepare the conflict fix of %s: %w", c.Worker, err))
		}
		if len(files) == 0 {
			files = c.Files
		}
		rel := fmt.Sprintf("%s-a%d-conflict-%s.md", name, m.Attempt, c.Worker)
		if err := g.writeTaskFile(rel, gitwork.ConflictReport(m.Checkpoint, c, g.repo.ProjectRel(files))); err != nil {
			return fail(err)
		}
		ev.Conflicts = append(ev.Conflicts, engine.MergeConflict{Worker: vocab.AgentID(c.Worker), With: convertIDs[string, vocab.AgentID](c.With),
			Files: g.repo.ProjectRel(files), HunksFile: rel})
		g.log(vocab.RecordGitMergeConflict, c.Worker, map[string]any{"checkpoint": m.Checkpoint, "attempt": m.Attempt,
			"with": c.With, "files": files, "hunks": rel})
	}
	if len(ev.Conflicts) == 0 {
		return fail(errors.New("the merge neither succeeded nor reported a conflict"))
	}
	return ev
}

// writeTaskFile writes a file of the task directory atomically.
func (g *gitWire) writeTaskFile(rel, content string) error {
	p, err := g.td.Path(rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return workspace.WriteFileAtomic(p, []byte(content), 0o644)
}

// ---- changed-file counts for the UI ----

// kickCounts asks for fresh changed-file counts (never blocks).
func (g *gitWire) kickCounts() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// watchCounts refreshes the workers' changed-file counts every
// changedPoll and after each commit or merge, off the UI and runner
// goroutines (each count is a few git calls), and calls notify when they
// changed. workers lists the current worker ids.
func (g *gitWire) watchCounts(workers func() []string, notify func()) {
	g.notify = notify
	go func() {
		defer close(g.done)
		t := time.NewTicker(changedPoll)
		defer t.Stop()
		for {
			select {
			case <-g.stopped:
				return
			case <-t.C:
			case <-g.kick:
			}
			next := map[string]int{}
			for _, w := range workers() {
				if n, err := g.repo.ChangedFiles(w); err == nil {
					next[w] = n
				}
			}
			g.mu.Lock()
			same := len(next) == len(g.changed)
			for k, v := range next {
				if g.changed[k] != v {
					same = false
				}
			}
			g.changed = next
			g.mu.Unlock()
			if !same && g.notify != nil {
				g.notify()
			}
		}
	}()
}

// stop ends watchCounts (idempotent; waits for it when it runs).
func (g *gitWire) stop() {
	if g == nil {
		return
	}
	g.remote.stop()
	started := g.notify != nil
	g.stopOnce.Do(func() { close(g.stopped) })
	if started {
		<-g.done
	}
}

// decorate puts the changed-file counts into a snapshot's agents (a copy:
// the snapshot's map is shared with the runner).
func (g *gitWire) decorate(s engine.Snapshot) engine.Snapshot {
	if g == nil {
		return s
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.changed) == 0 {
		return s
	}
	agents := make(map[vocab.AgentID]vocab.AgentState, len(s.State.Agents))
	for id, a := range s.State.Agents {
		if n, ok := g.changed[string(id)]; ok {
			a.ChangedFiles = n
		}
		agents[id] = a
	}
	s.State.Agents = agents
	return s
}

// workerIDs are the workers of the runner's current state.
func workerIDs(r *engine.Runner) []string {
	var ids []string // gitwork names workers by string
	for id, ag := range r.Snapshot().State.Agents {
		if ag.Role == vocab.RoleWorker {
			ids = append(ids, string(id))
		}
	}
	return ids
}

// ---- the end ----

// finishGit ends the task's use of git once the agents are stopped: for a
// task that is over (complete, cancelled, abandoned) the worktrees are
// removed (work left in them is committed on the worker's branch) and the
// user is told where the result is and how to merge it; with --merge a
// complete task is merged into the user's branch when its working tree is
// clean. A cancelled or abandoned task also loses the branches that hold
// nothing beyond its start, and the user is told which it kept. A task
// that needs a human or failed keeps everything for --resume.
func (a *App) finishGit() {
	g := a.git
	if g == nil {
		return
	}
	g.stop()
	st := a.runner.Snapshot().State
	final := st.Phase
	if !st.Over() {
		return
	}
	if final == vocab.PhaseComplete {
		for _, d := range g.remote.cleanup() {
			a.logDirect(vocab.RecordRemoteCleanup, d)
		}
	}
	sum, err := g.repo.Finish(final == vocab.PhaseComplete && a.opts.Merge)
	d := map[string]any{"branch": sum.TaskBranch, "commits": sum.Commits, "files": sum.Files, "merged": sum.Merged,
		"removed": len(sum.Removed)}
	if len(sum.Saved) > 0 {
		d["saved"] = sum.Saved
	}
	if len(sum.Unmerged) > 0 {
		d["unmerged"] = sum.Unmerged
	}
	if err != nil {
		d["error"] = err.Error()
	}
	var pruned, kept []string
	if final != vocab.PhaseComplete && err == nil {
		var perr error
		pruned, kept, perr = g.repo.PruneEmpty()
		d["branches_removed"], d["branches_kept"] = pruned, kept
		if perr != nil {
			err = perr
			d["error"] = err.Error()
		}
	}
	a.logDirect(vocab.RecordTaskBranchReady, d)
	if len(sum.Commands) == 0 && sum.TaskBranch != "" {
		// The merge was refused: still say how to look at the result.
		from := sum.Into
		if from == "" {
			from = sum.Base
		}
		sum.Commands = []string{"git log " + sum.TaskBranch, "git diff " + from + "..." + sum.TaskBranch, "git merge " + sum.TaskBranch}
	}
	say := func(level, msg string) {
		a.out.notice(level, msg)
		a.gitNotes = append(a.gitNotes, notice{level, msg})
	}
	if len(pruned) > 0 {
		say("info", "Removed the branches that held nothing beyond the task's start: "+strings.Join(pruned, ", ")+".")
	}
	if len(kept) > 0 {
		say("info", "Kept the branches with work on them: "+strings.Join(kept, ", ")+" (git log <branch> shows it; git branch -D <branch> removes it).")
	}
	if sum.TaskBranch != "" && g.repo.HasBranch(sum.TaskBranch) && (err == nil || errors.Is(err, gitwork.ErrDirtyTree)) {
		say("info", strings.TrimRight(sum.String(), "\n"))
	}
	if err != nil {
		say("warn", err.Error())
	}
}

// logDirect writes a record straight to events.jsonl (and the headless
// output) after the runner has stopped.
func (a *App) logDirect(typ vocab.RecordType, details map[string]any) {
	rec := vocab.EventRecord{Time: time.Now().UTC(), Type: typ, Task: a.td.ID(), Details: details}
	if a.log != nil {
		_ = a.log.Append(rec)
	}
	a.out.Record(rec)
}

// convertIDs converts agent ids between gitwork's strings and
// vocab.AgentID at the edge.
func convertIDs[From, To ~string](xs []From) []To {
	out := make([]To, len(xs))
	for i, x := range xs {
		out[i] = To(x)
	}
	return out
}
