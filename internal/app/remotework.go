package app

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// This file runs workers on other hosts (issue 18, docs/REMOTE.md). The
// local side keeps everything the engine and gitwork know: each remote
// worker still has its branch and local worktree, which only git writes
// (the worker's commits, fetched fast-forward at each done subtask), so
// merges, the check command, diffs and reviews run unchanged. On the host:
//
//	<dir>/<project slug>/repo.git                   a bare repository, pushed to from here
//	<dir>/<project slug>/worktrees/<task>/<agent>   the worker's worktree, on its branch
//	<dir>/<project slug>/tasks/<task>/              its HIVEMIND_TASK_DIR
//
// Assignments (and the task files they name) are copied to the host's
// task dir before the [HIVEMIND] line naming them is typed; what workers
// write there (outputs, friction) comes back on the host's sync stream
// (remote.SyncFrom) into the local task dir, where the usual trigger rules
// apply.

// remoteSubdirs are the task dir folders remote workers write in.
var remoteSubdirs = []string{vocab.OutboxesDir}

// remoteOpTimeout bounds one ssh or git operation on a host.
const remoteOpTimeout = 2 * time.Minute

// remoteWork is one run's remote hosts and the workers placed on them.
type remoteWork struct {
	td          *workspace.TaskDir
	repo        *gitwork.Repo
	project     string
	localHelper string // this machine's hivemind-hook: the launcher
	log         func(typ vocab.RecordType, agent string, details map[string]any)
	hosts       []*remoteHost
	workers     map[string]*remoteHost // worker id → its host
	// send and snapshot reach the runner (once it runs).
	send     func(engine.Event)
	snapshot func() engine.Snapshot

	// ctx ends with the run: the sync streams, the queued host operations
	// and the checks of failed hosts (remotefaults.go) stop with it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // sync streams
	bg     sync.WaitGroup // host checks
	queue  hostQueue      // each worker's pushes and fetches, in order

	mu      sync.Mutex
	pushErr map[string]error  // worker → its last assignment push's failure
	pulled  map[string]pulled // worker/subtask → the commit fetched before its marker
}

// remoteHost is one host prepared for the task.
type remoteHost struct {
	h       remote.Host
	helper  string // the installed helper's path there
	root    string // <dir>/<project slug>
	taskDir string // the task dir mirror
	task    string
}

func (rh *remoteHost) repoDir() string { return rh.root + "/repo.git" }

func (rh *remoteHost) worktree(agent string) string {
	return rh.root + "/worktrees/" + rh.task + "/" + agent
}

// setupRemote prepares the hosts the run places workers on (check,
// helper install, task dir mirror, repository) before any agent starts.
// Any failure stops the run with the host's one-line reason.
func (w *wiring) setupRemote() error {
	if err := w.restorePlacement(); err != nil {
		return err
	}
	names := usedHosts(w.cfg)
	if len(names) == 0 {
		return nil
	}
	if err := remoteAgentCheck(w.cfg, names); err != nil {
		return err
	}
	if w.git == nil {
		return fmt.Errorf("workers placed on %s need a git project with a commit: their work travels by git (run git init and commit, or place them here: --workers N)",
			strings.Join(names, ", "))
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	localHelper, err := remote.HelperFor(self, runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return err
	}
	rw := newRemoteWork(w, localHelper)
	byName := map[string]*remoteHost{}
	for _, name := range names {
		rh, err := rw.prepare(w.cfg, name, self)
		if err != nil {
			return err
		}
		byName[name] = rh
		rw.hosts = append(rw.hosts, rh)
		w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordRemoteHostReady, Details: map[string]any{
			"host": name, "dest": rh.h.Dest, "root": rh.root, "helper": rh.helper}})
	}
	for i, h := range w.cfg.WorkerHosts() {
		if rh := byName[h]; rh != nil {
			rw.workers[fmt.Sprintf("worker_%d", i+1)] = rh
		}
	}
	w.git.remote = rw
	w.notes = append(w.notes, vocab.EventRecord{Type: vocab.RecordRemoteWorkers, Details: map[string]any{"hosts": w.cfg.WorkerHosts()}})
	w.reapPrevious(rw)
	return nil
}

func newRemoteWork(w *wiring, localHelper string) *remoteWork {
	ctx, cancel := context.WithCancel(context.Background())
	link := w.toRunner
	return &remoteWork{td: w.td, repo: w.git.repo, project: w.project, localHelper: localHelper, log: link.Log,
		workers: map[string]*remoteHost{}, send: link.Send, snapshot: func() engine.Snapshot { return link.r.Snapshot() },
		ctx: ctx, cancel: cancel, pushErr: map[string]error{}, pulled: map[string]pulled{}}
}

// restorePlacement gives a resumed task the placement it ran with, unless
// --workers names one.
func (w *wiring) restorePlacement() error {
	if !w.resumed || w.o.WorkersSet {
		return nil
	}
	var hosts []any
	for _, r := range w.history {
		if r.Type == vocab.RecordRemoteWorkers {
			hosts, _ = r.Details["hosts"].([]any)
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	var placement []config.Placement
	for i, h := range hosts {
		name, _ := h.(string)
		if _, ok := w.cfg.Hosts[name]; !ok && name != config.LocalHost {
			return fmt.Errorf("worker_%d of this task ran on host %q, which the config no longer defines: add [hosts.%s] back, or resume with --workers to place the workers anew", i+1, name, name)
		}
		placement = append(placement, config.Placement{Count: 1, Host: name})
	}
	if len(placement) == w.cfg.Workers {
		w.cfg.Placement = placement
	}
	return nil
}

// prepare checks the host, installs the helper, and makes the task's
// dirs and the repository there (the task branch pushed).
func (rw *remoteWork) prepare(cfg config.Config, name, self string) (*remoteHost, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	h := RemoteHost(cfg, name)
	rep, err := remote.Check(ctx, h)
	if err != nil {
		return nil, err
	}
	helper, err := remote.HelperFor(self, rep.OS, rep.Arch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	inst, err := remote.Install(ctx, h, helper)
	if err != nil {
		return nil, err
	}
	rh := &remoteHost{h: h, helper: inst.Path, task: rw.td.ID(), root: rep.Dir + "/" + projectSlug(rw.project)}
	rh.taskDir = rh.root + "/tasks/" + rh.task
	q := remote.Quote
	script := "set -e; mkdir -p " + q(rh.taskDir+"/"+vocab.AssignmentsDir) + " " + q(rh.taskDir+"/"+vocab.OutboxesDir) + " " + q(rh.root+"/worktrees/"+rh.task) +
		"; [ -d " + q(rh.repoDir()) + " ] || git init -q --bare " + q(rh.repoDir())
	if _, err := h.Exec(ctx, script, nil); err != nil {
		return nil, err
	}
	branch := rw.repo.TaskBranch()
	if err := rw.git(ctx, rh, rw.project, "push", "-q", "-f", rh.h.GitURL(rh.repoDir()), branch+":refs/heads/"+branch); err != nil {
		return nil, err
	}
	return rh, nil
}

// projectSlug names the project on a host: its base name and a hash of
// its path, so two projects of one name do not share a repository.
func projectSlug(project string) string {
	sum := sha256.Sum256([]byte(project))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, filepath.Base(project))
	return base + "-" + hex.EncodeToString(sum[:])[:8]
}

// git runs a local git command talking to the host (GIT_SSH_COMMAND).
func (rw *remoteWork) git(ctx context.Context, rh *remoteHost, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_SSH_COMMAND="+rh.h.GitSSHCommand(), "GIT_TERMINAL_PROMPT=0")
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: git %s: %v: %s", rh.h.Name, args[0], err, firstLineOf(string(out)))
	}
	return nil
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// has reports whether the worker runs on a host.
func (rw *remoteWork) has(agent string) bool {
	return rw != nil && rw.workers[agent] != nil
}

// startSync starts each host's sync stream (once the runner exists: its
// log records the connection's state).
func (rw *remoteWork) startSync() {
	if rw == nil {
		return
	}
	ctx := rw.ctx
	for _, rh := range rw.hosts {
		rw.wg.Add(1)
		go func() {
			defer rw.wg.Done()
			remote.SyncFrom(ctx, rh.h, rh.helper, rh.taskDir, remoteSubdirs, syncSink{rw: rw, rh: rh},
				func(up bool, err error) {
					d := map[string]any{"host": rh.h.Name}
					typ := vocab.RecordRemoteSyncConnected
					if !up {
						typ, d["error"] = vocab.RecordRemoteSyncLost, fmt.Sprint(err)
					}
					rw.log(typ, "", d)
				})
		}()
	}
}

// stop ends the sync streams, the queued host operations and the host
// checks (idempotent).
func (rw *remoteWork) stop() {
	if rw == nil || rw.cancel == nil {
		return
	}
	rw.cancel()
	rw.wg.Wait()
	rw.queue.wait()
	rw.bg.Wait()
}

// syncSink writes synced files into the local task dir.
type syncSink struct {
	rw *remoteWork
	rh *remoteHost
}

func (s syncSink) Deliver(rel string, data []byte) error {
	p, err := s.rw.td.Path(rel)
	if err != nil {
		return err
	}
	if !remoteMarker(rel) {
		return writeSynced(p, data)
	}
	// A done marker names its output file by the host's path; the
	// engine validates it as a local one.
	data = bytes.ReplaceAll(data, []byte(s.rh.taskDir+"/"), []byte(s.rw.td.Dir()+string(filepath.Separator)))
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil // sent again: its commit was fetched before it was written
	}
	s.rw.deliverDone(rel, func() error { return writeSynced(p, data) })
	return nil
}

func (s syncSink) Problem(rel, msg string) {
	s.rw.log(vocab.RecordRemoteSyncRefused, "", map[string]any{"host": s.rh.h.Name, "file": rel, "error": msg})
}

// place makes the worker's remote worktree (on its branch, as the local
// one is) unless it is there already, and points the spec's task dir and
// project at the host's.
func (rw *remoteWork) place(base *ptyagent.Spec, id string) error {
	rh := rw.workers[id]
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	branch, start := rw.repo.WorkerBranch(id), startRef(rw.repo.WorkerBranch(id))
	if err := rw.git(ctx, rh, rw.project, "push", "-q", "-f", rh.h.GitURL(rh.repoDir()), branch+":"+start); err != nil {
		return rw.unreachable(ctx, rh, err)
	}
	q, wt := remote.Quote, rh.worktree(id)
	script := "set -e; if [ ! -e " + q(wt+"/.git") + " ]; then git -C " + q(rh.repoDir()) + " worktree prune; git -C " + q(rh.repoDir()) +
		" worktree add -q -B " + q(branch) + " " + q(wt) + " " + q(start) + "; fi"
	if _, err := rh.h.Exec(ctx, script, nil); err != nil {
		return fmt.Errorf("worktree for %s on %s: %w", id, rh.h.Name, err)
	}
	for i, kv := range base.Env {
		switch {
		case strings.HasPrefix(kv, ptyagent.EnvTaskDir+"="):
			base.Env[i] = ptyagent.EnvTaskDir + "=" + rh.taskDir
		case strings.HasPrefix(kv, ptyagent.EnvProject+"="):
			base.Env[i] = ptyagent.EnvProject + "=" + rw.remotePath(id, strings.TrimPrefix(kv, ptyagent.EnvProject+"="))
		}
	}
	return nil
}

// launch is the local command line running a (its first word a command
// on the host) as the worker's agent there.
func (rw *remoteWork) launch(id string, a remote.Agent) []string {
	rh := rw.workers[id]
	h := rh.h
	h.Dir = rh.worktree(id)
	return remote.LaunchArgv(h, rw.localHelper, rh.helper, a)
}

func startRef(branch string) string { return "refs/hivemind/start/" + branch }

// remotePath maps a local path of the worker's worktree or of the task
// dir to the host's; other paths are kept.
func (rw *remoteWork) remotePath(id, p string) string {
	rh := rw.workers[id]
	if rel, err := filepath.Rel(rw.repo.WorktreeDir(id), p); err == nil && !strings.HasPrefix(rel, "..") {
		return strings.TrimSuffix(rh.worktree(id)+"/"+filepath.ToSlash(rel), "/.")
	}
	if rel, err := filepath.Rel(rw.td.Dir(), p); err == nil && !strings.HasPrefix(rel, "..") {
		return strings.TrimSuffix(rh.taskDir+"/"+filepath.ToSlash(rel), "/.")
	}
	return p
}

// translate rewrites the local worktree and task dir paths in text to
// the host's.
func (rw *remoteWork) translate(id, text string) string {
	rh := rw.workers[id]
	text = strings.ReplaceAll(text, rw.repo.WorktreeDir(id), rh.worktree(id))
	return strings.ReplaceAll(text, rw.td.Dir(), rh.taskDir)
}

// sendAssignment queues the copy of the worker's assignment (as written
// locally, its paths the host's) and the task files it reads to the
// host's task dir: the files are read now, the copy runs in the worker's
// queue, ahead of the line that names them (remoteAgents.Inject).
func (rw *remoteWork) sendAssignment(a vocab.Assignment) error {
	rh := rw.workers[string(a.Agent)]
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(rel string, data []byte) error {
		return tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), ModTime: time.Now()})
	}
	files := map[string][]byte{}
	for _, ext := range []string{".json", ".md"} {
		rel := filepath.ToSlash(strings.TrimSuffix(vocab.AssignmentRel(a.Agent, a.Seq), ".json") + ext)
		p, err := rw.td.Path(rel)
		if err != nil {
			return err
		}
		if data, err := os.ReadFile(p); err == nil {
			files[rel] = []byte(rw.translate(string(a.Agent), string(data)))
		}
	}
	for _, p := range a.Reads {
		rel, err := filepath.Rel(rw.td.Dir(), p)
		if err != nil || strings.HasPrefix(rel, "..") || !filepath.IsLocal(rel) {
			continue // a project file: the worktree has it
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() <= remote.MaxSyncFile {
			if data, err := os.ReadFile(p); err == nil {
				files[filepath.ToSlash(rel)] = data
			}
		}
	}
	for _, rel := range sortedNames(files) {
		if err := add(rel, files[rel]); err != nil {
			return err
		}
		if _, err := tw.Write(files[rel]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	q := remote.Quote
	rw.pushAssignment(string(a.Agent), func(ctx context.Context) error {
		if _, err := rh.h.Exec(ctx, "set -e; mkdir -p "+q(rh.taskDir)+"; tar -x -m -f - -C "+q(rh.taskDir), &buf); err != nil {
			return fmt.Errorf("assignment of %s to %s: %w", a.Agent, rh.h.Name, err)
		}
		return nil
	})
	return nil
}

func sortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// pull commits the worker's work on the host (the message gitwork would
// write) and fast-forwards its local branch to it. It returns the new
// commit, "" when there was nothing new. Run in the worker's queue
// (deliverDone), never on the runner's goroutine.
func (rw *remoteWork) pull(agent, subtask, summary string) (string, error) {
	rh := rw.workers[agent]
	ctx, cancel := context.WithTimeout(rw.ctx, remoteOpTimeout)
	defer cancel()
	q := remote.Quote
	msg := fmt.Sprintf("[%s] %s: %s", agent, subtask, strings.Join(strings.Fields(summary), " "))
	script := "set -e; cd " + q(rh.worktree(agent)) + "; git add -A .; git diff --cached --quiet || git -c user.name=" +
		q(agent+" (hivemind)") + " -c user.email=hivemind@localhost commit -q -m " + q(msg)
	if _, err := rh.h.Exec(ctx, script, nil); err != nil {
		return "", fmt.Errorf("commit of %s on %s: %w", agent, rh.h.Name, err)
	}
	branch := rw.repo.WorkerBranch(agent)
	fetched := "refs/hivemind/fetched/" + branch
	wt := rw.repo.WorktreeDir(agent)
	before := revParse(wt, "HEAD")
	if err := rw.git(ctx, rh, wt, "fetch", "-q", "-f", rh.h.GitURL(rh.repoDir()), "refs/heads/"+branch+":"+fetched); err != nil {
		return "", err
	}
	// The host is the branch's only writer: anything but a fast-forward
	// is an error, never a silent reset.
	if err := rw.git(ctx, rh, wt, "merge", "-q", "--ff-only", fetched); err != nil {
		return "", fmt.Errorf("%s's commits from %s do not fast-forward its branch: %w", agent, rh.h.Name, err)
	}
	if after := revParse(wt, "HEAD"); after != before {
		return after, nil
	}
	return "", nil
}

// refresh brings the remote worktrees of workers up to their local
// branches after a checkpoint merge moved them.
func (rw *remoteWork) refresh(workers []string) {
	for _, agent := range workers {
		if !rw.has(agent) {
			continue
		}
		rh := rw.workers[agent]
		ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
		branch := rw.repo.WorkerBranch(agent)
		err := rw.git(ctx, rh, rw.project, "push", "-q", "-f", rh.h.GitURL(rh.repoDir()), branch+":"+startRef(branch))
		if err == nil {
			_, err = rh.h.Exec(ctx, "cd "+remote.Quote(rh.worktree(agent))+" && git merge -q --ff-only "+remote.Quote(startRef(branch)), nil)
		}
		cancel()
		if err != nil {
			rw.log(vocab.RecordRemoteRefreshFailed, agent, map[string]any{"host": rh.h.Name, "error": err.Error()})
		}
	}
}

func revParse(dir, rev string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", rev).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// remoteAgents types a remote worker's [HIVEMIND] lines with the host's
// paths.
type remoteAgents struct {
	*ptyagent.Manager
	rw *remoteWork
}

func (a remoteAgents) Inject(id vocab.AgentID, seq int, text string) error {
	if !a.rw.has(string(id)) {
		return a.Manager.Inject(id, seq, text)
	}
	a.inject(string(id), seq, text)
	return nil
}

// runnerAgents is what the runner drives: the manager, through
// remoteAgents when workers run on hosts.
func (w *wiring) runnerAgents() engine.Agents {
	if w.git != nil && w.git.remote != nil {
		return remoteAgents{Manager: w.agents, rw: w.git.remote}
	}
	return w.agents
}

// cleanup removes, once the task is complete, what it left on each host:
// the workers' worktrees with nothing uncommitted in them (their commits
// are here, and stay in the host's repository) and the task dir mirror.
// A worktree with uncommitted work is kept and named. One record each.
func (rw *remoteWork) cleanup() []map[string]any {
	if rw == nil {
		return nil
	}
	var out []map[string]any
	q := remote.Quote
	for _, rh := range rw.hosts {
		script := "cd " + q(rh.root) + " || exit 1; "
		for _, id := range slices.Sorted(maps.Keys(rw.workers)) {
			if rw.workers[id] != rh {
				continue
			}
			wt := q(rh.worktree(id))
			script += "if [ -z \"$(git -C " + wt + " status --porcelain 2>/dev/null)\" ]; then git -C " + q(rh.repoDir()) +
				" worktree remove --force " + wt + " && echo removed " + id + "; else echo kept " + id + "; fi; "
		}
		script += "rm -rf " + q(rh.taskDir) + "; rmdir " + q(rh.root+"/worktrees/"+rh.task) + " 2>/dev/null; true"
		ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
		said, err := rh.h.Exec(ctx, script, nil)
		cancel()
		d := map[string]any{"host": rh.h.Name}
		var removed, kept []string
		for _, line := range strings.Split(said, "\n") {
			if id, ok := strings.CutPrefix(line, "removed "); ok {
				removed = append(removed, id)
			} else if id, ok := strings.CutPrefix(line, "kept "); ok {
				kept = append(kept, id)
			}
		}
		d["removed"] = removed
		if len(kept) > 0 {
			d["kept"], d["why"] = kept, "uncommitted work in the worktree on the host"
		}
		if err != nil {
			d["error"] = err.Error()
		}
		out = append(out, d)
	}
	return out
}
