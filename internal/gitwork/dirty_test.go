package gitwork

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Uncommitted edits are reported (never the workspace) and can be taken
// into the task as a commit on its branch without touching the user's
// index, working tree or branch; a git operation in progress is named.
func TestDirtyCheckoutIncluded(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	write(t, filepath.Join(p, "a.txt"), "edited\n")
	write(t, filepath.Join(p, "c.txt"), "untracked\n")
	sh(t, p, "rm", "-q", "b.txt")
	write(t, filepath.Join(p, ".hivemind", "tasks", "x", "state.json"), "{}")
	r, err := Open(p, "", "t1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.CheckDirty()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.Files)
	if !slices.Equal(d.Files, []string{"a.txt", "b.txt", "c.txt"}) || d.Operation != "" {
		t.Fatalf("CheckDirty = %+v", d)
	}
	if s := d.String(); !strings.Contains(s, "3 uncommitted change(s)") {
		t.Errorf("String %q", s)
	}
	before := snapshot(t, p)
	sha, err := r.SnapshotWorkTree("uncommitted edits")
	if err != nil {
		t.Fatal(err)
	}
	diffSnapshots(t, before, snapshot(t, p))
	if err := r.StartTask(sha); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, p, "show", "hivemind/t1:a.txt"); got != "edited" {
		t.Errorf("task branch a.txt = %q", got)
	}
	if got := sh(t, p, "show", "hivemind/t1:c.txt"); got != "untracked" {
		t.Errorf("task branch c.txt = %q", got)
	}
	if ls := sh(t, p, "ls-tree", "-r", "--name-only", "hivemind/t1"); strings.Contains(ls, "b.txt") || strings.Contains(ls, ".hivemind") {
		t.Errorf("task branch files:\n%s", ls)
	}
	write(t, filepath.Join(p, ".git", "MERGE_HEAD"), sh(t, p, "rev-parse", "HEAD")+"\n")
	if d, err := r.CheckDirty(); err != nil || d.Operation != "merge" {
		t.Errorf("with MERGE_HEAD: %+v, %v", d, err)
	}
	_ = os.Remove(filepath.Join(p, ".git", "MERGE_HEAD"))
}
