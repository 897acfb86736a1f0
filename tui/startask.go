package tui

import (
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// StartQuestion is an error of Launcher.Start or Resume that the user can
// settle with an answer. With Answers (the checkout has uncommitted
// edits: include them or start from HEAD?) the start screen shows Err in
// full, asks Question with each answer's key, and on one of those keys
// calls its Start off the UI goroutine. Without them it is a yes/no
// question (running as root: "is this a sandbox?"): Question with [y/N],
// y calls Yes. On any other key it says No.
type StartQuestion struct {
	Err      error
	Question string
	No       string // what not answering means ("not started …")
	Yes      func() (Session, error)
	Answers  []StartAnswer
}

// StartAnswer is one answer of a StartQuestion: its key, what it does in
// words, and the start it makes.
type StartAnswer struct {
	Key   string // one key ("i")
	Label string // "include them as a commit on the task branch"
	Start func() (Session, error)
}

// answer is the start key k makes, nil when k says no.
func (q *StartQuestion) answer(k string) func() (Session, error) {
	if len(q.Answers) == 0 {
		if k == "y" || k == "Y" {
			return q.Yes
		}
		return nil
	}
	for _, a := range q.Answers {
		if a.Key == k {
			return a.Start
		}
	}
	return nil
}

// keys is the question's answers as the footer and the screen say them.
func (q *StartQuestion) keys() string {
	if len(q.Answers) == 0 {
		return "y yes, start · n or enter: no"
	}
	keys := make([]string, 0, len(q.Answers))
	for _, a := range q.Answers {
		keys = append(keys, a.Key)
	}
	return strings.Join(keys, " or ") + ": answer above · esc: not now"
}

func (q *StartQuestion) Error() string { return q.Err.Error() }
func (q *StartQuestion) Unwrap() error { return q.Err }

// startFailed shows why a start failed and, when a yes can fix it, asks.
func (sc *startScreen) startFailed(err error) {
	sc.formErr = err.Error()
	var q *StartQuestion
	if errors.As(err, &q) && (q.Yes != nil || len(q.Answers) > 0) {
		sc.ask = q
	}
}

// askKey answers the start screen's question: y tries again with the yes,
// anything else (enter included: the default is no) declines.
func (sc *startScreen) askKey(msg tea.KeyPressMsg) tea.Cmd {
	q := sc.ask
	sc.ask = nil
	start := q.answer(msg.String())
	if start == nil {
		sc.formErr += "\n" + q.No
		return nil
	}
	sc.formErr = ""
	sc.busy = "starting the task…"
	return func() tea.Msg {
		s, err := start()
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

// askLines is the question with its answers ([y/N], or each answer's
// key), wrapped to w cells.
func askLines(q *StartQuestion, w int) []string {
	text := q.Question + " [y/N]"
	if len(q.Answers) > 0 {
		text = q.Question
		for _, a := range q.Answers {
			text += "\n" + a.Key + "  " + a.Label
		}
	}
	var out []string
	for _, para := range strings.Split(text, "\n") {
		for _, l := range strings.Split(ansi.Wrap(para, max(w-3, 10), " "), "\n") {
			out = append(out, "  "+stConfirm.Render(l))
		}
	}
	return out
}
