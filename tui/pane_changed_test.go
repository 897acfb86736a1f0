package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A worker's changed-file count (git projects) shows in its pane title and
// is the first thing dropped when the title is short of room.
func TestPaneTitleChangedFiles(t *testing.T) {
	td := titleData{ID: "worker_1", Role: "worker", Health: "busy", Activity: "●", Subtask: "st_2", Changed: 3}
	if got := ansi.Strip(renderTop(80, borderNormal, td)); !strings.Contains(got, "±3 files") {
		t.Errorf("title %q lacks the count", got)
	}
	td.Changed = 1
	if got := ansi.Strip(renderTop(80, borderNormal, td)); !strings.Contains(got, "±1 file ") {
		t.Errorf("title %q lacks the singular count", got)
	}
	td.Changed = 0
	if got := ansi.Strip(renderTop(80, borderNormal, td)); strings.Contains(got, "±") {
		t.Errorf("title %q shows a zero count", got)
	}
	td.Changed = 12
	narrow := ansi.Strip(renderTop(36, borderNormal, td))
	if strings.Contains(narrow, "±") || !strings.Contains(narrow, "worker_1") || ansi.StringWidth(narrow) != 36 {
		t.Errorf("narrow title %q", narrow)
	}
}
