package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// KnowledgeItem is one entry of the shared knowledge (a decision, constraint
// or glossary term) as the knowledge panel shows it.
type KnowledgeItem = workspace.KnowledgeItem

// knowledgePanel is the toggleable shared knowledge panel (key x): the newest
// decisions, constraints and terms with their authors, in a strip below
// the panes (they stay in view and keep their keys).
type knowledgePanel struct {
	show  bool
	items []KnowledgeItem // newest first, as the engine sends them
}

var (
	stKindDecision   = lipgloss.NewStyle().Foreground(colFocus).Bold(true)
	stKindConstraint = lipgloss.NewStyle().Foreground(colWarn).Bold(true)
	stKindTerm       = lipgloss.NewStyle().Foreground(colOK).Bold(true)
)

// setKnowledge takes the knowledge list of a snapshot (nil keeps the list).
func (p *knowledgePanel) setKnowledge(items []KnowledgeItem) {
	if items != nil {
		p.items = append([]KnowledgeItem(nil), items...)
	}
}

// lines is how many lines the panel asks for: its title and two per entry
// (the layout gives it at most half the room; the rest is counted).
func (p knowledgePanel) lines() int {
	switch {
	case !p.show:
		return 0
	case len(p.items) == 0:
		return 4
	}
	return 1 + 2*len(p.items)
}

// renderKnowledge draws the panel as a strip below the panes: exactly
// KnowledgeH lines of the full width.
func (m runView) renderKnowledge() string {
	w, h := m.width, m.lay.KnowledgeH
	lines := make([]string, 0, h)
	var nd, nc, nt int
	for _, it := range m.cx.items {
		switch it.Kind {
		case vocab.KindDecision:
			nd++
		case vocab.KindConstraint:
			nc++
		default:
			nt++
		}
	}
	title := fmt.Sprintf("─ shared knowledge (x hides) · %s · %s · %s ",
		plural(nd, "decision"), plural(nc, "constraint"), plural(nt, "term"))
	lines = append(lines, fitWidth(stAccent.Render(ansi.Truncate(title, w, "…"))+
		stDim.Render(strings.Repeat("─", max(w-ansi.StringWidth(title), 0))), w))
	if len(m.cx.items) == 0 {
		lines = append(lines, "", fitWidth(stDim.Render(ansi.Truncate(
			"  Nothing recorded yet. Agents record decisions, constraints and terms as notes in their outbox (agents/<id>/knowledge/);", w, "…")), w),
			fitWidth(stDim.Render(ansi.Truncate("  `hivemind context` lists them, `hivemind context rm ID` removes one.", w, "…")), w))
	}
	shown := 0
	for i, it := range m.cx.items {
		if len(lines)+2 > h || len(lines)+3 > h && i < len(m.cx.items)-1 {
			break // the last line tells how many more there are
		}
		lines = append(lines, knowledgeHead(it, w), knowledgeBody(it, w))
		shown++
	}
	if more := len(m.cx.items) - shown; more > 0 && len(lines) < h {
		lines = append(lines, fitWidth(stDim.Render(fmt.Sprintf("  … %d older (hivemind context lists all)", more)), w))
	}
	for i := range lines {
		lines[i] = fitWidth(lines[i], w)
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines[:h], "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// knowledgeHead is an entry's first line: id, kind, title, and on the right
// its author and time.
func knowledgeHead(it KnowledgeItem, w int) string {
	kind := stKindTerm
	switch it.Kind {
	case vocab.KindDecision:
		kind = stKindDecision
	case vocab.KindConstraint:
		kind = stKindConstraint
	}
	id := it.ID
	if it.Kind == vocab.KindTerm {
		id = "–"
	}
	left := " " + kind.Render(fmt.Sprintf("%-10s", it.Kind)) + " " + stText.Render(fmt.Sprintf("%-4s", id)) + " "
	by := it.By
	if it.Revisions > 0 {
		by += fmt.Sprintf(" (rev %d)", it.Revisions+1)
	}
	right := " " + stEventAgt.Render(by)
	if !it.At.IsZero() {
		right += stDim.Render(" · " + it.At.Local().Format("01-02 15:04"))
	}
	right += " "
	room := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if room < 8 {
		return fitWidth(ansi.Truncate(left+stText.Bold(true).Render(oneLine(it.Title)), w, "…"), w)
	}
	title := ansi.Truncate(oneLine(it.Title), room, "…")
	return left + stText.Bold(true).Render(title) + strings.Repeat(" ", room-ansi.StringWidth(title)) + right
}

// knowledgeBody is an entry's second line: the rationale, description or
// definition, on one line.
func knowledgeBody(it KnowledgeItem, w int) string {
	const indent = "                  "
	text := oneLine(it.Text)
	if it.Kind == vocab.KindTerm {
		text = oneLine(it.Title) + ": " + text
	}
	return fitWidth(stDim.Render(ansi.Truncate(indent+text, w, "…")), w)
}
