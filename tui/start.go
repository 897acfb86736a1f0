package tui

import (
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/workspace"
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
	Start(project string, task workspace.Task) (Session, error)
	// Resume resumes the project's unfinished task (the workspace lock and
	// state decide which one, as `hivemind --resume` does).
	Resume(project string) (Session, error)
	// Usage reports tokens and cost per agent of a task where the agent
	// profile makes them known; agents it knows nothing of are omitted.
	Usage(st workspace.State) []AgentUsage
}

// AgentChoice is an agent the start screen offers for a role.
type AgentChoice struct {
	Name string // as --agent names it: "claude", "codex", a profile
	// Missing says why the agent cannot start on this machine ("codex is
	// not on PATH (npm install -g @openai/codex)"), "" when it can or
	// cannot be told. It is checked once, when the screen opens.
	Missing string
}

// teamRoles are the roles the Team row picks an agent for, in its order.
var teamRoles = [...]workspace.Role{workspace.RoleLead, workspace.RoleReviewer, workspace.RoleWorker}

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
	Phase       workspace.Phase // "" when the task has no readable state
	Created     time.Time
	Started     time.Time
	Finished    time.Time
	// State is the task's state.json (nil if unreadable); the summary of a
	// past task is built from it.
	State *workspace.State
	Dir   string
}

// Duration is how long the task ran (until now when it has not finished).
func (p PastTask) Duration(now time.Time) time.Duration {
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
	Team       map[workspace.Role]string
	WorkerTeam map[workspace.AgentID]string
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
	Agent        workspace.AgentID
	InputTokens  int64 // including cache reads and writes
	OutputTokens int64
	// CostUSD is the cost when known (CostKnown).
	CostUSD   float64
	CostKnown bool
	// Note says where the figures come from or why they are missing.
	Note string
}

// screenMode is what fills the screen.
type screenMode int

const (
	modeRun     screenMode = iota // the agent panes (the original view)
	modeStart                     // the start screen
	modePicker                    // the folder picker over the start screen
	modeSummary                   // the summary of a finished (or failed) task
)

// startFocus is the focused part of the start screen.
type startFocus int

const (
	focusTask startFocus = iota
	focusConstraints
	focusContext
	focusTeam // each role's agent and the worker count (←→ choose, ↑↓ change)
	focusList // the past tasks (keys are commands here)
	numFocus
)

// frontDoor is the start screen, folder picker and summary state of a Model.
// It is active only when Options.Launcher is set; without one the Model is
// the plain run view it always was.
type frontDoor struct {
	on   bool
	mode screenMode
	keys startKeyMap

	project string
	info    Project
	scanned bool
	scanErr string
	// busy says a launcher call is outstanding ("starting the task…").
	busy string
	// ask is a question a yes settles, asked under formErr (startask.go).
	ask *StartQuestion

	focus       startFocus
	task        textarea.Model
	constraints textarea.Model
	context     textarea.Model
	sel         int // selected past task
	formErr     string
	agents      []AgentChoice // offered for every role (Options.Agents)
	pick        []int         // each role's agent (teamRoles order; index into agents)
	each        []int         // each worker's agent once e splits the workers (index into agents); nil: the worker role's
	slot        int           // the Team row's selected slot: an agent slot (agentSlots), or the worker count (countSlot)
	workers     int           // the chosen worker count (0: the launcher's default)
	humanPlan   bool          // the user approves each plan after the Reviewer (plan.go)

	picker filepicker.Model

	sess *Session
	// seen is the phase of the live session last looked at (see frontAfter).
	seen workspace.Phase

	sum       summaryData
	sumLoaded bool
	sumLive   bool // the summary is of the live session (not a past task)
	sumScroll int
}

// startKeyMap is every key of the start screen, picker and summary.
type startKeyMap struct {
	Submit, NextField, PrevField, Menu, Edit key.Binding
	TeamSlot, TeamPick, Workers, AllRoles    key.Binding
	PlanBy, Each                             key.Binding
	Resume, Open, Up, Down, View, Quit, Help key.Binding

	PickOpen, PickBack, PickChoose, PickHere, PickCancel key.Binding

	NewTask, Panes, Retry, Abandon, ScrollUp, ScrollDown, Back key.Binding
}

func newStartKeyMap() startKeyMap {
	return startKeyMap{
		Submit:    key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "start task")),
		NextField: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		PrevField: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		Menu:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave field")),
		Edit:      key.NewBinding(key.WithKeys("n", "i"), key.WithHelp("n", "new task")),
		TeamSlot:  key.NewBinding(key.WithKeys("left", "right", "h", "l"), key.WithHelp("←/→", "team: choose a role or the count")),
		TeamPick:  key.NewBinding(key.WithKeys("up", "down", "k", "j", "space"), key.WithHelp("↑/↓", "team: change its agent or count")),
		Workers:   key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+/-", "team: workers")),
		AllRoles:  key.NewBinding(key.WithKeys("="), key.WithHelp("=", "team: this agent for every role")),
		PlanBy:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "team: you approve the plan too")),
		Each:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "team: an agent per worker")),
		Resume:    key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "resume unfinished")),
		Open:      key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "choose folder")),
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select")),
		View:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "task summary")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:      key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?/f1", "help")),

		PickOpen:   key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "open folder")),
		PickBack:   key.NewBinding(key.WithKeys("left", "h", "backspace"), key.WithHelp("←/h", "parent")),
		PickChoose: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "use highlighted")),
		PickHere:   key.NewBinding(key.WithKeys("."), key.WithHelp(".", "use this folder")),
		PickCancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),

		NewTask:    key.NewBinding(key.WithKeys("enter", "n"), key.WithHelp("enter", "new task")),
		Panes:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "agent panes")),
		Retry:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry")),
		Abandon:    key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "abandon")),
		ScrollUp:   key.NewBinding(key.WithKeys("up", "k", "pgup"), key.WithHelp("↑/pgup", "scroll")),
		ScrollDown: key.NewBinding(key.WithKeys("down", "j", "pgdown"), key.WithHelp("↓/pgdn", "scroll")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// sessionOptions makes an initial Options.Session the live task.
func sessionOptions(opts Options) Options {
	if s := opts.Session; s != nil && opts.Launcher != nil {
		opts.Engine, opts.Terminals, opts.Title, opts.Branch, opts.Diff = s.Engine, s.Terminals, s.Title, s.Branch, s.Diff
		opts.Team, opts.WorkerTeam = s.Team, s.WorkerTeam
	}
	return opts
}

// initFront sets up the front door of a new Model.
func (m *Model) initFront(opts Options) {
	m.fd = newFrontDoor(opts)
	m.keys.Summary.SetEnabled(m.fd.on)
}

func newFrontDoor(opts Options) frontDoor {
	fd := frontDoor{on: opts.Launcher != nil, keys: newStartKeyMap(), project: opts.Project,
		workers: opts.Workers, humanPlan: opts.HumanPlanApproval}
	if !fd.on {
		return fd
	}
	fd.setTeam(opts.Agents, opts.StartTeam)
	fd.setEach(opts.StartWorkers)
	fd.task = newField("Describe the task: what to build or change, and how you will know it is done.")
	fd.constraints = newField("Optional, one per line: e.g. no new dependencies")
	fd.context = newField("Optional: background the agents should know")
	fd.picker = newPicker(opts.Project)
	fd.mode = modeStart
	fd.busy = "reading the project…"
	if opts.Session != nil {
		s := *opts.Session
		fd.sess = &s
		fd.mode = modeRun
	}
	return fd
}

// newField is one multi-line input of the start screen.
func newField(placeholder string) textarea.Model {
	ta := textarea.New()
	ta.Placeholder = placeholder
	ta.ShowLineNumbers = false
	ta.Prompt = "┃ "
	ta.CharLimit = 0
	ta.MaxHeight = 0
	st := textarea.DefaultDarkStyles()
	// A steady cursor: a blinking one would tick for ever while idle.
	st.Cursor.Blink = false
	st.Focused.CursorLine = st.Focused.Text
	st.Focused.Prompt = st.Focused.Prompt.Foreground(colFocus)
	st.Blurred.Prompt = st.Blurred.Prompt.Foreground(colDim)
	ta.SetStyles(st)
	ta.Blur()
	return ta
}

func newPicker(dir string) filepicker.Model {
	fp := filepicker.New()
	fp.DirAllowed, fp.FileAllowed = true, false
	fp.ShowPermissions, fp.ShowSize = false, false
	fp.AutoHeight = false
	fp.Cursor = "▸"
	// Our own keys choose and cancel; the picker only moves.
	fp.KeyMap.Back = key.NewBinding(key.WithKeys("left", "h", "backspace"))
	fp.KeyMap.Open = key.NewBinding(key.WithKeys("right", "l", "enter"))
	if dir != "" {
		fp.CurrentDirectory = dir
	}
	return fp
}

// ---- messages ----

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

// summaryLoadedMsg carries a summary read from the task directory.
type summaryLoadedMsg struct {
	taskID string
	sum    summaryData
}

// ---- commands ----

// scanCmd asks the launcher what the start screen shows for project.
func scanCmd(l Launcher, project string) tea.Cmd {
	return func() tea.Msg {
		info, err := l.Scan(project)
		return projectScannedMsg{project: project, info: info, err: err}
	}
}

// startCmd asks the launcher to create and start a task.
func startCmd(l Launcher, project string, t workspace.Task) tea.Cmd {
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

// ---- update ----

// frontInit is the front door's part of Init: scan the project when the
// start screen shows first.
func (m Model) frontInit() tea.Cmd {
	if !m.fd.on || m.fd.mode != modeStart {
		return nil
	}
	return scanCmd(m.opts.Launcher, m.fd.project)
}

// frontUpdate handles the messages of the front door. handled is false when
// the run view must handle msg (as it did before the front door existed).
func (m *Model) frontUpdate(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	if !m.fd.on {
		return nil, false
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.fd.resize(msg.Width, msg.Height)
		return nil, false
	case projectScannedMsg:
		return m.handleScanned(msg), true
	case sessionStartedMsg:
		return m.handleSessionStarted(msg), true
	case sessionClosedMsg:
		m.fd.busy = ""
		if msg.err != nil {
			m.notice = notice{level: "warn", text: "stopping the task: " + msg.err.Error()}
		}
		return m.rescan(), true
	case summaryLoadedMsg:
		if msg.taskID == m.fd.sum.TaskID {
			m.fd.sum = msg.sum
			m.fd.sumLoaded = true
		}
		return nil, true
	case SnapshotMsg:
		if m.fd.sess == nil || msg.State.TaskID != m.fd.sess.TaskID {
			return nil, true // from a run that is over, or not started yet
		}
		return nil, false
	case tea.KeyPressMsg:
		return m.frontKey(msg)
	case tea.PasteMsg:
		if m.fd.mode == modeStart && m.fd.focus != focusList {
			return m.updateField(msg), true
		}
		return nil, m.fd.mode != modeRun
	case tea.MouseClickMsg, tea.MouseReleaseMsg, tea.MouseMotionMsg:
		return nil, m.fd.mode != modeRun
	case tea.MouseWheelMsg:
		if m.fd.mode == modeSummary {
			switch msg.Mouse().Button {
			case tea.MouseWheelUp:
				m.fd.sumScroll = max(m.fd.sumScroll-wheelLines, 0)
			case tea.MouseWheelDown:
				m.fd.sumScroll += wheelLines
			}
		}
		return nil, m.fd.mode != modeRun
	}
	if m.fd.mode == modePicker {
		// The picker reads directories in its own commands; their
		// messages are unexported, so everything else goes through it
		// (it ignores what is not its own).
		var c tea.Cmd
		m.fd.picker, c = m.fd.picker.Update(msg)
		return c, false
	}
	return nil, false
}

// frontAfter runs after the run view handled msg: it moves between the
// panes and the summary as the live task's phase changes.
func (m *Model) frontAfter(msg tea.Msg) tea.Cmd {
	if !m.fd.on || m.fd.sess == nil || !m.haveState {
		return nil
	}
	if _, ok := msg.(SnapshotMsg); !ok {
		return nil
	}
	p := m.st.Phase
	if p == m.fd.seen {
		return nil
	}
	prev := m.fd.seen
	m.fd.seen = p
	switch {
	case p == workspace.PhaseComplete || p == workspace.PhaseCancelled || p == workspace.PhaseError ||
		(p == workspace.PhaseIdle && prev != ""):
		// Over (idle: abandoned), or failed and waiting for retry or
		// abandon: show what was done.
		if m.fd.mode == modeRun || (m.fd.mode == modeSummary && m.fd.sumLive) {
			m.fd.mode = modeSummary
			m.attached, m.zoom, m.showHelp = false, false, false
			return m.openSummary(m.st, true)
		}
	case p == workspace.PhaseNeedsHuman || p == workspace.PhasePaused:
		// The run view has the banner and the keys for these.
	default:
		// Running again (after retry): back to the panes.
		if m.fd.mode == modeSummary && m.fd.sumLive {
			m.fd.mode = modeRun
		}
	}
	return nil
}

func (m *Model) handleScanned(msg projectScannedMsg) tea.Cmd {
	if msg.project != m.fd.project {
		return nil // an older scan
	}
	m.fd.busy = ""
	m.fd.scanned = true
	m.fd.scanErr = ""
	m.fd.info = msg.info
	if msg.err != nil {
		m.fd.scanErr = msg.err.Error()
		m.fd.info = Project{Dir: msg.project}
	}
	m.fd.sel = min(m.fd.sel, max(len(m.fd.info.Tasks)-1, 0))
	if m.fd.mode == modeStart {
		// Resuming is one key away when there is something to resume;
		// otherwise the user most likely wants to type a task.
		if m.fd.info.Unfinished != nil && m.fd.focus == focusTask && m.fd.task.Value() == "" {
			return m.setFocus(focusList)
		}
		if m.fd.info.Unfinished == nil && m.fd.focus == focusList && len(m.fd.info.Tasks) == 0 {
			return m.setFocus(focusTask)
		}
		return m.setFocus(m.fd.focus)
	}
	return nil
}

func (m *Model) handleSessionStarted(msg sessionStartedMsg) tea.Cmd {
	m.fd.busy = ""
	if msg.err != nil {
		m.startFailed(msg.err)
		return m.rescan()
	}
	s := msg.sess
	m.fd.task.Reset()
	m.fd.constraints.Reset()
	m.fd.context.Reset()
	m.fd.formErr = ""
	return m.beginSession(&s)
}

// beginSession shows a new live task: its panes appear as its agents start.
func (m *Model) beginSession(s *Session) tea.Cmd {
	m.fd.sess = s
	m.fd.seen = ""
	m.fd.mode = modeRun
	m.opts.Engine, m.opts.Terminals, m.opts.Title, m.opts.Branch, m.opts.Diff = s.Engine, s.Terminals, s.Title, s.Branch, s.Diff
	m.opts.Team, m.opts.WorkerTeam = s.Team, s.WorkerTeam
	m.resetRun()
	return m.rearm()
}

// endSession leaves the live task for the start screen; its agents are
// stopped in a command (the task stays resumable unless it is over).
func (m *Model) endSession() tea.Cmd {
	s := m.fd.sess
	m.fd.sess = nil
	m.fd.seen = ""
	m.opts.Engine, m.opts.Terminals, m.opts.Title, m.opts.Branch, m.opts.Diff = nil, nil, "", "", nil
	m.opts.Team, m.opts.WorkerTeam = nil, nil
	// Commands still waiting on the old terminals end now.
	m.life.stop()
	m.life = newLifecycle()
	m.resetRun()
	m.fd.mode = modeStart
	if s == nil {
		return m.rescan()
	}
	m.fd.busy = "stopping the agents…"
	return closeSessionCmd(s.Close)
}

// resetRun forgets everything the run view knew of the previous task.
func (m *Model) resetRun() {
	m.st, m.haveState = workspace.State{}, false
	m.events, m.checkout = nil, ""
	m.health = map[workspace.AgentID]workspace.Health{}
	m.agents = nil
	m.focusID = ""
	m.zoom, m.attached, m.showHelp, m.showEvents = false, false, false, false
	m.cx = knowledgePanel{}
	m.helpScroll, m.detail, m.digits = 0, false, ""
	m.find, m.sel, m.diff = search{}, selection{}, diffView{}
	m.pausedAt, m.pausedFor = time.Time{}, 0
	m.confirm = confirmNone
	m.scroll = map[workspace.AgentID]int{}
	m.r = newRenderCache()
	m.waiting, m.frameTimer = false, false
}

// rescan reads the current project again (after a task ends or the project
// changes).
func (m *Model) rescan() tea.Cmd {
	if m.fd.busy == "" {
		m.fd.busy = "reading the project…"
	}
	return scanCmd(m.opts.Launcher, m.fd.project)
}

// resize sizes the inputs and the picker for a w×h screen.
func (fd *frontDoor) resize(w, h int) {
	fw := max(w-6, 10)
	th, ch := 5, 2
	if h < 30 {
		th, ch = 3, 1
	}
	fd.task.SetWidth(fw)
	fd.task.SetHeight(th)
	fd.constraints.SetWidth(fw)
	fd.constraints.SetHeight(ch)
	fd.context.SetWidth(fw)
	fd.context.SetHeight(ch)
	fd.picker.SetHeight(max(h-8, 3))
}

// setFocus moves the start screen's focus.
func (m *Model) setFocus(f startFocus) tea.Cmd {
	m.fd.focus = f
	var cmds []tea.Cmd
	for i, ta := range []*textarea.Model{&m.fd.task, &m.fd.constraints, &m.fd.context} {
		if startFocus(i) == f {
			cmds = append(cmds, ta.Focus())
		} else {
			ta.Blur()
		}
	}
	return tea.Batch(cmds...)
}

// field is the focused input, or nil.
func (fd *frontDoor) field() *textarea.Model {
	switch fd.focus {
	case focusTask:
		return &fd.task
	case focusConstraints:
		return &fd.constraints
	case focusContext:
		return &fd.context
	}
	return nil
}

func (m *Model) updateField(msg tea.Msg) tea.Cmd {
	f := m.fd.field()
	if f == nil {
		return nil
	}
	var c tea.Cmd
	*f, c = f.Update(msg)
	return c
}

// frontKey handles a key press in the front door's screens, and the key
// that opens the summary from the run view.
func (m *Model) frontKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch m.fd.mode {
	case modeRun:
		if !m.attached && m.confirm == confirmNone && !m.showHelp && key.Matches(msg, m.keys.Summary) && m.summaryAvailable() {
			m.fd.mode = modeSummary
			m.zoom = false
			if !m.fd.sumLoaded || !m.fd.sumLive || m.fd.sum.Phase != m.st.Phase {
				return m.openSummary(m.st, true), true
			}
			return nil, true
		}
		return nil, false
	case modePicker:
		return m.pickerKey(msg), true
	case modeSummary:
		return m.summaryKey(msg), true
	}
	return m.startKey(msg), true
}

// summaryAvailable reports whether the live task has a summary to show.
func (m Model) summaryAvailable() bool {
	if !m.haveState {
		return false
	}
	switch m.st.Phase {
	case workspace.PhaseComplete, workspace.PhaseCancelled, workspace.PhaseError, workspace.PhaseIdle:
		return true
	default: // under way, held or waiting for the human
	}
	return false
}

func (m *Model) startKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.fd.keys
	m.notice = notice{}
	if m.fd.ask != nil && msg.String() != "ctrl+c" {
		return m.askKey(msg)
	}
	if m.showHelp {
		if key.Matches(msg, k.Help) || key.Matches(msg, k.Menu) || key.Matches(msg, m.keys.No) {
			m.showHelp = false
		}
		return nil
	}
	editing := m.fd.focus != focusList
	switch {
	case msg.String() == "ctrl+c":
		return m.quit()
	case key.Matches(msg, k.Submit):
		return m.submit()
	case key.Matches(msg, k.Resume):
		return m.resume()
	case key.Matches(msg, k.Open):
		return m.openPicker()
	case key.Matches(msg, k.NextField):
		return m.setFocus((m.fd.focus + 1) % numFocus)
	case key.Matches(msg, k.PrevField):
		return m.setFocus((m.fd.focus + numFocus - 1) % numFocus)
	case msg.String() == "f1":
		m.showHelp = true
		return nil
	case editing && key.Matches(msg, k.Menu):
		return m.setFocus(focusList)
	case m.fd.focus == focusTeam:
		m.teamKey(msg)
		return nil
	case editing:
		m.fd.formErr = ""
		return m.updateField(msg)
	}
	// The list has the focus: single keys are commands.
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Edit):
		return m.setFocus(focusTask)
	case msg.String() == "r":
		return m.resume()
	case msg.String() == "o":
		return m.openPicker()
	case key.Matches(msg, k.Up):
		m.fd.sel = max(m.fd.sel-1, 0)
	case key.Matches(msg, k.Down):
		m.fd.sel = max(min(m.fd.sel+1, len(m.fd.info.Tasks)-1), 0)
	case key.Matches(msg, k.View):
		if m.fd.sel < len(m.fd.info.Tasks) {
			t := m.fd.info.Tasks[m.fd.sel]
			if t.State == nil {
				m.notice = notice{level: "warn", text: "task " + t.ID + " has no readable state"}
				return nil
			}
			m.fd.mode = modeSummary
			return m.openSummary(*t.State, false)
		}
	}
	return nil
}

// submit starts the typed task.
func (m *Model) submit() tea.Cmd {
	if m.fd.busy != "" {
		return nil
	}
	desc := strings.TrimSpace(m.fd.task.Value())
	switch {
	case desc == "":
		m.fd.formErr = "type the task first"
		return m.setFocus(focusTask)
	case m.fd.info.LockedBy != "":
		m.fd.formErr = "another Hivemind is running on this workspace: " + m.fd.info.LockedBy
		return nil
	case m.fd.scanErr != "":
		m.fd.formErr = "choose a project folder first (ctrl+o)"
		return nil
	}
	t := workspace.Task{
		Workers:     m.fd.workers,
		Agents:      m.fd.team(),
		Description: desc,
		Context:     strings.TrimSpace(m.fd.context.Value()),
		Constraints: splitLines(m.fd.constraints.Value()),
		SubmittedBy: "tui",
		Project:     m.fd.project,
	}
	t.WorkerAgents = m.fd.workerTeam()
	switch {
	case m.fd.humanPlan == m.opts.HumanPlanApproval:
		// the launcher's config decides, as it does for the default
	case m.fd.humanPlan:
		t.PlanApproval = "human"
	default:
		t.PlanApproval = "reviewer"
	}
	m.fd.formErr = ""
	m.fd.busy = "starting the task…"
	return startCmd(m.opts.Launcher, m.fd.project, t)
}

// resume resumes the unfinished task.
func (m *Model) resume() tea.Cmd {
	if m.fd.busy != "" {
		return nil
	}
	switch {
	case m.fd.info.Unfinished == nil:
		m.notice = notice{level: "info", text: "nothing to resume in this project"}
		return nil
	case m.fd.info.LockedBy != "":
		m.notice = notice{level: "warn", text: "the task is running in another Hivemind: " + m.fd.info.LockedBy}
		return nil
	}
	m.fd.busy = "resuming " + m.fd.info.Unfinished.ID + "…"
	return resumeCmd(m.opts.Launcher, m.fd.project)
}

func (m *Model) openPicker() tea.Cmd {
	if m.fd.busy != "" {
		return nil
	}
	m.fd.mode = modePicker
	m.fd.picker = newPicker(m.fd.project)
	m.fd.picker.SetHeight(max(m.height-8, 3))
	return m.fd.picker.Init()
}

func (m *Model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.fd.keys
	if m.showHelp {
		m.showHelp = false
		return nil
	}
	switch {
	case msg.String() == "ctrl+c":
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.PickCancel):
		m.fd.mode = modeStart
		return nil
	case key.Matches(msg, k.PickHere):
		return m.chooseProject(m.fd.picker.CurrentDirectory)
	case key.Matches(msg, k.PickChoose):
		if p := m.fd.picker.HighlightedPath(); p != "" {
			return m.chooseProject(p)
		}
		return m.chooseProject(m.fd.picker.CurrentDirectory)
	}
	var c tea.Cmd
	m.fd.picker, c = m.fd.picker.Update(msg)
	return c
}

// chooseProject makes dir the project (idle → project_selected).
func (m *Model) chooseProject(dir string) tea.Cmd {
	m.fd.mode = modeStart
	m.fd.project = dir
	m.fd.scanned = false
	m.fd.info = Project{Dir: dir}
	m.fd.sel = 0
	m.fd.busy = ""
	return batch(m.rescan(), m.setFocus(focusTask))
}

func (m *Model) summaryKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.fd.keys
	if m.confirm != confirmNone {
		return m.handleConfirmKey(msg)
	}
	m.notice = notice{}
	if m.showHelp {
		if key.Matches(msg, k.Help) || key.Matches(msg, k.Back) || key.Matches(msg, m.keys.No) {
			m.showHelp = false
		}
		return nil
	}
	live := m.fd.sumLive && m.fd.sess != nil
	failed := live && (m.st.Phase == workspace.PhaseError || m.st.Phase == workspace.PhaseNeedsHuman)
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Quit):
		if live && m.quitAsks() {
			m.confirm = confirmQuit
			return nil
		}
		return m.quit()
	case failed && key.Matches(msg, k.Retry):
		if m.opts.Engine != nil {
			m.opts.Engine.Retry()
		}
		m.notice = notice{level: "info", text: "retrying…"}
	case failed && key.Matches(msg, k.Abandon):
		m.confirm = confirmAbandon
	case live && key.Matches(msg, k.Panes):
		m.fd.mode = modeRun
	case key.Matches(msg, k.ScrollUp):
		step := 1
		if msg.String() == "pgup" {
			step = max(m.height/2, 1)
		}
		m.fd.sumScroll = max(m.fd.sumScroll-step, 0)
	case key.Matches(msg, k.ScrollDown):
		step := 1
		if msg.String() == "pgdown" {
			step = max(m.height/2, 1)
		}
		m.fd.sumScroll += step
	case !live && (key.Matches(msg, k.Back) || key.Matches(msg, k.NewTask)):
		// A past task's summary: back to the start screen.
		m.fd.mode = modeStart
	case live && key.Matches(msg, k.NewTask):
		// Leave the task (complete → idle) for a new one; a failed task
		// stays resumable.
		return batch(m.endSession(), m.setFocus(focusTask))
	}
	return nil
}

// maxWorkers is the most workers the start screen offers (the config's
// limit).
const maxWorkers = config.MaxWorkers

// agentSlot is one agent slot of the Team row: its name and its pick.
type agentSlot struct {
	name string
	pick *int // index into agents
}

// agentSlots are the Team row's agent slots in order: the Lead, the
// Reviewer, then the workers (one slot, or one per worker once e split
// them); none when the start screen offers no agent.
func (fd *frontDoor) agentSlots() []agentSlot {
	if len(fd.agents) == 0 {
		return nil
	}
	out := []agentSlot{{"lead", &fd.pick[0]}, {"reviewer", &fd.pick[1]}}
	if fd.each == nil {
		return append(out, agentSlot{"workers", &fd.pick[2]})
	}
	for i := range fd.each {
		out = append(out, agentSlot{string(workspace.WorkerID(i + 1)), &fd.each[i]})
	}
	return out
}

// countSlot is the Team row's last slot, after the agent slots: the
// worker count.
func (fd *frontDoor) countSlot() int { return len(fd.agentSlots()) }

// setTeam offers agents for every role, each role starting on its agent in
// start (added to the offer when missing from it), else on the first.
func (fd *frontDoor) setTeam(agents []AgentChoice, start map[workspace.Role]string) {
	fd.agents = slices.Clone(agents)
	fd.pick = make([]int, len(teamRoles))
	fd.each = nil
	for i, r := range teamRoles {
		name := start[r]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(fd.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(fd.agents)
			fd.agents = append(fd.agents, AgentChoice{Name: name})
		}
		fd.pick[i] = j
	}
	if len(fd.agents) == 0 {
		fd.slot = fd.countSlot() // no agent to choose: the launcher's
	}
}

// setEach splits the workers when some run their own agent (start:
// worker id → agent), each on its own or the worker role's.
func (fd *frontDoor) setEach(start map[workspace.AgentID]string) {
	if len(start) == 0 || len(fd.agents) == 0 {
		return
	}
	fd.toggleEach()
	for i := range fd.each {
		name := start[workspace.WorkerID(i+1)]
		if name == "" {
			continue
		}
		j := slices.IndexFunc(fd.agents, func(a AgentChoice) bool { return a.Name == name })
		if j < 0 {
			j = len(fd.agents)
			fd.agents = append(fd.agents, AgentChoice{Name: name})
		}
		fd.each[i] = j
	}
}

// teamKey handles the Team row: ←→ choose a slot (an agent slot or the
// worker count), ↑↓ change it, +/- change the worker count, = gives every
// slot the selected one's agent, e on a worker splits the workers into
// one slot each (or joins them again, on the selected one's agent), p
// switches who approves the plan (the Reviewer, or the user after it).
func (m *Model) teamKey(msg tea.KeyPressMsg) {
	fd := &m.fd
	k := fd.keys
	slots := fd.agentSlots()
	onAgent := fd.slot < len(slots)
	step := 1
	if s := msg.String(); s == "left" || s == "h" || s == "up" || s == "k" {
		step = -1
	}
	switch {
	case key.Matches(msg, k.TeamSlot):
		n := len(slots) + 1
		fd.slot = (fd.slot + step + n) % n
	case key.Matches(msg, k.TeamPick) && onAgent:
		n := len(fd.agents)
		p := slots[fd.slot].pick
		*p = (*p + n + step) % n
	case key.Matches(msg, k.TeamPick):
		fd.addWorkers(-step) // up adds one
	case key.Matches(msg, k.Workers):
		d := 1
		if msg.String() == "-" {
			d = -1
		}
		fd.addWorkers(d)
	case key.Matches(msg, k.AllRoles) && onAgent:
		v := *slots[fd.slot].pick
		for _, s := range slots {
			*s.pick = v
		}
		fd.pick[2] = v
	case key.Matches(msg, k.Each) && onAgent && fd.slot >= 2:
		fd.toggleEach()
	case key.Matches(msg, k.PlanBy):
		fd.humanPlan = !fd.humanPlan
	}
}

// toggleEach splits the workers slot into one per worker, each on the
// worker role's agent, or joins them into one on the selected worker's.
func (fd *frontDoor) toggleEach() {
	if fd.each != nil {
		fd.pick[2] = fd.each[fd.slot-2]
		fd.each, fd.slot = nil, 2
		return
	}
	fd.workers = max(fd.workers, 1)
	fd.each = make([]int, fd.workers)
	for i := range fd.each {
		fd.each[i] = fd.pick[2]
	}
}

// addWorkers changes the worker count by d, from the launcher's default
// (shown as "default", counted as 1) within 1..maxWorkers; split workers
// gain slots on the last one's agent, or lose the last ones.
func (fd *frontDoor) addWorkers(d int) {
	fd.workers = min(max(max(fd.workers, 1)+d, 1), maxWorkers)
	if fd.each == nil {
		return
	}
	atCount := fd.slot == fd.countSlot()
	for len(fd.each) < fd.workers {
		fd.each = append(fd.each, fd.each[len(fd.each)-1])
	}
	fd.each = fd.each[:fd.workers]
	if atCount || fd.slot > fd.countSlot() {
		fd.slot = fd.countSlot()
	}
}

// teamChoices are the agents picked for the Team row's agent slots, in
// order (none when the start screen offers none).
func (fd *frontDoor) teamChoices() []AgentChoice {
	var out []AgentChoice
	for _, s := range fd.agentSlots() {
		out = append(out, fd.agents[*s.pick])
	}
	return out
}

// team is the agent picked for each role (role → agent), nil when the
// start screen offers none (the launcher's config decides). Split workers
// run their own (workerTeam); the role's is worker_1's.
func (fd *frontDoor) team() map[workspace.Role]string {
	if len(fd.agents) == 0 {
		return nil
	}
	t := make(map[workspace.Role]string, len(teamRoles))
	for i, r := range teamRoles {
		t[r] = fd.agents[fd.pick[i]].Name
	}
	if fd.each != nil {
		t[workspace.RoleWorker] = fd.agents[fd.each[0]].Name
	}
	return t
}

// workerTeam is the agent picked for each worker (worker id → agent) once
// the workers are split, else nil.
func (fd *frontDoor) workerTeam() map[workspace.AgentID]string {
	if fd.each == nil {
		return nil
	}
	t := make(map[workspace.AgentID]string, len(fd.each))
	for i, p := range fd.each {
		t[workspace.WorkerID(i+1)] = fd.agents[p].Name
	}
	return t
}

// splitLines returns the non-empty trimmed lines of s.
func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
