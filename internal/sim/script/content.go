package script

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "for": true, "and": true, "or": true,
	"in": true, "on": true, "with": true, "that": true, "this": true, "it": true, "add": true,
	"make": true, "create": true, "build": true, "implement": true, "write": true, "into": true,
	"from": true, "by": true, "is": true, "be": true, "new": true, "simple": true, "small": true,
	"please": true, "our": true, "my": true, "some": true, "which": true, "using": true, "as": true,
}

// slug makes a short lowercase identifier from the task title.
func slug(title string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		if stopWords[w] || len(w) < 2 || (w[0] >= '0' && w[0] <= '9') {
			continue
		}
		words = append(words, w)
		if len(words) == 2 {
			break
		}
	}
	s := strings.Join(words, "")
	if s == "" {
		return "feature"
	}
	if len(s) > 24 {
		s = s[:24]
	}
	return s
}

func goIdent(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (b.Len() > 0 && r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "feature"
	}
	return b.String()
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lang picks the project's language from its marker files.
func lang(project string) string {
	switch {
	case fileExists(filepath.Join(project, "go.mod")):
		return "go"
	case fileExists(filepath.Join(project, "package.json")):
		return "js"
	case fileExists(filepath.Join(project, "pyproject.toml")), fileExists(filepath.Join(project, "requirements.txt")):
		return "py"
	}
	return "go"
}

func (c *ctx) planMarkdown(title string, rounds int, feedback string) string {
	s := slug(title)
	var core, conf, test, docs string
	switch lang(c.project) {
	case "js":
		core, conf, test = "src/"+s+".js", "src/"+s+".config.js", "test/"+s+".test.js"
	case "py":
		core, conf, test = s+"/core.py", s+"/config.py", "tests/test_"+s+".py"
	default:
		core, conf, test = "internal/"+s+"/"+s+".go", "internal/"+s+"/config.go", "internal/"+s+"/"+s+"_test.go"
	}
	docsVerb := "CREATE"
	docs = "docs/" + s + ".md"
	if fileExists(filepath.Join(c.project, "README.md")) {
		docsVerb, docs = "MODIFY", "README.md"
	}
	extra := ""
	if rounds > 0 {
		extra = " Validate inputs and return wrapped errors; cover the error paths."
	}
	plan := vocab.Plan{
		Summary: title,
		Checkpoints: []vocab.Checkpoint{
			{ID: 1, Name: "core " + s},
			{ID: 2, Name: "tests and docs"},
		},
		Subtasks: []vocab.Subtask{
			{ID: "st_1", Description: "Implement the core of " + s + ": the main type, its constructor and the request handling path." + extra,
				Checkpoint: 1, Dependencies: []string{}, Files: []string{"CREATE " + core}},
			{ID: "st_2", Description: "Add configuration for " + s + " with defaults and validation.",
				Checkpoint: 1, Dependencies: []string{}, Files: []string{"CREATE " + conf}},
			{ID: "st_3", Description: "Write table tests for " + s + " covering the normal and error paths.",
				Checkpoint: 2, Dependencies: []string{"st_1", "st_2"}, Files: []string{"CREATE " + test}},
			{ID: "st_4", Description: "Document " + s + ": usage, configuration and limits.",
				Checkpoint: 2, Dependencies: []string{"st_1"}, Files: []string{docsVerb + " " + docs}},
		},
	}
	js, _ := json.MarshalIndent(plan, "", "  ")
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", title)
	if rounds > 0 {
		fmt.Fprintf(&b, "_Revision %d — updated after review._\n\n", rounds+1)
	}
	fmt.Fprintf(&b, "## Approach\n\n%s\n\n",
		choose(c.rnd,
			"Build the feature as a small self-contained package first, then cover it with tests and document it.",
			"Start with the core type and its configuration in parallel, then add tests and documentation on top.",
			"Keep the change isolated in one package so the two workers never touch the same file."))
	b.WriteString("## Checkpoints\n\n1. **core " + s + "** — the implementation and its configuration (st_1, st_2, in parallel).\n" +
		"2. **tests and docs** — tests (st_3) and documentation (st_4).\n\n")
	b.WriteString("## Subtasks\n\n")
	for _, st := range plan.Subtasks {
		deps := "none"
		if len(st.Dependencies) > 0 {
			deps = strings.Join(st.Dependencies, ", ")
		}
		fmt.Fprintf(&b, "- **%s** (checkpoint %d, depends on %s): %s Files: `%s`.\n", st.ID, st.Checkpoint, deps, st.Description, strings.Join(st.Files, "`, `"))
	}
	b.WriteString("\n## Risks\n\n- Configuration defaults must be safe when the file is missing.\n- Error paths need explicit tests.\n")
	if rounds > 0 {
		b.WriteString("\n## Changes after review\n\n")
		points := feedbackPoints(feedback)
		if len(points) == 0 {
			points = []string{"the reviewer's comments"}
		}
		for _, p := range points {
			fmt.Fprintf(&b, "- Addressed: %s\n", p)
		}
	}
	b.WriteString("\n```json\n")
	b.Write(js)
	b.WriteString("\n```\n")
	return b.String()
}

// feedbackPoints pulls the "Problem" lines out of a feedback file.
func feedbackPoints(fb string) []string {
	var out []string
	for _, l := range strings.Split(fb, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(strings.ToLower(l), "problem:**"); i >= 0 {
			out = append(out, strings.TrimSpace(l[i+len("problem:**"):]))
		}
	}
	return out
}

func planFeedbackMD(pl *vocab.Plan, round int, rnd *rand.Rand) string {
	loc1, loc2 := "st_1", "st_3"
	if pl != nil && len(pl.Subtasks) > 0 {
		loc1 = pl.Subtasks[0].ID
		loc2 = pl.Subtasks[len(pl.Subtasks)-1].ID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan review — round %d: changes requested\n\n", round)
	b.WriteString(choose(rnd,
		"The split is sensible, but two points must be settled before work starts.",
		"Good structure overall; a few gaps need fixing first.",
		"Close, but the plan leaves error handling and testing too vague.") + "\n\n")
	fmt.Fprintf(&b, "## Issue 1\n\n- **Severity:** major\n- **Location:** plan.md → %s\n"+
		"- **Problem:** %s does not say how invalid input is handled or which errors are returned.\n"+
		"- **Suggestion:** State the validation rules and return wrapped errors; name them in the description.\n\n", loc1, loc1)
	fmt.Fprintf(&b, "## Issue 2\n\n- **Severity:** minor\n- **Location:** plan.md → %s\n"+
		"- **Problem:** the error paths have no explicit test coverage.\n"+
		"- **Suggestion:** Cover the error paths in the table tests as well as the happy path.\n", loc2)
	return b.String()
}

func planApprovedMD(pl *vocab.Plan, round int) string {
	n := 0
	if pl != nil {
		n = len(pl.Subtasks)
	}
	return fmt.Sprintf("# Plan approved (review round %d)\n\n"+
		"The plan is ready for execution: %d subtasks, dependencies are acyclic, parallel subtasks touch distinct files, "+
		"and every file stays inside the project.\n\n- **Verdict:** approved\n", round, n)
}

func checkpointIssuesMD(n int, file string, rnd *rand.Rand) string {
	fn := choose(rnd, "the constructor", "the main handler", "the exported API")
	return fmt.Sprintf("# Checkpoint %d review — issues\n\n"+
		"## Issue 1\n\n- **Severity:** major\n- **Location:** %s (%s)\n"+
		"- **Problem:** input is not validated: an empty or oversized value is accepted silently.\n"+
		"- **Suggestion:** Validate the input and return a descriptive error; keep the happy path unchanged.\n\n"+
		"Files to fix: %s\n", n, file, fn, file)
}

func checkpointApprovedMD(n int, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Checkpoint %d approved\n\n", n)
	if len(files) > 0 {
		b.WriteString("Reviewed files:\n\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
	b.WriteString("- **Verdict:** approved\n")
	return b.String()
}

func frictionMD(agent string, st *vocab.Subtask, rnd *rand.Rand) string {
	return fmt.Sprintf("# Friction: %s\n\n- **Agent:** %s\n- **Subtask:** %s\n- **Type:** %s\n\n%s\n",
		choose(rnd, "unclear configuration source", "slow feedback loop", "missing test fixtures"),
		agent, st.ID, vocab.FrictionWorkerFailure,
		"The plan does not say where configuration comes from; I assumed defaults in code. The lead should confirm.")
}

func frictionResolutionMD(names []string, rnd *rand.Rand) string {
	var b strings.Builder
	b.WriteString("# Friction resolution\n\n")
	if len(names) == 0 {
		b.WriteString("No friction files were found; nothing to change.\n")
		return b.String()
	}
	for _, n := range names {
		fmt.Fprintf(&b, "- `%s`: %s\n", n, choose(rnd,
			"configuration defaults live in code; the plan is unchanged.",
			"clarified in the plan notes; no subtask changes.",
			"accepted; workers keep the current approach."))
	}
	b.WriteString("\nThe plan stands as approved.\n")
	return b.String()
}

func (c *ctx) fixNote(agent string, fixed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Checkpoint fix notes (%s)\n\n", agent)
	if len(fixed) == 0 {
		b.WriteString("No files assigned to me were named in the issues.\n")
	}
	for _, f := range fixed {
		fmt.Fprintf(&b, "- Fixed `%s`: input is now validated.\n", f)
	}
	return b.String()
}

func (c *ctx) checkpointMD(agent string, fixed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Checkpoint %d — fixes ready for review\n\n", c.currentCheckpoint())
	fmt.Fprintf(&b, "Fixed by %s:\n\n", agent)
	for _, f := range fixed {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	if len(fixed) == 0 {
		b.WriteString("- (no file changes needed)\n")
	}
	return b.String()
}

func outputMD(st *vocab.Subtask, changed []string, rnd *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s — output\n\n%s\n\n## Changes\n\n", st.ID, st.Description)
	for _, f := range changed {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "\n## Notes\n\n%s\n", choose(rnd,
		"Kept the change small and self-contained; no new dependencies.",
		"Followed the existing style; exported names have doc comments.",
		"Edge cases are handled explicitly; see the code comments."))
	return b.String()
}

// createFile makes plausible content for a new file.
func createFile(rel string, st *vocab.Subtask, pkg string, rnd *rand.Rand) string {
	base := path.Base(rel)
	ext := path.Ext(base)
	name := strings.TrimSuffix(strings.TrimSuffix(base, ext), "_test")
	typ := titleCase(goIdent(pkg))
	if typ == "Main" {
		typ = titleCase(goIdent(name))
	}
	switch {
	case ext == ".go" && strings.HasSuffix(base, "_test.go"):
		return fmt.Sprintf(`package %s

import "testing"

func Test%sHandle(t *testing.T) {
	s := New(DefaultConfig())
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"simple", "hello", false},
		{"empty", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Handle(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Handle(%%q) error = %%v, wantErr %%v", tt.in, err, tt.wantErr)
			}
		})
	}
}
`, pkg, typ)
	case ext == ".go" && (name == "config" || strings.Contains(name, "config")):
		return fmt.Sprintf(`package %s

// Config configures a %s.
type Config struct {
	// Name identifies the instance in logs.
	Name string
	// Limit caps how much input one call accepts.
	Limit int
}

// DefaultConfig returns safe defaults.
func DefaultConfig() Config {
	return Config{Name: %q, Limit: %d}
}
`, pkg, typ, pkg, 256<<rnd.IntN(3))
	case ext == ".go":
		return fmt.Sprintf(`// Package %s: %s
package %s

import (
	"errors"
	"strings"
)

// ErrEmpty is returned for empty input.
var ErrEmpty = errors.New("%s: empty input")

// %s handles requests with a fixed configuration.
type %s struct {
	cfg   Config
	calls int
}

// New returns a %s using cfg.
func New(cfg Config) *%s {
	return &%s{cfg: cfg}
}

// Handle processes one input and returns the result.
func (s *%s) Handle(in string) (string, error) {
	in = strings.TrimSpace(in)
	if in == "" {
		return "", ErrEmpty
	}
	s.calls++
	return s.cfg.Name + ": " + in, nil
}
`, pkg, oneLine(st.Description), pkg, pkg, typ, typ, typ, typ, typ, typ)
	case ext == ".md":
		return fmt.Sprintf("# %s\n\n%s\n\n## Usage\n\n```\ns := New(DefaultConfig())\nout, err := s.Handle(\"input\")\n```\n\n## Limits\n\nInputs longer than the configured limit are rejected.\n", titleCase(name), st.Description)
	case ext == ".py":
		return fmt.Sprintf("\"\"\"%s\"\"\"\n\n\ndef handle(value: str) -> str:\n    value = value.strip()\n    if not value:\n        raise ValueError(\"empty input\")\n    return \"%s: \" + value\n", oneLine(st.Description), name)
	case ext == ".js" || ext == ".ts":
		return fmt.Sprintf("// %s\n\nexport function handle(value) {\n  value = String(value).trim();\n  if (!value) throw new Error('empty input');\n  return '%s: ' + value;\n}\n", oneLine(st.Description), name)
	}
	return fmt.Sprintf("# %s\n# %s\n", base, oneLine(st.Description))
}

// modifyFile appends a plausible change to an existing file.
func modifyFile(rel, old string, st *vocab.Subtask, rnd *rand.Rand) string {
	if !strings.HasSuffix(old, "\n") {
		old += "\n"
	}
	switch path.Ext(rel) {
	case ".md":
		return old + fmt.Sprintf("\n## %s\n\n%s\n", titleCase(st.ID), st.Description)
	case ".go":
		fn := "note" + titleCase(goIdent(st.ID)) + strconv.Itoa(rnd.IntN(90)+10)
		return old + fmt.Sprintf("\n// %s records the change made by %s.\nfunc %s() string { return %q }\n", fn, st.ID, fn, oneLine(st.Description))
	}
	return old + "\n# " + st.ID + ": " + oneLine(st.Description) + "\n"
}

// fixFile applies a "fix" for a checkpoint issue.
func fixFile(rel, old string, round int) string {
	if old != "" && !strings.HasSuffix(old, "\n") {
		old += "\n"
	}
	switch path.Ext(rel) {
	case ".go":
		fn := "validInput" + strconv.Itoa(round)
		return old + fmt.Sprintf("\n// %s reports whether in is acceptable (checkpoint review fix %d).\nfunc %s(in string, limit int) bool {\n\treturn in != \"\" && (limit <= 0 || len(in) <= limit)\n}\n", fn, round, fn)
	case ".md":
		return old + fmt.Sprintf("\n## Input validation\n\nEmpty and oversized inputs are rejected (fix %d).\n", round)
	}
	return old + fmt.Sprintf("\n# fix %d: validate input\n", round)
}
