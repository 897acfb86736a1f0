package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestDefaultRoot(t *testing.T) {
	if got := DefaultRoot("/p/proj"); got != "/p/proj/.hivemind" {
		t.Fatalf("DefaultRoot = %q", got)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		root    string
		wantErr bool
	}{
		{"new nested root", filepath.Join(dir, "a", "b", ".hivemind"), false},
		{"existing root", dir, false},
		{"root is a file", file, true},
		{"empty root", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Open(tc.root)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Open(%q) err = %v, wantErr %v", tc.root, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if !filepath.IsAbs(w.Root()) {
				t.Errorf("Root %q not absolute", w.Root())
			}
			if fi, err := os.Stat(filepath.Join(w.Root(), vocab.TasksDir)); err != nil || !fi.IsDir() {
				t.Errorf("tasks dir missing: %v", err)
			}
		})
	}
}

func TestCreateTask(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Date(2026, 11, 22, 1, 33, 0, 0, time.UTC) }
	td, err := w.CreateTask(vocab.Task{Description: "build it", Constraints: []string{"fast"}, Project: "/proj"})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^20261122-013300-[0-9a-f]{4}$`).MatchString(td.ID()) {
		t.Errorf("id %q not sortable time-based", td.ID())
	}
	for _, sub := range append([]string{vocab.TaskFile, vocab.TaskMarkdown}, taskSubdirs...) {
		if _, err := os.Stat(filepath.Join(td.Dir(), sub)); err != nil {
			t.Errorf("%s: %v", sub, err)
		}
	}
	task, err := td.Task()
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != td.ID() || task.Description != "build it" || !task.CreatedAt.Equal(w.now()) {
		t.Errorf("task.json = %+v", task)
	}
	md, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.TaskMarkdown))
	if !strings.Contains(string(md), "build it") || !strings.Contains(string(md), "- fast") {
		t.Errorf("task.md = %q", md)
	}

	// Ids are unique even within the same second.
	seen := map[string]bool{td.ID(): true}
	for range 20 {
		d, err := w.CreateTask(vocab.Task{Description: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.ID()] {
			t.Fatalf("duplicate id %s", d.ID())
		}
		seen[d.ID()] = true
	}

	// Explicit ids; task.json is immutable.
	if _, err := w.CreateTask(vocab.Task{ID: "task_abc", Description: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err = w.CreateTask(vocab.Task{ID: "task_abc", Description: "two"})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second CreateTask err = %v, want ErrExists", err)
	}
	d, _ := w.OpenTask("task_abc")
	if task, _ := d.Task(); task.Description != "one" {
		t.Errorf("task.json changed to %q", task.Description)
	}
	for _, bad := range []string{"../x", "a/b", "..", ".hidden", ""} {
		if bad == "" {
			continue // empty means "assign one"
		}
		if _, err := w.CreateTask(vocab.Task{ID: bad}); !errors.Is(err, ErrBadTaskID) {
			t.Errorf("CreateTask(%q) err = %v, want ErrBadTaskID", bad, err)
		}
	}
}

func TestOpenTask(t *testing.T) {
	w, td := newTask(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(w.Root(), vocab.TasksDir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Root(), vocab.TasksDir, "afile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want error
	}{
		{td.ID(), nil},
		{"missing", fs.ErrNotExist},
		{"../" + td.ID(), ErrBadTaskID},
		{"a/b", ErrBadTaskID},
		{"..", ErrBadTaskID},
		{".", ErrBadTaskID},
		{"", ErrBadTaskID},
		{"a..b", ErrBadTaskID},
		{"x\x00", ErrBadTaskID},
		{strings.Repeat("a", 200), ErrBadTaskID},
		{"linked", ErrSymlink},
	}
	for _, tc := range tests {
		got, err := w.OpenTask(tc.id)
		if tc.want == nil {
			if err != nil || got.ID() != tc.id || got.Dir() != td.Dir() {
				t.Errorf("OpenTask(%q) = %v, %v", tc.id, got, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("OpenTask(%q) err = %v, want %v", tc.id, err, tc.want)
		}
	}
	if _, err := w.OpenTask("afile"); err == nil {
		t.Error("OpenTask of a plain file succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("OpenTask wrote through a symlink: %v", entries)
	}
}

func TestPath(t *testing.T) {
	_, td := newTask(t)
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(td.Dir(), "escape"))
	mustSymlink(t, filepath.Join(td.Dir(), vocab.ReviewsDir), filepath.Join(td.Dir(), "inside"))
	mustSymlink(t, "/nonexistent/target", filepath.Join(td.Dir(), "dangling"))
	mustSymlink(t, "/etc/passwd", filepath.Join(td.Dir(), "plan.md"))
	tests := []struct {
		rel  string
		want string // "" = error
	}{
		{"state.json", "state.json"},
		{"outputs/st_1.md", "outputs/st_1.md"},
		{"a/./b", "a/b"},
		{"new/dir/file", "new/dir/file"},
		{"inside/x.md", "inside/x.md"},
		{".", "."},
		{"", ""},
		{"/etc/passwd", ""},
		{"..", ""},
		{"../other/state.json", ""},
		{"a/../../x", ""},
		{"escape/file", ""},
		{"escape", ""},
		{"dangling/x", ""},
		{"plan.md", ""},
	}
	for _, tc := range tests {
		got, err := td.Path(tc.rel)
		if tc.want == "" {
			if !errors.Is(err, ErrOutside) {
				t.Errorf("Path(%q) = %q, %v; want ErrOutside", tc.rel, got, err)
			}
			continue
		}
		if err != nil || got != filepath.Join(td.Dir(), tc.want) {
			t.Errorf("Path(%q) = %q, %v; want %q", tc.rel, got, err, tc.want)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustSave(t *testing.T, td *TaskDir, st vocab.State) {
	t.Helper()
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
}

func TestTasksAndUnfinished(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, minute int, phase vocab.Phase) *TaskDir {
		td, err := w.CreateTask(vocab.Task{ID: id, CreatedAt: base.Add(time.Duration(minute) * time.Minute), Description: id})
		if err != nil {
			t.Fatal(err)
		}
		if phase != "" {
			mustSave(t, td, vocab.State{Phase: phase})
		}
		return td
	}
	if _, ok, err := w.Unfinished(); ok || err != nil {
		t.Fatalf("empty workspace: Unfinished ok=%v err=%v", ok, err)
	}
	mk("c_done", 3, vocab.PhaseComplete)
	mk("a_old_running", 1, vocab.PhaseExecuting)
	mk("b_cancelled", 2, vocab.PhaseCancelled)
	id, ok, err := w.Unfinished()
	if err != nil || !ok || id != "a_old_running" {
		t.Fatalf("Unfinished = %q %v %v; want a_old_running", id, ok, err)
	}
	// An abandoned task (error or needs_human → idle) is over: nothing to resume.
	mk("e_abandoned", 5, vocab.PhaseIdle)
	if id, _, _ := w.Unfinished(); id != "a_old_running" {
		t.Fatalf("Unfinished = %q; want a_old_running (an abandoned task is over)", id)
	}
	mk("d_nostate", 4, "")
	if id, _, _ := w.Unfinished(); id != "d_nostate" {
		t.Fatalf("Unfinished = %q; want d_nostate (a task without state is unfinished)", id)
	}
	// A broken task dir is listed with a problem, not fatal, and skipped.
	if err := os.MkdirAll(filepath.Join(w.Root(), vocab.TasksDir, "z_broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Root(), vocab.TasksDir, "z_broken", vocab.TaskFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	infos, err := w.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	if got := strings.Join(ids, ","); got != "a_old_running,b_cancelled,c_done,d_nostate,e_abandoned,z_broken" {
		t.Fatalf("Tasks ids = %s", got)
	}
	if infos[0].State == nil || infos[0].State.Phase != vocab.PhaseExecuting || infos[0].Task.Description != "a_old_running" {
		t.Errorf("Tasks[0] = %+v", infos[0])
	}
	if infos[3].State != nil {
		t.Errorf("task without state has State %+v", infos[3].State)
	}
	if infos[5].Problem == "" {
		t.Error("broken task has no Problem")
	}
	if id, _, _ := w.Unfinished(); id != "d_nostate" {
		t.Errorf("Unfinished = %q with a broken task present", id)
	}
	// Round trip of the listing's task through JSON is what task.json holds.
	raw, _ := os.ReadFile(filepath.Join(infos[0].Dir, vocab.TaskFile))
	var task vocab.Task
	if err := json.Unmarshal(raw, &task); err != nil || task.ID != "a_old_running" {
		t.Errorf("task.json = %s", raw)
	}
}
