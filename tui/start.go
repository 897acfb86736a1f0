package tui

import (
	"strings"
	"time"

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

// frontDoor is the front door: a sub-model with its own Update and View
// that routes among its screens (the start screen, the folder picker and
// the summary, each a sub-model, and its help over them) and holds the
// live session. It reads the run view only through a frontCtx and asks
// for what it needs of it in a frontAsk. It is active only when
// Options.Launcher is set; without one the Model is the plain run view it
// always was.
type frontDoor struct {
	on   bool
	mode screenMode

	start  startScreen  // the start screen
	picker folderPicker // the folder picker (picker.go)
	sum    summaryView  // the summary screen (summary.go)
	help   helpView     // the front door's help screen (? or f1); the run view has its own

	sess *Session
	// seen is the phase of the live session last looked at (see after).
	seen vocab.Phase

	launcher    Launcher // Options.Launcher
	configHuman bool     // Options.HumanPlanApproval: the config's plan approval
}

// startScreen is the start screen: the project, the task form, the Team
// row and the past tasks.
type startScreen struct {
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

func newFrontDoor(opts Options) frontDoor {
	fd := frontDoor{on: opts.Launcher != nil, launcher: opts.Launcher, configHuman: opts.HumanPlanApproval,
		sum: summaryView{keys: newSummaryKeyMap()},
		start: startScreen{keys: newStartKeyMap(), project: opts.Project,
			workers: opts.Workers, humanPlan: opts.HumanPlanApproval}}
	if !fd.on {
		return fd
	}
	sc := &fd.start
	sc.setTeam(opts.Agents, opts.StartTeam)
	sc.setEach(opts.StartWorkers)
	sc.task = newField("Describe the task: what to build or change, and how you will know it is done.")
	sc.constraints = newField("Optional, one per line: e.g. no new dependencies")
	sc.context = newField("Optional: background the agents should know")
	fd.picker = newFolderPicker(opts.Project)
	fd.mode = modeStart
	sc.busy = "reading the project…"
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

// frontCtx is what the front door's Update reads of the rest of the
// Model: the screen's size and the run view's live task.
type frontCtx struct {
	w, h      int
	st        vocab.State // the live task's state (the zero State before the first)
	haveState bool
	title     string // the live task's
	// asking: the run view asks a question, which takes the keys over the
	// front door's screens.
	asking bool
}

// frontViewCtx is what the front door's View reads besides: the clock,
// the live task's branch and elapsed time, and the run view's footer
// parts (its question, spinner and notice line).
type frontViewCtx struct {
	frontCtx
	now      time.Time
	branch   string
	elapsed  time.Duration
	question string // the run view's question line (asking)
	spin     string
	notice   notice
}

// frontAct is what the front door asks the Model to do to the run view.
type frontAct int

const (
	actNone     frontAct = iota
	actQuit              // quit now
	actQuitLive          // quit, asking first if the live task's agents still run
	actRetry             // retry the live task (it failed)
	actAbandon           // ask whether to abandon the live task
	actBegin             // show the panes of the live task just started (frontDoor.sess)
	actEnd               // the live task is left: the run view forgets it
	actCover             // the summary covers the panes
)

// frontAsk is the front door's answer to a message: its command, what the
// Model does for it, and whether the run view handles the message too.
type frontAsk struct {
	cmd    tea.Cmd
	act    frontAct
	notice *notice // the notice line becomes this (a zero notice clears it)
	pass   bool    // the run view handles the message (the front door did not take it)
}

// say is a notice for frontAsk.
func say(level, text string) *notice { return &notice{level: level, text: text} }

// Init scans the project when the start screen shows first.
func (fd frontDoor) Init() tea.Cmd {
	if !fd.on || fd.mode != modeStart {
		return nil
	}
	return scanCmd(fd.launcher, fd.start.project)
}

// showing reports whether a front door screen fills the terminal.
func (fd frontDoor) showing() bool { return fd.on && fd.mode != modeRun }

// Update handles a message of the front door: its screens' keys, mouse
// and paste, and its launcher's answers. The rest passes to the run view
// (as it did before the front door existed).
func (fd *frontDoor) Update(msg tea.Msg, c frontCtx) frontAsk {
	if !fd.on {
		return frontAsk{pass: true}
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		fd.resize(msg.Width, msg.Height)
		return frontAsk{pass: true}
	case projectScannedMsg:
		return frontAsk{cmd: fd.start.handleScanned(msg, fd.mode == modeStart)}
	case sessionStartedMsg:
		return fd.handleSessionStarted(msg)
	case sessionClosedMsg:
		fd.start.busy = ""
		a := frontAsk{cmd: fd.rescan()}
		if msg.err != nil {
			a.notice = say("warn", "stopping the task: "+msg.err.Error())
		}
		return a
	case summaryLoadedMsg:
		fd.sum.loadedFrom(msg)
		return frontAsk{}
	case SnapshotMsg:
		// One from a run that is over, or not started yet, is dropped.
		return frontAsk{pass: fd.sess != nil && msg.State.TaskID == fd.sess.TaskID}
	case tea.KeyPressMsg:
		return fd.key(msg, c)
	case tea.PasteMsg, tea.MouseClickMsg, tea.MouseReleaseMsg, tea.MouseMotionMsg, tea.MouseWheelMsg:
		return fd.pointer(msg)
	}
	if fd.mode == modePicker {
		return frontAsk{cmd: fd.picker.pass(msg), pass: true}
	}
	return frontAsk{pass: true}
}

// pointer handles a paste or the mouse: the front door's screen that
// shows takes them (the panes do when they show).
func (fd *frontDoor) pointer(msg tea.Msg) frontAsk {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		if fd.mode == modeStart && fd.start.focus != focusList {
			return frontAsk{cmd: fd.start.updateField(msg)}
		}
	case tea.MouseWheelMsg:
		if fd.mode == modeSummary {
			fd.sum.wheel(msg.Mouse().Button)
		}
	}
	return frontAsk{pass: !fd.showing()}
}

// key routes a key press to the front door's screen that shows; the run
// view takes it on the panes, and its question over the front door.
func (fd *frontDoor) key(msg tea.KeyPressMsg, c frontCtx) frontAsk {
	if !fd.showing() || c.asking {
		return frontAsk{pass: true}
	}
	switch fd.mode {
	case modePicker:
		return fd.pickerKey(msg)
	case modeSummary:
		return fd.summaryKey(msg, c)
	}
	return fd.startKey(msg, c)
}

// after follows the live task's phase (c has the snapshot the run view
// just took): it moves between the panes and the summary.
func (fd *frontDoor) after(c frontCtx) frontAsk {
	if !fd.on || fd.sess == nil || !c.haveState {
		return frontAsk{}
	}
	p := c.st.Phase
	if p == fd.seen {
		return frontAsk{}
	}
	prev := fd.seen
	fd.seen = p
	live := fd.mode == modeSummary && fd.sum.live
	switch {
	case summaryPhase(p, prev):
		if fd.mode == modeRun || live {
			fd.mode = modeSummary
			return frontAsk{cmd: fd.openSummary(c.st, true, c.title), act: actCover}
		}
	case p == vocab.PhaseNeedsHuman || p == vocab.PhasePaused:
		// The run view has the banner and the keys for these.
	case live:
		// Running again (after retry): back to the panes.
		fd.mode, fd.help = modeRun, helpView{}
	}
	return frontAsk{}
}

// summaryPhase reports whether the live task, now in phase p (after
// prev), shows what was done: it is over (idle after another phase:
// abandoned), or failed and waits for retry or abandon.
func summaryPhase(p, prev vocab.Phase) bool {
	switch p {
	case vocab.PhaseComplete, vocab.PhaseCancelled, vocab.PhaseError:
		return true
	case vocab.PhaseIdle:
		return prev != ""
	default: // under way, held or waiting for the human
	}
	return false
}

// showSummary shows the live task's summary over its panes (s there).
func (fd *frontDoor) showSummary(c frontCtx) frontAsk {
	fd.mode = modeSummary
	a := frontAsk{act: actCover}
	if !fd.sum.loaded || !fd.sum.live || fd.sum.data.Phase != c.st.Phase {
		a.cmd = fd.openSummary(c.st, true, c.title)
	}
	return a
}

// handleScanned takes what a scan of the project found (shown: the start
// screen is showing, so the focus may move to what is most likely next).
func (sc *startScreen) handleScanned(msg projectScannedMsg, shown bool) tea.Cmd {
	if msg.project != sc.project {
		return nil // an older scan
	}
	sc.busy = ""
	sc.scanned = true
	sc.scanErr = ""
	sc.info = msg.info
	if msg.err != nil {
		sc.scanErr = msg.err.Error()
		sc.info = Project{Dir: msg.project}
	}
	sc.sel = min(sc.sel, max(len(sc.info.Tasks)-1, 0))
	if shown {
		// Resuming is one key away when there is something to resume;
		// otherwise the user most likely wants to type a task.
		if sc.info.Unfinished != nil && sc.focus == focusTask && sc.task.Value() == "" {
			return sc.setFocus(focusList)
		}
		if sc.info.Unfinished == nil && sc.focus == focusList && len(sc.info.Tasks) == 0 {
			return sc.setFocus(focusTask)
		}
		return sc.setFocus(sc.focus)
	}
	return nil
}

func (fd *frontDoor) handleSessionStarted(msg sessionStartedMsg) frontAsk {
	fd.start.busy = ""
	if msg.err != nil {
		fd.start.startFailed(msg.err)
		return frontAsk{cmd: fd.rescan()}
	}
	s := msg.sess
	fd.start.clearForm()
	return fd.begin(&s)
}

// begin shows a new live task: its panes appear as its agents start.
func (fd *frontDoor) begin(s *Session) frontAsk {
	fd.sess = s
	fd.seen = ""
	fd.mode, fd.help = modeRun, helpView{}
	return frontAsk{act: actBegin}
}

// end leaves the live task for the start screen; its agents are stopped
// in a command (the task stays resumable unless it is over).
func (fd *frontDoor) end() frontAsk {
	s := fd.sess
	fd.sess = nil
	fd.seen = ""
	fd.mode = modeStart
	if s == nil {
		return frontAsk{cmd: fd.rescan(), act: actEnd}
	}
	fd.start.busy = "stopping the agents…"
	return frontAsk{cmd: closeSessionCmd(s.Close), act: actEnd}
}

// rescan reads the current project again (after a task ends or the project
// changes).
func (fd *frontDoor) rescan() tea.Cmd {
	if fd.start.busy == "" {
		fd.start.busy = "reading the project…"
	}
	return scanCmd(fd.launcher, fd.start.project)
}

// resize sizes the inputs and the picker for a w×h screen.
func (fd *frontDoor) resize(w, h int) {
	fd.start.resize(w, h)
	fd.picker.resize(h)
}

// resize sizes the inputs for a w×h screen.
func (sc *startScreen) resize(w, h int) {
	fw := max(w-6, 10)
	th, ch := 5, 2
	if h < 30 {
		th, ch = 3, 1
	}
	sc.task.SetWidth(fw)
	sc.task.SetHeight(th)
	sc.constraints.SetWidth(fw)
	sc.constraints.SetHeight(ch)
	sc.context.SetWidth(fw)
	sc.context.SetHeight(ch)
}

// clearForm empties the task form (its task started).
func (sc *startScreen) clearForm() {
	sc.task.Reset()
	sc.constraints.Reset()
	sc.context.Reset()
	sc.formErr = ""
}

// setFocus moves the start screen's focus.
func (sc *startScreen) setFocus(f startFocus) tea.Cmd {
	sc.focus = f
	var cmds []tea.Cmd
	for i, ta := range []*textarea.Model{&sc.task, &sc.constraints, &sc.context} {
		if startFocus(i) == f {
			cmds = append(cmds, ta.Focus())
		} else {
			ta.Blur()
		}
	}
	return tea.Batch(cmds...)
}

// field is the focused input, or nil.
func (sc *startScreen) field() *textarea.Model {
	switch sc.focus {
	case focusTask:
		return &sc.task
	case focusConstraints:
		return &sc.constraints
	case focusContext:
		return &sc.context
	}
	return nil
}

func (sc *startScreen) updateField(msg tea.Msg) tea.Cmd {
	f := sc.field()
	if f == nil {
		return nil
	}
	var c tea.Cmd
	*f, c = f.Update(msg)
	return c
}

// startDone is what a key of the start screen asks of the front door.
type startDone int

const (
	startStays  startDone = iota // the screen handled the key itself
	startQuit                    // ctrl+c, or q in the list
	startSubmit                  // ctrl+s: start the typed task
	startResume                  // ctrl+r, or r in the list
	startOpen                    // ctrl+o, or o in the list: the folder picker
	startHelp                    // f1, or ? in the list
	startView                    // enter in the list: the selected task's summary
)

// update handles a key of the start screen (its question aside: askKey):
// what it asks of the front door, and its own command.
func (sc *startScreen) update(msg tea.KeyPressMsg) (startDone, tea.Cmd) {
	k := sc.keys
	editing := sc.focus != focusList
	switch {
	case key.Matches(msg, k.QuitNow):
		return startQuit, nil
	case key.Matches(msg, k.Submit):
		return startSubmit, nil
	case key.Matches(msg, k.Resume):
		return startResume, nil
	case key.Matches(msg, k.Open):
		return startOpen, nil
	case key.Matches(msg, k.NextField):
		return startStays, sc.setFocus((sc.focus + 1) % numFocus)
	case key.Matches(msg, k.PrevField):
		return startStays, sc.setFocus((sc.focus + numFocus - 1) % numFocus)
	case key.Matches(msg, k.FieldHelp):
		return startHelp, nil
	case editing && key.Matches(msg, k.Menu):
		return startStays, sc.setFocus(focusList)
	case sc.focus == focusTeam:
		sc.teamKey(msg)
		return startStays, nil
	case editing:
		sc.formErr = ""
		return startStays, sc.updateField(msg)
	}
	// The list has the focus: single keys are commands.
	switch {
	case key.Matches(msg, k.Help):
		return startHelp, nil
	case key.Matches(msg, k.Quit):
		return startQuit, nil
	case key.Matches(msg, k.Edit):
		return startStays, sc.setFocus(focusTask)
	case key.Matches(msg, k.ListResume):
		return startResume, nil
	case key.Matches(msg, k.ListOpen):
		return startOpen, nil
	case key.Matches(msg, k.Up):
		sc.sel = max(sc.sel-1, 0)
	case key.Matches(msg, k.Down):
		sc.sel = max(min(sc.sel+1, len(sc.info.Tasks)-1), 0)
	case key.Matches(msg, k.View) && sc.sel < len(sc.info.Tasks):
		return startView, nil
	}
	return startStays, nil
}

// startKey routes a key to the start screen (or its question, or the
// help over it) and does what it asks.
func (fd *frontDoor) startKey(msg tea.KeyPressMsg, c frontCtx) frontAsk {
	sc := &fd.start
	a := frontAsk{notice: &notice{}}
	if sc.ask != nil && !key.Matches(msg, sc.keys.QuitNow) {
		a.cmd = sc.askKey(msg)
		return a
	}
	if fd.help.show {
		if key.Matches(msg, sc.keys.CloseHelp) {
			fd.help.show = false
		}
		return a
	}
	done, cmd := sc.update(msg)
	switch done {
	case startQuit:
		a.act = actQuit
	case startSubmit:
		a.cmd = fd.submit()
	case startResume:
		var n notice
		a.cmd, n = fd.resume()
		a.notice = &n
	case startOpen:
		a.cmd = fd.openPicker(c.h)
	case startHelp:
		fd.help.show = true
	case startView:
		t := sc.info.Tasks[sc.sel]
		if t.State == nil {
			a.notice = say("warn", "task "+t.ID+" has no readable state")
			return a
		}
		fd.mode = modeSummary
		a.cmd = fd.openSummary(*t.State, false, "")
	case startStays:
		a.cmd = cmd
	}
	return a
}

// submit starts the typed task.
func (fd *frontDoor) submit() tea.Cmd {
	t, cmd, ok := fd.start.submit(fd.configHuman)
	if !ok {
		return cmd
	}
	return startCmd(fd.launcher, fd.start.project, t)
}

// submit is the typed task to start, the screen then busy starting it
// (configHuman: the config has the user approve plans); or false, and
// the command the screen wants, when it cannot start (the form says why).
func (sc *startScreen) submit(configHuman bool) (vocab.Task, tea.Cmd, bool) {
	if sc.busy != "" {
		return vocab.Task{}, nil, false
	}
	desc := strings.TrimSpace(sc.task.Value())
	switch {
	case desc == "":
		sc.formErr = "type the task first"
		return vocab.Task{}, sc.setFocus(focusTask), false
	case sc.info.LockedBy != "":
		sc.formErr = "another Hivemind is running on this workspace: " + sc.info.LockedBy
		return vocab.Task{}, nil, false
	case sc.scanErr != "":
		sc.formErr = "choose a project folder first (ctrl+o)"
		return vocab.Task{}, nil, false
	}
	t := vocab.Task{
		Workers:     sc.workers,
		Agents:      sc.team(),
		Description: desc,
		Context:     strings.TrimSpace(sc.context.Value()),
		Constraints: splitLines(sc.constraints.Value()),
		SubmittedBy: "tui",
		Project:     sc.project,
	}
	t.WorkerAgents = sc.workerTeam()
	switch {
	case sc.humanPlan == configHuman:
		// the launcher's config decides, as it does for the default
	case sc.humanPlan:
		t.PlanApproval = "human"
	default:
		t.PlanApproval = "reviewer"
	}
	sc.formErr = ""
	sc.busy = "starting the task…"
	return t, nil, true
}

// resume resumes the unfinished task; the notice says why it cannot.
func (fd *frontDoor) resume() (tea.Cmd, notice) {
	sc := &fd.start
	if sc.busy != "" {
		return nil, notice{}
	}
	switch {
	case sc.info.Unfinished == nil:
		return nil, notice{level: "info", text: "nothing to resume in this project"}
	case sc.info.LockedBy != "":
		return nil, notice{level: "warn", text: "the task is running in another Hivemind: " + sc.info.LockedBy}
	}
	sc.busy = "resuming " + sc.info.Unfinished.ID + "…"
	return resumeCmd(fd.launcher, sc.project), notice{}
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
