package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
)

// View draws the front door's screen that shows (start, picker, summary,
// or the help over them): exactly c.h lines of c.w cells.
func (fd frontDoor) View(c frontViewCtx) string {
	if fd.help.show {
		return fd.renderHelp(c)
	}
	switch fd.mode {
	case modePicker:
		return fd.renderPicker(c)
	case modeSummary:
		return fd.renderSummary(c)
	}
	return fd.start.view(fd.startHeader(c.w), fd.footer(c), c.w, c.h, c.now)
}

// frame lays out a screen: exactly h lines of exactly w cells, body from
// the top (cut when too long), footer on the last line.
func frame(body []string, footer string, w, h int) string {
	out := make([]string, h)
	for i := range out {
		switch {
		case i == h-1:
			out[i] = fitWidth(footer, w)
		case i < len(body):
			out[i] = fitWidth(body[i], w)
		default:
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}

// startPhase is the workflow state the start screen stands for: idle until
// a project is known, project_selected once it is.
func (fd frontDoor) startPhase() vocab.Phase {
	if fd.mode == modePicker || !fd.start.scanned || fd.start.scanErr != "" {
		return vocab.PhaseIdle
	}
	return vocab.PhaseProjectSelected
}

// startHeader is the start screen's and the picker's first line, w cells.
func (fd frontDoor) startHeader(w int) string {
	sep := stDim.Render(" │ ")
	ph := fd.startPhase()
	segs := []string{stBrand.Render(" HIVEMIND "),
		" " + lipgloss.NewStyle().Foreground(phaseColor(ph)).Bold(true).Render(PhaseLabel(ph)),
		sep + stText.Render(fd.start.project)}
	return joinFit(segs, w)
}

var (
	stLabel   = lipgloss.NewStyle().Foreground(colAccent).Bold(true)
	stFocused = lipgloss.NewStyle().Foreground(colFocus).Bold(true)
	stWarnTxt = lipgloss.NewStyle().Foreground(colWarn)
	stBadTxt  = lipgloss.NewStyle().Foreground(colBad)
	stSel     = lipgloss.NewStyle().Foreground(colFocus).Bold(true)
)

// view draws the start screen under header, footer on its last line:
// exactly h lines of w cells (now dates the past tasks).
func (sc startScreen) view(header, footer string, w, h int, now time.Time) string {
	lines := []string{header, ""}

	// Project.
	proj := "  " + stLabel.Render("Project  ") + stText.Render(sc.project)
	lines = append(lines, joinRight(proj, stDim.Render("ctrl+o choose another folder "), w))
	switch {
	case sc.scanErr != "":
		lines = append(lines, "           "+stBadTxt.Render("✖ "+oneLine(sc.scanErr)))
	case !sc.scanned:
		lines = append(lines, "           "+stDim.Render("reading…"))
	default:
		if sc.info.Git {
			lines = append(lines, "           "+stDim.Render("git repository"))
		} else {
			lines = append(lines, "           "+stWarnTxt.Render("⚠ not a git repository: agents' changes cannot be reviewed or undone with git"))
		}
		if c := sc.info.Checkout; c != "" && sc.ask == nil { // a question about it says it
			lines = append(lines, wrapIndent(stWarnTxt.Render, "⚠ your checkout: "+c+": a task starts from a commit; starting asks what to do with them", w, "           ")...)
		}
		if ws := sc.info.WriteScopes; strings.Contains(ws, ": off") {
			lines = append(lines, wrapIndent(stWarnTxt.Render, "⚠ "+ws, w, "           ")...)
		} else if ws != "" {
			lines = append(lines, "           "+stDim.Render(ansi.Truncate(ws, max(w-11, 1), "…")))
		}
		if sc.info.LockedBy != "" {
			lines = append(lines, "           "+stBadTxt.Render("✖ another Hivemind is running on this workspace: "+oneLine(sc.info.LockedBy)))
		}
	}

	// Unfinished task.
	if u := sc.info.Unfinished; u != nil {
		lines = append(lines, "")
		lbl := "  " + stLabel.Render("Unfinished ") + stText.Bold(true).Render(u.ID) + "  " +
			lipgloss.NewStyle().Foreground(phaseColor(u.Phase)).Render(phaseLabel(u.Phase)) + "  " +
			stText.Render(firstLine(u.Description))
		hint := "r resume "
		if sc.info.LockedBy != "" {
			hint = "running elsewhere "
		}
		lines = append(lines, joinRight(lbl, stAccent.Render(hint), w))
	}

	// The task form.
	lines = append(lines, "")
	label := func(f startFocus, text, opt string) string {
		st := stLabel
		mark := "  "
		if sc.focus == f {
			st, mark = stFocused, stFocused.Render("▸ ")
		}
		return mark + st.Render(text) + stDim.Render(opt)
	}
	lines = append(lines, label(focusTask, "New task", "  (ctrl+s starts it)"))
	lines = append(lines, indent(sc.task.View(), "  ")...)
	lines = append(lines, label(focusConstraints, "Constraints", "  optional, one per line"))
	lines = append(lines, indent(sc.constraints.View(), "  ")...)
	lines = append(lines, label(focusContext, "Context", "  optional"))
	lines = append(lines, indent(sc.context.View(), "  ")...)
	lines = append(lines, sc.teamLines(label, w)...)
	if l := sc.missingLine(); l != "" {
		lines = append(lines, l)
	}
	lines = append(lines, sc.planLine())
	if sc.formErr != "" {
		lines = append(lines, errorLines(sc.formErr, w)...)
	}
	if sc.ask != nil {
		lines = append(lines, askLines(sc.ask, w)...)
	}

	// Past tasks fill what is left above the footer.
	lines = append(lines, "")
	lines = append(lines, label(focusList, fmt.Sprintf("Past tasks (%d)", len(sc.info.Tasks)), "  enter shows a task's summary"))
	room := h - len(lines) - 1
	lines = append(lines, sc.pastTaskLines(room, w, now)...)
	return frame(lines, footer, w, h)
}

// pastTaskLines is the table of past tasks in at most room lines, scrolled
// so the selected one shows.
func (sc startScreen) pastTaskLines(room, w int, now time.Time) []string {
	tasks := sc.info.Tasks
	if room <= 0 {
		return nil
	}
	if len(tasks) == 0 {
		return []string{"    " + stDim.Render("none yet")}
	}
	head := "    " + stDim.Render(fmt.Sprintf("%-22s  %-18s  %-16s  %-8s  %s", "ID", "STATE", "STARTED", "DURATION", "DESCRIPTION"))
	out := []string{head}
	rows := room - 1
	if rows <= 0 {
		return out[:room]
	}
	first := 0
	if sc.sel >= rows {
		first = sc.sel - rows + 1
	}
	for i := first; i < len(tasks) && i < first+rows; i++ {
		t := tasks[i]
		cursor := "    "
		if i == sc.sel && sc.focus == focusList {
			cursor = stSel.Render("  ▸ ")
		}
		started, dur := "–", "–"
		if !t.Started.IsZero() {
			started = t.Started.Local().Format("2006-01-02 15:04")
			dur = vocab.FormatElapsed(t.Duration(now))
		} else if !t.Created.IsZero() {
			started = t.Created.Local().Format("2006-01-02 15:04")
		}
		phase := fmt.Sprintf("%-18s", phaseLabel(t.Phase))
		row := fmt.Sprintf("%-22s  ", t.ID) + lipgloss.NewStyle().Foreground(phaseColor(t.Phase)).Render(phase) +
			fmt.Sprintf("  %-16s  %-8s  ", started, dur) + firstLine(t.Description)
		if i == sc.sel && sc.focus == focusList {
			row = stSel.Render(ansi.Strip(row))
		}
		out = append(out, cursor+row)
	}
	return out
}

// phaseLabel names a task's state as the user knows it: in words, and an
// abandoned task (idle after it ran) as abandoned.
func phaseLabel(p vocab.Phase) string {
	switch p {
	case vocab.PhaseIdle:
		return "abandoned"
	case "":
		return "not started"
	default: // the label every screen uses
	}
	return PhaseLabel(p)
}

// joinRight puts right at the right edge of a w-wide line starting with left.
func joinRight(left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		return fitWidth(left, w)
	}
	return left + strings.Repeat(" ", w-lw-rw) + right
}

func indent(block, pad string) []string {
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return lines
}

// footer is the last line of the front door's screens: a question,
// a notice, what is going on, or the keys that apply now (always ending in
// help and quit).
func (fd frontDoor) footer(c frontViewCtx) string {
	w := c.w
	switch {
	case c.asking:
		return c.question
	case fd.start.ask != nil && fd.mode == modeStart: // even while the project is read again
		return stConfirm.Render(fitWidth(ansi.Truncate(" "+fd.start.ask.keys()+" · ctrl+c quit", w, "…"), w))
	case fd.start.busy != "" && fd.mode != modeSummary:
		return stAccent.Render(fitWidth(" "+c.spin+" "+fd.start.busy, w))
	}
	hints, ess := fd.shortHelp(c)
	if c.notice.text == "" {
		return keyHints(hints, ess, w)
	}
	return noticeLine(c.notice, ess, w)
}

// noticeLine is a footer with a notice on the left and the essential keys
// (how to quit and get help) on the right while they fit.
func noticeLine(n notice, ess []key.Binding, w int) string {
	c := colText
	switch n.level {
	case "warn":
		c = colWarn
	case "error":
		c = colBad
	}
	right := shortHints(ess, 0) + " "
	rw := ansi.StringWidth(right)
	left := lipgloss.NewStyle().Foreground(c).Render(ansi.Truncate(" "+oneLine(n.text), max(w-rw-1, 0), "…"))
	if lw := ansi.StringWidth(left); lw+rw+1 <= w && w >= 40 {
		return left + strings.Repeat(" ", w-lw-rw) + right
	}
	return fitWidth(lipgloss.NewStyle().Foreground(c).Render(ansi.Truncate(" "+oneLine(n.text), w, "…")), w)
}

// shortHelp is the footer's key summary for the screen showing, and
// the essentials the footer always keeps.
func (fd frontDoor) shortHelp(c frontViewCtx) (hints, essentials []key.Binding) {
	switch fd.mode {
	case modePicker:
		return fd.picker.shortHelp()
	case modeSummary:
		return fd.sum.shortHelp(fd.sess != nil, c.st.Phase == vocab.PhaseError || c.st.Phase == vocab.PhaseNeedsHuman)
	}
	return fd.start.shortHelp()
}

// shortHelp is the start screen's footer: the keys of the focused part.
func (sc startScreen) shortHelp() (hints, essentials []key.Binding) {
	k := sc.keys
	if sc.focus == focusList {
		b := []key.Binding{k.Edit, k.Down, k.View}
		if sc.info.Unfinished != nil {
			b = append(b, k.ListResume)
		}
		return append(b, key.NewBinding(key.WithKeys(k.ListOpen.Keys()...), key.WithHelp("o", "folder"))), []key.Binding{k.Help, k.Quit}
	}
	b := []key.Binding{k.Submit, k.NextField, k.Menu, k.Open}
	if sc.focus == focusTeam {
		short := func(b key.Binding, help string) key.Binding {
			return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, help))
		}
		b = []key.Binding{short(k.SlotLeft, "role"), short(k.PickUp, "change"), short(k.AllRoles, "same for all"),
			short(k.MoreWorkers, "workers"), short(k.PlanBy, "plan approval"), k.Submit}
		if sc.slot >= 2 && sc.slot < sc.countSlot() {
			// On a worker: e splits the workers, or joins them.
			b = slices.Insert(b, 3, short(k.Each, "each worker"))
		}
		if len(sc.agents) == 0 {
			b = []key.Binding{short(k.PickUp, "workers"), short(k.PlanBy, "plan approval"), k.Submit}
		}
	}
	if sc.info.Unfinished != nil {
		b = append(b, k.Resume)
	}
	return b, []key.Binding{k.FieldHelp, k.QuitNow}
}

// helpSections is every key of the front door, for its help screen.
func (fd frontDoor) helpSections() []helpSection {
	secs := append(fd.start.keys.helpSections(), fd.picker.keys.helpSections()...)
	return append(append(secs, fd.sum.keys.helpSections()...), helpSection{"Help", bindingEntries(closeHelpKey)})
}

// renderHelp draws the front door's help screen.
func (fd frontDoor) renderHelp(c frontViewCtx) string {
	w, h := c.w, c.h
	notes := []string{
		"While a task runs, ? shows the pane keys (pause, cancel, focus, zoom, attach…).",
		"Text fields take every other key; esc leaves a field so single keys work. ? or esc closes this help.",
	}
	box, _ := renderHelpBox("Hivemind — start screen and summary keys", fd.helpSections(), notes, w, max(h-2, 1), fd.help.scroll)
	lines := []string{fd.startHeader(w)}
	if fd.mode == modeSummary {
		lines[0] = fd.sum.header(w)
	}
	lines = append(lines, strings.Split(box, "\n")...)
	return frame(lines, fd.footer(c), w, h)
}

// wrapIndent is text wrapped to w cells after indent, each line rendered
// by style (words kept whole where they fit).
func wrapIndent(style func(...string) string, text string, w int, indent string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wrap(oneLine(text), max(w-len(indent)-1, 10), " "), "\n") {
		out = append(out, indent+style(l))
	}
	return out
}
