package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pureFiles hold the state machine (Step, its events and effects, plan
// parsing and validation, scheduling, replay): no I/O, no clock, no
// goroutines. The runner, the watchers and the effects' execution
// (runner.go, effects.go, runner_log.go, watcher.go, knowledgewatch.go,
// gitrun.go, config.go) sit beside them.
//
// Until the machine moves into a package of its own (issue 16), this
// boundary is kept by TestPureFiles, which `make lint` runs.
var pureFiles = []string{
	"codec.go", "event.go", "governor.go", "knowledge.go", "merge.go", "messages.go",
	"plan.go", "recover.go", "retry.go", "schedule.go", "step.go",
	"step_agents.go", "step_keys.go", "step_subtasks.go", "step_triggers.go",
	"types.go",
}

// impureStd are the standard packages that reach outside the process, the
// clock's randomness or the scheduler.
var impureStd = []string{
	"context", "crypto/rand", "io/ioutil", "log", "log/slog", "math/rand",
	"math/rand/v2", "net", "os", "os/exec", "os/signal", "os/user",
	"runtime", "sync", "sync/atomic", "syscall", "unsafe",
}

// clockCalls read the clock or wait: Step takes time from its events.
var clockCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}

// The pure files import only the standard library's pure packages and
// workspace, and never read the clock.
func TestPureFiles(t *testing.T) {
	problems := checkPure(t, ".", pureFiles)
	for _, p := range problems {
		t.Error(p)
	}
	// Every non-test file is classified, so a new file is a decision.
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	runnerSide := []string{"config.go", "doc.go", "effects.go", "gitrun.go", "knowledgewatch.go", "runner.go", "runner_log.go", "watcher.go"}
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") && !slices.Contains(pureFiles, f) && !slices.Contains(runnerSide, f) {
			t.Errorf("%s is neither in pureFiles nor runner-side: say which it is", f)
		}
	}
}

// The check fails on a file that breaks the boundary.
func TestPureFilesCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package engine

import (
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

var _ = fsnotify.Create

func f() time.Time { _, _ = os.ReadFile("x"); return time.Now() }
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(checkPure(t, dir, []string{"bad.go"}), "\n")
	for _, want := range []string{`imports "os"`, `imports "github.com/fsnotify/fsnotify"`, "calls time.Now"} {
		if !strings.Contains(got, want) {
			t.Errorf("violation %q not reported; got:\n%s", want, got)
		}
	}
}

func checkPure(t *testing.T, dir string, files []string) []string {
	t.Helper()
	const workspacePkg = "github.com/hivemind-dev/hivemind/workspace"
	var problems []string
	for _, name := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".")
			switch {
			case p == workspacePkg:
			case std && !slices.Contains(impureStd, p):
				if p == "time" {
					timeName = "time"
					if imp.Name != nil {
						timeName = imp.Name.Name
					}
				}
			default:
				problems = append(problems, name+" imports "+strconv.Quote(p)+": the pure state machine may import only the standard library's pure packages and workspace")
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && slices.Contains(clockCalls, sel.Sel.Name) {
				problems = append(problems, fset.Position(sel.Pos()).String()+": "+name+" calls time."+sel.Sel.Name+": Step takes time from its events")
			}
			return true
		})
	}
	return problems
}
