package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// taskSubdirs are created in every task directory.
var taskSubdirs = []string{vocab.AssignmentsDir, vocab.ReviewsDir, vocab.AgentLogsDir, vocab.HeartbeatsDir, vocab.BackupsDir, vocab.LocksDir}

// DefaultRoot is the default workspace root of a project: <project>/.hivemind.
func DefaultRoot(project string) string {
	return filepath.Join(project, vocab.DirName)
}

// Workspace is an opened workspace root. Its methods are safe for concurrent
// use.
type Workspace struct {
	root string
	now  func() time.Time // clock for ids and timestamps; tests replace it

	frictionMu sync.Mutex // serialises friction.json updates in this process
}

// Open opens (creating if needed, like mkdir -p) the workspace at root.
// root is made absolute; it must be a directory.
func Open(root string) (*Workspace, error) {
	if root == "" {
		return nil, errors.New("workspace: open: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, vocab.TasksDir), 0o755); err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", abs, err)
	}
	for _, p := range []string{abs, filepath.Join(abs, vocab.TasksDir)} {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("workspace: open %s: %w", abs, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("workspace: open %s: %s is not a directory", abs, p)
		}
	}
	return &Workspace{root: abs, now: time.Now}, nil
}

// Root returns the absolute workspace root.
func (w *Workspace) Root() string { return w.root }

func checkTaskID(id string) error {
	if !vocab.ValidID(id) {
		return fmt.Errorf("workspace: task id %q: %w", id, ErrBadTaskID)
	}
	return nil
}

func checkID(kind, id string) error {
	if !vocab.ValidID(id) {
		return fmt.Errorf("workspace: %s id %q: %w", kind, id, ErrBadID)
	}
	return nil
}

// newTaskID returns a sortable id like 20261122-013300-ab12 (UTC time plus
// 16 random bits).
func newTaskID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// TaskDir is one task directory, tasks/<task_id>/.
type TaskDir struct {
	ws   *Workspace
	id   string
	dir  string // absolute
	real string // dir with symlinks resolved, for containment checks
}

// CreateTask creates a new task directory with all its subdirectories,
// task.md and task.json. If t.ID is empty a sortable unique id is assigned;
// if t.CreatedAt is zero it is set to now. task.json is immutable: if it
// already exists the result is ErrExists.
func (w *Workspace) CreateTask(t vocab.Task) (*TaskDir, error) {
	now := w.now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now.UTC()
	}
	tasks := filepath.Join(w.root, vocab.TasksDir)
	if t.ID == "" {
		var err error
		for i := 0; ; i++ {
			t.ID = newTaskID(now)
			err = os.Mkdir(filepath.Join(tasks, t.ID), 0o755)
			if err == nil || !errors.Is(err, fs.ErrExist) || i == 20 {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("workspace: create task: %w", err)
		}
	} else {
		if err := checkTaskID(t.ID); err != nil {
			return nil, err
		}
		if err := os.Mkdir(filepath.Join(tasks, t.ID), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("workspace: create task %s: %w", t.ID, err)
		}
	}
	td, err := w.openTask(t.ID)
	if err != nil {
		return nil, err
	}
	jsonPath := filepath.Join(td.dir, vocab.TaskFile)
	if _, err := os.Lstat(jsonPath); err == nil {
		return nil, fmt.Errorf("workspace: create task %s: task.json: %w", t.ID, ErrExists)
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("workspace: create task %s: %w", t.ID, err)
	}
	mdPath, err := td.Path(vocab.TaskMarkdown)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(mdPath, []byte(renderTask(t)), 0o644); err != nil {
		return nil, fmt.Errorf("workspace: create task %s: %w", t.ID, err)
	}
	// task.json last: its presence marks a complete task directory.
	if err := createExclusive(jsonPath, append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("workspace: create task %s: %w", t.ID, err)
	}
	return td, nil
}

func renderTask(t vocab.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task %s\n\n%s\n", t.ID, strings.TrimSpace(t.Description))
	if t.Context != "" {
		fmt.Fprintf(&b, "\n## Context\n\n%s\n", strings.TrimSpace(t.Context))
	}
	if len(t.Constraints) > 0 {
		b.WriteString("\n## Constraints\n\n")
		for _, c := range t.Constraints {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	fmt.Fprintf(&b, "\n## Details\n\n- Created: %s\n", t.CreatedAt.UTC().Format(time.RFC3339))
	if t.Project != "" {
		fmt.Fprintf(&b, "- Project: %s\n", t.Project)
	}
	if t.Workers > 0 {
		fmt.Fprintf(&b, "- Workers: %d\n", t.Workers)
	}
	if t.Agent != "" {
		fmt.Fprintf(&b, "- Agent: %s\n", t.Agent)
	}
	if t.Priority != "" {
		fmt.Fprintf(&b, "- Priority: %s\n", t.Priority)
	}
	if t.SubmittedBy != "" {
		fmt.Fprintf(&b, "- Submitted by: %s\n", t.SubmittedBy)
	}
	return b.String()
}

// OpenTask opens an existing task directory and makes sure all its
// subdirectories exist. An id with a separator, "..", etc. is ErrBadTaskID;
// a missing task wraps fs.ErrNotExist.
func (w *Workspace) OpenTask(id string) (*TaskDir, error) {
	if err := checkTaskID(id); err != nil {
		return nil, err
	}
	return w.openTask(id)
}

func (w *Workspace) openTask(id string) (*TaskDir, error) {
	dir := filepath.Join(w.root, vocab.TasksDir, id)
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: open task %s: %w", id, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("workspace: open task %s: %w", id, ErrSymlink)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: open task %s: not a directory", id)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: open task %s: %w", id, err)
	}
	td := &TaskDir{ws: w, id: id, dir: dir, real: real}
	for _, sub := range taskSubdirs {
		p, err := td.Path(sub)
		if err != nil {
			return nil, fmt.Errorf("workspace: open task %s: %w", id, err)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("workspace: open task %s: %w", id, err)
		}
	}
	return td, nil
}

// ID returns the task id.
func (t *TaskDir) ID() string { return t.id }

// Dir returns the absolute task directory.
func (t *TaskDir) Dir() string { return t.dir }

// Workspace returns the workspace the task belongs to.
func (t *TaskDir) Workspace() *Workspace { return t.ws }

// Path joins rel onto the task directory safely: rel must be relative and
// local (no "..", not absolute, not empty), and no existing component may be
// a symlink that resolves outside the task directory (ErrOutside).
func (t *TaskDir) Path(rel string) (string, error) {
	if !filepath.IsLocal(rel) || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("workspace: path %q in task %s: %w", rel, t.id, ErrOutside)
	}
	rel = filepath.Clean(rel)
	if err := checkNoEscape(t.dir, t.real, rel); err != nil {
		return "", fmt.Errorf("workspace: path %q in task %s: %w", rel, t.id, err)
	}
	return filepath.Join(t.dir, rel), nil
}

// CheckInside reports ErrOutside when the relative path rel, joined onto
// dir, is not local or leads outside dir through an existing symlink
// (a path through an in-project link to /etc, say). Components that do not
// exist yet are fine: they will be created inside.
func CheckInside(dir, rel string) error {
	if !filepath.IsLocal(rel) {
		return ErrOutside
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	return checkNoEscape(dir, real, filepath.Clean(rel))
}

// checkNoEscape walks rel below dir and fails with ErrOutside if an existing
// component is a symlink that resolves outside real (dir's resolved path) or
// does not resolve at all.
func checkNoEscape(dir, real, rel string) error {
	cur := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(cur)
		if err != nil || !within(real, target) {
			return ErrOutside
		}
	}
	return nil
}

// within reports whether p is base or below it (both clean, absolute).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && filepath.IsLocal(rel)
}

// Task reads task.json.
func (t *TaskDir) Task() (vocab.Task, error) { return ReadTask(t.dir) }

// ReadTask reads the task.json of task directory dir.
func ReadTask(dir string) (vocab.Task, error) {
	var task vocab.Task
	data, err := readNoFollow(filepath.Join(dir, vocab.TaskFile))
	if err != nil {
		return task, fmt.Errorf("workspace: read task %s: %w", filepath.Base(dir), err)
	}
	if err := json.Unmarshal(data, &task); err != nil {
		return task, fmt.Errorf("workspace: read task %s: task.json: %w", filepath.Base(dir), err)
	}
	return task, nil
}

// TaskInfo describes one task for listings.
type TaskInfo struct {
	ID    string
	Task  vocab.Task
	State *vocab.State // nil if the task has no readable state
	Dir   string
	// Problem is set when task.json or state.json could not be read; State
	// then may come from a backup (read only, nothing is repaired here).
	Problem string
}

// Tasks lists the tasks of the workspace sorted by id. Unreadable tasks are
// listed with Problem set rather than failing the listing.
func (w *Workspace) Tasks() ([]TaskInfo, error) {
	tasksDir := filepath.Join(w.root, vocab.TasksDir)
	entries, err := os.ReadDir(tasksDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("workspace: list tasks: %w", err)
	}
	var out []TaskInfo
	for _, e := range entries {
		// Skip symlinks and files: a task directory is a real directory.
		if !e.IsDir() || !vocab.ValidID(e.Name()) {
			continue
		}
		dir := filepath.Join(tasksDir, e.Name())
		info := TaskInfo{ID: e.Name(), Dir: dir}
		td := &TaskDir{ws: w, id: e.Name(), dir: dir, real: dir}
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			td.real = r
		}
		task, err := td.Task()
		if err != nil {
			info.Problem = err.Error()
		}
		info.Task = task
		st, _, problem, err := readState(td)
		if err == nil && st != nil {
			info.State = st
		}
		if problem != "" || err != nil {
			if err != nil {
				problem = err.Error()
			}
			info.Problem = strings.TrimPrefix(info.Problem+"; "+problem, "; ")
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// finished reports whether a task with state st is over (complete,
// cancelled or abandoned: State.Over). A task without state is unfinished.
func finished(st *vocab.State) bool {
	return st != nil && st.Over()
}

// Unfinished returns the newest task (by creation time, then id) that is
// not over: not complete, cancelled or abandoned. Tasks whose task.json
// cannot be read are skipped.
func (w *Workspace) Unfinished() (id string, ok bool, err error) {
	infos, err := w.Tasks()
	if err != nil {
		return "", false, err
	}
	sort.SliceStable(infos, func(i, j int) bool {
		a, b := infos[i], infos[j]
		if !a.Task.CreatedAt.Equal(b.Task.CreatedAt) {
			return a.Task.CreatedAt.After(b.Task.CreatedAt)
		}
		return a.ID > b.ID
	})
	for _, in := range infos {
		if in.Task.ID == "" {
			continue
		}
		if !finished(in.State) {
			return in.ID, true, nil
		}
	}
	return "", false, nil
}
