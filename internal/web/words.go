package web

import (
	"regexp"
	"strings"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/proto"
)

// The engine's notices and reasons tell the full-screen UI's user which
// key to press, and a headless one which file to write; the page has
// buttons for both. pageWords puts them in the page's words (the TUI
// keeps its own).
var (
	tuiKeys = strings.NewReplacer(
		"(R in the TUI, or hivemind --resume --retry)", "(the Retry button)",
		"approve it (a) or send feedback (f)", "approve it (Approve and build) or send feedback (Send feedback)",
	)
	// decisionHelp is flow.PlanDecisionHelp of any task directory.
	decisionHelp = regexp.MustCompile(strings.Replace(regexp.QuoteMeta(flow.PlanDecisionHelp("DIR")), "DIR", `\S*`, 1))
	// headless is a plan gate notice's advice to a headless user, after
	// the page's.
	headless = regexp.MustCompile(`; headless: ` + decisionHelp.String())
)

const pageDecision = "Approve and build, or write feedback and Send feedback"

// pageWords is s (an engine notice or reason) as the page says it.
func pageWords(s string) string {
	s = headless.ReplaceAllLiteralString(s, "")
	s = decisionHelp.ReplaceAllLiteralString(s, pageDecision)
	return tuiKeys.Replace(s)
}

// forPage puts the text of a message of the server in the page's words.
func forPage(m *proto.Msg) {
	switch {
	case m.T == proto.TNotice:
		m.Text = pageWords(m.Text)
	case m.T == proto.TSnapshot && m.Snapshot != nil:
		m.Snapshot.State.Reason = pageWords(m.Snapshot.State.Reason)
		m.Snapshot.State.Error = pageWords(m.Snapshot.State.Error)
	}
}
