package tui

import (
	"regexp"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// phaseWords are the workflow states in the words a user reads on screen;
// the raw names stay in state.json, events and `hivemind status`.
var phaseWords = map[vocab.Phase]string{
	vocab.PhaseIdle:               "idle",
	vocab.PhaseProjectSelected:    "ready",
	vocab.PhasePlanning:           "planning",
	vocab.PhasePlanReview:         "reviewing plan",
	vocab.PhasePlanRevision:       "revising plan",
	vocab.PhasePlanApproval:       "plan: your call",
	vocab.PhaseExecuting:          "building",
	vocab.PhaseCheckpoint:         "checkpoint reached",
	vocab.PhaseCheckpointReview:   "reviewing checkpoint",
	vocab.PhaseCheckpointFix:      "fixing review issues",
	vocab.PhaseFrictionLogged:     "friction reported",
	vocab.PhaseFrictionSync:       "sharing friction",
	vocab.PhaseFrictionResolution: "resolving friction",
	vocab.PhaseComplete:           "complete",
	vocab.PhaseError:              "error",
	vocab.PhasePaused:             "paused",
	vocab.PhaseNeedsHuman:         "needs you",
	vocab.PhaseCancelled:          "cancelled",
}

// PhaseLabel is how the TUI names a workflow state ("building" for
// executing, "reviewing plan" for plan_review, …); unknown states keep
// their raw name. Exported so end-to-end tests can read the header.
func PhaseLabel(p vocab.Phase) string {
	if w, ok := phaseWords[p]; ok {
		return w
	}
	return string(p)
}

// PhaseOf is the state a label of PhaseLabel names (for tests that read
// the screen).
func PhaseOf(label string) (vocab.Phase, bool) {
	for p, w := range phaseWords {
		if w == label {
			return p, true
		}
	}
	return "", false
}

// phaseHeadline is the state as the header shows it: paused and needs_human
// say what they interrupted ("paused · was building").
func phaseHeadline(p, prev vocab.Phase) string {
	w := PhaseLabel(p)
	if (p == vocab.PhasePaused || p == vocab.PhaseNeedsHuman || p == vocab.PhaseError) && prev != "" && prev != p {
		w += " · was " + PhaseLabel(prev)
	}
	return w
}

// approvedCheckpoints counts the checkpoints the Reviewer approved: the
// progress the header shows (a checkpoint being built is not progress yet).
func approvedCheckpoints(st vocab.State) int {
	if st.Phase == vocab.PhaseComplete {
		return st.TotalCheckpoints
	}
	seen := map[int]bool{}
	for _, r := range st.Rounds {
		if r.Kind == "checkpoint" && r.Verdict == "approved" {
			seen[r.Checkpoint] = true
		}
	}
	return min(len(seen), st.TotalCheckpoints)
}

// legend explains the glyphs and states of the run view (shown in help).
var legend = []helpEntry{
	{"●", "may write files now"},
	{"○", "reads only (reviews)"},
	{"–", "no work in this state"},
	{"⠋ busy", "agent is working"},
	{"✓ idle", "turn ended, waiting"},
	{"⚠", "asks permission / silent"},
	{"⏳", "rate limited, waits"},
	{"✖", "hung (silent too long)"},
	{"⏻", "process exited"},
	{"↑ N/M", "scrolled back N of M lines"},
}

// stateLegend names the workflow states in the order a run meets them.
var stateLegend = []helpEntry{
	{"planning", "lead writes plan"},
	{"reviewing plan", "reviewer reads it"},
	{"revising plan", "lead reworks plan"},
	{"plan: your call", "a approve, f feedback"},
	{"building", "workers build"},
	{"reviewing checkpoint", "reviewer checks"},
	{"fixing review issues", "workers fix issues"},
	{"needs you", "R retry, A abandon"},
	{"paused", "clock stopped"},
}

// mdMarkRE matches markdown emphasis and code marks (**, __, *, `) that
// have no meaning on one line of plain text.
var mdMarkRE = regexp.MustCompile("\\*\\*|__|`+|(^|\\s)[*_]|[*_]($|\\s)")

// plainText turns a line of markdown into plain text: heading marks,
// emphasis and code marks go, so "**Severity:** major" reads
// "Severity: major".
func plainText(s string) string {
	s = oneLine(s)
	s = strings.TrimLeft(s, "#> ")
	s = mdMarkRE.ReplaceAllStringFunc(s, func(m string) string {
		return strings.Trim(m, "*_`")
	})
	return strings.TrimSpace(s)
}
