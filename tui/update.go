package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// maxEvents is how many events the model keeps for the event-log strip.
const maxEvents = 200

// Update handles one message: the front door takes its screens' and its
// own messages (start.go), and asks for what it needs of the run view
// (apply); the run view takes every other, after which it lays out the
// panes and arms its timers. It never blocks: engine calls only
// hand a key event to the runner, and input for agents goes through the
// ordered inputWriter.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if msg, ok := msg.(tea.WindowSizeMsg); ok {
		m.width, m.height = msg.Width, msg.Height
	}
	var a frontAsk
	if k, ok := msg.(tea.KeyPressMsg); ok {
		a = m.handleKey(k)
	} else {
		a = m.fd.Update(msg, m.frontCtx())
	}
	fcmd := m.apply(a)
	if !a.pass {
		m.run.relayout()
		return m, batch(fcmd, m.run.ensureTimers())
	}
	cmd := batch(fcmd, m.run.Update(msg))
	if _, ok := msg.(SnapshotMsg); ok {
		// The front door follows the live task's phase.
		cmd = batch(cmd, m.apply(m.fd.after(m.frontCtx())))
	}
	m.run.relayout()
	return m, batch(batch(cmd, m.run.draftBell()), m.run.ensureTimers())
}

// Update handles a message of the run view: a key on one of its screens,
// the engine's snapshots and notices, screen changes and its timers.
func (m *runView) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case SnapshotMsg:
		cmd = m.handleSnapshot(msg)
	case NotifyMsg:
		m.notice = notice{level: msg.Level, text: msg.Message}
		cmd = notifyCmd(msg.Message)
	case termsChangedMsg:
		cmd = m.handleChanged()
	case termsClosedMsg:
		m.waiting = false
	case frameTickedMsg:
		cmd = m.frameTick()
	case clockTickedMsg:
		if msg.gen == m.clockGen {
			m.clockOn = false // ensureTimers arms the next tick while running
		}
	case spinner.TickMsg:
		if m.anyBusy() {
			m.spin, cmd = m.spin.Update(msg)
		} else {
			m.spinning = false
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case searchedMsg:
		m.handleSearched(msg)
	case diffLoadedMsg:
		m.diff.loaded(msg)
	case planDecidedMsg:
		m.handlePlanDecided(msg)
	case tea.PasteMsg:
		cmd = m.handlePaste(msg)
	case tea.MouseClickMsg:
		m.handleMouse(msg.Mouse(), mouseClick)
	case tea.MouseReleaseMsg:
		cmd = m.handleMouse(msg.Mouse(), mouseRelease)
	case tea.MouseMotionMsg:
		m.handleMouse(msg.Mouse(), mouseMotion)
	case tea.MouseWheelMsg:
		m.handleMouse(msg.Mouse(), mouseWheel)
	}
	return cmd
}

func batch(a, b tea.Cmd) tea.Cmd {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return tea.Batch(a, b)
}

// ---- frames ----
//
// Agent screens reach the display in frames. The attached pane (the one
// keystrokes go to) takes new content at most FPS times a second, so what
// the user types echoes within a frame; every other pane takes new content
// at most UnfocusedFPS times a second, all in one shared slot, so panes
// streaming side by side cost UnfocusedFPS frames a second between them,
// not one frame per pane change. bubbletea's renderer re-parses and diffs
// the whole screen on every frame, so its cost is per frame, not per pane.
//
// One frame timer at most is outstanding. While it runs nobody reads the
// change channel (signals coalesce into the next frame), except that
// while attached the timer also fires every 1/FPS to look at the attached
// pane.

// handleChanged handles a change signal: draw now if a frame is due, else
// arm the frame timer.
func (m *runView) handleChanged() tea.Cmd {
	m.waiting = false
	return m.schedule(time.Now())
}

// frameTick handles the frame timer. The timer was armed for the moment a
// frame became due, so that moment counts as now even if the tick is
// delivered early or (in tests and benchmarks) sent directly.
func (m *runView) frameTick() tea.Cmd {
	m.frameTimer = false
	now := time.Now()
	if m.timerDue.After(now) {
		now = m.timerDue
	}
	if fast, slow := m.changedPanes(); fast || slow && m.slotDue(now) {
		m.newFrame(now)
	}
	return m.schedule(now)
}

// schedule draws a frame when one is due and arms the frame timer for
// changes still held back; with none it waits for the next change signal.
func (m *runView) schedule(now time.Time) tea.Cmd {
	if m.frameTimer || m.opts.Terminals == nil {
		return nil
	}
	fast, slow := m.changedPanes()
	capAt := m.lastFrame.Add(m.interval)
	if fast && !now.Before(capAt) || slow && !now.Before(capAt) && m.slotDue(now) {
		m.newFrame(now)
		fast, slow = m.changedPanes()
		capAt = m.lastFrame.Add(m.interval)
	}
	var due time.Time
	switch {
	case fast:
		due = capAt
	case slow:
		due = m.lastSlow.Add(m.slow)
		if due.Before(capAt) {
			due = capAt
		}
		if m.attached && now.Add(m.interval).Before(due) {
			due = now.Add(m.interval) // look at the attached pane meanwhile
		}
	default:
		return m.rearm()
	}
	m.frameTimer, m.timerDue = true, due
	return frameTickCmd(max(due.Sub(now), time.Millisecond))
}

// slotDue reports whether the shared slot of the panes that are not
// attached is open at now.
func (m *runView) slotDue(now time.Time) bool {
	return !now.Before(m.lastSlow.Add(m.slow))
}

// fastID is the pane that takes new content at FPS: the attached one.
func (m *runView) fastID() vocab.AgentID {
	if m.attached {
		return m.focusID
	}
	return ""
}

// changedPanes reports whether the attached pane (fast) and any other
// visible pane (slow) has a screen version not drawn yet. Panes never drawn
// are sampled by View itself.
func (m *runView) changedPanes() (fast, slow bool) {
	f := m.fastID()
	for _, row := range m.lay.Rows {
		for _, c := range row.Cells {
			id := m.agents[c.Agent]
			t, ok := m.terminal(id)
			if !ok {
				continue
			}
			if old, seen := m.r.versions[id]; !seen || old == t.Version() {
				continue
			}
			if id == f {
				fast = true
			} else {
				slow = true
			}
		}
	}
	return fast, slow
}

// newFrame samples the screen versions of the visible panes; View redraws
// exactly the panes whose sampled version changed. The attached pane is
// always sampled; the others only when their shared slot is open, and all
// of them together.
func (m *runView) newFrame(now time.Time) {
	m.lastFrame = now
	slot := m.slotDue(now)
	f := m.fastID()
	took := false
	for _, row := range m.lay.Rows {
		for _, c := range row.Cells {
			id := m.agents[c.Agent]
			t, ok := m.terminal(id)
			if !ok {
				continue
			}
			v := t.Version()
			if old, seen := m.r.versions[id]; seen && old == v {
				continue
			}
			if id != f {
				if !slot {
					continue
				}
				took = true
			}
			m.r.versions[id] = v
		}
	}
	if took {
		m.lastSlow = now
	}
}

func (m *runView) rearm() tea.Cmd {
	if m.opts.Terminals == nil || m.waiting || m.frameTimer {
		return nil
	}
	m.waiting = true
	return m.waitChangedCmd()
}

// ensureTimers starts or stops the clock and spinner: the clock ticks once
// a second only while the task runs, the spinner only while an agent is
// busy. Nothing else ticks.
func (m *runView) ensureTimers() tea.Cmd {
	var cmds []tea.Cmd
	if m.clockRunning() {
		if !m.clockOn {
			m.clockOn = true
			m.clockGen++
			cmds = append(cmds, clockTickCmd(m.clockGen, m.elapsed()))
		}
	} else if m.clockOn {
		m.clockOn = false
		m.clockGen++ // the outstanding tick is ignored
	}
	if !m.spinning && m.anyBusy() {
		m.spinning = true
		cmds = append(cmds, m.spin.Tick)
	}
	return tea.Batch(cmds...)
}

func (m runView) clockRunning() bool { return m.haveState && m.st.Counting() }

func (m runView) anyBusy() bool {
	for i, id := range m.agents {
		if spins(m.healthOf(id)) && m.lay.visible(i) {
			return true
		}
	}
	return false
}

// relayout recomputes where everything goes and resizes every agent
// terminal whose pane size changed (or that is new, e.g. after a restart).
func (m *runView) relayout() {
	focus := m.focusIndex()
	m.bannerNow = m.banner()
	m.lay = computeLayout(layoutInput{
		W: m.width, H: m.height, Agents: len(m.agents), Focus: focus,
		Zoom: m.zoom, Banner: len(m.bannerNow), Events: m.showEvents, EventLines: m.opts.EventLines,
		Knowledge: m.cx.lines(),
	})
	defer m.tellShowing()
	if m.lay.TooSmall || len(m.lay.Rects) == 0 {
		return
	}
	for i, id := range m.agents {
		t, ok := m.terminal(id)
		if !ok {
			delete(m.r.sizes, id)
			continue
		}
		r := m.lay.paneRect(i)
		if r.W == 0 || r.H == 0 {
			continue
		}
		cols, rows := r.inner()
		if prev, ok := m.r.sizes[id]; ok && prev.t == t && prev.w == cols && prev.h == rows {
			continue
		}
		// Resize is an ioctl plus an emulator resize: quick, and it must
		// happen before the pane is drawn at its new size.
		_ = t.Resize(cols, rows)
		m.r.sizes[id] = sizedTerm{t: t, w: cols, h: rows}
	}
}

// ---- snapshots ----

func (m *runView) handleSnapshot(msg SnapshotMsg) tea.Cmd {
	prevPhase := m.st.Phase
	before := make(map[vocab.AgentID]vocab.Health, len(m.agents))
	for _, id := range m.agents {
		before[id] = m.healthOf(id)
	}

	m.st = msg.State
	m.haveState = true
	m.syncPlanGate()
	if msg.Events != nil {
		m.events = mergeEvents(m.events, msg.Events)
		m.noteCheckout(msg.Events)
	}
	if msg.Health != nil {
		m.health = make(map[vocab.AgentID]vocab.Health, len(msg.Health))
		for k, v := range msg.Health {
			m.health[k] = v
		}
	}
	m.cx.setKnowledge(msg.Knowledge)
	m.agents = m.st.AgentIDs()
	if m.agentIndex(m.focusID) < 0 && len(m.agents) > 0 {
		m.focusID = m.agents[0]
		m.attached = false
	}

	var notes []string
	if m.st.Phase != prevPhase {
		switch m.st.Phase {
		case vocab.PhaseNeedsHuman:
			n := "needs you"
			if r := plainText(m.st.Reason); r != "" {
				n += ": " + r
			}
			notes = append(notes, n)
		case vocab.PhaseComplete:
			notes = append(notes, "task complete")
		default: // the header shows the phase
		}
	}
	for _, id := range m.agents {
		if m.healthOf(id) == vocab.HealthWaitingPermission && before[id] != vocab.HealthWaitingPermission {
			notes = append(notes, string(id)+" is waiting for permission")
		}
	}
	if len(notes) == 0 {
		return nil
	}
	return notifyCmd(strings.Join(notes, "; "))
}

// mergeEvents adds the records of a snapshot's tail that are newer than
// the last one kept, so the strip keeps up to maxEvents records even though
// a snapshot carries only the engine's short tail (where detail records
// would soon push the milestones out). A tail that does not reach back to
// the last record kept replaces the list.
func mergeEvents(have, tail []vocab.EventRecord) []vocab.EventRecord {
	out := tail
	if n := len(have); n > 0 {
		last := have[n-1]
		for i := len(tail) - 1; i >= 0; i-- {
			if e := tail[i]; e.Time.Equal(last.Time) && e.Type == last.Type && e.Agent == last.Agent {
				if i == len(tail)-1 {
					return have
				}
				out = append(append([]vocab.EventRecord(nil), have...), tail[i+1:]...)
				break
			}
		}
	}
	if len(out) > maxEvents {
		out = out[len(out)-maxEvents:]
	}
	return append([]vocab.EventRecord(nil), out...)
}

// ---- keys ----

// runKey handles a key of the run view: the panes, and what the layers
// over them (help, diff, plan) pass on. digits is a pane number being
// typed (focusNumber). The groups share no key, except that n, N and esc
// act on an open panel or search first (viewKey).
func (m *runView) runKey(msg tea.KeyPressMsg, digits string) tea.Cmd {
	for _, group := range []func(tea.KeyPressMsg) (tea.Cmd, bool){
		m.viewKey, m.taskKey, func(msg tea.KeyPressMsg) (tea.Cmd, bool) { return m.paneKey(msg, digits) },
		m.terminalKey, m.eventStripKey,
	} {
		if cmd, ok := group(msg); ok {
			return cmd
		}
	}
	m.inertKey(msg)
	return nil
}

// viewKey handles help, the knowledge panel and the search hits.
func (m *runView) viewKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Help):
		m.help = helpView{show: !m.help.show}
	case key.Matches(msg, k.Knowledge):
		m.cx.show = !m.cx.show
		m.help.show, m.diff = false, diffView{}
	case key.Matches(msg, k.Close) && m.cx.show:
		m.cx.show = false
	case m.find.query != "" && key.Matches(msg, k.SearchNext):
		m.stepHit(-1)
	case m.find.query != "" && key.Matches(msg, k.SearchPrev):
		m.stepHit(+1)
	case m.find.query != "" && key.Matches(msg, k.Close):
		m.scroll[m.find.agent] = 0
		m.find = search{}
	default:
		return nil, false
	}
	return nil, true
}

// taskKey handles the task's keys: quit, pause, resume, cancel, retry,
// abandon.
func (m *runView) taskKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case m.opts.Remote != nil && (key.Matches(msg, k.Quit) || key.Matches(msg, k.Leave)):
		_, cmd := m.remoteLeaveKey(msg)
		return cmd, true
	case key.Matches(msg, k.Quit):
		if m.quitAsks() {
			m.confirm = confirmQuit
			return nil, true
		}
		return m.quit(), true
	case key.Matches(msg, k.Pause):
		if why := m.cannotPause(); why != "" {
			m.notice = notice{level: "info", text: why}
		} else if m.opts.Engine != nil {
			m.opts.Engine.Pause()
		}
	case key.Matches(msg, k.Resume):
		if why := m.cannotResume(); why != "" {
			m.notice = notice{level: "info", text: why}
		} else if m.opts.Engine != nil {
			m.opts.Engine.Resume()
		}
	case key.Matches(msg, k.PauseAgent):
		if why := m.cannotPauseAgent(); why != "" {
			m.notice = notice{level: "info", text: why}
		} else if m.opts.Engine != nil {
			m.opts.Engine.PauseAgent(m.focusID)
		}
	case key.Matches(msg, k.Cancel):
		if why := m.cannotCancel(); why != "" {
			m.notice = notice{level: "info", text: why}
		} else {
			m.confirm = confirmCancel
		}
	case key.Matches(msg, k.Retry):
		if m.stuck() {
			if m.opts.Engine != nil {
				m.opts.Engine.Retry()
			}
		} else {
			m.notice = notice{level: "info", text: "nothing to retry: the run does not need you (R is for an error or needs-you stop)"}
		}
	case key.Matches(msg, k.Abandon):
		if m.stuck() {
			m.confirm = confirmAbandon
		} else {
			m.notice = notice{level: "info", text: "abandon is for a run stopped on an error or needing you; use c to cancel"}
		}
	default:
		return nil, false
	}
	return nil, true
}

// paneKey moves the focus between panes, and zooms.
func (m *runView) paneKey(msg tea.KeyPressMsg, digits string) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Next):
		m.moveFocus(+1)
	case key.Matches(msg, k.Prev):
		m.moveFocus(-1)
	case key.Matches(msg, k.Left):
		m.focusTowardOrSay(-1, 0, "to the left of")
	case key.Matches(msg, k.Right):
		m.focusTowardOrSay(+1, 0, "to the right of")
	case key.Matches(msg, k.Up):
		m.focusTowardOrSay(0, -1, "above")
	case key.Matches(msg, k.Down):
		m.focusTowardOrSay(0, +1, "below")
	case key.Matches(msg, k.PageNext):
		m.turnPage(+1)
	case key.Matches(msg, k.PagePrev):
		m.turnPage(-1)
	case key.Matches(msg, k.FocusN):
		before := m.focusID
		m.focusNumber(digits, msg.String())
		if m.focusID == before && m.notice.text == "" {
			m.notice = notice{level: "info", text: m.focusNumberWhy(msg.String())}
		}
	case key.Matches(msg, k.Zoom):
		if len(m.agents) > 0 {
			m.zoom = !m.zoom
		} else {
			m.notice = notice{level: "info", text: "no pane to zoom: no agent has started"}
		}
	default:
		return nil, false
	}
	return nil, true
}

// terminalKey handles the focused agent's terminal: attach, scroll,
// search, copy, diff.
func (m *runView) terminalKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Attach):
		if _, ok := m.terminal(m.focusID); ok {
			m.attached = true
			m.help.show = false
			m.scroll[m.focusID] = 0
		} else {
			m.notice = notice{level: "warn", text: "no live terminal to attach to"}
		}
	case key.Matches(msg, k.ScrollUp):
		if !m.scrollBy(m.focusID, +m.pageStep()) {
			m.notice = notice{level: "info", text: "no more scrollback above (end returns to the live view)"}
		}
	case key.Matches(msg, k.ScrollDown):
		if !m.scrollBy(m.focusID, -m.pageStep()) {
			m.notice = notice{level: "info", text: "the pane shows its live view already (pgup scrolls back)"}
		}
	case key.Matches(msg, k.End):
		if m.scroll[m.focusID] == 0 {
			m.notice = notice{level: "info", text: "the pane shows its live view already (pgup scrolls back)"}
		}
		m.scroll[m.focusID] = 0
	case key.Matches(msg, k.Search):
		if _, ok := m.terminal(m.focusID); ok {
			m.find = search{typing: true, agent: m.focusID}
			m.help.show, m.cx.show = false, false
		} else {
			m.notice = notice{level: "warn", text: "no live terminal to search"}
		}
	case key.Matches(msg, k.Copy):
		if i := m.agentIndex(m.focusID); i >= 0 && !m.lay.TooSmall && len(m.lay.Rects) > 0 {
			_, rows := m.lay.paneRect(i).inner()
			return m.copyRows(m.focusID, 0, rows-1), true
		}
		m.notice = notice{level: "info", text: "no pane to copy: " + m.noPaneWhy()}
	case key.Matches(msg, k.Diff):
		return m.openDiff(), true
	default:
		return nil, false
	}
	return nil, true
}

// eventStripKey shows the event strip, or its detail.
func (m *runView) eventStripKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Events):
		m.showEvents = !m.showEvents
	case key.Matches(msg, k.Detail):
		if !m.showEvents {
			m.showEvents, m.detail = true, true
		} else {
			m.detail = !m.detail
		}
	default:
		return nil, false
	}
	return nil, true
}

// focusNumber focuses pane N. With ten panes or more a number takes two
// digits: "1" focuses pane 1 and waits for a second digit, "1" "2" then
// focuses pane 12.
func (m *runView) focusNumber(pending, d string) {
	try := func(s string) bool {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > len(m.agents) {
			return false
		}
		m.focusID = m.agents[n-1]
		if n*10 <= len(m.agents) {
			m.digits = s
			m.notice = notice{level: "info", text: fmt.Sprintf("pane %d · another digit picks pane %d0–%d", n, n, min(n*10+9, len(m.agents)))}
		}
		return true
	}
	if pending != "" && try(pending+d) {
		return
	}
	try(d)
}

// focusToward moves the focus to the nearest pane of the current page in
// direction (dx, dy).
func (m *runView) focusToward(dx, dy int) {
	i := m.agentIndex(m.focusID)
	if i < 0 || m.lay.TooSmall || len(m.lay.Rects) == 0 || m.lay.PerPage == 0 {
		return
	}
	cur := m.lay.Rects[i]
	cx, cy := cur.X+cur.W/2, cur.Y+cur.H/2
	page := i / m.lay.PerPage
	best, bestD := -1, 0
	for j, r := range m.lay.Rects {
		if j == i || j/m.lay.PerPage != page {
			continue
		}
		x, y := r.X+r.W/2, r.Y+r.H/2
		var along, across int
		switch {
		case dx != 0:
			along, across = (x-cx)*dx, y-cy
			if r.Y >= cur.Y+cur.H || r.Y+r.H <= cur.Y {
				across += 10000 // not on the same row: only as a last resort
			}
		default:
			along, across = (y-cy)*dy, x-cx
			if r.X >= cur.X+cur.W || r.X+r.W <= cur.X {
				across += 10000
			}
		}
		if along <= 0 {
			continue
		}
		d := along + 2*max(across, -across)
		if best < 0 || d < bestD {
			best, bestD = j, d
		}
	}
	if best >= 0 {
		m.focusID = m.agents[best]
	}
}

// turnPage focuses the first pane of the next (d = +1) or previous page.
func (m *runView) turnPage(d int) {
	if m.lay.Pages <= 1 || m.lay.PerPage == 0 {
		m.notice = notice{level: "info", text: "all panes are on one page"}
		return
	}
	p := (m.lay.Page + d + m.lay.Pages) % m.lay.Pages
	m.focusID = m.agents[min(p*m.lay.PerPage, len(m.agents)-1)]
}

// KeyFilter is the program's message filter (NewProgram installs it): a
// key for the attached pane goes to the agent's terminal at once and ends
// there, without an Update and a View of its own; those would add a
// frame's work per key, and the keys of a burst (a fast typist, keys a
// terminal sends together) would wait behind each other's. Every other
// message, and a key that changes the view (the detach key, the first key
// of a pane scrolled back), is handled as usual.
func KeyFilter(model tea.Model, msg tea.Msg) tea.Msg {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return msg
	}
	m, ok := model.(Model)
	if !ok || m.screen() != screenAttached || !m.run.typeAttached(k) {
		return msg
	}
	return nil
}

// typeAttached types k to the attached pane, unless it changes the view
// (the detach key, the first key of a pane scrolled back) or the pane has
// no live terminal: false, k is handled as usual.
func (m *runView) typeAttached(k tea.KeyPressMsg) bool {
	if m.scroll[m.focusID] != 0 || key.Matches(k, m.km.attached.Detach) {
		return false
	}
	t, ok := m.terminal(m.focusID)
	if !ok {
		return false
	}
	m.typeKey(t, k.Key())
	return true
}

// typeKey writes k to t as a terminal sends it; false for a key with no
// encoding (nothing is written).
func (m *runView) typeKey(t Terminal, k tea.Key) bool {
	b := encodeKey(k, t.Modes().AppCursorKeys)
	if b != nil {
		m.input.enqueue(t, b)
	}
	return b != nil
}

func (m *runView) handleAttachedKey(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, m.km.attached.Detach) {
		m.attached = false
		m.askDraft(m.focusID)
		return nil
	}
	t, ok := m.terminal(m.focusID)
	if !ok {
		m.attached = false
		m.notice = notice{level: "warn", text: string(m.focusID) + " has no live terminal any more"}
		return nil
	}
	if m.typeKey(t, msg.Key()) {
		m.scroll[m.focusID] = 0
	}
	return nil
}

// handleConfirmKey answers the y/n question of the confirm screen.
func (m *runView) handleConfirmKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.km.confirm
	switch {
	case key.Matches(msg, k.Yes):
		c := m.confirm
		m.confirm = confirmNone
		switch c {
		case confirmCancel:
			if m.opts.Engine != nil {
				m.opts.Engine.Cancel()
			}
		case confirmAbandon:
			if m.opts.Engine != nil {
				m.opts.Engine.Abandon()
			}
		case confirmQuit:
			return m.quit()
		}
	case key.Matches(msg, k.QuitNow) && m.confirm == confirmQuit:
		// ctrl+c twice quits without a y.
		return m.quit()
	case key.Matches(msg, k.No):
		m.confirm = confirmNone
	}
	return nil
}

// quit ends the program. The task stays resumable: the caller stops the
// agents after Run returns and state.json keeps the run.
func (m *runView) quit() tea.Cmd {
	m.life.stop()
	return tea.Quit
}

// stuck reports whether the run waits on the user (R and A apply).
func (m runView) stuck() bool {
	return m.haveState && (m.st.Phase == vocab.PhaseError || m.st.Phase == vocab.PhaseNeedsHuman)
}

// quitAsks reports whether q asks first: only while a task that is not
// over has live agents. On every end screen (complete, cancelled,
// abandoned) q quits at once: there is nothing left to resume.
func (m runView) quitAsks() bool {
	return !m.taskOver() && m.agentsRunning()
}

// agentsRunning reports whether quitting would stop a live agent.
func (m runView) agentsRunning() bool {
	for _, id := range m.agents {
		if _, ok := m.terminal(id); ok && m.healthOf(id) != vocab.HealthExited {
			return true
		}
	}
	return false
}

func (m *runView) moveFocus(d int) {
	n := len(m.agents)
	if n == 0 {
		return
	}
	i := (m.focusIndex() + d + n) % n
	m.focusID = m.agents[i]
}

func (m runView) pageStep() int {
	if len(m.agents) == 0 || m.lay.TooSmall {
		return 10
	}
	_, rows := m.lay.paneRect(m.focusIndex()).inner()
	return max(rows/2, 1)
}

// scrollBy scrolls id's pane d lines back (forward when negative) and
// reports whether it moved.
func (m *runView) scrollBy(id vocab.AgentID, d int) bool {
	if id == "" {
		return false
	}
	t, ok := m.terminal(id)
	if !ok {
		return false
	}
	before := m.scroll[id]
	m.scroll[id] = min(max(before+d, 0), t.ScrollbackLen())
	return m.scroll[id] != before
}

// focusTowardOrSay moves the focus toward (dx, dy), or says there is no
// pane where (in words: "above") the focused one.
func (m *runView) focusTowardOrSay(dx, dy int, where string) {
	before := m.focusID
	m.focusToward(dx, dy)
	if m.focusID == before {
		m.notice = notice{level: "info", text: "no pane " + where + " " + m.focusName() + " on this page"}
	}
}

// focusName names the focused pane for a notice.
func (m runView) focusName() string {
	if m.focusID == "" {
		return "the focused pane"
	}
	return string(m.focusID)
}

// focusNumberWhy says why digit d moved no focus.
func (m runView) focusNumberWhy(d string) string {
	n, _ := strconv.Atoi(d)
	switch {
	case len(m.agents) == 0:
		return "no pane to focus: no agent has started"
	case n >= 1 && n <= len(m.agents):
		return fmt.Sprintf("pane %d (%s) is focused already", n, m.agents[n-1])
	default:
		return fmt.Sprintf("no pane %s: panes are 1–%d", d, len(m.agents))
	}
}

// ---- paste and mouse ----

// handlePaste gives pasted text to the screen that types text: the plan
// feedback, or the attached agent.
func (m *runView) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch m.screen() {
	case screenFeedback:
		var cmd tea.Cmd
		m.gate.input, cmd = m.gate.input.Update(msg)
		return cmd
	case screenAttached:
		if t, ok := m.terminal(m.focusID); ok {
			m.input.enqueue(t, encodePaste(msg.Content, t.Modes()))
		}
	}
	return nil
}

type mouseKind int

const (
	mouseClick mouseKind = iota
	mouseRelease
	mouseMotion
	mouseWheel
)

// wheelLines is how far one wheel notch scrolls a pane.
const wheelLines = 3

func (m *runView) handleMouse(ms tea.Mouse, kind mouseKind) tea.Cmd {
	if m.help.show {
		if kind == mouseClick {
			m.help.show = false
		}
		return nil
	}
	if kind == mouseRelease && m.sel.dragging {
		// A drag over a pane selected rows: copy them. A click without a
		// drag selects nothing.
		s := m.sel
		if s.anchor == s.head {
			m.sel = selection{}
			return nil
		}
		m.sel.dragging = false
		return m.copyRows(s.agent, min(s.anchor, s.head), max(s.anchor, s.head))
	}
	if kind == mouseMotion && m.sel.dragging {
		if i := m.agentIndex(m.sel.agent); i >= 0 && m.lay.visible(i) {
			r := m.lay.paneRect(i)
			_, ih := r.inner()
			m.sel.head = min(max(ms.Y-r.Y-1, 0), ih-1)
		}
		return nil
	}
	i := m.lay.hit(ms.X, ms.Y)
	if i < 0 {
		return nil
	}
	id := m.agents[i]
	// Attached: events over the focused pane go to the application when it
	// asked for mouse reports.
	if m.attached && id == m.focusID {
		if t, ok := m.terminal(id); ok {
			r := m.lay.paneRect(i)
			x, y := ms.X-r.X-1, ms.Y-r.Y-1
			iw, ih := r.inner()
			if x >= 0 && y >= 0 && x < iw && y < ih {
				if b := encodeMouse(ms, x, y, kind == mouseRelease, kind == mouseMotion, t.Modes()); b != nil {
					m.input.enqueue(t, b)
					return nil
				}
			}
		}
	}
	switch kind {
	case mouseClick:
		if id != m.focusID {
			m.attached = false
			m.focusID = id
		}
		r := m.lay.paneRect(i)
		_, ih := r.inner()
		if y := ms.Y - r.Y - 1; !m.attached && ms.Button == tea.MouseLeft && y >= 0 && y < ih {
			m.sel = selection{agent: id, anchor: y, head: y, dragging: true}
		}
	case mouseWheel:
		switch ms.Button {
		case tea.MouseWheelUp:
			m.scrollBy(id, +wheelLines)
		case tea.MouseWheelDown:
			m.scrollBy(id, -wheelLines)
		}
	}
	return nil
}

// agentIndex is the index of agent id, or -1.
func (m runView) agentIndex(id vocab.AgentID) int {
	for i, a := range m.agents {
		if a == id {
			return i
		}
	}
	return -1
}
