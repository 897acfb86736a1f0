package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// summaryData is what the summary view shows of one task.
type summaryData struct {
	TaskID, Title     string
	Phase, Previous   vocab.Phase
	Reason            string
	Started, Finished time.Time
	// Elapsed is the task's elapsed clock as its state left it (no run
	// live: vocab.State.Elapsed); the live task's is read from the
	// run's state as it ticks.
	Elapsed  time.Duration
	Subtasks []subtaskSummary
	Rounds   []vocab.Round
	Friction []frictionNote
	Agents   []vocab.AgentID
	Usage    map[vocab.AgentID]AgentUsage
	// Team is the agent each agent ran (task.json) when the team was
	// mixed; nil when one agent ran them all.
	Team map[vocab.AgentID]string
}

// subtaskSummary is one subtask (or checkpoint fix) and the files it
// created or modified.
type subtaskSummary struct {
	ID, Description, Status string
	Worker                  vocab.AgentID
	Fix                     bool
	Files                   []fileChange
	// FromPlan is true when the output named no files and the list comes
	// from the plan (what was to be done, not what was reported done).
	FromPlan bool
	// Problem says why the output could not be read.
	Problem string
}

// fileChange is one file a worker reported: created, modified or deleted.
type fileChange struct{ Verb, Path string }

// frictionNote is one friction entry of the task.
type frictionNote struct{ File, Text string }

// openSummary shows the summary of st (live: the running session's task,
// whose title is title) and loads its details from the task directory in
// a command.
func (fd *frontDoor) openSummary(st vocab.State, live bool, title string) tea.Cmd {
	dir := st.TaskDir
	if !live {
		title = ""
		for _, t := range fd.start.info.Tasks {
			if t.ID == st.TaskID {
				title = t.Description
				if t.Dir != "" {
					dir = t.Dir
				}
			}
		}
	}
	fd.sum.open(baseSummary(st, title), live)
	return loadSummaryCmd(fd.launcher, st.Clone(), dir, title)
}

// loadSummaryCmd reads a task's outputs and friction files and asks the
// launcher for token usage.
func loadSummaryCmd(l Launcher, st vocab.State, dir, title string) tea.Cmd {
	return func() tea.Msg {
		sum := loadSummary(st, dir, title)
		if l != nil {
			for _, u := range l.Usage(st) {
				sum.Usage[u.Agent] = u
			}
		}
		return summaryLoadedMsg{taskID: st.TaskID, sum: sum}
	}
}

// baseSummary is what the state alone says (shown until the files are read).
func baseSummary(st vocab.State, title string) summaryData {
	s := summaryData{
		TaskID: st.TaskID, Title: firstLine(title), Phase: st.Phase, Previous: st.PreviousPhase,
		Reason: plainText(st.EndReason()), Started: st.StartedAt, Finished: st.FinishedAt,
		Rounds: st.Rounds, Agents: st.AgentIDs(), Usage: map[vocab.AgentID]AgentUsage{},
		Elapsed: st.Elapsed(time.Time{}, false),
	}
	if s.Finished.IsZero() && st.Phase == vocab.PhaseIdle {
		s.Finished = st.Timestamp // abandoned: the engine clears finished_at
	}
	return s
}

// loadSummary builds the summary of a task from its state and the files of
// its task directory dir (outputs/<subtask>.md, the archived friction files).
func loadSummary(st vocab.State, dir, title string) summaryData {
	s := baseSummary(st, title)
	if dir == "" {
		dir = st.TaskDir
	}
	if t, err := workspace.ReadTask(dir); err == nil && t.Agents != nil {
		s.Team = map[vocab.AgentID]string{}
		for _, id := range s.Agents {
			s.Team[id] = t.AgentOf(id)
		}
	}
	planned := map[string]vocab.Subtask{}
	var ids []string
	if st.Plan != nil {
		for _, p := range st.Plan.Subtasks {
			planned[p.ID] = p
			ids = append(ids, p.ID)
		}
	}
	var extra []string
	for id := range st.Subtasks {
		if _, ok := planned[id]; !ok {
			extra = append(extra, id)
		}
	}
	sort.Strings(extra)
	ids = append(ids, extra...)
	for _, id := range ids {
		ss := subtaskSummary{ID: id, Description: plainText(planned[id].Description)}
		if state, ok := st.Subtasks[id]; ok {
			ss.Worker, ss.Status = state.Worker, state.Status
		} else {
			ss.Status = vocab.SubtaskPending
		}
		readOutput(&ss, dir)
		if len(ss.Files) == 0 {
			for _, f := range planned[id].Files {
				verb, path := splitPlanFile(f)
				ss.Files = append(ss.Files, fileChange{Verb: verb, Path: path})
			}
			ss.FromPlan = len(ss.Files) > 0
		}
		s.Subtasks = append(s.Subtasks, ss)
	}
	fixes := make([]string, 0, len(st.Fixes))
	for id := range st.Fixes {
		fixes = append(fixes, id)
	}
	sort.Strings(fixes)
	for _, id := range fixes {
		f := st.Fixes[id]
		ss := subtaskSummary{ID: id, Description: "checkpoint fix", Worker: f.Worker, Status: f.Status, Fix: true}
		readOutput(&ss, dir)
		s.Subtasks = append(s.Subtasks, ss)
	}
	for _, rel := range st.Friction {
		s.Friction = append(s.Friction, frictionNote{File: rel, Text: readFrictionNote(filepath.Join(dir, filepath.FromSlash(rel)))})
	}
	return s
}

// readOutput fills the files a subtask's output reports.
func readOutput(ss *subtaskSummary, dir string) {
	if dir == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(triggers.Path(ss.Worker, triggers.Output, ss.ID))))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		ss.Problem = err.Error()
		return
	}
	ss.Files = parseFileChanges(string(b))
}

// fileLineRE matches a bullet naming changed files, in the worker prompt's
// form ("- Created: api/login.go") and the plan's ("- CREATE api/login.go").
var fileLineRE = regexp.MustCompile(`(?i)^\s*[-*+]\s+[*_` + "`" + `]*(created?|added|new|modif(?:ied|y)|updated?|changed|edited|deleted?|removed)[*_:` + "`" + `]*\s+(.+)$`)

// parseFileChanges lists the files an output markdown reports, in order,
// without duplicates.
func parseFileChanges(md string) []fileChange {
	var out []fileChange
	seen := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		m := fileLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		verb := normVerb(m[1])
		for _, p := range strings.Split(m[2], ",") {
			p = strings.TrimSpace(p)
			// "path — what changed": keep the path.
			if f := strings.Fields(p); len(f) > 0 {
				p = f[0]
			}
			p = strings.Trim(p, "`*\"'")
			p = strings.TrimRight(p, ".;:")
			if p == "" || seen[verb+p] {
				continue
			}
			seen[verb+p] = true
			out = append(out, fileChange{Verb: verb, Path: p})
		}
	}
	return out
}

func normVerb(v string) string {
	switch v = strings.ToLower(v); {
	case strings.HasPrefix(v, "creat"), v == "added", v == "new":
		return "created"
	case strings.HasPrefix(v, "delet"), v == "removed":
		return "deleted"
	}
	return "modified"
}

// splitPlanFile splits a plan entry "CREATE path" into verb and path.
func splitPlanFile(f string) (verb, path string) {
	f = strings.TrimSpace(f)
	if v, p, ok := strings.Cut(f, " "); ok {
		switch strings.ToUpper(v) {
		case "CREATE", "MODIFY", "DELETE":
			return normVerb(v), strings.TrimSpace(p)
		}
	}
	return "modified", f
}

// readFrictionNote is the first meaningful line of a friction file.
func readFrictionNote(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l != "" {
			return plainText(l)
		}
	}
	return "(empty)"
}

// firstLine is a task description's headline (vocab.Headline), safe to
// draw (oneLine strips escape sequences).
func firstLine(s string) string { return oneLine(vocab.Headline(s)) }

// summaryView is the summary screen: one task's summary, scrolled.
type summaryView struct {
	keys   summaryKeyMap
	data   summaryData
	loaded bool // data holds what the task directory says (not the state's alone)
	live   bool // the summary is of the live session (not a past task)
	scroll int
}

// open shows data (read from the state alone; the files follow in a
// summaryLoadedMsg), of the live session's task when live.
func (s *summaryView) open(data summaryData, live bool) {
	*s = summaryView{keys: s.keys, data: data, live: live}
}

// loadedFrom takes what the task directory says, unless it is of
// another task than the one shown.
func (s *summaryView) loadedFrom(msg summaryLoadedMsg) {
	if msg.taskID == s.data.TaskID {
		s.data, s.loaded = msg.sum, true
	}
}

// wheel scrolls the summary by a mouse wheel notch.
func (s *summaryView) wheel(b tea.MouseButton) {
	switch b {
	case tea.MouseWheelUp:
		s.scroll = max(s.scroll-wheelLines, 0)
	case tea.MouseWheelDown:
		s.scroll += wheelLines
	}
}

// ---- view ----

// shortHelp is the summary's footer: the live task's keys (session: a
// session is live; failed: its task stopped on an error or needs the
// user), or a past task's.
func (s summaryView) shortHelp(session, failed bool) (hints, essentials []key.Binding) {
	k := s.keys
	ess := []key.Binding{k.Help, k.Quit}
	if !(s.live && session) {
		return []key.Binding{k.Back, k.ScrollDown}, ess
	}
	b := []key.Binding{k.NewTask}
	if failed {
		b = []key.Binding{k.Retry, k.Abandon,
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "new task (this one stays resumable)"))}
	}
	return append(b, k.Panes, k.ScrollDown), ess
}

// summaryCtx is what the summary's view takes from the front door and
// the run: the screen's size, whether a session is live, the task's
// branch, and the live task's clock.
type summaryCtx struct {
	w, h    int
	session bool   // a session is live (the summary may be of it: summaryView.live)
	branch  string // the live task's git branch ("": none)
	// clock: elapsed is the live task's ticking clock (its state is the
	// summary's task); else the summary says the state's.
	clock   bool
	elapsed time.Duration
}

// renderSummary draws the summary screen: exactly c.h lines of c.w.
func (fd frontDoor) renderSummary(c frontViewCtx) string {
	sc := summaryCtx{w: c.w, h: c.h, session: fd.sess != nil, branch: c.branch}
	if fd.sum.live && c.haveState && c.st.TaskID == fd.sum.data.TaskID {
		sc.clock, sc.elapsed = true, c.elapsed // as the header
	}
	return fd.sum.view(sc, fd.footer(c))
}

// view draws the summary with footer on its last line: exactly c.h lines
// of c.w cells.
func (s summaryView) view(c summaryCtx, footer string) string {
	w, h := c.w, c.h
	top := append([]string{s.header(w)}, s.banner(w, s.live && c.session)...)
	body := s.body(c)
	bodyH := max(h-len(top)-1, 0)
	// When the body does not fit, its last row is the scroll marker's own
	// (it never covers text).
	shown := bodyH
	if len(body) > bodyH && bodyH > 1 {
		shown = bodyH - 1
	}
	scroll := min(s.scroll, max(len(body)-shown, 0))
	lines := append([]string(nil), top...)
	for i := 0; i < shown; i++ {
		if j := scroll + i; j < len(body) {
			lines = append(lines, fitWidth(body[j], w))
		} else {
			lines = append(lines, strings.Repeat(" ", w))
		}
	}
	if shown < bodyH {
		more := fmt.Sprintf(" lines %d–%d of %d · ↑↓ pgup pgdn scroll ", scroll+1, min(scroll+shown, len(body)), len(body))
		lines = append(lines, fitWidth(stDim.Render(ansi.Truncate(more, w, "…")), w))
	}
	return frame(lines, footer, w, h)
}

// header is the summary's first line, w cells wide.
func (v summaryView) header(w int) string {
	s := v.data
	sep := stDim.Render(" │ ")
	segs := []string{stBrand.Render(" HIVEMIND "), " " + stAccent.Render("summary")}
	ph := lipgloss.NewStyle().Foreground(phaseColor(s.Phase)).Bold(true).Render(phaseLabel(s.Phase))
	segs = append(segs, sep+ph)
	if s.TaskID != "" {
		segs = append(segs, sep+stDim.Render(s.TaskID))
	}
	if s.Title != "" {
		segs = append(segs, sep+stText.Render(s.Title))
	}
	return joinFit(segs, w)
}

// banner is the end state and why, wrapped so the reason is never
// cut: at most three rows (the third cut with "…").
func (v summaryView) banner(w int, live bool) []string {
	s := v.data
	bg := colDim
	var text string
	switch s.Phase {
	case vocab.PhaseComplete:
		bg, text = colOK, " ✔ COMPLETE — every checkpoint approved"
	case vocab.PhaseCancelled:
		text = " ■ CANCELLED"
	case vocab.PhaseError:
		bg, text = colBad, " ✖ ERROR"
	case vocab.PhaseNeedsHuman:
		bg, text = colWarn, " ⚑ NEEDS HUMAN"
	case vocab.PhaseIdle:
		text = " ○ ABANDONED"
	default:
		bg, text = colBusy, " ▶ "+strings.ToUpper(PhaseLabel(s.Phase))
	}
	if s.Reason != "" {
		text += " — " + s.Reason
	}
	if live && (s.Phase == vocab.PhaseError || s.Phase == vocab.PhaseNeedsHuman) {
		text += " · R retry · A abandon "
	} else {
		text += " "
	}
	st := lipgloss.NewStyle().Foreground(colBlack).Background(bg).Bold(true)
	rows := strings.Split(ansi.Wrap(text, max(w, 1), " "), "\n")
	if len(rows) > 3 {
		rows = append(rows[:2], ansi.Truncate(strings.Join(rows[2:], " "), w, "…"))
	}
	for i, r := range rows {
		if i > 0 {
			r = "   " + strings.TrimLeft(r, " ")
		}
		rows[i] = st.Render(fitWidth(ansi.Truncate(r, w, "…"), w))
	}
	return rows
}

// branchAdvice says what the task's branch holds and how to take it, one
// short line each (a long branch name must not be cut at 80 columns). A
// task that ended without finishing a subtask built nothing to merge.
func branchAdvice(s summaryData, b string) []string {
	done, _ := countPlain(s.Subtasks)
	switch {
	case s.Phase == vocab.PhaseComplete:
		return []string{"   " + stDim.Render("hivemind diff shows it"), "   " + stDim.Render("git merge "+b+" takes it")}
	case done == 0:
		return []string{"   " + stDim.Render("no subtask was finished: nothing on it to merge")}
	}
	return []string{"   " + stDim.Render(fmt.Sprintf("%d subtask(s) were finished · hivemind diff shows what it holds", done)),
		"   " + stDim.Render("git merge "+b+" takes it")}
}

// body is every line of the summary (scrolled by the view): its
// sections in order.
func (v summaryView) body(c summaryCtx) []string {
	s, w := v.data, c.w
	out := append(sectionHead("Time"), v.times(c)...)
	if b := c.branch; b != "" && v.live {
		out = append(append(out, sectionHead("Branch")...), "   "+stText.Bold(true).Render(b))
		out = append(out, branchAdvice(s, b)...)
	}
	out = append(out, v.built()...)
	out = append(out, sectionHead(fmt.Sprintf("Review rounds (%d)", len(s.Rounds)))...)
	out = append(out, summaryRounds(s.Rounds, w)...)
	out = append(out, sectionHead(fmt.Sprintf("Friction (%d)", len(s.Friction)))...)
	out = append(out, v.friction()...)
	out = append(out, sectionHead("Agents: tokens and cost")...)
	return append(out, v.usage()...)
}

// sectionHead starts a section of the summary.
func sectionHead(title string) []string { return []string{"", " " + stAccent.Render(title)} }

// times is when the task started and finished, and how long it ran.
func (v summaryView) times(c summaryCtx) []string {
	s, w := v.data, c.w
	var out []string
	started, finished := "–", "–"
	if !s.Started.IsZero() {
		started = s.Started.Local().Format("2006-01-02 15:04:05")
	}
	if !s.Finished.IsZero() {
		finished = s.Finished.Local().Format("2006-01-02 15:04:05")
	}
	el := "–"
	switch {
	case c.clock:
		el = vocab.FormatElapsed(c.elapsed)
	case !s.Started.IsZero():
		el = vocab.FormatElapsed(s.Elapsed)
	}
	times := []string{stHeaderKey.Render("started ") + stText.Render(started),
		stHeaderKey.Render("finished ") + stText.Render(finished),
		stHeaderKey.Render("elapsed ") + stHeaderVal.Render(el)}
	if one := strings.Join(times, "   "); ansi.StringWidth(one)+3 <= w {
		out = append(out, "   "+one)
	} else {
		for _, t := range times { // narrow: one a line, never cut
			out = append(out, "   "+t)
		}
	}
	return out
}

// built is the section of what was built: each subtask and its files.
func (v summaryView) built() []string {
	s := v.data
	if !v.loaded {
		return append(sectionHead("What was built"), "   "+stDim.Render("reading the outputs…"))
	}
	done, total := countPlain(s.Subtasks)
	out := sectionHead(fmt.Sprintf("What was built (%d of %d subtask(s) done)", done, total))
	if len(s.Subtasks) == 0 {
		out = append(out, "   "+stDim.Render("no subtasks (the plan was never approved)"))
	}
	for _, st := range s.Subtasks {
		out = append(out, subtaskLines(st, s.Phase)...)
	}
	return out
}

// subtaskLines are one subtask of the summary: what it was, who did it,
// and the files it reported (or planned, when it was never done).
func subtaskLines(st subtaskSummary, phase vocab.Phase) []string {
	var out []string
	id := st.ID
	done := st.Status == vocab.SubtaskDone
	meta := subtaskWord(st.Status, phase)
	if st.Worker != "" {
		meta = string(st.Worker) + " · " + meta
	}
	line := "   " + stText.Bold(true).Render(id) + stDim.Render("  ("+meta+")")
	if st.Description != "" {
		line += "  " + stText.Render(st.Description)
	}
	out = append(out, line)
	if st.Problem != "" {
		out = append(out, "       "+lipgloss.NewStyle().Foreground(colBad).Render("output unreadable: "+st.Problem))
	}
	if len(st.Files) == 0 && done {
		out = append(out, "       "+stDim.Render("no files reported"))
	}
	if st.FromPlan && !done {
		// Planned, never done: what it would have touched, not
		// what was created.
		var paths []string
		for _, f := range st.Files {
			paths = append(paths, f.Path)
		}
		out = append(out, "       "+stDim.Render("planned files, not written: "+strings.Join(paths, ", ")))
		return out
	}
	for _, f := range st.Files {
		mark, col := "~", colWarn
		switch f.Verb {
		case "created":
			mark, col = "+", colOK
		case "deleted":
			mark, col = "-", colBad
		}
		fl := "       " + lipgloss.NewStyle().Foreground(col).Render(mark+" "+fmt.Sprintf("%-8s", f.Verb)) + " " + f.Path
		if st.FromPlan {
			fl += stDim.Render("  (planned; the output names no files)")
		}
		out = append(out, fl)
	}
	return out
}

// summaryRounds is a line per review round.
func summaryRounds(rounds []vocab.Round, w int) []string {
	var out []string
	if len(rounds) == 0 {
		out = append(out, "   "+stDim.Render("none"))
	}
	for _, r := range rounds {
		name := fmt.Sprintf("plan #%d", r.Number)
		if r.Kind == "checkpoint" {
			name = fmt.Sprintf("checkpoint %d #%d", r.Checkpoint, r.Number)
		} else if r.Kind != "plan" {
			name = fmt.Sprintf("%s #%d", r.Kind, r.Number)
		}
		col := colOK
		if r.Verdict != "approved" {
			col = colWarn
		}
		line := fmt.Sprintf("   %-18s ", name) + lipgloss.NewStyle().Foreground(col).Render(fmt.Sprintf("%-9s", r.Verdict))
		if !r.At.IsZero() {
			line += stDim.Render(" " + r.At.Local().Format("15:04:05"))
		}
		if sm := plainText(r.Summary); sm != "" {
			line += "  " + stText.Render(sm)
		}
		out = append(out, ansi.Truncate(line, w, "…")) // the whole review is in its file
	}
	return out
}

// friction is a line per friction note.
func (v summaryView) friction() []string {
	s := v.data
	var out []string
	if len(s.Friction) == 0 {
		out = append(out, "   "+stDim.Render("none logged"))
	}
	for _, f := range s.Friction {
		text := f.Text
		if !v.loaded {
			text = "…"
		}
		out = append(out, "   "+stText.Render(text)+stDim.Render("  "+f.File))
	}
	return out
}

// usage is a line per agent: tokens and cost, where known.
func (v summaryView) usage() []string {
	s := v.data
	var out []string
	if len(s.Agents) == 0 {
		out = append(out, "   "+stDim.Render("no agents"))
	}
	for _, id := range s.Agents {
		u, ok := s.Usage[id]
		line := fmt.Sprintf("   %-12s ", id)
		if a := s.Team[id]; a != "" {
			line += stDim.Render(fmt.Sprintf("%-8s ", a)) // which CLI it was
		}
		switch {
		case !v.loaded:
			line += stDim.Render("…")
		case !ok:
			line += stDim.Render("not known (this agent reports no usage)")
		case u.InputTokens == 0 && u.OutputTokens == 0 && !u.CostKnown:
			line += stDim.Render("not known")
			if u.Note != "" {
				line += stDim.Render(" — " + u.Note)
			}
		default:
			line += stText.Render(fmt.Sprintf("%s in · %s out", fmtTokens(u.InputTokens), fmtTokens(u.OutputTokens)))
			if u.CostKnown {
				line += stText.Render(fmt.Sprintf(" · $%.2f", u.CostUSD))
			} else {
				line += stDim.Render(" · cost not known")
			}
			if u.Note != "" {
				line += stDim.Render(" (" + u.Note + ")")
			}
		}
		out = append(out, line)
	}
	return out
}

// subtaskWord is a subtask's status as the summary says it: what became
// of work left unfinished when the task ended (cancelled, abandoned), in
// words, not the last state.json value.
func subtaskWord(status string, phase vocab.Phase) string {
	switch status {
	case vocab.SubtaskDone:
		return "done"
	case vocab.SubtaskFailed:
		return "failed"
	}
	ended := map[vocab.Phase]string{vocab.PhaseCancelled: "cancelled", vocab.PhaseIdle: "abandoned"}[phase]
	switch {
	case ended != "" && status == vocab.SubtaskInProgress:
		return "not done: " + ended + " while in progress"
	case ended != "":
		return "not done: " + ended + " before it started"
	case status == vocab.SubtaskInProgress:
		return "in progress"
	case status == vocab.SubtaskPending, status == "":
		return "not started"
	}
	return status
}

// countPlain counts the subtasks (not checkpoint fixes) done and in all.
func countPlain(ss []subtaskSummary) (done, total int) {
	for _, s := range ss {
		if !s.Fix {
			total++
			if s.Status == vocab.SubtaskDone {
				done++
			}
		}
	}
	return done, total
}

// fmtTokens renders a token count compactly (12.3k, 1.2M).
func fmtTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// summaryKeyMap is the summary's keys.
type summaryKeyMap struct {
	NewTask, Panes, Retry, Abandon, Back   key.Binding
	ScrollUp, PageUp, ScrollDown, PageDown key.Binding
	Help, Quit, CloseHelp                  key.Binding
}

func newSummaryKeyMap() summaryKeyMap {
	return summaryKeyMap{
		NewTask:    key.NewBinding(key.WithKeys("enter", "n"), key.WithHelp("enter", "new task")),
		Panes:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "agent panes")),
		Retry:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry")),
		Abandon:    key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "abandon")),
		ScrollUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/pgup", "scroll")),
		PageUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("↑/pgup", "scroll")),
		ScrollDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/pgdn", "scroll")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("↓/pgdn", "scroll")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Help:       key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?/f1", "help")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		CloseHelp:  closeHelpKey,
	}
}

func (k summaryKeyMap) helpSections() []helpSection {
	return []helpSection{{"Summary", bindingEntries(k.NewTask, k.Retry, k.Abandon, k.Panes, k.ScrollUp, k.PageUp, k.ScrollDown, k.PageDown, k.Back,
		key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "summary (panes)")))}}
}

// summaryLoadedMsg carries a summary read from the task directory.
type summaryLoadedMsg struct {
	taskID string
	sum    summaryData
}

// opensSummary reports whether msg is the key that opens the front
// door's summary of the live task from the run view (s; not where s is
// text, the agent's or a question's key).
func (m runView) opensSummary(msg tea.KeyPressMsg) bool {
	switch m.screen() {
	case screenAttached, screenConfirm, screenDraft, screenHelp, screenSearch, screenFeedback:
		return false
	default: // the panes, and the diff, plan and leave views over them
	}
	return key.Matches(msg, m.keys.Summary) && m.summaryAvailable()
}

// summaryAvailable reports whether the live task has a summary to show.
func (m runView) summaryAvailable() bool {
	if !m.haveState {
		return false
	}
	switch m.st.Phase {
	case vocab.PhaseComplete, vocab.PhaseCancelled, vocab.PhaseError, vocab.PhaseIdle:
		return true
	default: // under way, held or waiting for the human
	}
	return false
}

// summaryDone is what a key of the summary asks of the front door.
type summaryDone int

const (
	summaryStays   summaryDone = iota // it scrolled, or the key does nothing here
	summaryHelp                       // ? or f1
	summaryQuit                       // q
	summaryRetry                      // R: a failed live task
	summaryAbandon                    // A: a failed live task
	summaryPanes                      // v: the live task's panes
	summaryBack                       // esc or enter on a past task: the start screen
	summaryNewTask                    // enter on the live task: leave it for a new one
)

// update handles a key of the summary h lines high; live says its task
// is the live session's, failed that it stopped on an error or needs
// the user.
func (s *summaryView) update(msg tea.KeyPressMsg, live, failed bool, h int) summaryDone {
	k := s.keys
	switch {
	case key.Matches(msg, k.Help):
		return summaryHelp
	case key.Matches(msg, k.Quit):
		return summaryQuit
	case failed && key.Matches(msg, k.Retry):
		return summaryRetry
	case failed && key.Matches(msg, k.Abandon):
		return summaryAbandon
	case live && key.Matches(msg, k.Panes):
		return summaryPanes
	case key.Matches(msg, k.ScrollUp):
		s.scroll = max(s.scroll-1, 0)
	case key.Matches(msg, k.PageUp):
		s.scroll = max(s.scroll-max(h/2, 1), 0)
	case key.Matches(msg, k.ScrollDown):
		s.scroll++
	case key.Matches(msg, k.PageDown):
		s.scroll += max(h/2, 1)
	case !live && (key.Matches(msg, k.Back) || key.Matches(msg, k.NewTask)):
		return summaryBack
	case live && key.Matches(msg, k.NewTask):
		return summaryNewTask
	}
	return summaryStays
}

// summaryKey routes a key to the summary (or the help over it) and does
// what it asks. (A question the run view asks over it has the keys: key.)
func (fd *frontDoor) summaryKey(msg tea.KeyPressMsg, c frontCtx) frontAsk {
	a := frontAsk{notice: &notice{}}
	if fd.help.show {
		if key.Matches(msg, fd.sum.keys.CloseHelp) {
			fd.help.show = false
		}
		return a
	}
	live := fd.sum.live && fd.sess != nil
	failed := live && (c.st.Phase == vocab.PhaseError || c.st.Phase == vocab.PhaseNeedsHuman)
	switch fd.sum.update(msg, live, failed, c.h) {
	case summaryHelp:
		fd.help.show = true
	case summaryQuit:
		a.act = actQuit
		if live {
			a.act = actQuitLive
		}
	case summaryRetry:
		a.act, a.notice = actRetry, say("info", "retrying…")
	case summaryAbandon:
		a.act = actAbandon
	case summaryPanes:
		fd.mode = modeRun
	case summaryBack:
		// A past task's summary: back to the start screen.
		fd.mode = modeStart
	case summaryNewTask:
		// Leave the task (complete → idle) for a new one; a failed task
		// stays resumable.
		e := fd.end()
		e.notice, e.cmd = a.notice, batch(e.cmd, fd.start.setFocus(focusTask))
		return e
	case summaryStays:
	}
	return a
}
