package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

func TestCmdTasks(t *testing.T) {
	project := t.TempDir()
	o := options{Options: app.Options{Project: project}}
	var out bytes.Buffer
	if err := cmdTasks(o, &out); err != nil || out.String() != "no tasks yet\n" {
		t.Fatalf("empty: %v %q", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(project, vocab.DirName)); err == nil {
		t.Fatal("tasks created a workspace")
	}
	root := workspace.DefaultRoot(project)
	t0 := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	done := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0, Description: "build a tiny calculator\nwith tests"},
		&vocab.State{Phase: vocab.PhaseComplete, StartedAt: t0, FinishedAt: t0.Add(time.Hour + 2*time.Minute + 3*time.Second)})
	gone := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0.Add(2 * time.Hour), Description: "port the parser"},
		&vocab.State{Phase: vocab.PhaseIdle, StartedAt: t0.Add(2 * time.Hour)})
	fresh := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0.Add(3 * time.Hour), Description: "add a REPL"}, nil)

	out.Reset()
	if err := cmdTasks(o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", out.String())
	}
	// Newest first; columns aligned (every row's state starts where the
	// header's does).
	col := strings.Index(lines[0], "STATE")
	for i, want := range []struct{ id, state string }{{fresh, "not started"}, {gone, "abandoned"}, {done, "complete"}} {
		l := lines[i+1]
		if !strings.HasPrefix(l, want.id) || !strings.HasPrefix(l[col:], want.state) {
			t.Errorf("row %d %q: want %s %s at column %d", i, l, want.id, want.state, col)
		}
	}
	if !strings.Contains(lines[3], "1h02m03s") || !strings.Contains(lines[3], "build a tiny calculator") ||
		strings.Contains(out.String(), "with tests") {
		t.Errorf("complete row %q: want the duration and the first line of the description", lines[3])
	}

	out.Reset()
	o.JSON = true
	if err := cmdTasks(o, &out); err != nil {
		t.Fatal(err)
	}
	var rows []taskRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if rows[2].ID != done || rows[2].State != "complete" || rows[2].DurationSec != 3723 || rows[2].Finished == nil {
		t.Errorf("json row %+v", rows[2])
	}
	if rows[0].Started != nil || rows[0].DurationSec != 0 {
		t.Errorf("a task that never started has a start: %+v", rows[0])
	}
}
