package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// renderCache holds what View computed, so the next View can reuse it. It
// lives behind a pointer because View has a value receiver; only the UI
// goroutine touches it.
type renderCache struct {
	// versions are the screen versions sampled at the last frame (see
	// runView.newFrame).
	versions map[vocab.AgentID]uint64
	panes    map[vocab.AgentID]*paneCache
	sizes    map[vocab.AgentID]sizedTerm

	header, banner, footer, events, help cachedText
	lastLen                              int
	// helpMax is how far the help overlay can scroll at its last size.
	helpMax int
	// showing are the panes last told to a PaneViewer (remote.go).
	showing Shown
}

// sizedTerm is the size last given to an agent's terminal.
type sizedTerm struct {
	t    Terminal
	w, h int
}

// cachedText is a piece of chrome keyed by everything it shows.
type cachedText struct {
	key  any
	text string
}

func (c *cachedText) get(key any, build func() string) string {
	if c.key != nil && c.key == key {
		return c.text
	}
	c.key, c.text = key, build()
	return c.text
}

func newRenderCache() *renderCache {
	return &renderCache{
		versions: map[vocab.AgentID]uint64{},
		panes:    map[vocab.AgentID]*paneCache{},
		sizes:    map[vocab.AgentID]sizedTerm{},
	}
}

// View renders the whole screen: the front door's screen that shows, or
// the run view.
func (m Model) View() tea.View {
	if m.frames != nil {
		defer m.frames.observe(time.Now())
	}
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "Hivemind"
	if m.run.haveState {
		v.WindowTitle = "Hivemind · " + PhaseLabel(m.run.st.Phase)
	}
	v.Cursor = m.run.attachedCursor()
	return v
}

// render composes the frame: exactly m.height lines, none wider than
// m.width.
func (m Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.fd.showing() {
		return m.fd.View(m.frontViewCtx())
	}
	return m.run.View()
}

// cursorReporter is implemented by terminals that know their cursor (like
// *ptyagent.Session); while attached, the real cursor is shown there.
type cursorReporter interface {
	Cursor() (x, y int, visible bool)
}

func (m runView) attachedCursor() *tea.Cursor {
	if !m.attached || m.help.show || m.lay.TooSmall || m.scroll[m.focusID] > 0 {
		return nil
	}
	t, ok := m.terminal(m.focusID)
	if !ok {
		return nil
	}
	cr, ok := t.(cursorReporter)
	if !ok {
		return nil
	}
	i := m.focusIndex()
	if !m.lay.visible(i) {
		return nil
	}
	x, y, vis := cr.Cursor()
	r := m.lay.paneRect(i)
	iw, ih := r.inner()
	if !vis || x < 0 || y < 0 || x >= iw || y >= ih {
		return nil
	}
	return tea.NewCursor(r.X+1+x, r.Y+1+y)
}

// View composes the run view's frame: exactly m.height lines, none wider
// than m.width.
func (m runView) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	l := m.lay
	if l.TooSmall {
		lines := make([]string, m.height)
		msg := fmt.Sprintf("Hivemind: terminal too small (%d×%d)", m.width, m.height)
		lines[0] = fitWidth(ansi.Truncate(msg, m.width, "…"), m.width)
		for i := 1; i < len(lines); i++ {
			lines[i] = strings.Repeat(" ", m.width)
		}
		return strings.Join(lines, "\n")
	}

	var b strings.Builder
	b.Grow(m.r.lastLen + 64)

	b.WriteString(m.r.header.get(m.headerKey(), m.renderHeader))
	b.WriteByte('\n')
	if l.BannerY >= 0 {
		b.WriteString(m.r.banner.get(m.bannerKey(), m.renderBanner))
		b.WriteByte('\n')
	}

	switch {
	case m.help.show:
		b.WriteString(m.r.help.get(helpKey{l.Area.W, l.Area.H, m.help.scroll, m.opts.Diff != nil}, m.renderHelp))
		b.WriteByte('\n')
	case m.diff.show:
		b.WriteString(m.diff.view(l.Area.W, l.Area.H))
		b.WriteByte('\n')
	case m.planShown():
		b.WriteString(m.gate.view(m.st.Plan, l.Area.W, l.Area.H))
		b.WriteByte('\n')
	case len(m.agents) == 0:
		blank := strings.Repeat(" ", l.Area.W)
		for i := 0; i < l.Area.H; i++ {
			if i == l.Area.H/2 {
				b.WriteString(fitWidth(stDim.Render(center("waiting for agents…", l.Area.W)), l.Area.W))
			} else {
				b.WriteString(blank)
			}
			b.WriteByte('\n')
		}
	default:
		m.writePanes(&b, l)
	}

	if l.KnowledgeH > 0 {
		b.WriteString(m.renderKnowledge())
		b.WriteByte('\n')
	}
	if l.EventsH > 0 {
		b.WriteString(m.r.events.get(m.eventsKey(), m.renderEvents))
		b.WriteByte('\n')
	}
	b.WriteString(m.r.footer.get(m.footerKey(), m.renderFooter))
	m.r.lastLen = b.Len()
	return b.String()
}

// writePanes stitches the visible panes row by row. Every pane row is known
// to be exactly its pane's width, so rows are concatenated as they are.
func (m runView) writePanes(b *strings.Builder, l layout) {
	blocks := make([][]string, 0, maxPanes)
	for _, row := range l.Rows {
		blocks = blocks[:0]
		for _, c := range row.Cells {
			blocks = append(blocks, m.paneBlock(c.Agent, c.W, row.H))
		}
		for i := 0; i < row.H; i++ {
			for _, blk := range blocks {
				b.WriteString(blk[i])
			}
			b.WriteByte('\n')
		}
	}
}

// paneBlock returns agent i's pane rows for a w×h pane.
func (m runView) paneBlock(i, w, h int) []string {
	id := m.agents[i]
	t, _ := m.terminal(id)
	var version uint64
	if t != nil {
		// Screen versions are sampled only on frames (runView.newFrame), so
		// screen changes reach the display at most Options.FPS (attached
		// pane) or Options.UnfocusedFPS (the others) times a second even
		// when other messages cause Views in between. A pane drawn for the
		// first time samples its version here.
		v, ok := m.r.versions[id]
		if !ok {
			v = t.Version()
			m.r.versions[id] = v
		}
		version = v
	}
	pc := m.r.panes[id]
	if pc == nil {
		pc = &paneCache{}
		m.r.panes[id] = pc
	}
	return pc.block(t, version, w, h, m.borderOf(i), m.titleOf(i, t), m.marks(id))
}

func (m runView) borderOf(i int) borderKind {
	id := m.agents[i]
	if id == m.focusID {
		if m.attached {
			return borderAttach
		}
		return borderFocus
	}
	switch m.healthOf(id) {
	case vocab.HealthWaitingPermission, vocab.HealthHangWarning:
		return borderWarn
	case vocab.HealthHung:
		return borderBad
	case vocab.HealthRateLimited:
		return borderRate
	case vocab.HealthStarting, vocab.HealthReady, vocab.HealthBusy, vocab.HealthIdle,
		vocab.HealthExited, vocab.HealthRestarting:
	}
	return borderNormal
}

func (m runView) titleOf(i int, t Terminal) titleData {
	id := m.agents[i]
	a := m.st.Agents[id]
	role := m.st.AgentRole(id)
	health := m.healthOf(id)
	td := titleData{
		ID: id, Role: role, Agent: m.opts.agentOf(id, role), Health: health,
		Subtask:  a.Subtask,
		Changed:  a.ChangedFiles,
		Usage:    a.Usage.Short(),
		Activity: m.activity(id),
		Attached: m.attached && id == m.focusID,
		Zoomed:   m.zoom && id == m.focusID,
		Scroll:   m.scroll[id],
		Num:      i + 1,
	}
	if m.find.agent == id && (m.find.running || m.find.active(id)) {
		td.Search = m.find.label()
	}
	if spins(health) {
		td.Spinner = m.spin.View()
	}
	if td.Scroll > 0 && t != nil {
		td.Back = t.ScrollbackLen()
	}
	return td
}

// activity is ● (active, may write), ○ (read-only) or – (idle) for an agent
// in the current state.
func (m runView) activity(id vocab.AgentID) string {
	for _, a := range m.st.ActiveAgents {
		if a == id {
			return "●"
		}
	}
	for _, a := range m.st.ReadOnlyAgents {
		if a == id {
			return "○"
		}
	}
	return "–"
}

// ---- header ----

type headerKey struct {
	w                    int
	title, task, branch  string
	phase, prev          vocab.Phase
	approved, total, rev int
	fr, cp, waiting      int
	elapsed              int64
	started              bool
	spend, hold          string
	unpriced             string
}

func (m runView) headerKey() headerKey {
	k := headerKey{w: m.width, title: m.opts.Title, branch: m.opts.Branch}
	if m.haveState {
		k.task = m.st.TaskID
		k.phase, k.prev = m.st.Phase, m.st.PreviousPhase
		k.approved, k.total, k.cp = approvedCheckpoints(m.st), m.st.TotalCheckpoints, m.st.CurrentCheckpoint
		k.rev, k.fr, k.waiting = m.st.RevisionCount, m.st.FrictionCount, m.st.Waiting()
		k.spend, k.unpriced = spendLabel(m.st)
		k.hold = holdLabel(m.st)
		if !m.st.StartedAt.IsZero() {
			k.started = true
			k.elapsed = int64(m.elapsed() / time.Second)
		}
	}
	return k
}

// elapsed is how long the task has run, by the clock its state keeps
// (vocab.State.Elapsed: status and the summary read the same): paused
// time and time no Hivemind ran it do not count, and it stops when the
// task ends. The state comes from the run that is live.
func (m runView) elapsed() time.Duration {
	return m.st.Elapsed(m.now(), true)
}

// headerSeg is one part of a header line; when the line is too narrow the
// parts with the highest drop go first (0: never dropped).
type headerSeg struct {
	text string
	drop int
	// flex segments (the task title) count as at most flexW cells when
	// deciding what to drop: a long title is truncated, it does not push
	// the rest out.
	flex bool
}

const flexW = 16

// fitSegs drops the least important segments until the rest fit in w
// cells, then joins them (joinFit truncates what still does not fit).
func fitSegs(segs []headerSeg, w int) string {
	width := func(s headerSeg) int {
		if s.flex {
			return min(ansi.StringWidth(s.text), flexW)
		}
		return ansi.StringWidth(s.text)
	}
	total := 0
	for _, s := range segs {
		total += width(s)
	}
	for level := 9; level >= 1 && total > w; level-- {
		for i := range segs {
			if segs[i].drop == level && segs[i].text != "" {
				total -= width(segs[i])
				segs[i].text = ""
			}
		}
	}
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		if s.text != "" {
			out = append(out, s.text)
		}
	}
	return joinFit(out, w)
}

// renderHeader draws the first line. At 80 columns it keeps the state, the
// approved checkpoints, the clock and the start of the task; revisions,
// friction, the branch and the progress bar go first when space is short.
func (m runView) renderHeader() string {
	k := m.headerKey()
	sep := stDim.Render(" │ ")
	segs := []headerSeg{{text: stBrand.Render(" HIVEMIND ")}}
	if !m.haveState {
		segs = append(segs, headerSeg{text: " " + stDim.Render("waiting for the engine…")})
		return fitSegs(segs, m.width)
	}
	ph := lipgloss.NewStyle().Foreground(phaseColor(k.phase)).Bold(true).Render(PhaseLabel(k.phase))
	segs = append(segs, headerSeg{text: " " + ph})
	if h := phaseHeadline(k.phase, k.prev); h != PhaseLabel(k.phase) {
		segs = append(segs, headerSeg{text: stDim.Render(strings.TrimPrefix(h, PhaseLabel(k.phase))), drop: 2})
	}
	if k.waiting > 0 {
		// Messages a pause or a rate-limit hold keeps from the agents.
		segs = append(segs, headerSeg{text: lipgloss.NewStyle().Foreground(colWarn).Render(fmt.Sprintf(" · %d waiting", k.waiting)), drop: 2})
	}
	switch k.phase {
	case vocab.PhaseExecuting, vocab.PhaseCheckpoint, vocab.PhaseCheckpointReview, vocab.PhaseCheckpointFix:
		if k.cp > 0 && k.total > 0 {
			// Which checkpoint is being built or reviewed (progress counts
			// only approved ones).
			segs = append(segs, headerSeg{text: stDim.Render(fmt.Sprintf(" · checkpoint %d", k.cp)), drop: 6})
		}
	default: // no checkpoint under way
	}
	if k.total > 0 {
		pct := float64(k.approved) / float64(k.total)
		segs = append(segs,
			headerSeg{text: sep},
			headerSeg{text: m.prog.ViewAs(min(max(pct, 0), 1)) + " ", drop: 7},
			headerSeg{text: stHeaderVal.Render(fmt.Sprintf("%d/%d", k.approved, k.total))},
			headerSeg{text: stHeaderKey.Render(" checkpoints"), drop: 6},
			headerSeg{text: stHeaderKey.Render(" approved"), drop: 3})
	} else {
		segs = append(segs, headerSeg{text: sep + stHeaderKey.Render("checkpoints ") + stDim.Render("–"), drop: 6})
	}
	segs = append(segs,
		headerSeg{text: sep + stHeaderKey.Render("revisions ") + stHeaderVal.Render(fmt.Sprint(k.rev)), drop: 8},
		headerSeg{text: sep + stHeaderKey.Render("friction ") + stHeaderVal.Render(fmt.Sprint(k.fr)), drop: 8})
	el := "--:--:--"
	if k.started {
		el = vocab.FormatElapsed(time.Duration(k.elapsed) * time.Second)
	}
	segs = append(segs, headerSeg{text: sep + stHeaderKey.Render("⏱ ") + stHeaderVal.Render(el)})
	if k.spend != "" {
		segs = append(segs, headerSeg{text: sep + stHeaderVal.Render(k.spend), drop: 4})
		if k.unpriced != "" {
			segs = append(segs, headerSeg{text: lipgloss.NewStyle().Foreground(colWarn).Render(k.unpriced), drop: 5})
		}
	}
	if k.hold != "" {
		segs = append(segs, headerSeg{text: sep + lipgloss.NewStyle().Foreground(colWarn).Render(k.hold), drop: 1})
	}
	if k.branch != "" {
		segs = append(segs, headerSeg{text: sep + stHeaderKey.Render("⎇ ") + stText.Render(k.branch), drop: 5})
	}
	if k.title != "" {
		segs = append(segs, headerSeg{text: sep + stText.Render(k.title), flex: true})
	} else if k.task != "" {
		segs = append(segs, headerSeg{text: sep + stDim.Render(k.task), flex: true})
	}
	return fitSegs(segs, m.width)
}

// joinFit concatenates segments while they fit in w cells (the last one is
// truncated) and pads to exactly w.
func joinFit(segs []string, w int) string {
	var sb strings.Builder
	used := 0
	for _, s := range segs {
		sw := ansi.StringWidth(s)
		if used+sw > w {
			if rest := w - used; rest > 1 {
				cut := ansi.Truncate(s, rest, "…")
				sb.WriteString(cut)
				used += ansi.StringWidth(cut)
			}
			break
		}
		sb.WriteString(s)
		used += sw
	}
	if used < w {
		sb.WriteString(strings.Repeat(" ", w-used))
	}
	return sb.String()
}

// ---- banner ----

type bannerKey struct {
	w     int
	phase vocab.Phase
	text  string
}

func (m runView) bannerKey() bannerKey {
	return bannerKey{w: m.width, phase: m.st.Phase, text: strings.Join(m.bannerNow, "\n")}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return ansi.Strip(s)
}

// renderBanner draws the banner: the state and its reason, then every
// action and every need (needs.go), wrapped over its lines.
func (m runView) renderBanner() string {
	bg, _, _ := m.bannerContent()
	st := lipgloss.NewStyle().Foreground(colBlack).Background(bg).Bold(true)
	out := make([]string, len(m.bannerNow))
	for i, l := range m.bannerNow {
		out[i] = st.Render(fitWidth(l, m.width))
	}
	return strings.Join(out, "\n")
}

// ---- footer ----

type footerKey struct {
	w           int
	confirm     confirmKind
	attached    bool
	focus       vocab.AgentID
	notice      notice
	page, pages int
	phase       vocab.Phase
	inputErr    string
	search      string
	typing      bool
	diff, help  bool
	events      bool
	detail      bool
	git         bool
}

func (m runView) footerKey() footerKey {
	return footerKey{w: m.width, confirm: m.confirm, attached: m.attached, focus: m.focusID,
		notice: m.notice, page: m.lay.Page, pages: m.lay.Pages, phase: m.st.Phase, inputErr: m.input.lastError(),
		search: m.find.query, typing: m.find.typing, diff: m.diff.show, help: m.help.show,
		events: m.showEvents, detail: m.detail, git: m.opts.Diff != nil}
}

// confirmLine is the question of a confirmation, cut to w cells but always
// ending in its [y/n].
func (m runView) confirmLine(w int) string {
	var q string
	switch m.confirm {
	case confirmCancel:
		q = " Cancel the task? Every agent is stopped."
	case confirmQuit:
		if m.taskOver() {
			// q asks only while an agent runs: the task's end is
			// stopping them (quitting stops them too).
			q = " Quit Hivemind? The task is over; its agents are being stopped."
		} else {
			q = " Quit Hivemind? Agents stop; resume later with hivemind --resume."
		}
	case confirmAbandon:
		q = " Abandon the task? It ends and cannot be resumed."
	case confirmDraft:
		return m.draftLine(w)
	case confirmLeave:
		return m.leaveLine(w)
	}
	const yn = " [y/n] "
	q = ansi.Truncate(q, max(w-len(yn), 0), "…") + yn
	return stConfirm.Render(fitWidth(ansi.Truncate(q, w, ""), w))
}

// taskOver reports whether the task has ended (complete, cancelled or
// abandoned): quitting then leaves nothing to resume.
func (m runView) taskOver() bool {
	switch m.st.Phase {
	case vocab.PhaseComplete, vocab.PhaseCancelled, vocab.PhaseIdle:
		return m.haveState
	default: // under way, held or waiting for the human: resumable
	}
	return false
}

// keyHints renders bindings as footer hints in w cells, always ending in
// the essentials (quit and help), dropping other hints from the end first.
func keyHints(bs, essentials []key.Binding, w int) string {
	ess := shortHints(essentials, 0)
	room := w - 1 - ansi.StringWidth(ess) - ansi.StringWidth(hintSep)
	if rest := shortHints(bs, room); room > 0 && rest != "" {
		return fitWidth(" "+rest+stHelpSep.Render(hintSep)+ess, w)
	}
	return fitWidth(" "+ess, w)
}

func (m runView) renderFooter() string {
	w := m.width
	right := ""
	if m.lay.Pages > 1 {
		right = stAccent.Render(fmt.Sprintf(" page %d/%d ", m.lay.Page+1, m.lay.Pages)) + stDim.Render("[ ] ")
	}
	rw := ansi.StringWidth(right)
	lw := max(w-rw, 0)
	var left string
	switch {
	case m.confirm != confirmNone:
		left = m.confirmLine(lw)
	case m.attached:
		q := " ⌨ attached to " + string(m.focusID) + " — keys, paste and wheel go to the agent · ctrl+] detach (then q quit · ? help) "
		switch {
		case lw < 60:
			q = " ⌨ " + string(m.focusID) + " · ctrl+] detach, then q quit "
		case lw < ansi.StringWidth(q):
			q = " ⌨ attached to " + string(m.focusID) + " · ctrl+] detach (then q quit · ? help) "
		}
		left = stAttachBar.Render(fitWidth(ansi.Truncate(q, lw, "…"), lw))
	case m.find.typing:
		hint := stDim.Render("  enter search · esc cancel")
		q := stAccent.Render(" /") + stText.Render(m.find.query) + stSelected.Render(" ")
		left = fitWidth(ansi.Truncate(q+hint, lw, "…"), lw)
	case m.input.lastError() != "":
		left = noticeLine(notice{level: "error", text: "input: " + m.input.lastError()}, m.keys.essentials(), lw)
	case m.notice.text != "":
		left = noticeLine(m.notice, m.keys.essentials(), lw)
	default:
		left = keyHints(m.footerHints(), m.keys.essentials(), lw)
	}
	return left + right
}

// shownKeys are the run view's keys as the footer and help offer them:
// without git there is no diff, so d is not offered (it still says why).
func (m runView) shownKeys() keyMap {
	k := m.keys
	k.Diff.SetEnabled(m.opts.Diff != nil)
	return k
}

// footerKeys are the shown keys the footer offers now: p, r and c only
// where they act (elsewhere they say why, and help lists them).
func (m runView) footerKeys() keyMap {
	k := m.shownKeys()
	if m.haveState {
		k.Pause.SetEnabled(teamRunning(m.st.Phase))
		k.Resume.SetEnabled(m.st.Phase == vocab.PhasePaused)
		k.Cancel.SetEnabled(m.cannotCancel() == "")
	}
	return k
}

// footerHints are the keys the footer offers for what shows now.
func (m runView) footerHints() []key.Binding {
	k := m.footerKeys()
	switch {
	case m.atPlanGate():
		p := m.km.plan
		return []key.Binding{p.Approve, p.Feedback, p.PlanView, k.Pause, k.Cancel}
	case m.diff.show:
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc/d", "close diff")),
			key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("↑↓ pgup pgdn", "scroll"))}
	case m.help.show:
		return []key.Binding{key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
			key.NewBinding(key.WithKeys("down"), key.WithHelp("↑↓", "scroll"))}
	case m.find.query != "":
		return []key.Binding{k.SearchNext, k.SearchPrev, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "end search"))}
	case m.cx.show:
		return append([]key.Binding{key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "hide knowledge"))}, k.ShortHelp()...)
	case m.haveState && m.st.Phase == vocab.PhasePaused:
		return []key.Binding{k.Resume, k.Attach, k.Zoom, k.Cancel, k.Events, k.Search, k.Diff, k.Next}
	case m.stuck():
		return []key.Binding{k.Retry, k.Abandon, k.Attach, k.Zoom, k.Events, k.Search, k.Diff, k.Next}
	case m.showEvents:
		d := "all detail"
		if m.detail {
			d = "milestones only"
		}
		return append([]key.Binding{key.NewBinding(key.WithKeys("v"), key.WithHelp("v", d))}, k.ShortHelp()...)
	}
	return k.ShortHelp()
}

// ---- event log ----

type eventsKey struct {
	w, h   int
	n      int
	detail bool
	first  *vocab.EventRecord
	last   *vocab.EventRecord
}

func (m runView) eventsKey() eventsKey {
	k := eventsKey{w: m.width, h: m.lay.EventsH, n: len(m.events), detail: m.detail}
	if len(m.events) > 0 {
		k.first, k.last = &m.events[0], &m.events[len(m.events)-1]
	}
	return k
}

// renderEvents draws the event strip: the newest milestones, or every
// record with detail on (v).
func (m runView) renderEvents() string {
	w, h := m.width, m.lay.EventsH
	lines := make([]string, 0, h)
	title := "─ events: milestones (v all detail · e hide) "
	if m.detail {
		title = "─ events: all detail (v milestones only · e hide) "
	}
	lines = append(lines, stDim.Render(ansi.Truncate(title, w, "…")+strings.Repeat("─", max(w-ansi.StringWidth(title), 0))))
	n := h - 1
	evs := make([]vocab.EventRecord, 0, n)
	for i := len(m.events) - 1; i >= 0 && len(evs) < n; i-- {
		if m.detail || vocab.IsMilestone(m.events[i]) {
			evs = append(evs, m.events[i])
		}
	}
	for i := len(evs) - 1; i >= 0; i-- {
		lines = append(lines, fitWidth(ansi.Truncate(formatEvent(evs[i]), w, "…"), w))
	}
	if len(evs) == 0 && n > 0 {
		lines = append(lines, fitWidth(stDim.Render(" no events yet"), w))
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}

func formatEvent(e vocab.EventRecord) string {
	var sb strings.Builder
	sb.WriteString(stEventTime.Render(e.Time.Local().Format("15:04:05")))
	sb.WriteString(" ")
	sb.WriteString(stEventType.Render(string(e.Type)))
	if e.Agent != "" {
		sb.WriteString(" ")
		sb.WriteString(stEventAgt.Render(string(e.Agent)))
	}
	if e.Type == vocab.RecordStateChanged {
		from, _ := e.Details["from"].(string)
		to, _ := e.Details["to"].(string)
		sb.WriteString(" " + stText.Render(PhaseLabel(vocab.Phase(from))+" → "+PhaseLabel(vocab.Phase(to))))
		return sb.String()
	}
	if len(e.Details) > 0 {
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "content" {
				continue // a whole trigger file: too long for one line
			}
			sb.WriteString(" ")
			sb.WriteString(stDim.Render(k + "="))
			sb.WriteString(oneLine(fmt.Sprint(e.Details[k])))
		}
	}
	if note := vocab.StopNote(e); note != "" {
		sb.WriteString(lipgloss.NewStyle().Foreground(colOK).Render(" (" + note + ")"))
	}
	return sb.String()
}

// ---- help ----

type helpKey struct {
	w, h, scroll int
	diff         bool
}

// renderHelp draws the help overlay over the pane area: every key, the
// legend of pane titles and the states, scrollable when the area is small.
func (m runView) renderHelp() string {
	w, h := m.lay.Area.W, m.lay.Area.H
	notes := []string{
		"Attached (enter): keys, paste and the mouse go to the agent; ctrl+] detaches.",
		"q quits: a running task stays resumable (hivemind --resume). ? or esc closes this help.",
	}
	out, maxScroll := renderHelpBox("Hivemind keys", m.helpSections(), notes, w, h, m.help.scroll)
	m.r.helpMax = maxScroll
	return out
}
