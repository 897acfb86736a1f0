package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hivemind-dev/hivemind/workspace"
)

// errNoTask says the workspace has no task to show.
var errNoTask = errors.New("no task in this workspace yet")

func absPath(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	return a, nil
}

// workspaceRoot returns the workspace root the options name.
func (o options) workspaceRoot() (string, error) {
	if o.workspace != "" {
		return absPath(o.workspace)
	}
	project, err := o.projectDir()
	if err != nil {
		return "", err
	}
	return workspace.DefaultRoot(project), nil
}

// currentTask finds the task the reading commands (status, events, diff)
// show in the workspace the options name: the unfinished task, else the
// newest one. A missing workspace is an error, not created.
func (o options) currentTask() (workspace.TaskInfo, error) {
	root, err := o.workspaceRoot()
	if err != nil {
		return workspace.TaskInfo{}, err
	}
	if _, err := os.Stat(root); err != nil {
		return workspace.TaskInfo{}, fmt.Errorf("no Hivemind workspace at %s (run a task first)", root)
	}
	ws, infos, err := readTasks(root)
	if err != nil {
		return workspace.TaskInfo{}, err
	}
	if len(infos) == 0 {
		return workspace.TaskInfo{}, errNoTask
	}
	if id, ok, err := ws.Unfinished(); err == nil && ok {
		for _, in := range infos {
			if in.ID == id {
				return in, nil
			}
		}
	}
	newest := infos[0]
	for _, in := range infos[1:] {
		if !in.Task.CreatedAt.Before(newest.Task.CreatedAt) {
			newest = in
		}
	}
	return newest, nil
}

// readTasks lists the tasks of the workspace at root for a reading command
// (status, tasks, the start screen): it creates nothing. Without a tasks
// directory there are no tasks and ws is nil.
func readTasks(root string) (ws *workspace.Workspace, infos []workspace.TaskInfo, err error) {
	if _, err := os.Stat(filepath.Join(root, workspace.TasksDir)); err != nil {
		return nil, nil, nil
	}
	if ws, err = workspace.Open(root); err != nil {
		return nil, nil, err
	}
	if infos, err = ws.Tasks(); err != nil {
		return nil, nil, err
	}
	return ws, infos, nil
}
