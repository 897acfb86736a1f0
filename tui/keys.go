package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key of the run view; it also feeds the help view and
// the footer. The layers over the panes (help, diff, plan gate, search
// prompt, questions) have their own (screens.go), and so do the start
// screen, folder picker and summary (start.go).
type keyMap struct {
	Pause, Resume, Cancel, Quit key.Binding
	PauseAgent                  key.Binding // the focused agent alone
	Next, Prev, FocusN          key.Binding
	Left, Down, Up, Right       key.Binding // focus by direction
	PageNext, PagePrev          key.Binding
	Zoom, Attach, Detach        key.Binding
	ScrollUp, ScrollDown, End   key.Binding
	Search, SearchNext          key.Binding
	SearchPrev, Copy, Diff      key.Binding
	Events, Detail              key.Binding
	Retry, Abandon              key.Binding
	Help, Close                 key.Binding
	Summary                     key.Binding // front door only (start.go)
	Leave                       key.Binding // a server's client only (remote.go)
	Knowledge                   key.Binding // shared-knowledge panel (knowledge.go)
}

func newKeyMap() keyMap {
	return keyMap{
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Resume:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		PauseAgent: key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "pause this agent")),
		Cancel:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		FocusN:     key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9", "0"), key.WithHelp("1-9", "pane N (12: 1 then 2)")),
		Left:       key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "pane to the left")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "pane below")),
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "pane above")),
		Right:      key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "pane to the right")),
		PageNext:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next page of panes")),
		PagePrev:   key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous page")),
		Zoom:       key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom")),
		Attach:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "attach")),
		Detach:     key.NewBinding(key.WithKeys("ctrl+]"), key.WithHelp("ctrl+]", "detach")),
		ScrollUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll back")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll forward")),
		End:        key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "live view")),
		Search:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search scrollback")),
		SearchNext: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next (older) match")),
		SearchPrev: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous (newer) match")),
		Copy:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy pane (OSC 52)")),
		Diff:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "worker's diff")),
		Events:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Detail:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "events: all detail")),
		Retry:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry")),
		Abandon:    key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "abandon")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:      key.NewBinding(key.WithKeys("esc", "n", "N"), key.WithHelp("esc", "close · end search")),
		Summary:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "summary"), key.WithDisabled()),
		Leave:      key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "detach: the team keeps working"), key.WithDisabled()),
		Knowledge:  key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "shared knowledge")),
	}
}

// ShortHelp is the footer's key summary, most useful first; the footer
// always keeps quit and help (essentials) and drops from the end of this.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Attach, k.Zoom, k.Pause, k.Resume, k.Cancel, k.Events, k.Search, k.Diff, k.Next}
}

// essentials end every footer, whatever the width.
func (k keyMap) essentials() []key.Binding {
	return []key.Binding{k.Quit, k.Help}
}

// helpSections is every run-view key, grouped, for the help overlay; plan
// is the plan gate's section, shown among them.
func (k keyMap) helpSections(plan []helpSection) []helpSection {
	return append(append([]helpSection{
		{"Task", bindingEntries(k.Pause, k.Resume, k.PauseAgent, k.Cancel, k.Retry, k.Abandon, k.Summary, k.Leave, k.Quit)}},
		plan...), []helpSection{
		{"Panes", bindingEntries(k.Next, k.Prev, k.Left, k.Down, k.Up, k.Right, k.FocusN, k.PageNext, k.PagePrev, k.Zoom)},
		{"Agent terminal", bindingEntries(k.Attach, k.Detach, k.ScrollUp, k.ScrollDown, k.End, k.Search, k.SearchNext, k.SearchPrev, k.Copy, k.Diff)},
		{"Views", append(bindingEntries(k.Events, k.Detail, k.Knowledge, k.Help, k.Close),
			helpEntry{"click", "focus a pane"}, helpEntry{"wheel", "scroll a pane"}, helpEntry{"drag", "copy the rows"})},
		{"Pane titles", legend},
		{"States", stateLegend},
	}...)
}
