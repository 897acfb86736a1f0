package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/workspace"
)

// renderCache holds what View computed, so the next View can reuse it. It
// lives behind a pointer because View has a value receiver; only the UI
// goroutine touches it.
type renderCache struct {
	// versions are the screen versions sampled at the last frame (see
	// Model.newFrame).
	versions map[string]uint64
	panes    map[string]*paneCache
	sizes    map[string]sizedTerm

	header, banner, footer, events, help cachedText
	lastLen                              int
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
		versions: map[string]uint64{},
		panes:    map[string]*paneCache{},
		sizes:    map[string]sizedTerm{},
	}
}

// View renders the whole screen.
func (m Model) View() tea.View {
	if m.frames != nil {
		defer m.frames.observe(time.Now())
	}
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "Hivemind"
	if m.haveState {
		v.WindowTitle = "Hivemind · " + string(m.st.State)
	}
	v.Cursor = m.attachedCursor()
	return v
}

// cursorReporter is implemented by terminals that know their cursor (like
// *ptyagent.Session); while attached, the real cursor is shown there.
type cursorReporter interface {
	Cursor() (x, y int, visible bool)
}

func (m Model) attachedCursor() *tea.Cursor {
	if !m.attached || m.showHelp || m.lay.TooSmall || m.scroll[m.focusID] > 0 {
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

// render composes the frame: exactly m.height lines, none wider than
// m.width.
func (m Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.fd.mode != modeRun {
		return m.renderFront()
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
	case m.showHelp:
		b.WriteString(m.r.help.get(helpKey{l.Area.W, l.Area.H}, m.renderHelp))
		b.WriteByte('\n')
	case m.cx.show:
		b.WriteString(m.renderContext())
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
func (m Model) writePanes(b *strings.Builder, l layout) {
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
func (m Model) paneBlock(i, w, h int) []string {
	id := m.agents[i]
	t, _ := m.terminal(id)
	var version uint64
	if t != nil {
		// Screen versions are sampled only on frames (Model.newFrame), so
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
	return pc.block(t, version, w, h, m.borderOf(i), m.titleOf(i, t))
}

func (m Model) borderOf(i int) borderKind {
	id := m.agents[i]
	if id == m.focusID {
		if m.attached {
			return borderAttach
		}
		return borderFocus
	}
	switch m.healthOf(id) {
	case "waiting_permission", "hang_warning":
		return borderWarn
	case "hung", "crashed":
		return borderBad
	case "rate_limited":
		return borderRate
	}
	return borderNormal
}

func (m Model) titleOf(i int, t Terminal) titleData {
	id := m.agents[i]
	a := m.st.Agents[id]
	role := a.Role
	if role == "" {
		role = roleOf(id)
	}
	health := m.healthOf(id)
	td := titleData{
		ID: id, Role: role, Health: health,
		Subtask:  a.Subtask,
		Changed:  a.ChangedFiles,
		Activity: m.activity(id),
		Attached: m.attached && id == m.focusID,
		Zoomed:   m.zoom && id == m.focusID,
		Scroll:   m.scroll[id],
	}
	if i < 9 {
		td.Num = i + 1
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
func (m Model) activity(id string) string {
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

func roleOf(id string) string {
	switch {
	case id == workspace.RoleLead || id == workspace.RoleReviewer:
		return id
	case strings.HasPrefix(id, "worker"):
		return workspace.RoleWorker
	}
	return ""
}

// ---- header ----

type headerKey struct {
	w                  int
	title, task        string
	phase, prev        workspace.Phase
	cp, total, rev, fr int
	elapsed            int64
	started            bool
}

func (m Model) headerKey() headerKey {
	k := headerKey{w: m.width, title: m.opts.Title}
	if m.haveState {
		k.task = m.st.TaskID
		k.phase, k.prev = m.st.State, m.st.PreviousState
		k.cp, k.total = m.st.CurrentCheckpoint, m.st.TotalCheckpoints
		k.rev, k.fr = m.st.RevisionCount, m.st.FrictionCount
		if !m.st.StartedAt.IsZero() {
			k.started = true
			k.elapsed = int64(m.elapsed() / time.Second)
		}
	}
	return k
}

func (m Model) elapsed() time.Duration {
	if m.st.StartedAt.IsZero() {
		return 0
	}
	end := m.now()
	if !m.st.FinishedAt.IsZero() {
		end = m.st.FinishedAt
	}
	return max(end.Sub(m.st.StartedAt), 0)
}

func fmtElapsed(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

func (m Model) renderHeader() string {
	k := m.headerKey()
	sep := stDim.Render(" │ ")
	segs := []string{stBrand.Render(" HIVEMIND ")}
	if !m.haveState {
		segs = append(segs, " "+stDim.Render("waiting for the engine…"))
	} else {
		ph := lipgloss.NewStyle().Foreground(phaseColor(string(k.phase))).Bold(true).Render(string(k.phase))
		state := " " + ph
		if k.prev != "" {
			state += stDim.Render(" ← " + string(k.prev))
		}
		segs = append(segs, state)
		cp := stHeaderKey.Render("checkpoint ")
		if k.total > 0 {
			pct := float64(k.cp) / float64(k.total)
			cp += m.prog.ViewAs(min(max(pct, 0), 1)) + stHeaderVal.Render(fmt.Sprintf(" %d/%d", k.cp, k.total))
		} else {
			cp += stDim.Render("–")
		}
		segs = append(segs, sep+cp,
			sep+stHeaderKey.Render("revisions ")+stHeaderVal.Render(fmt.Sprint(k.rev)),
			sep+stHeaderKey.Render("friction ")+stHeaderVal.Render(fmt.Sprint(k.fr)))
		el := "--:--:--"
		if k.started {
			el = fmtElapsed(time.Duration(k.elapsed) * time.Second)
		}
		segs = append(segs, sep+stHeaderKey.Render("⏱ ")+stHeaderVal.Render(el))
		if k.title != "" {
			segs = append(segs, sep+stText.Render(k.title))
		} else if k.task != "" {
			segs = append(segs, sep+stDim.Render(k.task))
		}
	}
	return joinFit(segs, m.width)
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
	w              int
	phase          workspace.Phase
	reason, errStr string
}

func (m Model) bannerKey() bannerKey {
	return bannerKey{w: m.width, phase: m.st.State, reason: m.st.Reason, errStr: m.st.Error}
}

// hasBanner reports whether the state shows a banner line.
func (m Model) hasBanner() bool {
	if !m.haveState {
		return false
	}
	switch m.st.State {
	case workspace.PhaseNeedsHuman, workspace.PhaseError, workspace.PhasePaused,
		workspace.PhaseComplete, workspace.PhaseCancelled:
		return true
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return ansi.Strip(s)
}

func (m Model) renderBanner() string {
	reason := oneLine(m.st.Reason)
	if reason == "" {
		reason = oneLine(m.st.Error)
	}
	var text string
	var bg = colWarn
	switch m.st.State {
	case workspace.PhaseNeedsHuman:
		text = " ⚑ NEEDS HUMAN"
		if reason != "" {
			text += " — " + reason
		}
		text += " · R retry · A abandon · enter attach "
	case workspace.PhaseError:
		bg = colBad
		text = " ✖ ERROR"
		if reason != "" {
			text += " — " + reason
		}
		text += " · R retry "
	case workspace.PhasePaused:
		text = " ⏸ PAUSED — no injections, timers frozen, agents keep their sessions · r resume "
	case workspace.PhaseComplete:
		bg = colOK
		text = " ✔ COMPLETE — every checkpoint approved · q quit "
	case workspace.PhaseCancelled:
		bg = colDim
		text = " ■ CANCELLED"
		if reason != "" {
			text += " — " + reason
		}
		text += " · q quit "
	}
	st := lipgloss.NewStyle().Foreground(colBlack).Background(bg).Bold(true)
	text = ansi.Truncate(text, m.width, "…")
	return st.Render(fitWidth(text, m.width))
}

// ---- footer ----

type footerKey struct {
	w           int
	confirm     confirmKind
	attached    bool
	focus       string
	notice      notice
	page, pages int
	phase       workspace.Phase
	inputErr    string
}

func (m Model) footerKey() footerKey {
	return footerKey{w: m.width, confirm: m.confirm, attached: m.attached, focus: m.focusID,
		notice: m.notice, page: m.lay.Page, pages: m.lay.Pages, phase: m.st.State, inputErr: m.input.lastError()}
}

func (m Model) renderFooter() string {
	w := m.width
	right := ""
	if m.lay.Pages > 1 {
		right = stAccent.Render(fmt.Sprintf(" page %d/%d ", m.lay.Page+1, m.lay.Pages))
	}
	rw := ansi.StringWidth(right)
	lw := max(w-rw, 0)
	var left string
	switch {
	case m.confirm != confirmNone:
		var q string
		switch m.confirm {
		case confirmCancel:
			q = " Cancel the task? Every agent is stopped. [y/n] "
		case confirmQuit:
			q = " Quit Hivemind? Agents are stopped; the task stays resumable (--resume). [y/n] "
		case confirmAbandon:
			q = " Abandon the task? It ends and cannot be resumed. [y/n] "
		}
		left = stConfirm.Render(fitWidth(ansi.Truncate(q, lw, "…"), lw))
	case m.attached:
		q := " ⌨ attached to " + m.focusID + " — keys, paste and wheel go to the agent · ctrl+] detach "
		left = stAttachBar.Render(fitWidth(ansi.Truncate(q, lw, "…"), lw))
	case m.input.lastError() != "":
		left = lipgloss.NewStyle().Foreground(colBad).Render(fitWidth(ansi.Truncate(" input: "+m.input.lastError(), lw, "…"), lw))
	case m.notice.text != "":
		c := colText
		switch m.notice.level {
		case "warn":
			c = colWarn
		case "error":
			c = colBad
		}
		left = lipgloss.NewStyle().Foreground(c).Render(fitWidth(ansi.Truncate(" "+oneLine(m.notice.text), lw, "…"), lw))
	default:
		h := m.help
		h.SetWidth(max(lw-1, 0))
		left = fitWidth(" "+h.ShortHelpView(m.keys.ShortHelp()), lw)
	}
	return left + right
}

// ---- event log ----

type eventsKey struct {
	w, h  int
	n     int
	first *workspace.EventRecord
	last  *workspace.EventRecord
}

func (m Model) eventsKey() eventsKey {
	k := eventsKey{w: m.width, h: m.lay.EventsH, n: len(m.events)}
	if len(m.events) > 0 {
		k.first, k.last = &m.events[0], &m.events[len(m.events)-1]
	}
	return k
}

func (m Model) renderEvents() string {
	w, h := m.width, m.lay.EventsH
	lines := make([]string, 0, h)
	title := "─ events (e to hide) "
	lines = append(lines, stDim.Render(title+strings.Repeat("─", max(w-ansi.StringWidth(title), 0))))
	n := h - 1
	evs := m.events
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	for _, e := range evs {
		lines = append(lines, fitWidth(ansi.Truncate(formatEvent(e), w, "…"), w))
	}
	if len(evs) == 0 && n > 0 {
		lines = append(lines, fitWidth(stDim.Render(" no events yet"), w))
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}

func formatEvent(e workspace.EventRecord) string {
	var sb strings.Builder
	sb.WriteString(stEventTime.Render(e.Time.Local().Format("15:04:05")))
	sb.WriteString(" ")
	sb.WriteString(stEventType.Render(e.Type))
	if e.Agent != "" {
		sb.WriteString(" ")
		sb.WriteString(stEventAgt.Render(e.Agent))
	}
	if len(e.Details) > 0 {
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sb.WriteString(" ")
			sb.WriteString(stDim.Render(k + "="))
			sb.WriteString(oneLine(fmt.Sprint(e.Details[k])))
		}
	}
	return sb.String()
}

// ---- help ----

type helpKey struct{ w, h int }

func (m Model) renderHelp() string {
	w, h := m.lay.Area.W, m.lay.Area.H
	hm := m.help
	hm.ShowAll = true
	body := stAccent.Render("Hivemind keys") + "\n\n" + hm.FullHelpView(m.keys.FullHelp()) +
		"\n\n" + stDim.Render("Attached (enter): keys, paste and the mouse go to the agent; ctrl+] detaches.") +
		"\n" + stDim.Render("Mouse: click focuses a pane, the wheel scrolls it.") +
		"\n" + stDim.Render("q quits and leaves the task resumable; ? or esc closes this help.")
	box := stHelpBox.Render(body)
	placed := lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
	lines := strings.Split(placed, "\n")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fitWidth(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}
