package tui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// StartQuestion is an error of Launcher.Start or Resume that the user can
// settle with a yes (running as root: "is this a sandbox?"). The start
// screen shows Err in full, asks Question with [y/N], and on y calls Yes
// off the UI goroutine; on anything else it says No.
type StartQuestion struct {
	Err      error
	Question string
	No       string // what not answering yes means ("not started …")
	Yes      func() (Session, error)
}

func (q *StartQuestion) Error() string { return q.Err.Error() }
func (q *StartQuestion) Unwrap() error { return q.Err }

// startFailed shows why a start failed and, when a yes can fix it, asks.
func (m *Model) startFailed(err error) {
	m.fd.formErr = err.Error()
	var q *StartQuestion
	if errors.As(err, &q) && q.Yes != nil {
		m.fd.ask = q
	}
}

// askKey answers the start screen's question: y tries again with the yes,
// anything else (enter included: the default is no) declines.
func (m *Model) askKey(msg tea.KeyPressMsg) tea.Cmd {
	q := m.fd.ask
	m.fd.ask = nil
	if s := msg.String(); s != "y" && s != "Y" {
		m.fd.formErr += "\n" + q.No
		return nil
	}
	m.fd.formErr = ""
	m.fd.busy = "starting the task…"
	return func() tea.Msg {
		s, err := q.Yes()
		return sessionStartedMsg{sess: s, err: err}
	}
}

// errorLines is a start error in full: each of its lines wrapped to w
// cells (words kept whole where they fit), the first marked ✖.
func errorLines(text string, w int) []string {
	var out []string
	for i, para := range strings.Split(strings.TrimSpace(text), "\n") {
		mark := "    "
		if i == 0 {
			mark = "  ✖ "
		}
		wrapped := ansi.Wrap(oneLine(para), max(w-len(mark)-1, 10), " /")
		for j, l := range strings.Split(wrapped, "\n") {
			if j > 0 {
				mark = "    "
				if i > 0 {
					mark = "      "
				}
			}
			out = append(out, mark+stBadTxt.Render(l))
		}
	}
	return out
}

// askLine is the question with its [y/N], wrapped to w cells.
func askLines(q *StartQuestion, w int) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wrap(q.Question+" [y/N]", max(w-3, 10), " "), "\n") {
		out = append(out, "  "+stConfirm.Render(l))
	}
	return out
}
