package flow

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
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
// The check is on everything this package links, not only its imports:
// each package of this module it depends on (vocab, the vocabulary;
// workspace/triggers, the trigger table; internal/suggest) is held to the
// same rules, no package outside the standard library may be linked (no
// fsnotify, no x/sys), and the disk layer (workspace) is named when it
// creeps in. The standard library's own dependencies (fmt pulls in os)
// are not checked: only what this module's packages import directly.

// diskLayer are the packages that read and write the workspace on disk.
var diskLayer = []string{"github.com/hivemind-dev/hivemind/workspace"}

// impureStd are the standard packages that reach outside the process, the
// clock's randomness or the scheduler.
var impureStd = []string{
	"context", "crypto/rand", "io/ioutil", "log", "log/slog", "math/rand",
	"math/rand/v2", "net", "os", "os/exec", "os/signal", "os/user",
	"runtime", "sync", "sync/atomic", "syscall", "time/tzdata", "unsafe",
}

// clockCalls read the clock or wait: Step takes time from its events.
var clockCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}

// This package and every package of this module it depends on import
// only the standard library's pure packages and each other, never read
// the clock, and link no disk layer and nothing outside the standard
// library.
func TestPurePackage(t *testing.T) {
	for _, p := range checkPure(t, "") {
		t.Error(p)
	}
}

// The check fails on a file that breaks the boundary: the same check, on
// this package with one more file laid over it (go list -overlay), names
// each violation, including those of the packages the file pulls in.
func TestPurePackageCheckCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package flow

import (
	"os"
	clock "time"

	"github.com/fsnotify/fsnotify"
	"github.com/hivemind-dev/hivemind/workspace"
)

var _ = fsnotify.Create
var _ = workspace.Open

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
	for _, want := range []string{
		`engine/flow imports "os"`, "zz_violation.go:14:", "calls time.Now",
		"links github.com/fsnotify/fsnotify", "links golang.org/x/sys/unix",
		"links the disk layer github.com/hivemind-dev/hivemind/workspace",
		`hivemind/workspace imports "syscall"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violation %q not reported; got:\n%s", want, got)
		}
	}
}

// listed is one package as `go list -deps -json` describes it.
type listed struct {
	ImportPath, Dir  string
	Standard         bool
	GoFiles, Imports []string
	Module           *struct{ Path string }
}

// checkPure lists the violations of this package and its dependencies as
// go list sees them (with an overlay file, if given).
func checkPure(t *testing.T, overlay string) []string {
	t.Helper()
	args := []string{"list", "-deps", "-json=ImportPath,Dir,Standard,GoFiles,Imports,Module"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	out, err := exec.Command("go", append(args, ".")...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	// go list -deps lists this package last.
	self := pkgs[len(pkgs)-1]
	if len(self.GoFiles) == 0 || self.Module == nil {
		t.Fatalf("go list found no files in %s", self.ImportPath)
	}
	module := self.Module.Path
	ov := overlayFiles(t, overlay)
	var problems []string
	for _, pkg := range pkgs {
		switch {
		case pkg.Standard:
			continue
		case pkg.Module == nil || pkg.Module.Path != module:
			problems = append(problems, self.ImportPath+" links "+pkg.ImportPath+": the pure state machine links nothing outside the standard library and this module")
			continue
		case slices.Contains(diskLayer, pkg.ImportPath):
			problems = append(problems, self.ImportPath+" links the disk layer "+pkg.ImportPath+": use the vocabulary (vocab), not the files")
		}
		for _, p := range pkg.Imports {
			std := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".")
			if std && slices.Contains(impureStd, p) {
				problems = append(problems, pkg.ImportPath+" imports "+strconv.Quote(p)+": the pure state machine and the packages it links may import only the standard library's pure packages")
			}
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
	}
	return problems
}

// overlayFiles is the Replace map of a go list overlay file (none: empty).
func overlayFiles(t *testing.T, overlay string) map[string]string {
	t.Helper()
	if overlay == "" {
		return nil
	}
	b, err := os.ReadFile(overlay)
	if err != nil {
		t.Fatal(err)
	}
	var o struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o.Replace
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
