package roles

import (
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Every way found to make a read-only command run a program, write a
// file or change what a later command runs is denied, with a reason that
// names it; the safe forms next to them stay allowed.
func TestBashReadOnlyTricks(t *testing.T) {
	tests := []struct {
		name, cmd string
		why       string // "" = allowed; else a substring of the reason
	}{
		// Environment assignments before a command, and bare ones that
		// change an exported variable for later commands.
		{"external diff via env", "GIT_EXTERNAL_DIFF='touch /tmp/pwn' git diff", `"GIT_EXTERNAL_DIFF"`},
		{"pager via env", "GIT_PAGER='sh -c id' git log", `"GIT_PAGER"`},
		{"PAGER via env", "PAGER=evil git log -p", `"PAGER"`},
		{"git config via env", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=evil git log", `"GIT_CONFIG_COUNT"`},
		{"global config via env", "GIT_CONFIG_GLOBAL=/tmp/evil git status", `"GIT_CONFIG_GLOBAL"`},
		{"ssh command via env", "GIT_SSH_COMMAND=evil git remote show origin", `"GIT_SSH_COMMAND"`},
		{"LD_PRELOAD", "LD_PRELOAD=/tmp/x.so ls", `"LD_PRELOAD"`},
		{"PATH", "PATH=/tmp/evil:$PATH ls", `"PATH"`},
		{"bare assignment then use", "PAGER=evil; git log", `"PAGER"`},
		{"export", "export GIT_PAGER=evil; git log", `"GIT_PAGER"`},
		{"export -n is fine, export of a bad name is not", "export BASH_ENV=/tmp/x", `"BASH_ENV"`},
		{"set -a exports later assignments", "set -a", "set -a"},
		{"printf -v assigns", "printf -v PAGER evil", "printf -v"},
		{"safe locale assignment", "LC_ALL=C sort names.txt", ""},
		{"safe locale with code in it", "LC_ALL='a[$(id)]' ls", "value"},
		{"TZ", "TZ=UTC date", ""},
		{"export of a safe name", "export LANG=C.UTF-8", ""},
		{"plain export lists", "export", ""},
		{"set -euo pipefail", "set -euo pipefail", ""},

		// git: pagers, external drivers, config overrides.
		{"git -c pager", "git -c core.pager='sh -c id' log", "git option -c"},
		{"git -c diff.external", "git -c diff.external=evil diff", "git option -c"},
		{"git -c joined", "git -ccore.pager=evil log", "git option -ccore.pager=evil"},
		{"git --config-env", "git --config-env=core.pager=EVIL log", "--config-env"},
		{"git --exec-path", "git --exec-path=/tmp/evil log", "--exec-path"},
		{"git --git-dir", "git --git-dir=/tmp/evil/.git status", "--git-dir"},
		{"git --work-tree", "git --work-tree=/tmp status", "--work-tree"},
		{"git --paginate", "git --paginate log", "--paginate"},
		{"git -p", "git -p log", "-p"},
		{"git --no-pager is fine", "git --no-pager log -p", ""},
		{"git diff --ext-diff", "git diff --ext-diff", "--ext-diff"},
		{"git log --ext-diff", "git log -p --ext-diff", "--ext-diff"},
		{"git show --textconv", "git show --textconv HEAD:a.bin", "--textconv"},
		{"git cat-file --textconv", "git cat-file --textconv HEAD:a.bin", "--textconv"},
		{"git cat-file --filters", "git cat-file --filters HEAD:a", "--filters"},
		{"git cat-file -p is fine", "git cat-file -p HEAD", ""},
		{"git grep -O", "git grep -Oevil foo", "-Oevil"},
		{"git grep --open-files-in-pager", "git grep --open-files-in-pager=evil foo", "--open-files-in-pager"},
		{"git help opens a viewer", "git help -w log", "git help"},
		{"git remote show contacts the remote", "git remote show origin", "git remote show"},
		{"git remote show -n is local", "git remote show -n origin", ""},
		{"git remote -v", "git remote -v", ""},
		{"git difftool", "git difftool", "git difftool may change"},
		{"git log is fine", "git log --oneline -5 -- a.go", ""},
		{"git diff is fine", "git diff --stat HEAD~1", ""},
		{"git -C is fine", "git -C sub log -1", ""},

		// Commands that run other commands.
		{"find -exec", "find . -exec sh -c id \\;", "find -exec"},
		{"find -execdir", "find . -execdir id \\;", "find -execdir"},
		{"find -ok", "find . -ok id \\;", "find -ok"},
		{"find -fprint", "find . -fprint out", "find -fprint"},
		{"xargs", "ls | xargs -n1 echo", `"xargs"`},
		{"sed e command", "sed -n '1e id' f", "sed"},
		{"sed w command after address", "sed -n '1,5w out' f", "sed"},
		{"sed s///w", "sed 's/a/b/w out' f", "sed"},
		{"sed s///gw", "sed 's/a/b/gw out' f", "sed"},
		{"sed s///e", "sed 's/.*/id/e' f", "sed"},
		{"sed s///ge", "sed 's/.*/id/ge' f", "sed"},
		{"sed -e w", "sed -e 'w out' f", "sed"},
		{"sed --expression w", "sed --expression='w out' f", "sed"},
		{"sed -e joined", "sed '-es/a/b/w out' f", "sed"},
		{"sed W", "sed -n '/x/W out' f", "sed"},
		{"sed script file", "sed -f script.sed f", "sed -f"},
		{"sed -n p is fine", "sed -n '10,20p' main.go", ""},
		{"sed s is fine", "sed -E 's/(a|b)+/x/g; s#/#_#2' f", ""},
		{"sed with w in a regex is fine", "sed -n '/hello world/p' f", ""},
		{"sed y and addresses", "sed -e '$!N' -e 'y/abc/xyz/' -e '/^$/d' f", ""},
		{"awk system", "awk 'BEGIN{system(\"id\")}'", `"awk"`},
		{"less !", "less README.md", `"less" is not on the read-only command list`},
		{"man", "man git", `"man" is not on the read-only command list`},
		{"more", "more f", `"more" is not on the read-only command list`},
		{"vi", "vi f", `"vi" is not on the read-only command list`},
		{"rg --pre", "rg --pre ./evil x", "rg --pre"},
		{"rg --pre=", "rg --pre=evil x", "rg --pre"},
		{"sort --compress-program", "sort --compress-program=evil f", "--compress-program"},
		{"env -S", "env -S 'sh -c id'", "env"},
		{"env with a command", "env -u X id", "env with a command"},
		{"command runs", "command rm x", "command runs another command"},
		{"go vet -vettool", "go vet -vettool=/tmp/evil ./...", "-vettool"},
		{"go list -toolexec", "go list -toolexec=/tmp/evil ./...", "-toolexec"},
		{"go vet is fine", "go vet ./...", ""},
		{"file -C writes", "file -C -m magic", "file -C"},
		{"date -s", "date -s 2020-01-01", "date -s"},
		{"[[ arithmetic", "[[ x -eq 1 ]]", "[["},
		{"[[ string test is fine", "[[ -f go.mod ]]", ""},
		{"time runs a command", "time ls", `"time"`},
		{"trap", "trap 'rm -rf x' EXIT", `"trap"`},
		{"exec", "exec ls", `"exec"`},
		{"builtin", "builtin eval id", `"builtin"`},
		{"function definition", "f() { ls; }; f", `"f"`},

		// Names are exact and case-sensitive.
		{"upper-case name", "LS -la", `"LS" is not on the read-only command list`},
		{"mixed-case git", "Git log", `"Git" is not on the read-only command list`},
		{"quoted name is the same command", "'l''s' -la", ""},
	}
	for _, tc := range tests {
		got := bashReadOnlyViolation(tc.cmd)
		switch {
		case tc.why == "" && got != "":
			t.Errorf("%s: %q denied (%s), want allowed", tc.name, tc.cmd, got)
		case tc.why != "" && got == "":
			t.Errorf("%s: %q allowed, want denied (%s)", tc.name, tc.cmd, tc.why)
		case tc.why != "" && !strings.Contains(got, tc.why):
			t.Errorf("%s: %q: reason %q does not mention %q", tc.name, tc.cmd, got, tc.why)
		}
	}
}

// Tool names are matched exactly; roles without full Bash may use only
// the tools known to be harmless, and no MCP tool.
func TestDecideToolAllowlist(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		role   vocab.Role
		tool   string
		allow  bool
		reason string
	}{
		{"lead", "write", false, `"write" is not a tool the lead role may use`},
		{"reviewer", "edit", false, `"edit" is not a tool`},
		{"reviewer", "BASH", false, `"BASH" is not a tool`},
		{"lead", "REPL", false, `"REPL" is not a tool`},
		{"lead", "Monitor", false, `"Monitor" is not a tool`},
		{"reviewer", "Workflow", false, `"Workflow" is not a tool`},
		{"lead", "mcp__filesystem__write_file", false, "MCP tools"},
		{"reviewer", "mcp__github__create_issue", false, "MCP tools"},
		{"lead", "Read", true, ""},
		{"lead", "TodoWrite", true, ""},
		{"reviewer", "TaskCreate", true, ""},
		{"reviewer", "AskUserQuestion", true, ""},
		// Workers run any command anyway: their other tools are theirs.
		{"worker", "mcp__filesystem__write_file", true, ""},
		{"worker", "REPL", true, ""},
	}
	for _, tc := range tests {
		allow, reason := Decide(DefaultPolicy(tc.role), f.task, f.project, tc.tool, map[string]any{"file_path": f.project + "/a.go"})
		if allow != tc.allow || (!allow && !strings.Contains(reason, tc.reason)) {
			t.Errorf("%s %s: allow=%v reason=%q; want allow=%v reason ~ %q", tc.role, tc.tool, allow, reason, tc.allow, tc.reason)
		}
	}
}
