package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Launcher is the front door's seam to the outside world: the start screen
// and the summary never touch the workspace or start processes themselves,
// they ask a Launcher (internal/app implements it). Every method may block
// (disk, process start and stop); the TUI calls them only from a tea.Cmd,
// never from Update.
type Launcher interface {
	// Scan reads what the start screen shows for a project directory:
	// whether it is a git repository, whether another Hivemind holds its
	// workspace, its unfinished task and its past tasks.
	Scan(project string) (Project, error)
	// Start creates the task (task.json) in the project's workspace and
	// starts running it. The agents picked on the start screen come in
	// task.Agents (role → agent, every role named), to run as `--agent
	// lead=…,reviewer=…,worker=…` would. Snapshots of the run arrive as
	// SnapshotMsg whose State.TaskID is the returned session's TaskID.
	Start(project string, task vocab.Task) (Session, error)
	// Resume resumes the project's unfinished task (the workspace lock and
	// state decide which one, as `hivemind --resume` does).
	Resume(project string) (Session, error)
	// Usage reports tokens and cost per agent of a task where the agent
	// profile makes them known; agents it knows nothing of are omitted.
	Usage(st vocab.State) []AgentUsage
}

// AgentChoice is an agent the start screen offers for a role.
type AgentChoice struct {
	Name string // as --agent names it: "claude", "codex", a profile
	// Missing says why the agent cannot start on this machine ("codex is
	// not on PATH (npm install -g @openai/codex)"), "" when it can or
	// cannot be told. It is checked once, when the screen opens.
	Missing string
}

// Project is what the start screen shows of one project directory.
type Project struct {
	Dir string
	// Git is true when Dir is inside a git work tree.
	Git bool
	// Checkout says what the checkout holds that its HEAD does not
	// (uncommitted edits, a rebase or merge in progress), "" when clean or
	// not git: a task starts from a commit, so starting asks about it.
	Checkout string
	// WriteScopes says whether agents' writes are confined by the kernel
	// here (app.WriteScopeStatus): shown so that "off" is never silent.
	WriteScopes string
	// LockedBy is set when another Hivemind holds the workspace (it names
	// the holder); nothing can be started or resumed then.
	LockedBy string
	// Unfinished is the task `--resume` would resume, if any.
	Unfinished *PastTask
	// Tasks are the tasks of the project's workspace, newest first.
	Tasks []PastTask
}

// PastTask is one task of a workspace, for listings.
type PastTask struct {
	ID          string
	Description string
	Phase       vocab.Phase // "" when the task has no readable state
	Created     time.Time
	Started     time.Time
	Finished    time.Time
	// State is the task's state.json (nil if unreadable); the summary of a
	// past task is built from it.
	State *vocab.State
	Dir   string
}

// Duration is how long the task ran: its elapsed clock when its state is
// known (vocab.State.Elapsed; no run of it is live while it is
// listed), else from its start to its end, or now when it has not ended.
func (p PastTask) Duration(now time.Time) time.Duration {
	if p.State != nil {
		return p.State.Elapsed(now, false)
	}
	if p.Started.IsZero() {
		return 0
	}
	end := p.Finished
	if end.IsZero() {
		end = now
	}
	return max(end.Sub(p.Started), 0)
}

// Session is a task running under the TUI.
type Session struct {
	TaskID string
	Title  string
	// Engine receives pause/resume/cancel/retry/abandon.
	Engine Engine
	// Terminals are the agents' live screens.
	Terminals Terminals
	// Branch is the task's git branch ("" without git).
	Branch string
	// Team is the agent of each role (role → agent), shown in the pane
	// titles; nil shows none. WorkerTeam are the workers of their own.
	Team       map[vocab.Role]string
	WorkerTeam map[vocab.AgentID]string
	// Diff returns one worker's changes (see Options.Diff); may be nil.
	Diff func(agentID string) (string, error)
	// Close stops the agents and the engine and releases the workspace.
	// It blocks; the TUI calls it from a tea.Cmd when the user leaves the
	// task for the start screen (the caller of Run closes a session that is
	// still open when the program ends).
	Close func() error
}

// AgentUsage is what one agent consumed, where known.
type AgentUsage struct {
	Agent        vocab.AgentID
	InputTokens  int64 // including cache reads and writes
	OutputTokens int64
	// CostUSD is the cost when known (CostKnown).
	CostUSD   float64
	CostKnown bool
	// Note says where the figures come from or why they are missing.
	Note string
}

// projectScannedMsg carries a Launcher.Scan result.
type projectScannedMsg struct {
	project string
	info    Project
	err     error
}

// sessionStartedMsg carries a Launcher.Start or Resume result.
type sessionStartedMsg struct {
	sess Session
	err  error
}

// sessionClosedMsg says Session.Close returned.
type sessionClosedMsg struct{ err error }

// scanCmd asks the launcher what the start screen shows for project.
func scanCmd(l Launcher, project string) tea.Cmd {
	return func() tea.Msg {
		info, err := l.Scan(project)
		return projectScannedMsg{project: project, info: info, err: err}
	}
}

// startCmd asks the launcher to create and start a task.
func startCmd(l Launcher, project string, t vocab.Task) tea.Cmd {
	return func() tea.Msg {
		s, err := l.Start(project, t)
		return sessionStartedMsg{sess: s, err: err}
	}
}

// resumeCmd asks the launcher to resume the project's unfinished task.
func resumeCmd(l Launcher, project string) tea.Cmd {
	return func() tea.Msg {
		s, err := l.Resume(project)
		return sessionStartedMsg{sess: s, err: err}
	}
}

// closeSessionCmd stops a session (agents, engine, workspace lock).
func closeSessionCmd(close func() error) tea.Cmd {
	return func() tea.Msg {
		if close == nil {
			return sessionClosedMsg{}
		}
		return sessionClosedMsg{err: close()}
	}
}
