package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// screenID is what takes the keys now. Each screen has its own key map (a
// struct of key.Binding whose every binding its help lists), its own key
// handler and its own view; Model.screen (with runView.screen for the
// layers over the panes) is the one place that says which one has the
// keys, so no handler decides by the order of its checks which mode flag
// wins.
type screenID int

const (
	screenRun      screenID = iota // the agent panes (keyMap, keys.go)
	screenStart                    // the start screen (startKeyMap, start.go)
	screenPicker                   // the folder picker (pickerKeyMap, picker.go)
	screenSummary                  // a task's summary (summaryKeyMap, summary.go)
	screenAttached                 // keys go to the focused agent (attachedKeyMap)
	screenConfirm                  // a y/n question in the footer (confirmKeyMap)
	screenDraft                    // on detach: send, clear or keep typed text (draftKeyMap, needs.go)
	screenSearch                   // the search prompt (searchKeyMap, find.go)
	screenHelp                     // the run view's help overlay (helpKeyMap, help.go)
	screenDiff                     // a worker's diff (diffKeyMap, diff.go)
	screenPlan                     // the plan gate (planKeyMap, plan.go)
	screenFeedback                 // the plan gate's feedback input (feedbackKeyMap, plan.go)
	screenLeave                    // a server's client leaving: detach or stop the team (leaveKeyMap, remote.go)
	numScreens
)

var screenNames = [numScreens]string{"run", "start", "picker", "summary", "attached", "confirm",
	"draft", "search", "help", "diff", "plan", "feedback", "leave"}

func (s screenID) String() string { return screenNames[s] }

// screen is the screen that takes the keys now. The front door's screens
// (start, picker, summary) fill the whole terminal, but a question the run
// view asks over them takes the keys; otherwise the run view says which of
// its screens has them.
func (m Model) screen() screenID {
	if m.fd.showing() && m.run.confirm == confirmNone {
		return m.fd.screen()
	}
	return m.run.screen()
}

// screen is the front door's screen that shows.
func (fd frontDoor) screen() screenID {
	switch fd.mode {
	case modeStart:
		return screenStart
	case modePicker:
		return screenPicker
	case modeSummary:
		return screenSummary
	}
	return screenRun
}

// screen is the run view's screen that takes the keys now: its layers are
// over the panes, the first that is up taking the keys.
func (m runView) screen() screenID {
	switch {
	case m.attached:
		return screenAttached
	case m.confirm == confirmDraft:
		return screenDraft
	case m.confirm == confirmLeave:
		return screenLeave
	case m.confirm != confirmNone:
		return screenConfirm
	case m.find.typing:
		return screenSearch
	case m.help.show:
		return screenHelp
	case m.diff.show:
		return screenDiff
	case m.cx.show || !m.atPlanGate():
		return screenRun // the knowledge panel is a strip of the run view
	case m.gate.typing:
		return screenFeedback
	}
	return screenPlan
}

// handleKey routes a key press to the screen that has the keys: a front
// door's screen (its Update), or the run view's (pass: its Update takes
// it), where s opens the front door's summary of the live task.
func (m *Model) handleKey(msg tea.KeyPressMsg) frontAsk {
	switch m.screen() {
	case screenStart, screenPicker, screenSummary:
		return m.fd.Update(msg, m.frontCtx())
	}
	if m.fd.on && m.fd.mode == modeRun && m.run.opensSummary(msg) {
		return m.fd.showSummary(m.frontCtx())
	}
	return frontAsk{pass: true}
}

// handleKey routes a key press to the run view's screen that has the
// keys. A layer over the panes (help, diff, plan) takes its own keys and
// passes the rest to the panes' (runKey), so pause, cancel, help and quit
// work everywhere.
func (m *runView) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	scr := m.screen()
	switch scr {
	case screenAttached:
		return m.handleAttachedKey(msg)
	case screenDraft:
		return m.draftKey(msg)
	case screenLeave:
		return m.leaveKey(msg)
	case screenConfirm:
		return m.handleConfirmKey(msg)
	}
	m.notice = notice{}
	m.sel = selection{}
	digits := m.digits
	m.digits = ""
	switch scr {
	case screenSearch:
		return m.handleSearchKey(msg)
	case screenHelp:
		if m.helpKey(msg) {
			return nil
		}
	case screenDiff:
		if m.handleDiffKey(msg) {
			return nil
		}
	case screenPlan, screenFeedback:
		if ok, cmd := m.planKey(msg); ok {
			return cmd
		}
	}
	return m.runKey(msg, digits)
}

// keyMapOf is the key map of screen s: every key its handler matches.
func (m Model) keyMapOf(s screenID) any {
	switch s {
	case screenStart:
		return m.fd.start.keys
	case screenPicker:
		return m.fd.picker.keys
	case screenSummary:
		return m.fd.sum.keys
	}
	return m.run.keyMapOf(s)
}

// keyMapOf is the key map of the run view's screen s.
func (m runView) keyMapOf(s screenID) any {
	switch s {
	case screenRun:
		return m.keys
	case screenAttached:
		return m.km.attached
	case screenConfirm:
		return m.km.confirm
	case screenDraft:
		return m.km.draft
	case screenSearch:
		return m.km.search
	case screenHelp:
		return m.km.help
	case screenDiff:
		return m.km.diff
	case screenPlan:
		return m.km.plan
	case screenFeedback:
		return m.km.feedback
	case screenLeave:
		return m.km.leave
	}
	return nil
}

// helpOf is the help screen s offers (key ? or f1): the front door's for
// its screens, the run view's for the panes and the layers over them.
func (m Model) helpOf(s screenID) []helpSection {
	switch s {
	case screenStart, screenPicker, screenSummary:
		return m.fd.helpSections()
	}
	return m.run.helpSections()
}

// layerKeys are the key maps of the screens layered over the panes.
type layerKeys struct {
	attached attachedKeyMap
	confirm  confirmKeyMap
	draft    draftKeyMap
	search   searchKeyMap
	help     helpKeyMap
	diff     diffKeyMap
	plan     planKeyMap
	feedback feedbackKeyMap
	leave    leaveKeyMap
}

func newLayerKeys() layerKeys {
	return layerKeys{
		attached: attachedKeyMap{Detach: newKeyMap().Detach},
		confirm:  newConfirmKeyMap(),
		draft:    newDraftKeyMap(),
		search:   newSearchKeyMap(),
		help:     newHelpKeyMap(),
		diff:     newDiffKeyMap(),
		plan:     newPlanKeyMap(),
		feedback: newFeedbackKeyMap(),
		leave:    newLeaveKeyMap(),
	}
}

// helpSections are the sections of the run view's help overlay: the
// run view's keys, then those of the layers over the panes.
func (m runView) helpSections() []helpSection {
	k := m.km
	secs := m.shownKeys().helpSections(k.plan.helpSections())
	for _, more := range [][]helpSection{
		k.feedback.helpSections(), k.diff.helpSections(),
		{{"Diff and plan view", k.diff.Scroll.entries()}},
		k.search.helpSections(), k.help.helpSections(), k.confirm.helpSections(), k.draft.helpSections(),
	} {
		secs = append(secs, more...)
	}
	if m.opts.Remote != nil {
		secs = append(secs, k.leave.helpSections()...)
	}
	return secs
}

// attachedKeyMap is the one key of an attached pane that is not the
// agent's: every other key goes to the agent.
type attachedKeyMap struct {
	Detach key.Binding
}

// confirmKeyMap answers a y/n question (cancel, quit, abandon).
type confirmKeyMap struct {
	Yes, No key.Binding
	// QuitNow is ctrl+c while quitting is asked: twice quits without a y.
	QuitNow key.Binding
}

func newConfirmKeyMap() confirmKeyMap {
	return confirmKeyMap{
		Yes:     key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:      key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "no")),
		QuitNow: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now (asked to quit)")),
	}
}

func (k confirmKeyMap) helpSections() []helpSection {
	return []helpSection{{"Questions", bindingEntries(k.Yes, k.No, k.QuitNow)}}
}

// scrollKeyMap scrolls a view drawn over the pane area (the diff, the
// plan) by lines, pages and to either end.
type scrollKeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

func newScrollKeyMap() scrollKeyMap {
	return scrollKeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "space"), key.WithHelp("pgdn/space", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
	}
}

// scroll returns pos moved by the scroll key msg (page lines a page,
// bottom for the end), and false when msg is not a scroll key.
func (k scrollKeyMap) scroll(msg tea.KeyPressMsg, pos, page, bottom int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		return pos - 1, true
	case key.Matches(msg, k.Down):
		return pos + 1, true
	case key.Matches(msg, k.PageUp):
		return pos - page, true
	case key.Matches(msg, k.PageDown):
		return pos + page, true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return bottom, true
	}
	return pos, false
}

func (k scrollKeyMap) entries() []helpEntry {
	return bindingEntries(k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom)
}
