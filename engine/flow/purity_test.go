package flow

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This package is the pure state machine (Step, its events and effects,
// plan parsing and validation, scheduling, replay): no I/O, no clock, no
// goroutines. The runner, the watchers and the effects' execution are in
// package engine, which imports this one; the compiler keeps them out of
// here, and TestPurePackage (run by `make lint`) keeps out what the
// compiler would allow.
//
// The check is on this package's direct imports, not its dependencies:
// workspace is where the machine's vocabulary lives (State, Phase, Plan,
// Subtask, Assignment, the task dir's file names) next to the file layer
// that reads and writes it, so workspace itself imports os and fsnotify.
// The machine may use workspace's types and pure helpers; splitting them
// into a leaf package would move some fifty names that every package uses.

// workspacePkgs are the packages outside the standard library allowed:
// workspace and its pure trigger table.
var workspacePkgs = []string{"github.com/hivemind-dev/hivemind/vocab", "github.com/hivemind-dev/hivemind/workspace/triggers"}

// impureStd are the standard packages that reach outside the process, the
// clock's randomness or the scheduler.
var impureStd = []string{
	"context", "crypto/rand", "io/ioutil", "log", "log/slog", "math/rand",
	"math/rand/v2", "net", "os", "os/exec", "os/signal", "os/user",
	"runtime", "sync", "sync/atomic", "syscall", "time/tzdata", "unsafe",
}

// clockCalls read the clock or wait: Step takes time from its events.
var clockCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}

// This package imports only the standard library's pure packages and
// workspace, and never reads the clock.
func TestPurePackage(t *testing.T) {
	for _, p := range checkPure(t, "") {
		t.Error(p)
	}
}

// The check fails on a file that breaks the boundary: the same check, on
// this package with one more file laid over it (go list -overlay), names
// each violation.
func TestPurePackageCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package flow

import (
	"os"
	clock "time"

	"github.com/fsnotify/fsnotify"
)

var _ = fsnotify.Create

func violate() clock.Time { _, _ = os.ReadFile("x"); return clock.Now() }
`
	bad := filepath.Join(dir, "bad.go")
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs("zz_violation.go")
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {here: bad}})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(checkPure(t, ov), "\n")
	for _, want := range []string{`imports "os"`, `imports "github.com/fsnotify/fsnotify"`, "zz_violation.go:12:", "calls time.Now"} {
		if !strings.Contains(got, want) {
			t.Errorf("violation %q not reported; got:\n%s", want, got)
		}
	}
}

// checkPure lists this package's violations as go list sees it (with an
// overlay file, if given).
func checkPure(t *testing.T, overlay string) []string {
	t.Helper()
	args := []string{"list", "-json=ImportPath,Dir,GoFiles,Imports"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	out, err := exec.Command("go", append(args, ".")...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkg struct {
		ImportPath, Dir  string
		GoFiles, Imports []string
	}
	if err := json.Unmarshal(out, &pkg); err != nil {
		t.Fatal(err)
	}
	if len(pkg.GoFiles) == 0 {
		t.Fatalf("go list found no files in %s", pkg.ImportPath)
	}
	var problems []string
	for _, p := range pkg.Imports {
		std := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".")
		if !slices.Contains(workspacePkgs, p) && (!std || slices.Contains(impureStd, p)) {
			problems = append(problems, pkg.ImportPath+" imports "+strconv.Quote(p)+": the pure state machine may import only the standard library's pure packages and workspace")
		}
	}
	ov := map[string]string{}
	if overlay != "" {
		b, err := os.ReadFile(overlay)
		if err != nil {
			t.Fatal(err)
		}
		var o struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		ov = o.Replace
	}
	for _, name := range pkg.GoFiles {
		path := filepath.Join(pkg.Dir, name)
		var src any
		if r, ok := ov[path]; ok {
			b, err := os.ReadFile(r)
			if err != nil {
				t.Fatal(err)
			}
			src = b
		}
		problems = append(problems, clockReads(t, path, src)...)
	}
	return problems
}

// clockReads lists the calls of one file that read the clock or wait.
func clockReads(t *testing.T, path string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	timeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" {
		return nil
	}
	var problems []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && slices.Contains(clockCalls, sel.Sel.Name) {
			problems = append(problems, fset.Position(sel.Pos()).String()+": calls time."+sel.Sel.Name+": Step takes time from its events")
		}
		return true
	})
	return problems
}
