package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key the TUI understands; it also feeds the help view.
type keyMap struct {
	Pause, Resume, Cancel, Quit key.Binding
	Next, Prev, FocusN          key.Binding
	Zoom, Attach, Detach        key.Binding
	ScrollUp, ScrollDown, End   key.Binding
	Events, Retry, Abandon      key.Binding
	Help, Yes, No               key.Binding
	Summary                     key.Binding // front door only (start.go)
	Context                     key.Binding // shared-context panel (context.go)
}

func newKeyMap() keyMap {
	return keyMap{
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Resume:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		Cancel:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous")),
		FocusN:     key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "focus")),
		Zoom:       key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom")),
		Attach:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "attach")),
		Detach:     key.NewBinding(key.WithKeys("ctrl+]"), key.WithHelp("ctrl+]", "detach")),
		ScrollUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll up")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll down")),
		End:        key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "live view")),
		Events:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Retry:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry")),
		Abandon:    key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "abandon")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Yes:        key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:         key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
		Summary:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "summary"), key.WithDisabled()),
		Context:    key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "shared context")),
	}
}

// ShortHelp is the one-line key summary of the status line.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Resume, k.Cancel, k.Next, k.Zoom, k.Attach, k.Events, k.Quit, k.Help}
}

// FullHelp is the help overlay shown by "?".
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Pause, k.Resume, k.Cancel, k.Retry, k.Abandon, k.Quit},
		{k.Next, k.Prev, k.FocusN, k.Zoom, k.Events, k.Context, k.Help},
		{k.Attach, k.Detach, k.ScrollUp, k.ScrollDown, k.End, k.Summary},
	}
}
