package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdDiff prints, for the current task of a git project, one worker's
// changes (`hivemind diff worker_1`: its worktree, committed or not, against
// what it last took from the task branch) or the task's result so far
// (`hivemind diff`: git diff <base>...hivemind/<task_id>). It only reads,
// so it works while a run is going on and after the task ended.
func cmdDiff(o options, stdout io.Writer) error {
	if len(o.args) > 2 {
		return fmt.Errorf("%w: hivemind diff [agent]", app.ErrUsage)
	}
	info, err := o.CurrentTask()
	if err != nil {
		return err
	}
	project, err := o.ProjectDir()
	if err != nil {
		return err
	}
	if info.State != nil && info.State.Project != "" {
		project = info.State.Project
	}
	root, err := o.WorkspaceRoot()
	if err != nil {
		return err
	}
	cfg, _, err := o.LoadConfig()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	repo, err := gitwork.Open(project, root, info.ID, app.GitOptions(cfg))
	if errors.Is(err, gitwork.ErrNotRepo) {
		return fmt.Errorf("%s is not a git project: the workers share the project directory, there is no diff to show", project)
	}
	if err != nil {
		return err
	}
	var out string
	if len(o.args) == 2 {
		agent := o.args[1]
		if info.State != nil {
			if a, ok := info.State.Agents[workspace.AgentID(agent)]; ok && a.Role != workspace.RoleWorker {
				return fmt.Errorf("%s is the %s: only workers have a branch of their own", agent, a.Role)
			}
		}
		out, err = repo.Diff(agent)
		if errors.Is(err, gitwork.ErrNoWorktree) {
			return fmt.Errorf("%s has no worktree or branch in task %s", agent, info.ID)
		}
	} else {
		out, err = repo.TaskDiff()
		if errors.Is(err, gitwork.ErrNotStarted) {
			return fmt.Errorf("task %s has no task branch (it ran without git)", info.ID)
		}
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}
