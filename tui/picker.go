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

// folderPicker is the folder picker (ctrl+o on the start screen): the
// bubbles filepicker, which moves, and our keys, which choose and cancel.
type folderPicker struct {
	fp   filepicker.Model
	keys pickerKeyMap
}

// pickerDone is what a key of the picker asks of the front door.
type pickerDone int

const (
	pickerMoved  pickerDone = iota // the picker handled the key itself
	pickerQuit                     // ctrl+c
	pickerHelp                     // ? or f1
	pickerCancel                   // esc: back to the start screen
	pickerChosen                   // a folder was chosen (dir)
)

// newFolderPicker is a picker in dir ("": the working directory).
func newFolderPicker(dir string) folderPicker {
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
	return folderPicker{fp: fp, keys: newPickerKeyMap()}
}

// resize fits the list to a screen h lines high.
func (p *folderPicker) resize(h int) { p.fp.SetHeight(max(h-8, 3)) }

// update handles a key of the picker: what it asks of the front door,
// the folder it chose, and the filepicker's command.
func (p *folderPicker) update(msg tea.KeyPressMsg) (pickerDone, string, tea.Cmd) {
	k := p.keys
	switch {
	case key.Matches(msg, k.QuitNow):
		return pickerQuit, "", nil
	case key.Matches(msg, k.Help):
		return pickerHelp, "", nil
	case key.Matches(msg, k.Cancel):
		return pickerCancel, "", nil
	case key.Matches(msg, k.Here):
		return pickerChosen, p.fp.CurrentDirectory, nil
	case key.Matches(msg, k.Choose):
		if dir := p.fp.HighlightedPath(); dir != "" {
			return pickerChosen, dir, nil
		}
		return pickerChosen, p.fp.CurrentDirectory, nil
	}
	return pickerMoved, "", p.pass(msg)
}

// pass gives msg to the filepicker: it reads directories in its own
// commands, whose messages are unexported, so every message the front
// door does not handle goes through it (it ignores what is not its own).
func (p *folderPicker) pass(msg tea.Msg) tea.Cmd {
	var c tea.Cmd
	p.fp, c = p.fp.Update(msg)
	return c
}

// shortHelp is the picker's footer.
func (p folderPicker) shortHelp() (hints, essentials []key.Binding) {
	k := p.keys
	return []key.Binding{k.Choose, k.Here, k.Cancel, k.Up, k.Open, k.Back}, []key.Binding{k.Help, k.QuitNow}
}

// view is the picker's lines under the header.
func (p folderPicker) view() []string {
	lines := []string{"",
		"  " + stLabel.Render("Choose the project folder"),
		"  " + stDim.Render("in ") + stText.Render(p.fp.CurrentDirectory),
		""}
	return append(lines, indent(strings.TrimRight(p.fp.View(), "\n"), "  ")...)
}

// openPicker opens the folder picker on a screen h lines high.
func (fd *frontDoor) openPicker(h int) tea.Cmd {
	if fd.start.busy != "" {
		return nil
	}
	fd.mode = modePicker
	fd.picker = newFolderPicker(fd.start.project)
	fd.picker.resize(h)
	return fd.picker.fp.Init()
}

// pickerKey routes a key to the folder picker (or the help over it) and
// does what it asks.
func (fd *frontDoor) pickerKey(msg tea.KeyPressMsg) frontAsk {
	if fd.help.show {
		fd.help.show = false
		return frontAsk{}
	}
	done, dir, cmd := fd.picker.update(msg)
	switch done {
	case pickerQuit:
		return frontAsk{act: actQuit}
	case pickerHelp:
		fd.help.show = true
	case pickerCancel:
		fd.mode = modeStart
	case pickerChosen:
		return frontAsk{cmd: fd.chooseProject(dir)}
	case pickerMoved:
	}
	return frontAsk{cmd: cmd}
}

// chooseProject makes dir the project (idle → project_selected).
func (fd *frontDoor) chooseProject(dir string) tea.Cmd {
	fd.mode = modeStart
	focus := fd.start.choose(dir)
	return batch(fd.rescan(), focus)
}

// choose makes dir the project, not read yet, and focuses the task.
func (sc *startScreen) choose(dir string) tea.Cmd {
	sc.project = dir
	sc.scanned = false
	sc.info = Project{Dir: dir}
	sc.sel = 0
	sc.busy = ""
	return sc.setFocus(focusTask)
}

func (fd frontDoor) renderPicker(c frontViewCtx) string {
	return frame(append([]string{fd.startHeader(c.w)}, fd.picker.view()...), fd.footer(c), c.w, c.h)
}
