package tui

import (
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// runView is the run view: the agent panes of one task with its header,
// banner, event strip and footer, and the layers over the panes (help,
// diff, plan gate, search prompt, questions), each with its key map
// (screens.go). It has its own Update and View; the Model routes to it
// whatever the front door does not take.
type runView struct {
	opts     Options // with the live session's Engine, Terminals, Title… (start.go)
	interval time.Duration
	slow     time.Duration // 1/UnfocusedFPS
	keys     keyMap        // the run view's
	km       layerKeys     // the layers' over the panes (screens.go)
	spin     spinner.Model
	prog     progress.Model

	width, height int

	st        vocab.State
	haveState bool
	events    []vocab.EventRecord
	health    map[vocab.AgentID]vocab.Health
	agents    []vocab.AgentID

	focusID    vocab.AgentID
	zoom       bool
	attached   bool
	help       helpView // the help overlay, key ? (help.go)
	showEvents bool
	cx         knowledgePanel // shared-knowledge panel, key x (knowledge.go)
	confirm    confirmKind
	draftOf    vocab.AgentID // the agent confirmDraft asks about
	notice     notice
	scroll     map[vocab.AgentID]int

	detail bool      // the event strip shows detail records too (v)
	digits string    // pane number being typed (for 10 and more panes)
	find   search    // scrollback search (find.go)
	sel    selection // mouse selection in a pane (find.go)
	diff   diffView  // a worker's diff (diff.go)
	gate   planGate  // the plan waiting for the user's decision (plan.go)

	lay       layout
	bannerNow []string // the banner's lines at the last layout (needs.go)
	// checkout is what the run said of the user's checkout at the start
	// (a checkout_dirty record: its edits, and whether they are in the
	// task), "" when it said nothing; the banner shows it while the plan
	// is made (needs.go).
	checkout string
	// draftRung is, per agent, the hold the UI rang for (needs.go).
	draftRung map[vocab.AgentID]time.Time

	// Frame scheduling (see handleChanged).
	lastFrame  time.Time
	lastSlow   time.Time // last frame that took the unattached panes' changes
	timerDue   time.Time // when the outstanding frame tick is due
	waiting    bool      // a waitChangedCmd is outstanding
	frameTimer bool      // a frameTickMsg is outstanding
	clockOn    bool
	clockGen   int
	spinning   bool

	r     *renderCache // caches filled by View; shared by copies of the model
	input *inputWriter
	life  *lifecycle
}

func newRunView(opts Options) runView {
	m := runView{
		opts:     opts,
		interval: time.Second / time.Duration(opts.FPS),
		slow:     time.Second / time.Duration(opts.UnfocusedFPS),
		keys:     newKeyMap(),
		km:       newLayerKeys(),
		spin:     spinner.New(spinner.WithSpinner(spinnerFrames)),
		prog:     progress.New(progress.WithWidth(10), progress.WithoutPercentage(), progress.WithColors(colOK)),
		health:   map[vocab.AgentID]vocab.Health{},
		scroll:   map[vocab.AgentID]int{},
		r:        newRenderCache(),
		input:    &inputWriter{},
		life:     newLifecycle(),
	}
	m.waiting = opts.Terminals != nil
	m.keys.Leave.SetEnabled(opts.Remote != nil)
	return m
}

// spinnerFrames is a calm spinner: a busy agent already redraws its own pane,
// so the title does not need more than a few frames a second.
var spinnerFrames = spinner.Spinner{
	Frames: []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"},
	FPS:    time.Second / 6,
}

// Init starts waiting for screen changes.
func (m runView) Init() tea.Cmd {
	if m.opts.Terminals == nil {
		return nil
	}
	return m.waitChangedCmd()
}

// begin shows the live task of session s: its panes appear as its agents
// start.
func (m *runView) begin(s *Session) tea.Cmd {
	m.opts.Engine, m.opts.Terminals, m.opts.Title, m.opts.Branch, m.opts.Diff = s.Engine, s.Terminals, s.Title, s.Branch, s.Diff
	m.opts.Team, m.opts.WorkerTeam = s.Team, s.WorkerTeam
	m.reset()
	return m.rearm()
}

// end leaves the live task: commands still waiting on its terminals end.
func (m *runView) end() {
	m.opts.Engine, m.opts.Terminals, m.opts.Title, m.opts.Branch, m.opts.Diff = nil, nil, "", "", nil
	m.opts.Team, m.opts.WorkerTeam = nil, nil
	m.life.stop()
	m.life = newLifecycle()
	m.reset()
}

// cover is for a screen of the front door drawn over the panes (the
// summary): no pane stays attached or zoomed, no help overlay open.
func (m *runView) cover() {
	m.attached, m.zoom, m.help.show = false, false, false
}

// reset forgets everything the run view knew of the previous task.
func (m *runView) reset() {
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

func (m runView) now() time.Time { return m.opts.Now() }

// terminal returns the agent's terminal, if any.
func (m runView) terminal(id vocab.AgentID) (Terminal, bool) {
	if m.opts.Terminals == nil {
		return nil, false
	}
	t, ok := m.opts.Terminals.Terminal(id)
	if !ok || t == nil {
		return nil, false
	}
	return t, true
}

// healthOf is the agent's health: the runner's live value if it sent one,
// else what state.json says.
func (m runView) healthOf(id vocab.AgentID) vocab.Health {
	if h, ok := m.health[id]; ok && h != "" {
		return h
	}
	return m.st.Agents[id].Status
}

func (m runView) focusIndex() int {
	for i, id := range m.agents {
		if id == m.focusID {
			return i
		}
	}
	return 0
}
