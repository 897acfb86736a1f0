package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdDiff prints, for the current task of a git project, one worker's
// changes (`hivemind diff worker_1`: its worktree, committed or not, against
// what it last took from the task branch) or the task's result so far
// (`hivemind diff`: git diff <base>...hivemind/<task_id>); while the
// project's server runs the task, as the server answers it. It only reads,
// so it works while a run is going on and after the task ended. An empty
// diff is said on stderr, with where the work is (a finished task's
// workers are merged and their worktrees removed).
func cmdDiff(o options, stdout, stderr io.Writer) error {
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
			if a, ok := info.State.Agents[vocab.AgentID(agent)]; ok && a.Role != vocab.RoleWorker {
				return fmt.Errorf("%s is the %s: only workers have a branch of their own", agent, a.Role)
			}
		}
		out, err = fromServer(o, info.ID, agent, func() (string, error) { return repo.Diff(agent) })
		if errors.Is(err, gitwork.ErrNoWorktree) {
			if over(info) {
				return fmt.Errorf("%s has no worktree or branch left in task %s: it %s, and a branch that held nothing beyond the task's start was removed; hivemind diff shows the task's changes", agent, info.ID, phaseWord(info))
			}
			return fmt.Errorf("%s has no worktree or branch in task %s", agent, info.ID)
		}
		if err == nil && out == "" {
			fmt.Fprintln(stderr, "hivemind:", emptyWorkerDiff(repo, agent, info))
		}
	} else {
		if over(info) && !repo.HasBranch(repo.TaskBranch()) {
			return fmt.Errorf("task %s changed nothing before it ended (it %s): its branch %s held nothing beyond the task's start and was removed", info.ID, phaseWord(info), repo.TaskBranch())
		}
		out, err = fromServer(o, info.ID, "", repo.TaskDiff)
		if errors.Is(err, gitwork.ErrNotStarted) {
			return fmt.Errorf("task %s has no task branch (it ran without git)", info.ID)
		}
		if err == nil && out == "" {
			fmt.Fprintf(stderr, "hivemind: task %s (%s) has changed nothing on its branch %s yet\n", info.ID, phaseWord(info), repo.TaskBranch())
		}
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}

// fromServer is the diff the project's running server answers for task
// (the one its clients see), else the workspace's (local).
func fromServer(o options, task, agent string, local func() (string, error)) (string, error) {
	d, ok, err := app.LiveDiff(o.Options, binaryVersion(), task, agent)
	if err != nil || ok {
		return d, err
	}
	return local()
}

// emptyWorkerDiff says why a worker's diff is empty and where its work is.
func emptyWorkerDiff(repo *gitwork.Repo, agent string, info workspace.TaskInfo) string {
	branch, task := repo.WorkerBranch(agent), repo.TaskBranch()
	if _, err := os.Stat(repo.WorktreeDir(agent)); err != nil {
		return fmt.Sprintf("%s's worktree is gone (task %s %s) and its branch %s holds nothing the task branch %s lacks: its work is in %s. "+
			"hivemind diff shows the task's changes; git log %s the worker's commits", agent, info.ID, phaseWord(info), branch, task, task, branch)
	}
	return fmt.Sprintf("%s has no changes the task branch %s lacks yet (its worktree %s; its branch %s)", agent, task, repo.WorktreeDir(agent), branch)
}

// over reports whether the task has ended (complete, cancelled, abandoned).
func over(info workspace.TaskInfo) bool {
	return info.State != nil && info.State.Over()
}

// phaseWord is where the task is, in words: "is complete", "was abandoned".
func phaseWord(info workspace.TaskInfo) string {
	switch {
	case info.State == nil:
		return "has not started"
	case info.State.Abandoned():
		return "was abandoned"
	}
	return "is " + string(info.State.Phase)
}
