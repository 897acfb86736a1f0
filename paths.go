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

// openExisting opens the workspace for reading commands (status, events)
// without creating it.
func (o options) openExisting() (*workspace.Workspace, error) {
	root, err := o.workspaceRoot()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("no Hivemind workspace at %s (run a task first)", root)
	}
	return workspace.Open(root)
}

// currentTask returns the task status and events show: the unfinished
// task, else the newest one.
func currentTask(ws *workspace.Workspace) (workspace.TaskInfo, error) {
	infos, err := ws.Tasks()
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
