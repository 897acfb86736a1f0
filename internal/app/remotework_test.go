package app

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// A remote worker's paths: its worktree and the task dir map to the
// host's, anything else is kept.
func TestRemotePaths(t *testing.T) {
	project := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", project}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	root := workspace.DefaultRoot(project)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "x", Project: project, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitwork.Open(project, root, td.ID(), gitwork.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rh := &remoteHost{root: "/home/ci/hm/p-1", task: td.ID(), taskDir: "/home/ci/hm/p-1/tasks/" + td.ID()}
	rw := &remoteWork{td: td, repo: repo, project: project, workers: map[string]*remoteHost{"worker_1": rh}}
	wt := repo.WorktreeDir("worker_1")
	for in, want := range map[string]string{
		wt:                               rh.worktree("worker_1"),
		filepath.Join(wt, "src", "a.go"): rh.worktree("worker_1") + "/src/a.go",
		td.Dir():                         rh.taskDir,
		filepath.Join(td.Dir(), "outputs", "st_1.md"): rh.taskDir + "/outputs/st_1.md",
		"/etc/passwd": "/etc/passwd",
	} {
		if got := rw.remotePath("worker_1", in); got != want {
			t.Errorf("remotePath(%s) = %s, want %s", in, got, want)
		}
	}
	line := "[HIVEMIND] Do subtask st_1 — read " + filepath.Join(td.Dir(), "assignments", "worker_1.json")
	if got := rw.translate("worker_1", line); got != "[HIVEMIND] Do subtask st_1 — read "+rh.taskDir+"/assignments/worker_1.json" {
		t.Errorf("translate: %s", got)
	}
	if !rw.has("worker_1") || rw.has("worker_2") || (*remoteWork)(nil).has("worker_1") {
		t.Error("has")
	}
	a, b := projectSlug("/src/my app"), projectSlug("/other/my app")
	if !strings.HasPrefix(a, "my_app-") || a == b {
		t.Errorf("slugs %s %s: want the base name and distinct hashes", a, b)
	}
}

// A resumed task keeps the placement its workers ran with, unless
// --workers says otherwise; a host gone from the config is an error.
func TestRestorePlacement(t *testing.T) {
	cfg := config.Default()
	cfg.Hosts["box"] = config.Host{SSH: "box", MaxAgents: 4}
	history := []vocab.EventRecord{{Type: vocab.RecordRemoteWorkers, Details: map[string]any{"hosts": []any{"box", "local"}}}}
	w := &wiring{cfg: cfg, resumed: true, history: history}
	if err := w.restorePlacement(); err != nil {
		t.Fatal(err)
	}
	if got := w.cfg.WorkerHosts(); !reflect.DeepEqual(got, []string{"box", "local"}) {
		t.Errorf("restored %v", got)
	}
	w = &wiring{cfg: cfg, resumed: true, history: history, o: Options{WorkersSet: true}}
	if err := w.restorePlacement(); err != nil || w.cfg.Placement != nil {
		t.Errorf("--workers given: %v %v", err, w.cfg.Placement)
	}
	delete(cfg.Hosts, "box")
	w = &wiring{cfg: cfg, resumed: true, history: history}
	if err := w.restorePlacement(); err == nil || !strings.Contains(err.Error(), `worker_1 of this task ran on host "box", which the config no longer defines`) {
		t.Errorf("host gone: %v", err)
	}
}
