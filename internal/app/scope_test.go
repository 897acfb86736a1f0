package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/gitwork"
	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// The test binary doubles as the confining helper: `<test> sandbox-exec …`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// With every trigger in the agents' outboxes, an agent of any role that
// tries to write the engine's files (state.json, events.jsonl, backups/,
// procs/, blobs/, assignments/) or another agent's outbox, from a child
// shell, is refused by the kernel, and so is a shared-knowledge note in the
// workspace's context/ (the old shared inbox) or in another agent's
// outbox; its own outbox (notes included) and temp dir work; the
// Lead and the Reviewer cannot write the project; a worker writes its
// working directory.
func TestWriteScopeKeepsEngineFiles(t *testing.T) {
	if !sandbox.Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	project, td := newTask(t)
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", project, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	root := workspace.DefaultRoot(project)
	repo, err := gitwork.Open(project, root, td.ID(), gitwork.Options{})
	if err == nil {
		err = repo.StartTask("")
	}
	if err != nil {
		t.Fatal(err)
	}
	git := &gitWire{repo: repo, td: td, project: project, root: root, kick: make(chan struct{}, 1)}
	for _, d := range []string{"backups", vocab.ProcsDir, "blobs", "assignments"} {
		if err := os.MkdirAll(filepath.Join(td.Dir(), d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Roles = map[vocab.Role]config.RoleConfig{vocab.RoleReviewer: {Writable: []string{"docs-out"}}}
	f := &agentFactory{cfg: cfg, project: project, td: td, self: "/bin/true", git: git}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []vocab.Role{vocab.RoleLead, vocab.RoleReviewer, vocab.RoleWorker} {
		id := vocab.AgentID(role)
		if role == vocab.RoleWorker {
			id = "worker_1"
		}
		spec, err := f.build(id, role, false)
		if err != nil {
			t.Fatal(err)
		}
		tmp := agentTempDir(td, id)
		for _, d := range []string{td.OutboxDir(id), tmp, filepath.Join(project, "docs-out")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.RemoveAll(tmp) })
		scope := f.writeScope(spec, id, role, tmp)
		if slices.Contains(scope, td.Dir()) || slices.Contains(scope, filepath.Dir(td.Dir())) {
			t.Fatalf("%s: scope holds the task dir: %q", id, scope)
		}
		other := td.OutboxDir("worker_2")
		_ = os.MkdirAll(filepath.Join(other, "knowledge"), 0o755)
		inbox := filepath.Join(root, vocab.KnowledgeDir, "inbox")
		_ = os.MkdirAll(inbox, 0o755)
		script := `
try() { if sh -c "$2" 2>/dev/null; then echo "ALLOWED $1"; else echo "refused $1"; fi; }
try state "echo '{}' > $T/state.json"
try events "echo x >> $T/events.jsonl"
try backups "echo x > $T/backups/x"
try procs "echo '{}' > $T/procs/worker_1.json"
try blobs "rm -rf $T/blobs"
try assignments "echo x > $T/assignments/lead.json"
try task "echo x > $T/task.json"
try trigger-root "echo x > $T/checkpoint-approved.md"
try other-outbox "echo x > $O/st_2.done"
try shared-inbox "echo x > $I/$ID-1.md"
try context "echo '[]' > $I/../decisions.json"
try other-notes "echo x > $O/knowledge/1.md"
try own-notes "mkdir -p $OWN/knowledge && echo x > $OWN/knowledge/1.md"
try own-outbox "echo x > $OWN/ok.md"
try own-tmp "echo x > $TMP/ok"
try project "echo x > $P/file.go"
try workdir "echo x > $W/file.go"
try main-branch "git -C $P branch x-$RANDOM"
[ -n "$WT" ] && try wt-add "cd $W && echo y > added && git add added"
[ -n "$WT" ] && try wt-commit "cd $W && git -c user.email=a@b -c user.name=a commit -qm x"
true
try extra "echo x > $P/docs-out/x"
`
		cmd := exec.Command(exe, sandbox.Wrap(exe, scope, []string{"sh", "-c", script})[1:]...)
		cmd.Env = append(os.Environ(), "T="+td.Dir(), "O="+other, "OWN="+td.OutboxDir(id), "TMP="+tmp, "P="+project, "W="+spec.Dir,
			"I="+inbox, "ID="+string(id))
		if role == vocab.RoleWorker {
			cmd.Env = append(cmd.Env, "WT=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", id, err, out)
		}
		got := string(out)
		for _, w := range []string{"refused state", "refused events", "refused backups", "refused procs", "refused blobs",
			"refused assignments", "refused task", "refused trigger-root", "refused other-outbox", "refused shared-inbox", "refused context", "refused other-notes",
			"ALLOWED own-notes", "ALLOWED own-outbox", "ALLOWED own-tmp"} {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("%s: want %q:\n%s", id, w, got)
			}
		}
		want := []string{"refused project", "refused main-branch", "refused extra"}
		switch role {
		case vocab.RoleReviewer:
			want[2] = "ALLOWED extra" // its configured extra
		case vocab.RoleWorker:
			// Its worktree, and git add there; a commit would move a
			// branch: the engine commits for it.
			want = append(want, "ALLOWED workdir", "ALLOWED wt-add", "refused wt-commit")
		}
		for _, w := range want {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("%s: want %q:\n%s", id, w, got)
			}
		}
	}
}

// A hook binary that cannot confine (an older one takes sandbox-exec for a
// hook name and exits 0 running nothing) is not used: scopes are off and
// said so, rather than agents that never start.
func TestHelperMustConfine(t *testing.T) {
	if !sandbox.Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !helperConfines(exe) {
		t.Fatal("the test binary's sandbox-exec was not recognised")
	}
	old := filepath.Join(t.TempDir(), "hivemind-hook")
	if err := os.WriteFile(old, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if helperConfines(old) {
		t.Fatal("a hook binary without sandbox-exec was taken for a confining one")
	}
	if s := WriteScopeStatus(filepath.Join(filepath.Dir(old), "hivemind")); !strings.HasPrefix(s, "write scopes: off (") {
		t.Fatalf("status with an old hook binary: %q", s)
	}
}
