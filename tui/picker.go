package tui

import (
	"strings"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// pickerKeyMap is the folder picker's keys (it moves with its own, the
// bubbles filepicker's: ↑↓, pgup, pgdn…).
type pickerKeyMap struct {
	Up, Open, Back, Choose, Here, Cancel, Help, QuitNow key.Binding
}

func newPickerKeyMap() pickerKeyMap {
	return pickerKeyMap{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select")),
		Open:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "open folder")),
		Back:    key.NewBinding(key.WithKeys("left", "h", "backspace"), key.WithHelp("←/h", "parent")),
		Choose:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "use highlighted")),
		Here:    key.NewBinding(key.WithKeys("."), key.WithHelp(".", "use this folder")),
		Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Help:    key.NewBinding(key.WithKeys("?", "f1"), key.WithHelp("?/f1", "help")),
		QuitNow: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

func (k pickerKeyMap) helpSections() []helpSection {
	return []helpSection{{"Folder picker", bindingEntries(k.Up, k.Open, k.Back, k.Choose, k.Here, k.Cancel)}}
}

func newPicker(dir string) filepicker.Model {
	fp := filepicker.New()
	fp.DirAllowed, fp.FileAllowed = true, false
	fp.ShowPermissions, fp.ShowSize = false, false
	fp.AutoHeight = false
	fp.Cursor = "▸"
	// Our own keys choose and cancel; the picker only moves.
	fp.KeyMap.Back = key.NewBinding(key.WithKeys("left", "h", "backspace"))
	fp.KeyMap.Open = key.NewBinding(key.WithKeys("right", "l", "enter"))
	if dir != "" {
		fp.CurrentDirectory = dir
	}
	return fp
}

func (m *Model) openPicker() tea.Cmd {
	if m.fd.busy != "" {
		return nil
	}
	m.fd.mode = modePicker
	m.fd.picker = newPicker(m.fd.project)
	m.fd.picker.SetHeight(max(m.height-8, 3))
	return m.fd.picker.Init()
}

func (m *Model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.fd.pickKeys
	if m.help.show {
		m.help.show = false
		return nil
	}
	switch {
	case key.Matches(msg, k.QuitNow):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.help.show = true
		return nil
	case key.Matches(msg, k.Cancel):
		m.fd.mode = modeStart
		return nil
	case key.Matches(msg, k.Here):
		return m.chooseProject(m.fd.picker.CurrentDirectory)
	case key.Matches(msg, k.Choose):
		if p := m.fd.picker.HighlightedPath(); p != "" {
			return m.chooseProject(p)
		}
		return m.chooseProject(m.fd.picker.CurrentDirectory)
	}
	var c tea.Cmd
	m.fd.picker, c = m.fd.picker.Update(msg)
	return c
}

// chooseProject makes dir the project (idle → project_selected).
func (m *Model) chooseProject(dir string) tea.Cmd {
	m.fd.mode = modeStart
	m.fd.project = dir
	m.fd.scanned = false
	m.fd.info = Project{Dir: dir}
	m.fd.sel = 0
	m.fd.busy = ""
	return batch(m.rescan(), m.setFocus(focusTask))
}

func (m Model) renderPicker() string {
	w, h := m.width, m.height
	lines := []string{m.startHeader(), "",
		"  " + stLabel.Render("Choose the project folder"),
		"  " + stDim.Render("in ") + stText.Render(m.fd.picker.CurrentDirectory),
		""}
	body := strings.TrimRight(m.fd.picker.View(), "\n")
	lines = append(lines, indent(body, "  ")...)
	return frame(lines, m.frontFooter(), w, h)
}
