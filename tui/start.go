package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

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

	picker folderPicker

	sess *Session
	// seen is the phase of the live session last looked at (see frontAfter).
	seen vocab.Phase

	sum summaryView // the summary screen (summary.go)
}

// startKeyMap is every key of the start screen: its fields, the Team row
// and the past-task list.
type startKeyMap struct {
	Submit, NextField, PrevField, Menu, Edit key.Binding
	// The Team row: a slot to the left or right, its agent (or the count)
	// up or down, the worker count up or down.
	SlotLeft, SlotRight, PickUp, PickDown    key.Binding
	MoreWorkers, FewerWorkers, AllRoles      key.Binding
	PlanBy, Each                             key.Binding
	Resume, Open, Up, Down, View, Quit, Help key.Binding
	// QuitNow quits from anywhere, a field too; FieldHelp is help there
	// (? is text); ListResume and ListOpen are single-key commands of
	// the past-task list; CloseHelp closes the help screen.
	QuitNow, FieldHelp, ListResume, ListOpen, CloseHelp key.Binding
}

func newStartKeyMap() startKeyMap {
	return startKeyMap{
		Submit:       key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "start task")),
		NextField:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		PrevField:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		Menu:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave field")),
		Edit:         key.NewBinding(key.WithKeys("n", "i"), key.WithHelp("n", "new task")),
		SlotLeft:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "team: choose a role or the count")),
		SlotRight:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("←/→", "team: choose a role or the count")),
		PickUp:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "team: change its agent or count")),
		PickDown:     key.NewBinding(key.WithKeys("down", "j", "space"), key.WithHelp("↑/↓", "team: change its agent or count")),
		MoreWorkers:  key.NewBinding(key.WithKeys("+"), key.WithHelp("+/-", "team: workers")),
		FewerWorkers: key.NewBinding(key.WithKeys("-"), key.WithHelp("+/-", "team: workers")),
		AllRoles:     key.NewBinding(key.WithKeys("="), key.WithHelp("=", "team: this agent for every role")),
		PlanBy:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "team: you approve the plan too")),
		Each:         key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "team: an agent per worker")),
		Resume:       key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "resume unfinished")),
		Open:         key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "choose folder")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select")),
		View:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "task summary")),
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:         key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?/f1", "help")),

		QuitNow:    key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		FieldHelp:  key.NewBinding(key.WithKeys("f1"), key.WithHelp("f1", "help")),
		ListResume: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		ListOpen:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "choose folder")),
		CloseHelp:  closeHelpKey,
	}
}

// closeHelpKey closes the front door's help screen.
var closeHelpKey = key.NewBinding(key.WithKeys("?", "f1", "esc", "n", "N"), key.WithHelp("?/esc", "close help"))

func (k startKeyMap) helpSections() []helpSection {
	return []helpSection{
		{"Task form", bindingEntries(k.Submit, k.NextField, k.PrevField, k.Menu, k.Open, k.Resume, k.SlotLeft, k.SlotRight, k.PickUp, k.PickDown, k.MoreWorkers, k.FewerWorkers, k.AllRoles, k.Each, k.PlanBy, k.FieldHelp, k.QuitNow)},
		{"Past tasks", bindingEntries(k.Edit, k.Up, k.Down, k.View, k.ListResume, k.ListOpen, k.Help, k.Quit)},
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
	fd := frontDoor{on: opts.Launcher != nil, keys: newStartKeyMap(),
		sum: summaryView{keys: newSummaryKeyMap()}, project: opts.Project,
		workers: opts.Workers, humanPlan: opts.HumanPlanApproval}
	if !fd.on {
		return fd
	}
	fd.setTeam(opts.Agents, opts.StartTeam)
	fd.setEach(opts.StartWorkers)
	fd.task = newField("Describe the task: what to build or change, and how you will know it is done.")
	fd.constraints = newField("Optional, one per line: e.g. no new dependencies")
	fd.context = newField("Optional: background the agents should know")
	fd.picker = newFolderPicker(opts.Project)
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
		m.fd.sum.loadedFrom(msg)
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
			m.fd.sum.wheel(msg.Mouse().Button)
		}
		return nil, m.fd.mode != modeRun
	}
	if m.fd.mode == modePicker {
		return m.fd.picker.pass(msg), false
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
	case p == vocab.PhaseComplete || p == vocab.PhaseCancelled || p == vocab.PhaseError ||
		(p == vocab.PhaseIdle && prev != ""):
		// Over (idle: abandoned), or failed and waiting for retry or
		// abandon: show what was done.
		if m.fd.mode == modeRun || (m.fd.mode == modeSummary && m.fd.sum.live) {
			m.fd.mode = modeSummary
			m.attached, m.zoom, m.help.show = false, false, false
			return m.openSummary(m.st, true)
		}
	case p == vocab.PhaseNeedsHuman || p == vocab.PhasePaused:
		// The run view has the banner and the keys for these.
	default:
		// Running again (after retry): back to the panes.
		if m.fd.mode == modeSummary && m.fd.sum.live {
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
	m.st, m.haveState = vocab.State{}, false
	m.events, m.checkout = nil, ""
	m.health = map[vocab.AgentID]vocab.Health{}
	m.agents = nil
	m.focusID = ""
	m.zoom, m.attached, m.showEvents = false, false, false
	m.cx, m.help = knowledgePanel{}, helpView{}
	m.detail, m.digits = false, ""
	m.find, m.sel, m.diff = search{}, selection{}, diffView{}
	m.confirm = confirmNone
	m.scroll = map[vocab.AgentID]int{}
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
	fd.picker.resize(h)
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
// that opens the summary from the run view's.
func (m *Model) frontKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch scr := m.screen(); scr {
	case screenStart:
		return m.startKey(msg), true
	case screenPicker:
		return m.pickerKey(msg), true
	case screenSummary:
		return m.summaryKey(msg), true
	case screenAttached, screenConfirm, screenDraft, screenHelp, screenSearch, screenFeedback:
		return nil, false // s is text, the agent's or a question's key there
	}
	if key.Matches(msg, m.keys.Summary) && m.summaryAvailable() {
		m.fd.mode = modeSummary
		m.zoom = false
		if !m.fd.sum.loaded || !m.fd.sum.live || m.fd.sum.data.Phase != m.st.Phase {
			return m.openSummary(m.st, true), true
		}
		return nil, true
	}
	return nil, false
}

func (m *Model) startKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.fd.keys
	m.notice = notice{}
	if m.fd.ask != nil && !key.Matches(msg, k.QuitNow) {
		return m.askKey(msg)
	}
	if m.help.show {
		if key.Matches(msg, k.CloseHelp) {
			m.help.show = false
		}
		return nil
	}
	editing := m.fd.focus != focusList
	switch {
	case key.Matches(msg, k.QuitNow):
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
	case key.Matches(msg, k.FieldHelp):
		m.help.show = true
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
		m.help.show = true
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Edit):
		return m.setFocus(focusTask)
	case key.Matches(msg, k.ListResume):
		return m.resume()
	case key.Matches(msg, k.ListOpen):
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
	t := vocab.Task{
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
