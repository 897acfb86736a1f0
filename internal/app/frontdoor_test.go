package app

import (
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

func TestLauncherScan(t *testing.T) {
	project := t.TempDir()
	// The sim agent: what is tested here must not depend on Claude Code being installed.
	l, err := newLauncher(Options{Project: project, Agent: "sim", AgentSet: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Scan(project)
	if err != nil || p.Git || len(p.Tasks) != 0 || p.Unfinished != nil || p.LockedBy != "" {
		t.Fatalf("empty project: %+v %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(project, vocab.DirName)); err == nil {
		t.Fatal("Scan created a workspace")
	}
	if _, err := l.Scan(filepath.Join(project, "missing")); err == nil {
		t.Fatal("no error for a missing folder")
	}

	// A git work tree (a repository in a parent counts), tasks, an
	// unfinished one. Git decides, as for the run: an empty .git (one
	// appeared in /tmp on a test machine) is not a repository.
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := filepath.Join(project, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	root := workspace.DefaultRoot(project)
	t0 := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	failed := testkit.NewTask(t, root, vocab.Task{CreatedAt: t0, Description: "a"},
		&vocab.State{Phase: vocab.PhaseError, StartedAt: t0})
	testkit.NewTask(t, root, vocab.Task{CreatedAt: t0.Add(time.Hour), Description: "b"},
		&vocab.State{Phase: vocab.PhaseComplete, StartedAt: t0.Add(time.Hour)})
	p, err = l.Scan(project)
	if err != nil || !p.Git || len(p.Tasks) != 2 || p.Tasks[0].Description != "b" {
		t.Fatalf("scan: %+v %v", p, err)
	}
	if p.Unfinished == nil || p.Unfinished.ID != failed || p.Unfinished.Phase != vocab.PhaseError {
		t.Fatalf("unfinished: %+v", p.Unfinished)
	}
	if p.Tasks[1].State == nil || p.Tasks[1].State.TaskDir == "" {
		t.Errorf("past task without its state: %+v", p.Tasks[1])
	}
	if ps, _ := l.Scan(sub); !ps.Git {
		t.Error("a folder inside a git work tree is not a git repository")
	}

	// Another Hivemind holds the workspace.
	lock, _, err := workspace.AcquireWorkspaceLock(root)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = l.Scan(project)
	_ = lock.Release()
	if !strings.Contains(p.LockedBy, "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("LockedBy %q while the lock is held", p.LockedBy)
	}
	// And Start refuses to write a task under it.
	lock, _, _ = workspace.AcquireWorkspaceLock(root)
	_, err = l.Start(project, vocab.Task{Description: "x"})
	_ = lock.Release()
	if !errors.Is(err, workspace.ErrLocked) {
		t.Errorf("Start under another's lock: %v", err)
	}
	if p, _ = l.Scan(project); len(p.Tasks) != 2 {
		t.Errorf("Start under another's lock left a task: %+v", p.Tasks)
	}
	// A task without description is refused, never taken for --resume
	// (the failed task above is unfinished).
	if _, err = l.Start(project, vocab.Task{Description: " \n"}); err == nil {
		t.Error("Start without a description: no error")
	}
}

// An abandoned task (back to idle) is listed but not offered for resume.
func TestLauncherScanAbandoned(t *testing.T) {
	project := t.TempDir()
	l, _ := newLauncher(Options{Project: project})
	testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "a"},
		&vocab.State{Phase: vocab.PhaseIdle, StartedAt: time.Now()})
	p, err := l.Scan(project)
	if err != nil || len(p.Tasks) != 1 || p.Unfinished != nil {
		t.Fatalf("%+v %v", p, err)
	}
}

// --workspace applies to the project it was given with, not to another
// chosen in the folder picker.
func TestLauncherOptionsFor(t *testing.T) {
	l := &launcher{o: Options{Project: "/p", Workspace: "/w", Agent: "sim", AgentSet: true}, project: "/p"}
	if o := l.optionsFor("/p"); o.Workspace != "/w" || o.Agent != "sim" {
		t.Errorf("same project: %+v", o)
	}
	if o := l.optionsFor("/q"); o.Workspace != "" || o.Project != "/q" || o.Agent != "sim" {
		t.Errorf("other project: %+v", o)
	}
}

// Usage says why the sim agents report no tokens.
func TestLauncherUsageSim(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	project := t.TempDir()
	var st vocab.State
	st.Agents = map[vocab.AgentID]vocab.AgentState{"lead": {}, "worker_1": {}}
	testkit.NewTask(t, workspace.DefaultRoot(project), vocab.Task{Description: "a", Agent: "sim"}, &st)
	l := &launcher{}
	got := l.Usage(st)
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	for _, u := range got {
		if u.InputTokens != 0 || !strings.Contains(u.Note, "sim agent") {
			t.Errorf("%+v", u)
		}
	}
}

// The agents picked on the start screen run as --agent would run them: the
// options carry the --agent value (the agent alone when every role runs
// it), the config says the flag set them, task.json records them, and
// --resume runs them again.
func TestLauncherStartPick(t *testing.T) {
	for _, tc := range []struct {
		pick map[vocab.Role]string
		flag string
	}{
		{map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"}, "lead=claude,reviewer=codex,worker=gemini"},
		{map[vocab.Role]string{"lead": "sim", "reviewer": "sim", "worker": "sim"}, "sim"},
		{map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "my-agent --fast"}, "lead=claude,reviewer=claude,worker=my-agent --fast"},
	} {
		project := t.TempDir()
		// No preflight: what runs is checked here, not whether it is installed.
		l := &launcher{o: Options{NoPreflight: true}, project: project}
		o, task, err := l.startOptions(project, vocab.Task{Description: "x", Agents: tc.pick, Workers: 2})
		if err != nil || o.Agent != tc.flag || !o.AgentSet || task.Agents != nil {
			t.Fatalf("%v: --agent %q (set %v), task agents %v, %v; want --agent %q", tc.pick, o.Agent, o.AgentSet, task.Agents, err, tc.flag)
		}
		cfg, src, err := o.LoadConfig()
		if err != nil || !maps.Equal(cfg.Team(), tc.pick) {
			t.Fatalf("%v: config team %v %v", tc.pick, cfg.Team(), err)
		}
		key := "roles.worker.agent"
		if !strings.Contains(tc.flag, "=") {
			key = "agent" // one agent for every role
		}
		if s := src.Of(key).String(); s != "flag --agent" {
			t.Errorf("%v: %s comes from %q, want flag --agent", tc.pick, key, s)
		}
		a, err := New(o, task, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := a.td.Task()
		a.Close()
		if err != nil || disk.SubmittedBy != "tui" || !maps.Equal(config.Default().WithAgents(config.AgentFlag{All: disk.Agent}).WithAgents(config.AgentFlag{PerRole: disk.Agents}).Team(), tc.pick) {
			t.Errorf("%v: task.json %+v %v", tc.pick, disk, err)
		}
		ro := l.optionsFor(project)
		ro.Resume = true
		b, err := New(ro, vocab.Task{}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if !maps.Equal(b.cfg.Team(), tc.pick) {
			t.Errorf("%v: resumed with %v", tc.pick, b.cfg.Team())
		}
	}
}

// A checkout with uncommitted edits is said by Scan and asked about by
// Start before anything is created: include them (the task branch holds
// them) or start from HEAD; a merge in progress offers only HEAD.
func TestLauncherAsksAboutDirtyCheckout(t *testing.T) {
	project := t.TempDir()
	testkit.InitRepo(t, project, "a.txt", "a\n")
	l, err := newLauncher(Options{Project: project, Agent: "sim", AgentSet: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := l.Scan(project); err != nil || p.Checkout != "" {
		t.Fatalf("clean checkout: Checkout %q, %v", p.Checkout, err)
	}
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Scan(project); !strings.Contains(p.Checkout, "1 uncommitted change(s) (a.txt)") {
		t.Fatalf("Scan of a dirty checkout: Checkout %q", p.Checkout)
	}
	_, err = l.Start(project, vocab.Task{Description: "use the edits"})
	var q *tui.StartQuestion
	if !errors.As(err, &q) || len(q.Answers) != 2 || q.Answers[0].Key != "i" || q.Answers[1].Key != "h" {
		t.Fatalf("Start on a dirty checkout: %v, want the include-or-HEAD question", err)
	}
	if p, _ := l.Scan(project); len(p.Tasks) != 0 {
		t.Fatalf("asking created a task: %+v", p.Tasks)
	}
	s, err := q.Answers[0].Start()
	if err != nil {
		t.Fatalf("include: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := exec.Command("git", "-C", project, "show", s.Branch+":a.txt").Output(); string(got) != "edited\n" {
		t.Errorf("include: task branch %s a.txt = %q, want the edit", s.Branch, got)
	}

	head, _ := exec.Command("git", "-C", project, "rev-parse", "HEAD").Output()
	if err := os.WriteFile(filepath.Join(project, ".git", "MERGE_HEAD"), head, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = l.Start(project, vocab.Task{Description: "during a merge"})
	if !errors.As(err, &q) || len(q.Answers) != 1 || q.Answers[0].Key != "h" || !strings.Contains(q.Error(), "a merge is in progress") {
		t.Fatalf("Start during a merge: %v, want a question offering only HEAD", err)
	}
}
