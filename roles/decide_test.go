package roles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// fixture is a project with its workspace inside and a folder outside, plus
// symlinks that try to escape.
type fixture struct {
	root, project, ws, task, outside, linkProject string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{root: root, project: filepath.Join(root, "proj"), outside: filepath.Join(root, "outside")}
	f.ws = filepath.Join(f.project, ".hivemind")
	f.task = filepath.Join(f.ws, "tasks", "t1")
	for _, d := range []string{f.outside, filepath.Join(f.project, "src"), filepath.Join(f.project, ".git"),
		filepath.Join(f.task, "agents/worker_1/outputs"), filepath.Join(f.task, "agents/lead/friction"), filepath.Join(f.task, "reviews")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.project, "src", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.linkProject = filepath.Join(root, "linkproj")
	links := map[string]string{
		filepath.Join(f.project, "escape"):                         f.outside,                        // dir link out of the project
		filepath.Join(f.task, "evil.md"):                           "../../../src/main.go",           // task file aliasing code
		filepath.Join(f.project, "src", "dangle"):                  filepath.Join(f.outside, "n.go"), // dangling, target outside
		filepath.Join(f.project, "alias"):                          "src",                            // link within the project
		filepath.Join(f.project, "sneaky"):                         f.task,                           // project path into the task dir
		filepath.Join(f.project, "src", "loop"):                    "loop",                           // self loop
		filepath.Join(f.project, "src", "up"):                      "..",                             // link then ..
		f.linkProject:                                              f.project,                        // the project reached via a link
		filepath.Join(f.task, "agents/lead/friction", "x.md"):      filepath.Join(f.outside, "x.md"),
		filepath.Join(f.task, "agents/worker_1/outputs", "ok.md"):  "st_1.md",
		filepath.Join(f.task, "agents/worker_1/outputs", "bad.md"): "../../../state.json",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestDecideWritePaths(t *testing.T) {
	f := newFixture(t)
	P, T := f.project, f.task
	tests := []struct {
		name       string
		role       vocab.Role
		tool, path string
		allow      bool
		reason     string // substring of the denial reason
	}{
		// Lead: plan, friction resolution, friction, outputs; no code.
		{"lead plan", "lead", "Write", T + "/agents/lead/plan.md", true, ""},
		{"lead friction resolution", "lead", "Write", T + "/agents/lead/friction-resolution.md", true, ""},
		{"lead friction", "lead", "Write", T + "/agents/lead/friction/slow-tests.md", true, ""},
		{"lead friction nested", "lead", "Write", T + "/agents/lead/friction/a/b.md", false, "outside the role's write paths"},
		{"lead fix output", "lead", "Write", T + "/agents/lead/outputs/fix_1.md", true, ""},
		{"lead code", "lead", "Write", P + "/src/main.go", false, "The lead role may write only: " + T + "/agents/lead/plan.md"},
		{"lead reviewer file", "lead", "Write", T + "/agents/lead/plan-approved.md", false, "outside"},
		{"lead state.json", "lead", "Write", T + "/state.json", false, "only Hivemind writes state.json"},
		{"lead edit tool", "lead", "Edit", T + "/agents/lead/plan.md", false, "may not use the Edit tool"},
		{"lead symlink to code", "lead", "Write", T + "/evil.md", false, "resolves to " + P + "/src/main.go"},
		{"lead via linked project", "lead", "Write", f.linkProject + "/.hivemind/tasks/t1/agents/lead/plan.md", true, ""},
		{"lead friction link outside", "lead", "Write", T + "/agents/lead/friction/x.md", false, "resolves to " + f.outside},

		// Reviewer: only its trigger files and friction.
		{"reviewer plan approved", "reviewer", "Write", T + "/agents/reviewer/plan-approved.md", true, ""},
		{"reviewer plan feedback", "reviewer", "Write", T + "/agents/reviewer/plan-feedback.md", true, ""},
		{"reviewer checkpoint approved", "reviewer", "Write", T + "/agents/reviewer/checkpoint-approved.md", true, ""},
		{"reviewer checkpoint issues", "reviewer", "Write", T + "/agents/reviewer/checkpoint-issues.md", true, ""},
		{"reviewer friction", "reviewer", "Write", T + "/agents/reviewer/friction/loop.md", true, ""},
		{"reviewer source file", "reviewer", "Write", P + "/src/main.go", false, "the reviewer role may not write"},
		{"reviewer relative source", "reviewer", "Write", "src/new.go", false, "may not write src/new.go"},
		{"reviewer plan", "reviewer", "Write", T + "/agents/reviewer/plan.md", false, "outside"},
		{"reviewer archive", "reviewer", "Write", T + "/reviews/plan_v1-feedback.md", false, "protected pattern {task}/reviews/**"},
		{"reviewer edit", "reviewer", "Edit", T + "/agents/reviewer/plan-feedback.md", false, "may not use the Edit tool"},
		{"reviewer multiedit", "reviewer", "MultiEdit", P + "/src/main.go", false, "may not use the MultiEdit tool"},
		{"reviewer notebook", "reviewer", "NotebookEdit", P + "/a.ipynb", false, "NotebookEdit"},
		{"reviewer dotdot into code", "reviewer", "Write", T + "/../../../src/main.go", false, "may not write"},
		{"reviewer dotdot staying inside", "reviewer", "Write", T + "/agents/reviewer/friction/../plan-feedback.md", true, ""},

		// Worker: project files, outputs, checkpoint, friction; not the workspace.
		{"worker code", "worker", "Write", P + "/src/new.go", true, ""},
		{"worker edit code", "worker", "Edit", P + "/src/main.go", true, ""},
		{"worker multiedit", "worker", "MultiEdit", P + "/src/main.go", true, ""},
		{"worker notebook", "worker", "NotebookEdit", P + "/nb/a.ipynb", true, ""},
		{"worker relative", "worker", "Write", "src/rel.go", true, ""},
		{"worker new dir", "worker", "Write", P + "/pkg/deep/x.go", true, ""},
		{"worker output", "worker", "Write", T + "/agents/worker_1/outputs/st_1.md", true, ""},
		{"worker done marker", "worker", "Write", T + "/agents/worker_1/outputs/st_1.done", true, ""},
		{"worker checkpoint", "worker", "Write", T + "/agents/worker_1/checkpoint.md", true, ""},
		{"worker plan", "worker", "Write", T + "/agents/worker_1/plan.md", false, "protected pattern {workspace}/**"},
		{"worker state.json", "worker", "Edit", T + "/state.json", false, "only Hivemind writes state.json"},
		{"worker assignment", "worker", "Write", T + "/assignments/worker_1.json", false, "{task}/assignments/**"},
		{"worker config", "worker", "Write", f.ws + "/config.toml", false, "{workspace}/config.toml"},
		{"worker git internals", "worker", "Write", P + "/.git/config", false, "{project}/.git/**"},
		{"worker absolute outside", "worker", "Write", "/etc/passwd", false, "outside the role's write paths"},
		{"worker outside sibling", "worker", "Write", f.outside + "/x.go", false, "outside"},
		{"worker relative dotdot escape", "worker", "Write", "../outside/x.go", false, "resolves to " + f.outside + "/x.go"},
		{"worker dotdot escape", "worker", "Write", P + "/src/../../outside/x.go", false, "outside"},
		{"worker dotdot inside", "worker", "Write", P + "/src/../README.md", true, ""},
		{"worker dotdot into state", "worker", "Write", T + "/agents/worker_1/outputs/../state.json", false, "state.json"},
		{"lead into blobs", "lead", "Write", T + "/blobs/" + strings.Repeat("a", 64), false, "{task}/blobs/**"},
		{"worker symlink dir escape", "worker", "Write", P + "/escape/x.go", false, "resolves to " + f.outside + "/x.go"},
		{"worker dangling symlink escape", "worker", "Write", P + "/src/dangle", false, "resolves to " + f.outside + "/n.go"},
		{"worker symlink within project", "worker", "Write", P + "/alias/x.go", true, ""},
		{"worker symlink into task dir", "worker", "Write", P + "/sneaky/state.json", false, "state.json"},
		{"worker symlink then dotdot", "worker", "Write", P + "/src/up/src/x.go", true, ""},
		{"worker link to own output", "worker", "Write", T + "/agents/worker_1/outputs/ok.md", true, ""},
		{"worker output link to state", "worker", "Write", T + "/agents/worker_1/outputs/bad.md", false, "state.json"},
		{"worker symlink loop", "worker", "Write", P + "/src/loop", false, "too many levels of symbolic links"},
		{"worker no path", "worker", "Write", "", false, "without file_path"},
		// Authorship by path: nobody writes into another agent's outbox,
		// nor the old task-root trigger names.
		{"worker into another's outbox", "worker", "Write", T + "/agents/worker_2/outputs/st_2.done", false, "protected pattern {workspace}/**"},
		{"lead into the reviewer's outbox", "lead", "Write", T + "/agents/reviewer/plan-approved.md", false, "outside"},
		{"reviewer at the task root", "reviewer", "Write", T + "/plan-approved.md", false, "outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := "file_path"
			if tc.tool == "NotebookEdit" {
				key = "notebook_path"
			}
			in := map[string]any{key: tc.path, "content": "x"}
			pol := DefaultPolicy(tc.role)
			pol.Agent = map[vocab.Role]vocab.AgentID{"lead": "lead", "reviewer": "reviewer", "worker": "worker_1"}[tc.role]
			allow, reason := Decide(pol, T, P, tc.tool, in)
			if allow != tc.allow {
				t.Fatalf("allow = %v, want %v (reason %q)", allow, tc.allow, reason)
			}
			if allow && reason != "" {
				t.Errorf("allowed with reason %q", reason)
			}
			if !allow && !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q\nlacks %q", reason, tc.reason)
			}
			if !allow && !strings.HasPrefix(reason, "Hivemind: ") {
				t.Errorf("reason does not start with Hivemind: %q", reason)
			}
		})
	}
}

func TestDecideTools(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		role   vocab.Role
		tool   string
		input  map[string]any
		allow  bool
		reason string
	}{
		{"reviewer", "Read", map[string]any{"file_path": "/etc/passwd"}, true, ""},
		{"reviewer", "Grep", map[string]any{"pattern": "x"}, true, ""},
		{"reviewer", "WebFetch", map[string]any{"url": "http://x"}, true, ""},
		{"reviewer", "Task", map[string]any{"prompt": "fix it"}, false, "may not start sub-agents"},
		{"reviewer", "Agent", map[string]any{"prompt": "fix it"}, false, "may not start sub-agents"},
		{"worker", "Task", map[string]any{"prompt": "x"}, true, ""},
		{"reviewer", "Bash", map[string]any{"command": "ls"}, false, "may not run shell commands (Bash)"},
		{"lead", "Bash", map[string]any{"command": "git log --oneline | head -5"}, true, ""},
		{"lead", "Bash", map[string]any{"command": "echo '# plan' > plan.md"}, false, "the lead role may run only read-only shell commands; the redirection \">\" writes the file \"plan.md\""},
		{"worker", "Bash", map[string]any{"command": "go test ./... && git commit -am wip"}, true, ""},
		{"worker", "Bash", map[string]any{"command": "echo '{}' > " + f.task + "/state.json"}, false, "Only Hivemind writes state.json"},
		{"worker", "Bash", map[string]any{"command": "rm -f .hivemind/tasks/t1/state.json"}, false, "would modify"},
		{"worker", "Bash", map[string]any{"command": "cat .hivemind/tasks/t1/state.json"}, true, ""},
		{"worker", "mcp__x__y", map[string]any{}, true, ""},
	}
	for _, tc := range tests {
		allow, reason := Decide(DefaultPolicy(tc.role), f.task, f.project, tc.tool, tc.input)
		if allow != tc.allow || (!allow && !strings.Contains(reason, tc.reason)) {
			t.Errorf("%s %s %v: allow=%v reason=%q; want allow=%v reason ~ %q", tc.role, tc.tool, tc.input, allow, reason, tc.allow, tc.reason)
		}
	}
}

func TestBashReadOnly(t *testing.T) {
	tests := []struct {
		cmd string
		why string // "" = read-only; else a substring of the violation
	}{
		{"ls -la", ""},
		{"cat go.mod && head -n 20 main.go", ""},
		{"git log --oneline | head -5", ""},
		{"git -C sub --no-pager diff HEAD~1 -- a.go", ""},
		{"git status; git branch; git branch -a; git tag --list", ""},
		{"git config --get user.name", ""},
		{"grep -rn '>' src/ 2>/dev/null", ""},
		{"grep -n \"a > b\" file", ""},
		{"ls 2>&1 | sort | uniq -c", ""},
		{"ls >/dev/null 2>&1", ""},
		{"find . -name '*.go' -not -path './vendor/*'", ""},
		{"cd src && ls", ""},
		{"LC_ALL=C ls", ""},
		{"FOO=1 ls", `setting the variable "FOO" is not allowed`},
		{"echo 'a; rm x'", ""},
		{"sed -n '1,40p' main.go", ""},
		{"go list ./... && go doc fmt.Println && go env GOPATH", ""},
		{"if test -f go.mod; then cat go.mod; fi", ""},
		{"for f in a b; do wc -l $f; done", ""},
		{"cat <<'EOF'\nrm -rf /\nEOF\nls", ""},
		{"ls \\\n  -la", ""},
		{"# just a comment", ""},
		{"env", ""},
		{"command -v go", ""},

		{"cat a > b", `the redirection ">" writes the file "b"`},
		{"echo x >> notes.md", `">>" writes the file "notes.md"`},
		{"ls &>out.txt", `"&>" writes the file "out.txt"`},
		{"ls 2>err.log", `">" writes the file "err.log"`},
		{"ls >| f", `">|" writes`},
		{"cat <<EOF > f\nx\nEOF", `">" writes the file "f"`},
		{"ls | tee out", `"tee" writes files`},
		{"rm -rf build", `"rm" deletes files`},
		{"mv a b", `"mv" moves files`},
		{"cp a b", `"cp" copies files`},
		{"touch x", `"touch" creates files`},
		{"mkdir -p x", `"mkdir" creates directories`},
		{"sed -i s/a/b/ f", "sed -i changes files"},
		{"sed -ni 's/a/b/p' f", "sed -i changes files"},
		{"sed --in-place=.bak s/a/b/ f", "sed --in-place changes files"},
		{"sed -n 'w out' f", "the w command writes a file"},
		{"git commit -m x", "git commit may change the repository"},
		{"git checkout main", "git checkout may change"},
		{"git stash", "git stash changes the working tree"},
		{"git branch -D old", "git branch -D changes"},
		{"git branch newname", "use git branch --list"},
		{"git -c core.pager=evil log", "git option -c is not allowed"},
		{"git diff --output=patch.diff", "--output=patch.diff writes files"},
		{"git config user.name x", "changes the configuration"},
		{"go build ./...", "go build may write files"},
		{"find . -name '*.tmp' -delete", "find -delete"},
		{"find . -exec rm {} ;", "find -exec"},
		{"sort -o out in", "sort -o writes"},
		{"uniq in out", "uniq with an output file"},
		{"python3 -c 'open(\"x\",\"w\")'", `"python3" runs arbitrary code`},
		{"bash -c 'ls'", `"bash" runs arbitrary commands`},
		{"xargs rm < list", `"xargs" runs arbitrary commands`},
		{"env FOO=1 rm x", "env with a command"},
		{"/bin/rm x", "run commands by name"},
		{"./script.sh", "run commands by name"},
		{"ls $(rm x)", "command substitution"},
		{"ls `rm x`", "command substitution"},
		{"echo \"$(rm x)\"", "command substitution"},
		{"diff <(ls a) <(ls b)", "command substitution"},
		{"echo a; rm x", `"rm" deletes files`},
		{"ls && rm x", `"rm" deletes files`},
		{"ls || rm x", `"rm" deletes files`},
		{"ls & rm x", `"rm" deletes files`},
		{"(cd x; rm y)", `"rm" deletes files`},
		{"ls\nrm x", `"rm" deletes files`},
		{"make", `"make" runs arbitrary commands`},
		{"frobnicate", `"frobnicate" is not on the read-only command list`},
		{"$CMD x", "is not on the read-only command list"},
		{"cat a 1<>b", `"<>" writes`},
	}
	for _, tc := range tests {
		got := bashReadOnlyViolation(tc.cmd)
		if tc.why == "" && got != "" {
			t.Errorf("%q: denied (%s), want allowed", tc.cmd, got)
		}
		if tc.why != "" && !strings.Contains(got, tc.why) {
			t.Errorf("%q: got %q, want %q", tc.cmd, got, tc.why)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pat, rel string
		want     bool
	}{
		{"**", "", true},
		{"**", "a/b/c", true},
		{"plan.md", "plan.md", true},
		{"plan.md", "x/plan.md", false},
		{"friction/*.md", "friction/a.md", true},
		{"friction/*.md", "friction/a/b.md", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"[", "[", false},
	}
	for _, tc := range tests {
		if got := globMatch(tc.pat, tc.rel); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pat, tc.rel, got)
		}
	}
}
