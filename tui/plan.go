package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// PlanDecider takes the user's decision at the human plan gate
// (plan_approval = "human"); an Engine that has it (engine.Runner) gets
// the keys a (approve) and f (feedback, sent back to the Lead). It writes
// the decision file and returns at once; the engine acts on it.
type PlanDecider interface {
	DecidePlan(approve bool, feedback string) error
}

// maxFeedback bounds the feedback typed in the plan view (the decision
// file is bounded at 16 KiB by the engine).
const maxFeedback = 8 << 10

// planGate is the plan view shown while the run waits in plan_approval:
// the plan the Reviewer approved, rendered, and the user's decision.
type planGate struct {
	subject string // the review subject the view is for (plan_v2, …)
	hidden  bool   // esc: the panes instead of the plan (o shows it again)
	scroll  int
	typing  bool // the feedback input has the keys
	input   textinput.Model
	sent    string // what was sent for subject: "approve", "revise" ("" none)
	err     string // writing the decision failed
}

// planDecidedMsg is the result of a decideCmd.
type planDecidedMsg struct {
	subject, what string
	err           error
}

func decideCmd(d PlanDecider, subject string, approve bool, feedback string) tea.Cmd {
	what := "revise"
	if approve {
		what = "approve"
	}
	return func() tea.Msg {
		return planDecidedMsg{subject: subject, what: what, err: d.DecidePlan(approve, feedback)}
	}
}

// atPlanGate reports whether the run waits for the user's plan decision.
func (m runView) atPlanGate() bool {
	return m.st.Phase == vocab.PhasePlanApproval && m.st.Plan != nil
}

// planShown reports whether the plan view fills the pane area.
func (m runView) planShown() bool {
	return m.atPlanGate() && !m.gate.hidden && !m.help.show && !m.diff.show && !m.cx.show
}

// syncPlanGate starts a fresh plan view for each plan that reaches the
// gate, and drops it when the run moves on.
func (m *runView) syncPlanGate() {
	if !m.atPlanGate() {
		m.gate = planGate{}
		return
	}
	if m.gate.subject != m.st.ReviewSubject || m.gate.input.CharLimit == 0 {
		in := textinput.New()
		in.Prompt = "> "
		in.Placeholder = "what should the Lead change? (enter sends · esc back)"
		in.CharLimit = maxFeedback
		m.gate = planGate{subject: m.st.ReviewSubject, input: in}
	}
}

func (m *runView) handlePlanDecided(msg planDecidedMsg) {
	if msg.subject != m.gate.subject {
		return
	}
	if msg.err != nil {
		m.gate.sent, m.gate.err = "", msg.err.Error()
		return
	}
	m.gate.sent, m.gate.err = msg.what, ""
}

// planKeyMap is the keys of the plan gate: the decision, and the plan
// view's scrolling while it shows. The rest go to the run view.
type planKeyMap struct {
	Approve, Feedback, PlanView key.Binding
	Hide                        key.Binding // the panes instead of the plan
	Scroll                      scrollKeyMap
}

func newPlanKeyMap() planKeyMap {
	return planKeyMap{
		Approve:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve the plan")),
		Feedback: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "plan feedback")),
		PlanView: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "plan / panes")),
		Hide:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "panes (o: plan)")),
		Scroll:   newScrollKeyMap(),
	}
}

func (k planKeyMap) helpSections() []helpSection {
	return []helpSection{{"Plan gate", bindingEntries(k.Approve, k.Feedback, k.PlanView, k.Hide)}}
}

// feedbackKeyMap is the keys of the plan gate's feedback input; every
// other key edits the text (textinput's own keys).
type feedbackKeyMap struct {
	Send, Back key.Binding
}

func newFeedbackKeyMap() feedbackKeyMap {
	return feedbackKeyMap{
		Send: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send the feedback")),
		Back: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the plan")),
	}
}

func (k feedbackKeyMap) helpSections() []helpSection {
	return []helpSection{{"Plan feedback", bindingEntries(k.Send, k.Back)}}
}

// planKey handles a key in the plan gate; false passes it on (pause,
// cancel, help, quit and the rest keep working).
func (m *runView) planKey(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if !m.atPlanGate() {
		return false, nil
	}
	g := &m.gate
	d, _ := m.opts.Engine.(PlanDecider)
	if g.typing {
		fk := m.km.feedback
		switch {
		case key.Matches(msg, fk.Back):
			g.typing = false
			g.input.Blur()
			return true, nil
		case key.Matches(msg, fk.Send):
			fb := strings.TrimSpace(g.input.Value())
			if fb == "" {
				m.notice = notice{level: "warn", text: "type what the Lead should change first (esc: back to the plan)"}
				return true, nil
			}
			g.typing, g.err = false, ""
			g.input.Blur()
			g.sent = "sending"
			return true, decideCmd(d, g.subject, false, fb)
		}
		var cmd tea.Cmd
		g.input, cmd = g.input.Update(msg)
		return true, cmd
	}
	k := m.km.plan
	switch {
	case key.Matches(msg, k.Approve, k.Feedback):
		if d == nil {
			m.notice = notice{level: "warn", text: "this run takes no plan decision from here"}
			return true, nil
		}
		if g.sent != "" {
			m.notice = notice{level: "info", text: "your decision was sent; the run goes on in a moment"}
			return true, nil
		}
		g.hidden, g.err = false, ""
		if key.Matches(msg, k.Approve) {
			g.sent = "sending"
			return true, decideCmd(d, g.subject, true, "")
		}
		g.typing = true
		return true, g.input.Focus()
	case key.Matches(msg, k.PlanView):
		g.hidden = !g.hidden
		return true, nil
	}
	if !m.planShown() {
		return false, nil
	}
	scroll := g.scroll
	if key.Matches(msg, k.Hide) {
		g.hidden = true
	} else if s, ok := k.Scroll.scroll(msg, scroll, max(m.lay.Area.H-3, 1), 1<<30); ok {
		scroll = s
	} else {
		return false, nil
	}
	g.scroll = min(max(scroll, 0), max(len(planLines(m.st.Plan, m.lay.Area.W))-planBodyRows(m.lay.Area.H), 0))
	return true, nil
}

// planLines renders the plan for w cells: summary, then each checkpoint
// with its subtasks, their files and what they wait for.
func planLines(p *vocab.Plan, w int) []string {
	if p == nil {
		return nil
	}
	var out []string
	wrap := func(indent int, style func(...string) string, s string) {
		for _, l := range strings.Split(ansi.Wrap(oneLine(s), max(w-indent, 8), ""), "\n") {
			out = append(out, fitWidth(strings.Repeat(" ", indent)+style(l), w))
		}
	}
	if p.Summary != "" {
		wrap(1, stText.Render, p.Summary)
	}
	for _, cp := range p.Checkpoints {
		n := 0
		for _, s := range p.Subtasks {
			if s.Checkpoint == cp.ID {
				n++
			}
		}
		out = append(out, strings.Repeat(" ", w))
		wrap(1, stAccent.Render, fmt.Sprintf("Checkpoint %d · %s (%d subtasks)", cp.ID, cp.Name, n))
		for _, s := range p.Subtasks {
			if s.Checkpoint != cp.ID {
				continue
			}
			wrap(3, stText.Render, s.ID+"  "+s.Description)
			if len(s.Files) > 0 {
				wrap(5, stDim.Render, "files: "+strings.Join(s.Files, ", "))
			}
			if len(s.Dependencies) > 0 {
				wrap(5, stDim.Render, "after: "+strings.Join(s.Dependencies, ", "))
			}
		}
	}
	return out
}

// planBodyRows is how many plan lines of a view h lines high fit under
// the title and above the decision line.
func planBodyRows(h int) int { return max(h-2, 0) }

// view draws the plan view of p: exactly h lines of w cells.
func (g planGate) view(p *vocab.Plan, w, h int) string {
	body := planLines(p, w)
	rows := planBodyRows(h)
	title := fmt.Sprintf("─ %s, approved by the Reviewer: your decision ", g.subject)
	if len(body) > rows && rows > 0 {
		title += fmt.Sprintf("· %d–%d of %d ", g.scroll+1, min(g.scroll+rows, len(body)), len(body))
	}
	lines := []string{fitWidth(stAccent.Render(ansi.Truncate(title, w, "…"))+
		stDim.Render(strings.Repeat("─", max(w-ansi.StringWidth(title), 0))), w)}
	for i := g.scroll; i < len(body) && len(lines) < 1+rows; i++ {
		lines = append(lines, body[i])
	}
	for len(lines) < 1+rows {
		lines = append(lines, strings.Repeat(" ", w))
	}
	var last string
	switch {
	case g.typing:
		in := g.input
		in.SetWidth(max(w-3, 1))
		last = in.View()
	case g.err != "":
		last = stBadTxt.Render(" " + g.err)
	case g.sent == "approve":
		last = stText.Render(" approved: the build starts…")
	case g.sent == "revise":
		last = stText.Render(" feedback sent: the Lead revises the plan…")
	case g.sent != "":
		last = stDim.Render(" sending…")
	default:
		last = stText.Render(" a approve and build · f send feedback to the Lead · ↑↓ scroll · esc panes")
	}
	lines = append(lines, fitWidth(ansi.Truncate(last, w, "…"), w))
	return strings.Join(lines[:h], "\n")
}
