package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Problem is one thing wrong with a plan.md, for the Lead to fix.
type Problem struct {
	// Line is the 1-based line in plan.md, or 0 when no line applies.
	Line int
	// Msg says what is wrong and how to fix it; never empty.
	Msg string
}

// String renders the problem as "line N: msg" (or just msg).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Field names of the plan's json block, by object kind.
var (
	planTopFields        = map[string]bool{"summary": true, "checkpoints": true, "subtasks": true}
	planCheckpointFields = map[string]bool{"id": true, "name": true}
	planSubtaskFields    = map[string]bool{"id": true, "description": true, "checkpoint": true, "dependencies": true, "files": true}
)

// fixIDPattern matches the ids the engine gives checkpoint fixes; plan
// subtasks may not use them (their .done markers would be confused).
var fixIDPattern = regexp.MustCompile(`^fix-cp[0-9]+-r[0-9]+-`)

// ParsePlan extracts and validates the fenced ```json block of plan.md.
// project is the project directory the plan's file paths are relative to.
// It never panics; a plan is usable only when no problem is returned. The
// problems are sorted by line and each names the line in plan.md where
// possible.
func ParsePlan(md []byte, project string) (vocab.Plan, []Problem) {
	pp := &planParser{}
	plan := pp.parse(md, project)
	sort.SliceStable(pp.problems, func(i, j int) bool { return pp.problems[i].Line < pp.problems[j].Line })
	return plan, pp.problems
}

type planParser struct {
	problems []Problem
	// block is the json text; firstLine the plan.md line of its first line.
	block     []byte
	firstLine int
	fenceLine int
	// pos maps a json path ("/subtasks/0/id") to the byte offset of its value.
	pos map[string]int
}

func (pp *planParser) add(line int, format string, args ...any) {
	pp.problems = append(pp.problems, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// jsonBlock is one fenced json block of plan.md.
type jsonBlock struct {
	fence int // line of the opening fence
	lines []string
	open  bool // no closing fence
}

// findJSONBlocks returns the fenced blocks whose info string is json.
func findJSONBlocks(md []byte) []jsonBlock {
	var blocks []jsonBlock
	lines := strings.Split(strings.ReplaceAll(string(md), "\r\n", "\n"), "\n")
	inFence := false
	var marker string
	var cur *jsonBlock
	for i, raw := range lines {
		t := strings.TrimSpace(raw)
		if !inFence {
			for _, m := range []string{"```", "~~~"} {
				if strings.HasPrefix(t, m) {
					n := len(t) - len(strings.TrimLeft(t, m[:1]))
					inFence, marker = true, t[:n]
					info := strings.Fields(strings.TrimSpace(t[n:]))
					if len(info) > 0 && strings.EqualFold(info[0], "json") {
						blocks = append(blocks, jsonBlock{fence: i + 1, open: true})
						cur = &blocks[len(blocks)-1]
					}
					break
				}
			}
			continue
		}
		if strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
			inFence = false
			if cur != nil {
				cur.open = false
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, raw)
		}
	}
	return blocks
}

// maxDescription bounds one subtask description: the plan lives in
// state.json and each description is copied into its worker's assignment,
// so state.json (and each of its backups) stays small whatever the Lead
// writes.
const maxDescription = 16 << 10

// maxPlanDepth bounds the nesting of the plan's json block (the format
// needs 4 levels): the walker's memory grows with the square of the depth,
// so deeper input is rejected by a linear scan before any decoding.
const maxPlanDepth = 16

func (pp *planParser) parse(md []byte, project string) vocab.Plan {
	var plan vocab.Plan
	if len(md) > MaxTriggerBytes {
		pp.add(0, "plan.md is too large (%d bytes; at most %d): keep the plan short and put long material in other files it refers to", len(md), MaxTriggerBytes)
		return plan
	}
	blocks := findJSONBlocks(md)
	if len(blocks) == 0 {
		pp.add(0, "no fenced ```json block found: plan.md must carry exactly one ```json block with {\"summary\", \"checkpoints\", \"subtasks\"}")
		return plan
	}
	if len(blocks) > 1 {
		var at []string
		for _, b := range blocks {
			at = append(at, strconv.Itoa(b.fence))
		}
		pp.add(blocks[1].fence, "more than one ```json block (at lines %s): keep exactly one, the plan", strings.Join(at, ", "))
	}
	b := blocks[0]
	if b.open {
		pp.add(b.fence, "the ```json block opened here is never closed with ```")
	}
	pp.block = []byte(strings.Join(b.lines, "\n"))
	pp.firstLine = b.fence + 1
	pp.fenceLine = b.fence
	if len(bytes.TrimSpace(pp.block)) == 0 {
		pp.add(b.fence, "the ```json block is empty")
		return plan
	}
	if off, depth := jsonDepth(pp.block, maxPlanDepth); depth > maxPlanDepth {
		pp.add(pp.lineAt(off), "the json block nests deeper than %d levels here: the plan needs 4 ({\"subtasks\": [{\"files\": [\"…\"]}]})", maxPlanDepth)
		return plan
	}
	if !pp.walk() {
		return plan
	}
	if err := json.Unmarshal(pp.block, &plan); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			off := int(te.Offset) - 1
			field := pp.pathAt(off)
			if field == "" {
				field = te.Field
			}
			if field == "" {
				field = "the plan"
			}
			pp.add(pp.lineAt(off), "%s must be %s, not a JSON %s", field, jsonTypeName(te.Type.String()), te.Value)
		} else {
			pp.add(pp.fenceLine, "cannot decode the json block: %v", err)
		}
		return plan
	}
	pp.validate(&plan, project)
	return plan
}

// jsonTypeName names a Go type the way a plan author thinks of it.
func jsonTypeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "float"):
		return "an integer"
	case strings.HasPrefix(goType, "workspace."):
		return "an object"
	}
	return goType
}

// lineAt returns the plan.md line of byte offset off in the block.
func (pp *planParser) lineAt(off int) int {
	if off < 0 {
		off = 0
	}
	if off > len(pp.block) {
		off = len(pp.block)
	}
	return pp.firstLine + bytes.Count(pp.block[:off], []byte("\n"))
}

// pathAt returns the json path, written like subtasks[0].checkpoint, of the
// innermost value starting at or before byte offset off.
func (pp *planParser) pathAt(off int) string {
	best, bestOff := "", -1
	for p, o := range pp.pos {
		if o <= off && (o > bestOff || (o == bestOff && len(p) > len(best))) {
			best, bestOff = p, o
		}
	}
	var b strings.Builder
	for _, part := range strings.Split(strings.TrimPrefix(best, "/"), "/") {
		if part == "" {
			continue
		}
		if _, err := strconv.Atoi(part); err == nil {
			fmt.Fprintf(&b, "[%s]", part)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// lineOf returns the line of the value at json path p, or of its nearest
// recorded parent, or of the fence.
func (pp *planParser) lineOf(p string) int {
	for {
		if off, ok := pp.pos[p]; ok {
			return pp.lineAt(off)
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return pp.fenceLine
		}
		p = p[:i]
	}
}

// walk checks the json syntax token by token, records where each value
// starts, and reports unknown and duplicate keys. It returns false when the
// block is not one well-formed JSON object.
func (pp *planParser) walk() bool {
	pp.pos = map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(pp.block))
	dec.UseNumber()
	w := &walker{pp: pp, dec: dec}
	start := w.skip(0)
	if start >= len(pp.block) || pp.block[start] != '{' {
		pp.add(pp.lineAt(start), "the json block must hold one JSON object {\"summary\", \"checkpoints\", \"subtasks\"}")
		return false
	}
	if err := w.value(""); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			pp.add(pp.lineAt(int(se.Offset)-1), "invalid JSON: %v", se)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			pp.add(pp.lineAt(len(pp.block)), "invalid JSON: the object is not closed (missing } or ])")
		default:
			pp.add(pp.lineAt(int(dec.InputOffset())), "invalid JSON: %v", err)
		}
		return false
	}
	if rest := w.skip(int(dec.InputOffset())); rest < len(pp.block) {
		pp.add(pp.lineAt(rest), "unexpected text after the JSON object: the block must hold exactly one object")
		return false
	}
	return true
}

// jsonDepth scans b once and returns the offset where the nesting of
// arrays and objects (outside strings) first exceeds limit and that depth,
// or the deepest nesting seen when it never does.
func jsonDepth(b []byte, limit int) (off, depth int) {
	deepest, inStr, esc := 0, false, false
	for i, c := range b {
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth > limit {
				return i, depth
			}
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return len(b), deepest
}

type walker struct {
	pp  *planParser
	dec *json.Decoder
}

// skip returns the offset of the next byte at or after off that is not
// white space, ':' or ','.
func (w *walker) skip(off int) int {
	b := w.pp.block
	for off < len(b) {
		switch b[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

var (
	checkpointPath = regexp.MustCompile(`^/checkpoints/[0-9]+$`)
	subtaskPath    = regexp.MustCompile(`^/subtasks/[0-9]+$`)
)

// fieldsAt returns the known field names of the object at json path p, or
// nil when objects are not expected there.
func fieldsAt(p string) (map[string]bool, string) {
	switch {
	case p == "":
		return planTopFields, "the plan"
	case checkpointPath.MatchString(p):
		return planCheckpointFields, "a checkpoint"
	case subtaskPath.MatchString(p):
		return planSubtaskFields, "a subtask"
	}
	return nil, ""
}

func (w *walker) value(p string) error {
	w.pp.pos[p] = w.skip(int(w.dec.InputOffset()))
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		known, what := fieldsAt(p)
		seen := map[string]bool{}
		for w.dec.More() {
			koff := w.skip(int(w.dec.InputOffset()))
			kt, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			if known != nil && !known[key] {
				w.pp.add(w.pp.lineAt(koff), "unknown field %q in %s (allowed: %s)", key, what, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
			}
			if seen[key] {
				w.pp.add(w.pp.lineAt(koff), "field %q appears twice in the same object", key)
			}
			seen[key] = true
			if err := w.value(p + "/" + key); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; w.dec.More(); i++ {
			if err := w.value(p + "/" + strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	_, err = w.dec.Token() // closing delimiter
	return err
}

func (pp *planParser) validate(plan *vocab.Plan, project string) {
	if strings.TrimSpace(plan.Summary) == "" {
		pp.add(pp.lineOf("/summary"), "\"summary\" is missing or empty: say in one or two sentences what the plan does")
	}

	// Checkpoints.
	cpIndex := map[int]int{} // id → position in plan order
	cpLine := map[int]int{}
	if len(plan.Checkpoints) == 0 {
		pp.add(pp.lineOf("/checkpoints"), "no checkpoints: add at least one {\"id\": 1, \"name\": \"...\"}")
	}
	for i, cp := range plan.Checkpoints {
		at := fmt.Sprintf("/checkpoints/%d", i)
		line := pp.lineOf(at + "/id")
		if cp.ID <= 0 {
			pp.add(line, "checkpoint #%d: id must be a positive integer, got %d", i+1, cp.ID)
			continue
		}
		if prev, dup := cpLine[cp.ID]; dup {
			pp.add(line, "checkpoint id %d is used twice (also at line %d)", cp.ID, prev)
			continue
		}
		cpIndex[cp.ID] = i
		cpLine[cp.ID] = line
		if strings.TrimSpace(cp.Name) == "" {
			pp.add(pp.lineOf(at+"/name"), "checkpoint %d has no name", cp.ID)
		}
	}

	// Subtasks.
	if len(plan.Subtasks) == 0 {
		pp.add(pp.lineOf("/subtasks"), "no subtasks: add at least one subtask")
	}
	byID := map[string]int{}
	idLine := map[string]int{}
	used := map[int]bool{}
	for i, st := range plan.Subtasks {
		at := fmt.Sprintf("/subtasks/%d", i)
		line := pp.lineOf(at + "/id")
		name := st.ID
		switch {
		case st.ID == "":
			pp.add(line, "subtask #%d has no id", i+1)
			name = fmt.Sprintf("#%d", i+1)
		case !vocab.ValidID(st.ID):
			pp.add(line, "subtask id %q is not usable as a file name: use letters, digits, '.', '_' and '-' (no '/', no leading dot)", st.ID)
		case fixIDPattern.MatchString(st.ID):
			pp.add(line, "subtask id %q is reserved for checkpoint fixes: choose another id", st.ID)
		}
		if st.ID != "" {
			if prev, dup := idLine[st.ID]; dup {
				pp.add(line, "subtask id %q is used twice (also at line %d)", st.ID, prev)
			} else {
				byID[st.ID] = i
				idLine[st.ID] = line
			}
		}
		if strings.TrimSpace(st.Description) == "" {
			pp.add(pp.lineOf(at+"/description"), "subtask %s has no description", name)
		}
		if len(st.Description) > maxDescription {
			pp.add(pp.lineOf(at+"/description"), "subtask %s: the description is %d bytes (at most %d): put the details in the prose above the json block or in a file the subtask reads, and keep the description short",
				name, len(st.Description), maxDescription)
		}
		switch _, ok := cpIndex[st.Checkpoint]; {
		case st.Checkpoint == 0:
			pp.add(pp.lineOf(at+"/checkpoint"), "subtask %s has no checkpoint: set \"checkpoint\" to one of the checkpoint ids (%s)", name, joinInts(slices.Sorted(maps.Keys(cpIndex))))
		case !ok:
			pp.add(pp.lineOf(at+"/checkpoint"), "subtask %s: checkpoint %d does not exist (checkpoints: %s)", name, st.Checkpoint, joinInts(slices.Sorted(maps.Keys(cpIndex))))
		default:
			used[st.Checkpoint] = true
		}
		if len(st.Files) == 0 {
			pp.add(pp.lineOf(at+"/files"), "subtask %s lists no files: declare every file it touches as \"CREATE path\" or \"MODIFY path\"", name)
		}
		for j, f := range st.Files {
			if msg := checkFileEntry(f, project); msg != "" {
				pp.add(pp.lineOf(fmt.Sprintf("%s/files/%d", at, j)), "subtask %s: file entry %q %s", name, f, msg)
			}
		}
	}
	for _, cp := range plan.Checkpoints {
		if _, ok := cpIndex[cp.ID]; ok && !used[cp.ID] && len(plan.Subtasks) > 0 {
			pp.add(cpLine[cp.ID], "checkpoint %d (%q) has no subtasks: remove it or assign subtasks to it", cp.ID, cp.Name)
		}
	}

	// Dependencies.
	for i, st := range plan.Subtasks {
		name := st.ID
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		for j, d := range st.Dependencies {
			line := pp.lineOf(fmt.Sprintf("/subtasks/%d/dependencies/%d", i, j))
			k, ok := byID[d]
			switch {
			case d == st.ID:
				pp.add(line, "subtask %s depends on itself", name)
			case !ok:
				pp.add(line, "subtask %s depends on unknown subtask %q", name, d)
			default:
				dep := plan.Subtasks[k]
				mine, ok1 := cpIndex[st.Checkpoint]
				theirs, ok2 := cpIndex[dep.Checkpoint]
				if ok1 && ok2 && theirs > mine {
					pp.add(line, "subtask %s (checkpoint %d) depends on %s, which is in the later checkpoint %d", name, st.Checkpoint, d, dep.Checkpoint)
				}
			}
		}
	}
	cycles := findCycles(plan.Subtasks, byID)
	for _, cyc := range cycles {
		pp.add(idLine[cyc[0]], "dependency cycle: %s", strings.Join(cyc, " → "))
	}
	if len(cycles) == 0 {
		pp.fileConflicts(plan.Subtasks, byID, idLine)
	}
}

// fileConflicts refuses subtasks that could run at the same time (same
// checkpoint, no dependency path between them) and touch the same file:
// their work would be merged blind, or one would wait on the other
// without the plan saying so.
func (pp *planParser) fileConflicts(subs []vocab.Subtask, byID map[string]int, idLine map[string]int) {
	// before[i][j]: subtask j must finish before i starts (transitively).
	before := make([]map[int]bool, len(subs))
	var reach func(i int) map[int]bool
	reach = func(i int) map[int]bool {
		if before[i] != nil {
			return before[i]
		}
		before[i] = map[int]bool{}
		for _, d := range subs[i].Dependencies {
			if k, ok := byID[d]; ok && k != i {
				before[i][k] = true
				maps.Copy(before[i], reach(k))
			}
		}
		return before[i]
	}
	files := make([]map[string]bool, len(subs))
	for i, st := range subs {
		files[i] = map[string]bool{}
		for _, f := range st.Files {
			if _, p, ok := strings.Cut(strings.TrimSpace(f), " "); ok {
				files[i][path.Clean(strings.TrimSpace(p))] = true
			}
		}
	}
	for i := range subs {
		for j := i + 1; j < len(subs); j++ {
			a, b := subs[i], subs[j]
			if a.ID == "" || b.ID == "" || a.Checkpoint != b.Checkpoint || reach(i)[j] || reach(j)[i] {
				continue
			}
			for _, f := range slices.Sorted(maps.Keys(files[i])) {
				if files[j][f] {
					pp.add(idLine[b.ID], "subtasks %s and %s (both in checkpoint %d, neither depending on the other) both touch %s: "+
						"make one depend on the other, move one to a later checkpoint, or merge them", a.ID, b.ID, a.Checkpoint, f)
					break
				}
			}
		}
	}
}

// checkFileEntry returns what is wrong with one "CREATE path" / "MODIFY
// path" entry, or "".
func checkFileEntry(f, project string) string {
	verb, p, ok := strings.Cut(strings.TrimSpace(f), " ")
	if !ok || (verb != "CREATE" && verb != "MODIFY") {
		return "must be \"CREATE path\" or \"MODIFY path\" (upper-case verb, one space, then the path)"
	}
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "has no path"
	case strings.Contains(p, "\\"):
		return "uses a backslash: write paths with forward slashes"
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return "is an absolute path: use a path relative to the project"
	case strings.HasPrefix(p, "~"):
		return "starts with ~: use a path relative to the project"
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "contains \"..\": paths must stay inside the project"
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "names the project directory itself, not a file"
	}
	first, _, _ := strings.Cut(clean, "/")
	if first == vocab.DirName || first == ".git" {
		return fmt.Sprintf("is inside %s/, which is not a project file", first)
	}
	if project != "" {
		full := filepath.Join(project, filepath.FromSlash(clean))
		rel, err := filepath.Rel(project, full)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "is outside the project"
		}
	}
	return ""
}

// findCycles returns each dependency cycle once, as ids with the first id
// repeated at the end, starting at the member that comes first in the plan.
func findCycles(subs []vocab.Subtask, byID map[string]int) [][]string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(subs))
	var stack []int
	var cycles [][]string
	seen := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, d := range subs[i].Dependencies {
			j, ok := byID[d]
			if !ok || j == i {
				continue
			}
			switch color[j] {
			case white:
				visit(j)
			case grey:
				k := len(stack) - 1
				for stack[k] != j {
					k--
				}
				members := append([]int(nil), stack[k:]...)
				// Rotate so that the earliest subtask in the plan leads.
				minAt := 0
				for x, m := range members {
					if m < members[minAt] {
						minAt = x
					}
				}
				members = append(members[minAt:], members[:minAt]...)
				var ids []string
				for _, m := range members {
					ids = append(ids, subs[m].ID)
				}
				ids = append(ids, subs[members[0]].ID)
				key := strings.Join(ids, "\x00")
				if !seen[key] {
					seen[key] = true
					cycles = append(cycles, ids)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range subs {
		if color[i] == white && subs[i].ID != "" {
			if _, ok := byID[subs[i].ID]; ok && byID[subs[i].ID] == i {
				visit(i)
			}
		}
	}
	return cycles
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
