package vocab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// recordsFile is the one file that may spell a record type's string.
const recordsFile = "records.go"

// moduleRoot is the module's directory (listModule), which problems are
// reported relative to.
var moduleRoot string

// recordTypePkg is the import path of the package that declares RecordType.
var recordTypePkg = reflect.TypeFor[RecordType]().PkgPath()

// TestRecordTypesDeclared type-checks every package of the module (its
// non-test files) and fails on a record type that does not name a constant
// of records.go: a string literal where a RecordType goes (an
// EventRecord's Type, an emit or Log argument, a comparison), a
// conversion to RecordType, or a constant of its own ("" aside, the zero
// value that means no type). A record written
// under an undeclared type, or read back by a string that a rename left
// behind, is a failure here rather than a milestone silently lost.
func TestRecordTypesDeclared(t *testing.T) {
	pkgs, exports := listModule(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages in the module", len(pkgs))
	}
	var problems []string
	for _, p := range pkgs {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		got, err := recordTypeProblems(fset, p.ImportPath, files, exports)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, got...)
	}
	if len(problems) > 0 {
		t.Errorf("record types not named by a constant of %s (declare the type there and name the constant):\n%s",
			recordsFile, strings.Join(problems, "\n"))
	}
}

// TestRecordTypesDeclaredCatches feeds the check a package that writes
// records the ways it must refuse, and one way it must accept.
func TestRecordTypesDeclaredCatches(t *testing.T) {
	_, exports := listModule(t)
	src := `package x

import "` + recordTypePkg + `"

const alias = vocab.RecordStateChanged

var (
	_ = vocab.EventRecord{Type: "undeclared"}
	_ = vocab.RecordType("converted")
	_ = vocab.EventRecord{Type: alias}
	_ = vocab.EventRecord{Type: vocab.RecordAbandoned + "_too"}
	_ = vocab.EventRecord{}.Type == "state_changed"
	_ = vocab.EventRecord{Type: vocab.RecordStateChanged}
	_ = vocab.EventRecord{Type: (vocab.RecordCancelled)}
	_ = vocab.InputRecord("agent_health")
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got, err := recordTypeProblems(fset, "example.com/x", []*ast.File{f}, exports)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`x.go:8:30: "undeclared"`,
		`x.go:9:6: vocab.RecordType("converted")`,
		`x.go:10:30: alias`,
		`x.go:11:30: vocab.RecordAbandoned + "_too"`,
		`x.go:12:34: "state_changed"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRecordTypeStringsKept: every record type a released Hivemind wrote
// (testdata/record_types.txt) is still declared with the same string, so
// the records in users' workspaces keep their meaning (IsMilestone, the
// TUI, --resume). Append new types to the file; never edit a line.
func TestRecordTypeStringsKept(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "record_types.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fset := token.NewFileSet()
	decl, err := parser.ParseFile(fset, recordsFile, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check(recordTypePkg, fset, []*ast.File{decl}, nil)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, name := range pkg.Scope().Names() {
		if c, ok := pkg.Scope().Lookup(name).(*types.Const); ok && isRecordType(c.Type()) {
			declared[constant.StringVal(c.Val())] = true
		}
	}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		if !declared[line] {
			t.Errorf("record type %q is no longer declared in %s: users' events.jsonl hold it; keep its string", line, recordsFile)
		}
	}
	if n < 100 {
		t.Fatalf("testdata/record_types.txt lists only %d types", n)
	}
}

type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	DepOnly                 bool
}

// listModule returns the module's packages and the export data of every
// package they import (go list -export builds them).
func listModule(t *testing.T) (pkgs []listedPackage, exports map[string]string) {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,DepOnly", "./...")
	moduleRoot = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Dir = moduleRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports = map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, exports
}

// recordTypeProblems type-checks one package (its imports from their
// export data) and lists, as "file:line:col: expression", every record
// type it does not take from a constant of recordsFile.
func recordTypeProblems(fset *token.FileSet, path string, files []*ast.File, exports map[string]string) ([]string, error) {
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, fset, files, info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	var problems []string
	report := func(e ast.Expr) {
		var b strings.Builder
		_ = printer.Fprint(&b, fset, e)
		problems = append(problems, fmt.Sprintf("%s: %s", shortPos(fset.Position(e.Pos())), b.String()))
	}
	for _, f := range files {
		if path == recordTypePkg && filepath.Base(fset.Position(f.Pos()).Filename) == recordsFile {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			tv, ok := info.Types[e]
			if !ok || !isRecordType(tv.Type) {
				return true
			}
			if call, ok := e.(*ast.CallExpr); ok && info.Types[call.Fun].IsType() {
				report(e) // a conversion
				return false
			}
			if tv.Value == nil {
				return true
			}
			// "" is no type at all (a record missing one is refused).
			if constant.StringVal(tv.Value) != "" && !isDeclaredRecordType(fset, info, e) {
				report(e)
			}
			return false
		})
	}
	return problems, nil
}

// isDeclaredRecordType reports whether e names a constant of recordsFile.
func isDeclaredRecordType(fset *token.FileSet, info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	var id *ast.Ident
	switch x := e.(type) {
	case *ast.Ident:
		id = x
	case *ast.SelectorExpr:
		id = x.Sel
	default:
		return false
	}
	c, ok := info.Uses[id].(*types.Const)
	return ok && c.Pkg() != nil && c.Pkg().Path() == recordTypePkg &&
		filepath.Base(fset.Position(c.Pos()).Filename) == recordsFile
}

func isRecordType(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == recordTypePkg && n.Obj().Name() == "RecordType"
}

func shortPos(p token.Position) string {
	if rel, err := filepath.Rel(moduleRoot, p.Filename); err == nil && filepath.IsAbs(p.Filename) {
		p.Filename = rel
	}
	return p.String()
}
