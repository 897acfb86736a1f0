package script

import (
	"os"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// sharedNotesFile is the project file every worker appends to with
// Scenario.SharedNotes.
const sharedNotesFile = "NOTES.md"

// appendNote is the shared notes file p with one line more for a subtask.
func appendNote(p, agent string, st *vocab.Subtask) string {
	old, _ := os.ReadFile(p)
	s := string(old)
	if s == "" {
		s = "# Notes\n\n"
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + "- " + agent + " did " + st.ID + ": " + oneLine(st.Description) + "\n"
}

// ResolveConflicts resolves every git conflict block in content by keeping
// both sides, ours then theirs, without the common ancestor's lines (what
// a careful person does with two additions to the same list). ok is false
// when content has no complete conflict block.
func ResolveConflicts(content string) (resolved string, ok bool) {
	lines := strings.SplitAfter(content, "\n")
	var out []string
	const (
		outside = iota
		ours
		base
		theirs
	)
	state := outside
	var block []string // the lines of the block being read, markers included
	var keep []string
	for _, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		switch {
		case state == outside && strings.HasPrefix(t, "<<<<<<< "):
			state, block, keep = ours, []string{l}, nil
		case state == ours && strings.HasPrefix(t, "||||||| "):
			state = base
			block = append(block, l)
		case (state == ours || state == base) && t == "=======":
			state = theirs
			block = append(block, l)
		case state == theirs && strings.HasPrefix(t, ">>>>>>> "):
			out = append(out, keep...)
			state, ok = outside, true
		case state == outside:
			out = append(out, l)
		default:
			block = append(block, l)
			if state != base {
				keep = append(keep, l)
			}
		}
	}
	if state != outside {
		out = append(out, block...) // an unfinished block stays as it was
	}
	if !ok {
		return content, false
	}
	return strings.Join(out, ""), true
}
