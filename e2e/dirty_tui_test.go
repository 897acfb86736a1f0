package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// The user's checkout in the UI, with the built binary: a checkout with
// uncommitted edits is said on the start screen before anything starts;
// ctrl+s asks include-or-HEAD (nothing is created before the answer); i
// starts the task with the edits as a commit on the task branch and the
// banner says so while the plan is made; the user's checkout is left as
// it was.
func TestTUIDirtyCheckout(t *testing.T) {
	parallel(t)
	project := wtRepo(t, true)
	r := startTUI(t, tuiOptions{simArgs: "--pace 100ms", project: project, cols: 100, rows: 30,
		args: []string{"--agent", "sim", "--workers", "1"}})

	s := r.waitText(tuiWait, "⚠ your checkout:", "2 uncommitted change(s)")
	if !s.contains("keep.txt") || !s.contains("scratch.txt") {
		t.Errorf("the start screen does not name the edited files:\n%s", s)
	}
	r.typeText("build a tiny calculator")
	r.keys("C-s")
	s = r.waitText(tuiWait, "include them as a commit on the task branch", "start from HEAD without them")
	if !strings.Contains(s.footer(), "i or h: answer above") {
		t.Errorf("footer %q does not say how to answer", s.footer())
	}
	noWorkspaceTasks(t, project)

	r.keys("i")
	r.waitScreen(tuiWait, "the banner to say the edits are included", func(s tuiScreen) bool {
		all := strings.Join(strings.Fields(s.String()), " ")
		return strings.Contains(all, "⚠ your checkout: 2 uncommitted change(s)") &&
			strings.Contains(all, "included: the task branch starts from commit")
	})
	dir := r.taskDir()
	branch := "hivemind/" + filepath.Base(dir)
	if got := wtGit(t, project, "show", branch+":keep.txt"); !strings.Contains(got, "my uncommitted edit") {
		t.Errorf("the task branch's keep.txt is %q: the edit was not included", got)
	}
	if got := wtGit(t, project, "status", "--porcelain", "--", "keep.txt", "scratch.txt"); !strings.Contains(got, "M keep.txt") ||
		!strings.Contains(got, "?? scratch.txt") {
		t.Errorf("the user's checkout changed: status %q", got)
	}
	if code := r.quit(); code != 0 && code != 130 {
		t.Errorf("exit status %d", code)
	}
	noLeftovers(t, project)
}

// noWorkspaceTasks asserts that no task was created in project.
func noWorkspaceTasks(t *testing.T, project string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*")); len(m) > 0 {
		t.Errorf("a task was created before the question was answered: %v", m)
	}
}
