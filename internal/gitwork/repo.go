package gitwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Sentinel errors callers branch on.
var (
	// ErrNotRepo: the project is not inside a git working tree; callers fall
	// back to the shared-directory behaviour.
	ErrNotRepo = errors.New("gitwork: not a git repository")
	// ErrNoCommits: the repository has no commit yet, so there is nothing to
	// branch from; callers fall back to the shared-directory behaviour.
	ErrNoCommits = errors.New("gitwork: repository has no commits")
	// ErrNotStarted: StartTask has not run for this task.
	ErrNotStarted = errors.New("gitwork: task branch does not exist (StartTask not called)")
	// ErrDirtyTree: Finish(true) refused to merge into a working tree with
	// uncommitted changes.
	ErrDirtyTree = errors.New("gitwork: working tree has uncommitted changes")
	// ErrUnresolved: a commit was refused because conflict markers remain.
	ErrUnresolved = errors.New("gitwork: unresolved conflict markers")
	// ErrBadID: a task or agent id is not usable in a branch or path.
	ErrBadID = errors.New("gitwork: invalid id")
	// ErrWorktreeTaken: the worktree directory belongs to another task.
	ErrWorktreeTaken = errors.New("gitwork: worktree directory belongs to another task")
)

// DefaultCopyGlobs are copied into worktrees when Options.CopyGlobs is nil.
var DefaultCopyGlobs = []string{".env*"}

// DefaultCheckTimeout bounds the check command when Options.CheckTimeout is 0.
const DefaultCheckTimeout = 10 * time.Minute

// checkOutputLimit is how much of the check command's output is kept (the
// tail, where failures are reported).
const checkOutputLimit = 64 << 10

// Options configures a Repo.
type Options struct {
	// CopyGlobs name files that git does not carry but a worktree needs
	// (relative to the project directory, filepath.Glob syntax). nil means
	// DefaultCopyGlobs; an empty non-nil slice copies nothing. Tracked files
	// are never copied (git carries them); copied files are never committed.
	CopyGlobs []string
	// Check is a shell command (sh -c) run in the merged result of every
	// checkpoint, e.g. "go test ./...". Empty: no check.
	Check string
	// CheckTimeout bounds Check (default DefaultCheckTimeout).
	CheckTimeout time.Duration
}

// Repo is one task's view of a git repository. Its methods may be called
// from several goroutines; mutating git operations are serialized.
type Repo struct {
	project   string // the project directory (absolute, symlinks resolved)
	top       string // the repository's top-level directory
	prefix    string // project relative to top ("" or "sub/dir/"), slash form
	commonDir string // the shared .git directory (absolute)
	workspace string // workspace root (absolute)
	taskID    string
	opts      Options
	identity  []string // extra env for commits when git has no identity

	mu      sync.Mutex // serializes operations that change refs or worktrees
	mergeMu sync.Mutex // serializes use of the scratch worktree
}

// IsRepo reports whether dir is inside a git working tree.
func IsRepo(dir string) bool {
	out, err := gitCmd(context.Background(), dir, nil, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(out) == "true"
}

// repoInfo resolves the top level, the project's prefix and the common git
// directory of the repository containing project.
func repoInfo(project string) (top, prefix, common string, err error) {
	if !IsRepo(project) {
		return "", "", "", fmt.Errorf("%w: %s", ErrNotRepo, project)
	}
	out, err := gitCmd(context.Background(), project, nil, "rev-parse", "--path-format=absolute",
		"--show-toplevel", "--git-common-dir")
	if err != nil {
		return "", "", "", fmt.Errorf("gitwork: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return "", "", "", fmt.Errorf("gitwork: unexpected rev-parse output %q", out)
	}
	top, common = lines[0], lines[1]
	// --show-prefix is relative to the current directory, which may be a
	// symlinked path; compute it from resolved paths instead.
	rel, err := filepath.Rel(top, project)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", "", fmt.Errorf("gitwork: project %s is not below %s", project, top)
	}
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	return top, prefix, common, nil
}

// resolve returns p absolute with symlinks resolved (as far as they exist).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	// Resolve the existing parent (the workspace may not exist yet).
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(real, base), nil
	}
	return abs, nil
}

// Open returns the Repo for one task. workspaceRoot "" means
// <project>/.hivemind. It fails with ErrNotRepo when project is not in a
// git working tree. Open changes nothing.
func Open(project, workspaceRoot, taskID string, opts Options) (*Repo, error) {
	if !vocab.ValidID(taskID) {
		return nil, fmt.Errorf("%w: task id %q", ErrBadID, taskID)
	}
	proj, err := resolve(project)
	if err != nil {
		return nil, fmt.Errorf("gitwork: project: %w", err)
	}
	if workspaceRoot == "" {
		workspaceRoot = filepath.Join(proj, ".hivemind")
	}
	ws, err := resolve(workspaceRoot)
	if err != nil {
		return nil, fmt.Errorf("gitwork: workspace: %w", err)
	}
	top, prefix, common, err := repoInfo(proj)
	if err != nil {
		return nil, err
	}
	if opts.CopyGlobs == nil {
		opts.CopyGlobs = DefaultCopyGlobs
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = DefaultCheckTimeout
	}
	r := &Repo{project: proj, top: top, prefix: prefix, commonDir: common, workspace: ws, taskID: taskID, opts: opts}
	// Commits must not fail on a machine where git has no identity.
	if _, err := gitCmd(context.Background(), proj, nil, "var", "GIT_COMMITTER_IDENT"); err != nil {
		r.identity = []string{"GIT_COMMITTER_NAME=Hivemind", "GIT_COMMITTER_EMAIL=hivemind@localhost",
			"GIT_AUTHOR_NAME=Hivemind", "GIT_AUTHOR_EMAIL=hivemind@localhost"}
	}
	return r, nil
}

// TaskBranch is the task branch's name, hivemind/<task_id>.
func (r *Repo) TaskBranch() string { return "hivemind/" + r.taskID }

// WorkerBranch is the branch of one worker, hivemind/<task_id>-<agent_id>.
func (r *Repo) WorkerBranch(agentID string) string { return "hivemind/" + r.taskID + "-" + agentID }

// Project is the project directory Open resolved.
func (r *Repo) Project() string { return r.project }

func (r *Repo) baseRef() string        { return "refs/hivemind/base/" + r.taskID }
func (r *Repo) integrationRef() string { return "refs/hivemind/integration/" + r.taskID }
func (r *Repo) checkpointRef(cp int) string {
	return fmt.Sprintf("refs/hivemind/checkpoints/%s/%d", r.taskID, cp)
}
func (r *Repo) worktreesDir() string { return filepath.Join(r.workspace, "worktrees") }
func (r *Repo) scratchDir() string   { return filepath.Join(r.worktreesDir(), ".merge") }

// WorktreeDir is the root of a worker's worktree (the repository's top
// level inside it).
func (r *Repo) WorktreeDir(agentID string) string { return filepath.Join(r.worktreesDir(), agentID) }

// projectIn maps a worktree root to the project directory inside it (they
// differ when the project is a subdirectory of the repository).
func (r *Repo) projectIn(worktree string) string {
	return filepath.Join(worktree, filepath.FromSlash(r.prefix))
}

// WorkerDir is the project directory inside a worker's worktree: where the
// worker's agent runs.
func (r *Repo) WorkerDir(agentID string) string { return r.projectIn(r.WorktreeDir(agentID)) }

// MergedDir is the project directory inside the scratch worktree. After a
// clean MergeCheckpoint, and until the next one, it holds the task branch's
// merged result (what the check ran on): the place for the Reviewer to read
// the combined code.
func (r *Repo) MergedDir() string { return r.projectIn(r.scratchDir()) }

// rev resolves a revision to a commit id ("" and no error if it does not
// exist).
func (r *Repo) rev(name string) (string, error) {
	out, err := r.gitTrim(r.top, "rev-parse", "-q", "--verify", name+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", nil
		}
		return "", fmt.Errorf("gitwork: %w", err)
	}
	return out, nil
}

// Base is the commit the task branch was created from ("" before StartTask).
func (r *Repo) Base() (string, error) { return r.rev(r.baseRef()) }

// StartTask creates the task branch hivemind/<task_id> from base ("" means
// the current HEAD) and records the base commit. It touches neither the
// working tree nor the index nor the current branch, and is idempotent: on
// resume an existing task branch is kept as it is. It also makes sure the
// workspace directory is ignored by git.
func (r *Repo) StartTask(base string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.excludeWorkspace(); err != nil {
		return err
	}
	task, err := r.rev("refs/heads/" + r.TaskBranch())
	if err != nil {
		return err
	}
	if task != "" {
		if b, err := r.rev(r.baseRef()); err != nil || b != "" {
			return err
		}
		// Branch exists without a recorded base (made by an older run or by
		// hand): its first parent chain's merge-base with HEAD is the best
		// estimate.
		mb, err := r.gitTrim(r.top, "merge-base", "HEAD", task)
		if err != nil {
			mb = task
		}
		_, err = r.git(r.top, "update-ref", r.baseRef(), mb)
		return wrap("record base", err)
	}
	if base == "" {
		base = "HEAD"
	}
	sha, err := r.rev(base)
	if err != nil {
		return err
	}
	if sha == "" {
		if base == "HEAD" {
			return ErrNoCommits
		}
		return fmt.Errorf("gitwork: base %q is not a commit", base)
	}
	if _, err := r.git(r.top, "branch", "--no-track", r.TaskBranch(), sha); err != nil {
		return wrap("create task branch", err)
	}
	_, err = r.git(r.top, "update-ref", r.baseRef(), sha)
	return wrap("record base", err)
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("gitwork: %s: %w", what, err)
}

// excludeWorkspace adds the workspace directory to .git/info/exclude when
// it lies inside the repository and git does not ignore it yet, so that
// neither the task nor the user's status ever shows it.
func (r *Repo) excludeWorkspace() error {
	rel, err := filepath.Rel(r.top, r.workspace)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil // outside the repository
	}
	rel = filepath.ToSlash(rel)
	// check-ignore exits 0 when ignored, 1 when not.
	_, err = r.git(r.top, "check-ignore", "-q", "--no-index", rel+"/")
	if err == nil {
		return nil
	}
	if exitCode(err) != 1 {
		return wrap("check-ignore", err)
	}
	excl := filepath.Join(r.commonDir, "info", "exclude")
	if err := os.MkdirAll(filepath.Dir(excl), 0o755); err != nil {
		return wrap("info/exclude", err)
	}
	old, err := os.ReadFile(excl)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return wrap("info/exclude", err)
	}
	line := "/" + rel + "/"
	var b strings.Builder
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteString("\n")
	}
	b.WriteString("# Hivemind workspace (agent worktrees, state); added by hivemind\n" + line + "\n")
	f, err := os.OpenFile(excl, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return wrap("info/exclude", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close()
		return wrap("info/exclude", err)
	}
	return wrap("info/exclude", f.Close())
}
