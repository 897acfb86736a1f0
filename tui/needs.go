package tui

import (
	"fmt"
	"strings"
	"time"

	"image/color"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// draftHolder is implemented by terminals that know what the user typed
// into the agent's prompt and has not sent (like *ptyagent.Session): a
// message for the agent waits while such text is there.
type draftHolder interface {
	// DraftHold reports whether messages wait for the user's draft: how
	// many, and since when.
	DraftHold() (held bool, waiting int, since time.Time)
	// Draft is the unsent text (unsure: keys Hivemind does not follow
	// may have changed it).
	Draft() (text string, unsure bool)
	SendDraft() error
	ClearDraft() error
}

// needs lists everything waiting for the human: the team's state, every
// agent at a permission prompt or rate limited (vocab.NeedsYou), and
// every agent whose messages wait for text the user typed in its prompt.
func (m runView) needs() []vocab.Need {
	if !m.haveState {
		return nil
	}
	out := vocab.NeedsYou(m.st, m.healthOf)
	for _, h := range m.draftHolds() {
		detail := fmt.Sprintf("%d message(s) held", h.n)
		if w := m.now().Sub(h.since); w >= draftDeadline {
			detail += " " + w.Round(time.Second).String()
		}
		out = append(out, vocab.Need{Kind: vocab.NeedPrompt, Agent: h.id, Detail: detail,
			Keys: fmt.Sprintf("%d enter: send or clear it", h.pane+1)})
	}
	return out
}

// draftHold is one agent whose messages wait for text the user typed in
// its prompt: its pane index, how many wait, and since when.
type draftHold struct {
	pane  int
	id    vocab.AgentID
	n     int
	since time.Time
}

// draftHolds are the agents whose messages wait for the user's typed text.
func (m runView) draftHolds() []draftHold {
	var out []draftHold
	for i, id := range m.agents {
		t, ok := m.terminal(id)
		if !ok {
			continue
		}
		if d, ok := t.(draftHolder); ok {
			if held, n, since := d.DraftHold(); held {
				out = append(out, draftHold{i, id, n, since})
			}
		}
	}
	return out
}

// draftDeadline is how long a message waits for the user's typed text
// before the UI rings (bell, desktop notification). It keeps waiting after
// that: sending or clearing the user's words is the user's call.
const draftDeadline = time.Minute

// draftBell rings once (bell, desktop notification) for each hold that
// passed draftDeadline; the wait goes on.
func (m *runView) draftBell() tea.Cmd {
	var who []string
	for _, h := range m.draftHolds() {
		id, since := h.id, h.since
		if m.now().Sub(since) >= draftDeadline && m.draftRung[id] != since {
			if m.draftRung == nil {
				m.draftRung = map[vocab.AgentID]time.Time{}
			}
			m.draftRung[id] = since
			who = append(who, string(id))
		}
	}
	if len(who) == 0 {
		return nil
	}
	return notifyCmd("a message has waited " + draftDeadline.String() + " for your typed text in the prompt of " + strings.Join(who, ", ") + ": send or clear it")
}

// needText is one need as the banner says it.
func needText(n vocab.Need) string {
	switch n.Kind {
	case vocab.NeedPrompt:
		return fmt.Sprintf("waiting for your input in %s's prompt: %s (%s)", n.Agent, n.Detail, n.Keys)
	case vocab.NeedPlanApproval:
		return "the plan waits for you: " + n.Keys
	}
	return n.String()
}

// bannerContent is what the banner says: its colour, its head (the state,
// with the reason) and its items (actions and needs), each item whole on
// a line.
func (m runView) bannerContent() (bg color.Color, head string, items []string) {
	reason := plainText(m.st.Reason)
	if reason == "" {
		reason = plainText(m.st.Error)
	}
	bg = colWarn
	needs := m.needs()
	var after []string // said after the needs
	switch m.st.Phase {
	case vocab.PhaseNeedsHuman:
		head = "⚑ NEEDS HUMAN"
		if reason != "" {
			head += " — " + reason
		}
		items = []string{"R retry", "A abandon", "enter attach"}
		if len(needs) > 0 && needs[0].Kind == vocab.NeedHuman {
			needs = needs[1:] // the team's need is this banner
		}
	case vocab.PhaseError:
		bg = colBad
		head = "✖ ERROR"
		if reason != "" {
			head += " — " + reason
		}
		items = []string{"R retry", "A abandon"}
	case vocab.PhasePaused:
		head = "⏸ PAUSED — no injections, timers frozen, agents keep their sessions"
		items = []string{"r resume"}
	case vocab.PhaseComplete:
		bg = colOK
		head = "✔ COMPLETE — every checkpoint approved"
		items = []string{"q quit"}
	case vocab.PhaseCancelled:
		bg = colDim
		head = "■ CANCELLED"
		if reason != "" {
			head += " — " + reason
		}
		items = []string{"q quit"}
	default:
		checkout := m.checkoutShown()
		if len(needs) == 0 || len(needs) == 1 && needs[0].Kind == vocab.NeedPlanApproval {
			// The plan view (or its footer) is the plan gate's own place.
			if checkout != "" {
				return bg, "⚠ " + checkout, nil
			}
			return bg, "", nil
		}
		head = fmt.Sprintf("⚑ waiting for you (%d):", len(needs))
		if checkout != "" {
			after = append(after, checkout)
		}
	}
	for _, n := range needs {
		items = append(items, needText(n))
	}
	return bg, head, append(items, after...)
}

// teamRunning reports whether the team is at work: what p pauses (the
// engine ignores a pause in any other phase).
func teamRunning(p vocab.Phase) bool { return p.Running() }

// cannotPause says why p does nothing now, "" when it pauses the team.
func (m runView) cannotPause() string {
	switch p := m.st.Phase; {
	case !m.haveState || teamRunning(p):
		return ""
	case p == vocab.PhasePaused:
		return "already paused: r resumes the team"
	default:
		return "nothing to pause: the task is " + PhaseLabel(p)
	}
}

// cannotResume says why r does nothing now, "" when it resumes the team.
func (m runView) cannotResume() string {
	switch p := m.st.Phase; {
	case !m.haveState || p == vocab.PhasePaused:
		return ""
	case m.st.Agents[m.focusID].Paused:
		return "r resumes a team pause; " + string(m.focusID) + " is paused alone: P resumes it"
	case teamRunning(p):
		return "nothing to resume: the team is running (p pauses it)"
	default:
		return "nothing to resume: the task is " + PhaseLabel(p)
	}
}

// cannotCancel says why c does nothing now, "" when it asks to cancel:
// an ended task has nothing to cancel (its agents stopped when it ended).
func (m runView) cannotCancel() string {
	switch p := m.st.Phase; {
	case !m.haveState:
		return ""
	case p == vocab.PhaseComplete || p == vocab.PhaseCancelled || p == vocab.PhaseIdle:
		return "nothing to cancel: the task is " + PhaseLabel(p)
	}
	return ""
}

// cannotPauseAgent says why P does nothing now, "" when it pauses or
// resumes the focused agent.
func (m runView) cannotPauseAgent() string {
	p := m.st.Phase
	switch {
	case m.focusID == "":
		return "no agent to pause: none has started"
	case !m.haveState || teamRunning(p) || p == vocab.PhasePaused || p == vocab.PhaseNeedsHuman:
		return ""
	default:
		return "nothing to pause: the task is " + PhaseLabel(p)
	}
}

// noPaneWhy says why no pane is drawn.
func (m runView) noPaneWhy() string {
	if len(m.agents) == 0 {
		return "no agent has started"
	}
	return "the window is too small to draw the panes"
}

// noteCheckout keeps what the run said of the user's checkout (the
// newest checkout_dirty record among evs).
func (m *runView) noteCheckout(evs []vocab.EventRecord) {
	for _, e := range evs {
		if e.Type != vocab.RecordCheckoutDirty {
			continue
		}
		summary, _ := e.Details["summary"].(string)
		effect, _ := e.Details["effect"].(string)
		m.checkout = "your checkout: " + plainText(summary)
		if effect != "" {
			m.checkout += " — " + plainText(effect)
		}
	}
}

// checkoutShown is the checkout note while the team makes and reviews the
// plan (before any work lands on the task branch), else "".
func (m runView) checkoutShown() string {
	switch m.st.Phase {
	case vocab.PhaseProjectSelected, vocab.PhasePlanning, vocab.PhasePlanReview,
		vocab.PhasePlanRevision, vocab.PhasePlanApproval:
		return m.checkout
	default: // work may have landed
	}
	return ""
}

// maxBannerLines is how many lines the banner may take at height h: up to
// three, and never so many that the panes lose their room.
func maxBannerLines(h int) int {
	return max(1, min(3, (h-8)/4))
}

// bannerLines wraps the banner's text into at most max lines of w cells:
// the head word by word, then the items separated by " · ", an item never
// split unless it alone is wider than a line. When it does not all fit,
// the head (the reason) gives way so the items (the actions) stay whole:
// it ends in "…" and the items take the last lines; only items that alone
// need more than the lines there are end the last line with "…".
func bannerLines(head string, items []string, w, maxLines int) []string {
	if head == "" || w <= 2 {
		return nil
	}
	inner := w - 2 // a space of margin on each side
	lines := wrapBanner(head, items, inner)
	if len(lines) > maxLines {
		itemLines := wrapBanner("", items, inner)
		if room := maxLines - len(itemLines); room >= 1 {
			headLines := wrapBanner(head, nil, inner)[:room]
			headLines[room-1] = ansi.Truncate(headLines[room-1]+" …", inner-1, "") + "…"
			lines = append(headLines, itemLines...)
		} else {
			lines = lines[:maxLines]
			lines[maxLines-1] = ansi.Truncate(lines[maxLines-1]+" …", inner-1, "") + "…"
		}
	}
	for i, l := range lines {
		lines[i] = " " + l + " "
	}
	return lines
}

// wrapBanner wraps head word by word, then items separated by " · ", into
// lines of inner cells (see bannerLines).
func wrapBanner(head string, items []string, inner int) []string {
	var lines []string
	cur := ""
	var push func(s, sep string)
	push = func(s, sep string) {
		if ansi.StringWidth(s) > inner && strings.Contains(s, " ") {
			// Too long for any line: wrapped word by word.
			for i, word := range strings.Fields(s) {
				if i > 0 {
					sep = " "
				}
				push(word, sep)
			}
			return
		}
		switch {
		case cur == "":
			cur = s
		case ansi.StringWidth(cur)+ansi.StringWidth(sep)+ansi.StringWidth(s) <= inner:
			cur += sep + s
		default:
			lines = append(lines, cur)
			cur = s
		}
		for ansi.StringWidth(cur) > inner {
			lines = append(lines, ansi.Truncate(cur, inner, ""))
			cur = ansi.TruncateLeft(cur, inner, "")
		}
	}
	for _, word := range strings.Fields(head) {
		push(word, " ")
	}
	for i, it := range items {
		sep := " · "
		if i == 0 && strings.HasSuffix(head, ":") {
			sep = " "
		}
		push(it, sep)
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// banner is the banner's lines at the model's width (nil: no banner).
func (m runView) banner() []string {
	if !m.haveState {
		return nil
	}
	_, head, items := m.bannerContent()
	return bannerLines(head, items, m.width, maxBannerLines(m.height))
}

// askDraft asks, on detach, what to do with text the user typed into the
// agent's prompt and did not send: messages for the agent wait while it
// is there.
func (m *runView) askDraft(id vocab.AgentID) {
	t, ok := m.terminal(id)
	if !ok {
		return
	}
	d, ok := t.(draftHolder)
	if !ok {
		return
	}
	// Keys typed just before the detach may still be on their way to the
	// terminal (the input writer is asynchronous): the prompt may hold
	// them, so ask.
	if text, unsure := d.Draft(); text != "" || unsure || m.input.pending(t) {
		m.confirm, m.draftOf = confirmDraft, id
	}
}

// draftLine is the detach question: send, clear or keep the typed text.
func (m runView) draftLine(w int) string {
	text := ""
	if t, ok := m.terminal(m.draftOf); ok {
		if d, ok := t.(draftHolder); ok {
			text, _ = d.Draft()
		}
	}
	q := " " + string(m.draftOf) + "'s prompt holds text you typed"
	if text != "" {
		q += fmt.Sprintf(" (%q)", ansi.Truncate(oneLine(text), 24, "…"))
	}
	const keys = ": s send · c clear · k keep (messages wait) "
	q = ansi.Truncate(q, max(w-ansi.StringWidth(keys), 0), "…") + keys
	return stConfirm.Render(fitWidth(ansi.Truncate(q, w, ""), w))
}

// draftKeyMap answers the detach question about text typed into an
// agent's prompt.
type draftKeyMap struct {
	Send, Clear, Keep key.Binding
}

func newDraftKeyMap() draftKeyMap {
	return draftKeyMap{
		Send:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "send the typed text (on detach)")),
		Clear: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "clear it from the prompt")),
		Keep:  key.NewBinding(key.WithKeys("k", "n", "esc"), key.WithHelp("k/esc", "keep it (messages wait)")),
	}
}

func (k draftKeyMap) helpSections() []helpSection {
	return []helpSection{{"Typed text", bindingEntries(k.Send, k.Clear, k.Keep)}}
}

// draftKey answers the detach question.
func (m *runView) draftKey(msg tea.KeyPressMsg) tea.Cmd {
	id := m.draftOf
	k := m.km.draft
	var act func(draftHolder) error
	var done string
	switch {
	case key.Matches(msg, k.Send):
		act, done = draftHolder.SendDraft, "sent your text to "+string(id)
	case key.Matches(msg, k.Clear):
		act, done = draftHolder.ClearDraft, "cleared your text from "+string(id)+"'s prompt"
	case key.Matches(msg, k.Keep):
		m.confirm = confirmNone
		m.notice = notice{level: "info", text: "kept: messages for " + string(id) + " wait until you send or clear it (enter attaches)"}
		return nil
	default:
		return nil
	}
	m.confirm = confirmNone
	t, ok := m.terminal(id)
	if !ok {
		return nil
	}
	d, ok := t.(draftHolder)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		if err := act(d); err != nil {
			return NotifyMsg{Level: "error", Message: string(id) + ": " + err.Error()}
		}
		return NotifyMsg{Level: "info", Message: done}
	}
}

// inertKey says why a key does nothing now, instead of nothing: a key of
// another screen pressed on the run view.
func (m *runView) inertKey(msg tea.KeyPressMsg) {
	var why string
	k := m.keys
	summary := k.Summary
	summary.SetEnabled(true) // disabled without a front door, still s
	switch p := m.km.plan; {
	case key.Matches(msg, summary):
		why = "s shows the summary once the task has ended"
		if m.haveState {
			why += " (it is " + PhaseLabel(m.st.Phase) + " now)"
		}
	case key.Matches(msg, p.Approve, p.Feedback, p.PlanView) && m.atPlanGate(): // under the knowledge panel
		why = "the plan waits for your decision: x closes the knowledge panel, then a approves, f sends feedback"
	case key.Matches(msg, p.Approve, p.Feedback, p.PlanView):
		why = msg.String() + " is for the plan gate: the plan is not waiting for your decision now"
	case key.Matches(msg, m.km.attached.Detach):
		why = "ctrl+] detaches from a pane you attached to (enter attaches)"
	case key.Matches(msg, k.SearchNext, k.SearchPrev):
		why = msg.String() + " steps through search hits: / searches the focused pane first"
	case key.Matches(msg, m.km.confirm.Yes): // y copies: only Y comes here
		why = "y copies the focused pane; Y answers questions, and none is asked now"
	case key.Matches(msg, k.Close): // n and N are search's, above
		why = "esc closes help, a panel or a search: none is open"
	}
	if why != "" {
		m.notice = notice{level: "info", text: why}
	}
}
