package cli

import (
	"bytes"
	"errors"
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

// status, events and diff find their task the same way (Options.CurrentTask):
// no workspace is an error and creates none; the unfinished task comes
// before newer ones that are over; else the newest.
func TestCurrentTask(t *testing.T) {
	project := t.TempDir()
	o := options{Options: app.Options{Project: project}}
	var out bytes.Buffer
	for name, cmd := range map[string]func() error{
		"lookup": func() error { _, err := o.CurrentTask(); return err },
		"status": func() error { return cmdStatus(o, &out) },
		"events": func() error { return cmdEvents(o, &out) },
	} {
		if err := cmd(); err == nil || !strings.Contains(err.Error(), "no Hivemind workspace") {
			t.Errorf("%s without a workspace: %v", name, err)
		}
	}
	root := workspace.DefaultRoot(project)
	if _, err := os.Stat(root); err == nil {
		t.Fatal("a reading command created the workspace")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := o.CurrentTask(); !errors.Is(err, workspace.ErrNoTask) {
		t.Errorf("empty workspace: %v, want errNoTask", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a reading command created %v in the workspace", entries)
	}

	t0 := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	running := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0, Description: "running"},
		&vocab.State{Phase: vocab.PhaseExecuting})
	testkit.NewTask(t, root, vocab.Task{CreatedAt: t0.Add(time.Hour), Description: "done"},
		&vocab.State{Phase: vocab.PhaseComplete})
	abandoned := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0.Add(2 * time.Hour), Description: "given up"},
		&vocab.State{Phase: vocab.PhaseIdle})
	if in, err := o.CurrentTask(); err != nil || in.ID != running || filepath.Base(in.Dir) != running {
		t.Errorf("current %+v %v, want the unfinished %s", in, err, running)
	}
	out.Reset()
	if err := cmdStatus(o, &out); err != nil || !strings.Contains(out.String(), running) {
		t.Errorf("status: %v\n%s", err, out.String())
	}
	// Nothing unfinished: the newest task, abandoned or not.
	if err := os.RemoveAll(filepath.Join(root, vocab.TasksDir, running)); err != nil {
		t.Fatal(err)
	}
	if in, err := o.CurrentTask(); err != nil || in.ID != abandoned {
		t.Errorf("current %+v %v, want the newest %s", in.ID, err, abandoned)
	}
}
