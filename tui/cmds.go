package tui

import (
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// lifecycle lets commands that wait on outside channels end when the model
// quits, so no goroutine outlives the program because of the TUI.
type lifecycle struct {
	once sync.Once
	done chan struct{}
}

func newLifecycle() *lifecycle { return &lifecycle{done: make(chan struct{})} }

func (l *lifecycle) stop() { l.once.Do(func() { close(l.done) }) }

// waitChangedCmd waits for the next coalesced screen-change signal.
func (m runView) waitChangedCmd() tea.Cmd {
	ch := m.opts.Terminals.Changed()
	done := m.life.done
	return func() tea.Msg {
		select {
		case _, ok := <-ch:
			if !ok {
				return termsClosedMsg{}
			}
			return termsChangedMsg{}
		case <-done:
			return nil
		}
	}
}

// frameTickCmd fires when the frame-rate cap allows the next frame.
func frameTickCmd(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return frameTickedMsg{} })
}

// clockTickCmd fires at the next whole second of elapsed time.
func clockTickCmd(gen int, elapsed time.Duration) tea.Cmd {
	d := time.Second - elapsed%time.Second
	return tea.Tick(d, func(time.Time) tea.Msg { return clockTickedMsg{gen: gen} })
}

// notifyCmd rings the terminal bell and raises a desktop notification
// (OSC 9 for iTerm2/WezTerm/Windows Terminal/kitty, OSC 777 for
// rxvt/foot/Ghostty/VTE). Terminals that know neither ignore them.
func notifyCmd(msg string) tea.Cmd {
	return tea.Raw(notificationSeq(msg))
}

func notificationSeq(msg string) string {
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, ansi.Strip(msg))
	return "\a" + ansi.Notify("Hivemind: "+clean) + "\x1b]777;notify;Hivemind;" + clean + "\x07"
}
