package e2e_test

import (
	"context"
	"fmt"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/vocab"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/sandbox"
)

// hostileAgent tries, through child shells, every write its role must not
// make, records what the kernel said in its own outbox (hostile.txt), then
// becomes the well-behaved chaos agent so the task can finish. A worker
// also builds and tests a Go module in its worktree (ordinary work must
// keep working) and removes it again.
const hostileAgent = `#!/bin/sh
me="$HIVEMIND_AGENT_ID"
out="$HIVEMIND_TASK_DIR/agents/$me/hostile.txt"
mkdir -p "$(dirname "$out")"
try() { if sh -c "$2" >/dev/null 2>&1; then echo "ALLOWED $1" >> "$out"; else echo "refused $1" >> "$out"; fi; }
try checkout "echo x > '$HM_MAIN/hostile-$me'"
try checkout-child "sh -c 'sh -c \"echo x > $HM_MAIN/deep-$me\"'"
try git-branch "git -C '$HM_MAIN' checkout -q -b 'x-$me'"
try main-git "echo x > '$HM_MAIN/.git/hostile-$me'"
try config "echo 'agent = \"sh\"' >> '$HM_MAIN/.hivemind/config.toml'"
try other-worktree "echo x > '$HM_MAIN/.hivemind/worktrees/other-$me'"
if [ "$HIVEMIND_ROLE" = worker ]; then
	m="$PWD/hm-build-$me"
	try own-worktree "echo x > '$PWD/own-$me' && rm '$PWD/own-$me'"
	try go-build "mkdir -p '$m' && cd '$m' && printf 'module m\n\ngo 1.21\n' > go.mod && printf 'package m\n\nfunc F() int { return 1 }\n' > m.go && printf 'package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { if F() != 1 { t.Fatal() } }\n' > m_test.go && go build ./... && go test ./..."
	rm -rf "$m"
	try git-status "git status --porcelain"
fi
echo end >> "$out"
exec "$HM_CHAOS_BIN"
`

// A hostile team, every agent a custom command: each agent's attempts on
// the user's checkout (directly, from a grandchild shell), on the main
// checkout's git (a new branch, a file in .git), on Hivemind's config and
// on the worktrees are refused by the kernel (EACCES in the agent); a
// worker's real go build and go test in its worktree work; the task still
// completes with every subtask's file.
func TestChaosHostileTeamWriteScopes(t *testing.T) {
	if !sandbox.Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	project, home := chaosProject(t, "")
	testkit.InitRepo(t, project, "README", "x\n")
	script := filepath.Join(t.TempDir(), "hostile.sh")
	if err := os.WriteFile(script, []byte(hostileAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HM_MAIN", project)
	t.Setenv("HM_CHAOS_BIN", self)
	// The worker builds with this machine's warm build cache (GOCACHE is
	// in every agent's scope).
	if c, err := exec.Command(goBin, "env", "GOCACHE").Output(); err == nil {
		t.Setenv("GOCACHE", strings.TrimSpace(string(c)))
	}
	t.Setenv("PATH", filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, buf := hivemind(t, ctx, home, "--headless", "--agent", "sh "+script, "--workers", "2", "--project", project, "chaos: write two files")
	cmd.Env = append(cmd.Env, chaosModeEnv+"=behave")
	code := exitCode(t, cmd)
	out := buf.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	dir := taskDir(t, project)
	noLeftovers(t, project)
	if !strings.Contains(out, "write scopes: on (Landlock ABI") {
		t.Errorf("the run did not say its write scopes are on:\n%s", out)
	}
	chaosComplete(t, code, dir, out)
	for _, id := range []vocab.AgentID{"lead", "reviewer", "worker_1"} {
		b, err := os.ReadFile(filepath.Join(dir, "agents", string(id), "hostile.txt"))
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		got := string(b)
		if strings.Contains(got, "ALLOWED") && !allowedOnly(got, "own-worktree", "go-build", "git-status") {
			t.Errorf("%s wrote outside its scope:\n%s", id, got)
		}
		for _, want := range []string{"refused checkout", "refused checkout-child", "refused git-branch", "refused main-git", "refused config", "refused other-worktree", "end"} {
			if !strings.Contains(got, want+"\n") {
				t.Errorf("%s: missing %q in:\n%s", id, want, got)
			}
		}
		if id == "worker_1" {
			for _, want := range []string{"ALLOWED own-worktree", "ALLOWED go-build", "ALLOWED git-status"} {
				if !strings.Contains(got, want+"\n") {
					t.Errorf("%s: ordinary work refused (%q):\n%s", id, want, got)
				}
			}
		}
	}
	entries, _ := os.ReadDir(project)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "hostile-") || strings.HasPrefix(e.Name(), "deep-") {
			t.Errorf("the user's checkout holds %s", e.Name())
		}
	}
	if out, _ := exec.Command("git", "-C", project, "branch", "--list", "x-*").Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("an agent made a branch in the main checkout: %s", out)
	}
	// The agents' private temp dirs go with the finished task.
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("hivemind-%d", os.Getuid()), filepath.Base(dir)+"-*")); len(left) > 0 {
		t.Errorf("agent temp dirs left: %q", left)
	}
	// The task branch has both subtasks' files.
	show, err := exec.Command("git", "-C", project, "ls-tree", "-r", "--name-only", "hivemind/"+filepath.Base(dir)).Output()
	if err != nil || !strings.Contains(string(show), "one.txt") || !strings.Contains(string(show), "two.txt") {
		t.Errorf("task branch files: %v\n%s", err, show)
	}
}

// allowedOnly reports whether every ALLOWED line of s names one of ok.
func allowedOnly(s string, ok ...string) bool {
	for _, l := range strings.Split(s, "\n") {
		name, found := strings.CutPrefix(l, "ALLOWED ")
		if found && !contains(ok, name) {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
