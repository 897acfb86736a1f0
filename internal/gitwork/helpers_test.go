package gitwork

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain makes every git call hermetic: a fixed identity, and no user or
// system configuration.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Test User", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test User", "GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
	} {
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

// sh runs git for test setup and inspection and returns trimmed stdout.
func sh(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// lines is a ten-line file whose line n (1-based) can be replaced.
func lines(replace map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		if s, ok := replace[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// newProject makes a repository on main with a.txt and b.txt committed.
func newProject(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), lines(nil))
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	sh(t, dir, "add", "-A")
	sh(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// startTask opens a Repo for task t1, starts it and adds the workers.
func startTask(t testing.TB, project string, opts Options, workers ...string) (*Repo, map[string]string) {
	t.Helper()
	r, err := Open(project, "", "t1", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StartTask(""); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, w := range workers {
		d, err := r.AddWorker(w)
		if err != nil {
			t.Fatalf("AddWorker(%s): %v", w, err)
		}
		dirs[w] = d
	}
	return r, dirs
}

func commit(t testing.TB, r *Repo, agent, subtask, summary string) string {
	t.Helper()
	sha, err := r.CommitSubtask(agent, subtask, summary)
	if err != nil {
		t.Fatalf("CommitSubtask(%s, %s): %v", agent, subtask, err)
	}
	return sha
}

// snapshot is everything about the user's checkout that must not change:
// every file's bytes and mode outside .git and the workspace, the index
// file's bytes, HEAD, the branch and the status.
func snapshot(t testing.TB, project string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(project, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(project, p)
		if d.IsDir() && (rel == ".git" || rel == ".hivemind") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		snap["file:"+rel] = fmt.Sprintf("%v %q", info.Mode(), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	snap["index"] = read(t, filepath.Join(project, ".git", "index"))
	snap["HEAD-file"] = read(t, filepath.Join(project, ".git", "HEAD"))
	snap["HEAD"] = sh(t, project, "rev-parse", "HEAD")
	snap["status"] = sh(t, project, "--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all")
	snap["stash"] = sh(t, project, "stash", "list")
	return snap
}

func diffSnapshots(t testing.TB, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("user checkout changed: %s\nbefore: %.300s\nafter:  %.300s", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("user checkout gained %s", k)
		}
	}
}
