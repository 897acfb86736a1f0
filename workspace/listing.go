package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ErrNoTask says a workspace has no task to show.
var ErrNoTask = errors.New("no task in this workspace yet")

// ReadTasks lists the tasks of the workspace at root for a reading command
// (status, tasks, the start screen), sorted by id: it creates nothing.
// Without a tasks directory there are no tasks and ws is nil.
func ReadTasks(root string) (ws *Workspace, infos []TaskInfo, err error) {
	if _, err := os.Stat(filepath.Join(root, vocab.TasksDir)); err != nil {
		return nil, nil, nil
	}
	if ws, err = Open(root); err != nil {
		return nil, nil, err
	}
	if infos, err = ws.Tasks(); err != nil {
		return nil, nil, err
	}
	return ws, infos, nil
}

// CurrentTask is the task the reading commands (status, events, diff) show
// of the workspace at root: the unfinished task, else the newest one;
// ErrNoTask when there is none. It creates nothing.
func CurrentTask(root string) (TaskInfo, error) {
	ws, infos, err := ReadTasks(root)
	if err != nil {
		return TaskInfo{}, err
	}
	if len(infos) == 0 {
		return TaskInfo{}, ErrNoTask
	}
	if in, ok := unfinished(ws, infos); ok {
		return in, nil
	}
	newest := infos[0]
	for _, in := range infos[1:] {
		if !in.Task.CreatedAt.Before(newest.Task.CreatedAt) {
			newest = in
		}
	}
	return newest, nil
}

// UnfinishedTask is the task of the workspace at root that --resume would
// take up, if any (read only).
func UnfinishedTask(root string) (TaskInfo, bool) {
	ws, infos, err := ReadTasks(root)
	if err != nil || ws == nil {
		return TaskInfo{}, false
	}
	return unfinished(ws, infos)
}

// unfinished finds the workspace's unfinished task among infos.
func unfinished(ws *Workspace, infos []TaskInfo) (TaskInfo, bool) {
	if ws == nil {
		return TaskInfo{}, false
	}
	id, ok, err := ws.Unfinished()
	if err != nil || !ok {
		return TaskInfo{}, false
	}
	for _, in := range infos {
		if in.ID == id {
			return in, true
		}
	}
	return TaskInfo{}, false
}

// NewestFirst returns the tasks sorted for listings: newest first (by
// creation, then id).
func NewestFirst(infos []TaskInfo) []TaskInfo {
	out := slices.Clone(infos)
	slices.SortStableFunc(out, func(a, b TaskInfo) int {
		if c := b.Task.CreatedAt.Compare(a.Task.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out
}

// Title is the task's description, or its problem in parentheses when
// task.json could not be read.
func (in TaskInfo) Title() string {
	if in.Task.Description == "" && in.Problem != "" {
		return "(" + in.Problem + ")"
	}
	return in.Task.Description
}

// StateName names a task's state as people know it: an abandoned task
// (State.Abandoned) says so; a task without state has not started.
func (in TaskInfo) StateName() string {
	switch {
	case in.State == nil:
		return "not started"
	case in.State.Abandoned():
		return "abandoned"
	}
	return string(in.State.Phase)
}
