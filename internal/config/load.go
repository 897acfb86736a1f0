package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/hivemind-dev/hivemind/internal/suggest"
	"github.com/hivemind-dev/hivemind/workspace"
)

// FileName is the name of the config file in the workspace and user folders.
const FileName = "config.toml"

// Error is one problem in a configuration file or flag.
type Error struct {
	File string // config file, or "" for a flag
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based; 0 when unknown
	Key  string // dotted key, or the flag ("--workers")
	Msg  string
}

// Error renders "file:line: key: message" (or "file:line:col: message" for
// syntax errors, which have no key).
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + itoa(e.Line))
			if e.Col > 0 && e.Key == "" {
				b.WriteString(":" + itoa(e.Col))
			}
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem Load found, in file and line order. Load returns
// it (as an error) whenever it is not empty.
type Errors []*Error

// Error renders one problem a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives errors.As access to every *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Load builds the effective configuration from the defaults, the user file
// <userDir>/config.toml, the project file <projectWorkspaceDir>/config.toml
// (or flags.ConfigFile instead) and the flags, later ones winning. Missing
// files are skipped (except flags.ConfigFile). Any unknown key, wrong type or
// invalid value makes Load fail with Errors naming file, line and key.
// Either folder may be "" to skip it.
func Load(projectWorkspaceDir, userDir string, flags Overrides) (Config, Sources, error) {
	cfg := Default()
	src := Sources{}
	var errs Errors

	if userDir != "" {
		cfg.Files.User = filepath.Join(userDir, FileName)
		cfg.Files.UserRolesDir = filepath.Join(userDir, "roles")
	}
	if projectWorkspaceDir != "" {
		cfg.Files.Project = filepath.Join(projectWorkspaceDir, FileName)
		cfg.Files.ProjectRolesDir = filepath.Join(projectWorkspaceDir, "roles")
	}
	mustExist := false
	if flags.ConfigFile != "" {
		abs, err := filepath.Abs(flags.ConfigFile)
		if err != nil {
			abs = flags.ConfigFile
		}
		cfg.Files.Project = abs
		mustExist = true
	}

	if cfg.Files.User != "" {
		errs = append(errs, loadFile(&cfg, src, cfg.Files.User, SourceUser, false)...)
	}
	if cfg.Files.Project != "" {
		errs = append(errs, loadFile(&cfg, src, cfg.Files.Project, SourceProject, mustExist)...)
	}

	// Profiles must be complete after merging both files.
	for _, name := range cfg.ProfileNames() {
		if len(cfg.Profiles[name].Command) == 0 {
			s := src.Of("profiles." + name)
			errs = append(errs, &Error{File: s.File, Line: s.Line, Key: "profiles." + name,
				Msg: "command is required (an array of strings, e.g. [\"codex\", \"--full-auto\"])"})
		}
	}

	if flags.Workers != nil {
		if msg := checkInt(*flags.Workers, minWorkers, maxWorkers); msg != "" {
			errs = append(errs, &Error{Key: "--workers", Msg: msg})
		} else {
			cfg.Workers = *flags.Workers
			src["workers"] = Source{Kind: SourceFlag, Flag: "--workers"}
		}
	}
	if flags.Placement != nil {
		cfg.Placement = flags.Placement
		src["placement"] = Source{Kind: SourceFlag, Flag: "--workers"}
	}
	errs = append(errs, cfg.checkHosts(src, flags.Placement)...)
	errs = append(errs, checkAgents(cfg, src)...)
	if flags.Agent != nil {
		if err := applyAgentFlag(&cfg, src, *flags.Agent); err != nil {
			errs = append(errs, err)
		}
	}
	if flags.Budget != nil {
		if b := *flags.Budget; b < 0 || b > 1_000_000 || b != b {
			errs = append(errs, &Error{Key: "--budget", Msg: "must be between 0 and 1000000 (USD)"})
		} else {
			cfg.BudgetUSD = b
			src["budget_usd"] = Source{Kind: SourceFlag, Flag: "--budget"}
		}
	}

	if flags.PlanApproval != nil {
		if msg := checkOneOf(*flags.PlanApproval, PlanApprovals); msg != "" {
			errs = append(errs, &Error{Key: "--plan-approval", Msg: msg})
		} else {
			cfg.PlanApproval = *flags.PlanApproval
			src["plan_approval"] = Source{Kind: SourceFlag, Flag: "--plan-approval"}
		}
	}

	if len(errs) > 0 {
		return Config{}, src, errs
	}
	return cfg, src, nil
}

// checkOneOf returns why v is not one of the values in oneOf (with the
// closest one), or "" when it is (or oneOf is empty: anything goes).
func checkOneOf(v string, oneOf []string) string {
	if len(oneOf) == 0 || slices.Contains(oneOf, v) {
		return ""
	}
	msg := fmt.Sprintf("invalid value %q (want one of: %s)", v, strings.Join(oneOf, ", "))
	if s := Suggest(v, oneOf, 2); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

const (
	minWorkers = 1
	maxWorkers = 32
	noMax      = int(^uint(0) >> 1)
	// Every value that becomes a duration is range-checked before any
	// arithmetic, so none can wrap (18446744074 s once became 290 ms).
	maxSeconds = 7 * 24 * 3600 // a week
	maxDays    = 100 * 365
	// A trigger file must stay unchanged this long at least to count as
	// complete: 0 would take half-written files.
	minQuietMS = 10
	// An agent idle this long with unfinished work gets a reminder.
	minStallSeconds = 10
)

// Value kinds of the schema.
type kind int

const (
	kindInt kind = iota
	kindString
	kindStrings
	kindInts
	kindTable
	kindFloat
)

// spec describes one known key: its kind, range and where it goes.
type spec struct {
	kind     kind
	min, max int                  // ints and int elements
	nonEmpty bool                 // strings and arrays
	oneOf    []string             // strings
	check    func(s string) error // strings
}

var topSpecs = map[string]spec{
	"workers":                     {kind: kindInt, min: minWorkers, max: maxWorkers},
	"agent":                       {kind: kindString, nonEmpty: true},
	"plan_approval":               {kind: kindString, oneOf: PlanApprovals},
	"roles":                       {kind: kindTable},
	"quiet_period_ms":             {kind: kindInt, min: minQuietMS, max: 60_000},
	"hang_seconds":                {kind: kindInt, min: 1, max: maxSeconds},
	"agent_timeout_seconds":       {kind: kindInt, min: 1, max: maxSeconds},
	"stall_seconds":               {kind: kindInt, min: minStallSeconds, max: maxSeconds},
	"rate_limit_cooldown_seconds": {kind: kindInt, min: 1, max: 86_400},
	"max_retries":                 {kind: kindInt, min: 0, max: 100},
	"max_revision_cycles":         {kind: kindInt, min: 1, max: 100},
	"backoff_seconds":             {kind: kindInts, min: 0, max: 86_400, nonEmpty: true},
	"scrollback_lines":            {kind: kindInt, min: 0, max: 1_000_000},
	"fps":                         {kind: kindInt, min: 1, max: 240},
	"retention_full_days":         {kind: kindInt, min: 0, max: maxDays},
	"retention_summary_days":      {kind: kindInt, min: 0, max: maxDays},
	"check":                       {kind: kindString},
	"worktree_copy":               {kind: kindStrings, check: checkGlob},
	"profiles":                    {kind: kindTable},
	"budget_usd":                  {kind: kindFloat, min: 0, max: 1_000_000},
	"pricing":                     {kind: kindTable},
	"hosts":                       {kind: kindTable},
}

var roleSpecs = map[string]spec{
	"agent":           {kind: kindString, nonEmpty: true},
	"model":           {kind: kindString},
	"extra_args":      {kind: kindStrings},
	"permission_mode": {kind: kindString, oneOf: permissionModes},
	"hosts":           {kind: kindStrings},
	"writable":        {kind: kindStrings},
}

var profileSpecs = map[string]spec{
	"command":         {kind: kindStrings, nonEmpty: true},
	"env":             {kind: kindTable},
	"submit":          {kind: kindString, oneOf: []string{SubmitPaste, SubmitLine}},
	"submit_delay_ms": {kind: kindInt, min: 0, max: 60_000},
	"ready_regex":     {kind: kindString, check: checkRegex},
	"ready_quiet_ms":  {kind: kindInt, min: 0, max: 600_000},
}

// defaultProfile is the starting point of a profile a file defines.
func defaultProfile() Profile {
	return Profile{Env: map[string]string{}, Submit: SubmitPaste, SubmitDelayMS: 80, ReadyQuietMS: 500}
}

// fileLoader decodes one file onto a Config.
type fileLoader struct {
	file string
	kind string // SourceUser or SourceProject
	md   toml.MetaData
	top  map[string]toml.Primitive
	cfg  *Config
	src  Sources
	errs Errors
}

func loadFile(cfg *Config, src Sources, file, kind string, mustExist bool) Errors {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !mustExist {
			return nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return Errors{{File: file, Msg: "config file does not exist"}}
		}
		return Errors{{File: file, Msg: "cannot read: " + err.Error()}}
	}
	l := &fileLoader{file: file, kind: kind, cfg: cfg, src: src}
	md, err := toml.Decode(string(data), &l.top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Errors{{File: file, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "syntax error: " + pe.Message}}
		}
		return Errors{{File: file, Msg: "syntax error: " + err.Error()}}
	}
	l.md = md

	for _, key := range slices.Sorted(maps.Keys(l.top)) {
		prim := l.top[key]
		path := []string{key}
		sp, ok := topSpecs[key]
		if !ok {
			l.unknown(path, topSpecs)
			continue
		}
		switch key {
		case "roles":
			l.roles(path, prim)
		case "profiles":
			l.profiles(path, prim)
		case "pricing":
			l.pricing(path, prim)
		case "hosts":
			l.hosts(path, prim)
		default:
			l.set(path, prim, sp, topTarget(cfg, key))
		}
	}
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
	return l.errs
}

// topTarget returns a pointer to the Config field of a top-level key.
func topTarget(c *Config, key string) any {
	switch key {
	case "workers":
		return &c.Workers
	case "agent":
		return &c.Agent
	case "plan_approval":
		return &c.PlanApproval
	case "quiet_period_ms":
		return &c.QuietPeriodMS
	case "hang_seconds":
		return &c.HangSeconds
	case "agent_timeout_seconds":
		return &c.AgentTimeoutSeconds
	case "stall_seconds":
		return &c.StallSeconds
	case "rate_limit_cooldown_seconds":
		return &c.RateLimitCooldownSeconds
	case "max_retries":
		return &c.MaxRetries
	case "max_revision_cycles":
		return &c.MaxRevisionCycles
	case "backoff_seconds":
		return &c.BackoffSeconds
	case "scrollback_lines":
		return &c.ScrollbackLines
	case "fps":
		return &c.FPS
	case "retention_full_days":
		return &c.RetentionFullDays
	case "retention_summary_days":
		return &c.RetentionSummaryDays
	case "check":
		return &c.Check
	case "worktree_copy":
		return &c.WorktreeCopy
	case "budget_usd":
		return &c.BudgetUSD
	}
	panic("config: no target for key " + key)
}

func (l *fileLoader) roles(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tbl)) {
		rpath := append(slices.Clip(path), name)
		role, err := workspace.ParseRole(name)
		if err != nil {
			l.errorf(rpath, "%v", err)
			continue
		}
		fields, ok := l.table(rpath, tbl[name])
		if !ok {
			continue
		}
		rc := l.cfg.Roles[role]
		l.setFields(rpath, fields, roleSpecs, map[string]any{"agent": &rc.Agent, "model": &rc.Model,
			"extra_args": &rc.ExtraArgs, "permission_mode": &rc.PermissionMode, "hosts": &rc.Hosts,
			"writable": &rc.Writable})
		l.cfg.Roles[role] = rc
	}
}

func (l *fileLoader) profiles(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tbl)) {
		ppath := append(slices.Clip(path), name)
		if name == "claude" || name == "sim" {
			l.errorf(ppath, "%q is a built-in agent and cannot be redefined; choose another profile name", name)
			continue
		}
		fields, ok := l.table(ppath, tbl[name])
		if !ok {
			continue
		}
		p, exists := l.cfg.Profiles[name]
		if !exists {
			p = defaultProfile()
		}
		p.Env = cloneEnv(p.Env)
		l.src[strings.Join(ppath, ".")] = l.source(ppath)
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			fpath := append(slices.Clip(ppath), f)
			sp, ok := profileSpecs[f]
			if !ok {
				l.unknown(fpath, profileSpecs)
				continue
			}
			switch f {
			case "env":
				l.env(fpath, fields[f], p.Env)
			case "command":
				l.set(fpath, fields[f], sp, &p.Command)
			case "submit":
				l.set(fpath, fields[f], sp, &p.Submit)
			case "submit_delay_ms":
				l.set(fpath, fields[f], sp, &p.SubmitDelayMS)
			case "ready_regex":
				l.set(fpath, fields[f], sp, &p.ReadyRegex)
			case "ready_quiet_ms":
				l.set(fpath, fields[f], sp, &p.ReadyQuietMS)
			}
		}
		l.cfg.Profiles[name] = p
	}
}

func (l *fileLoader) env(path []string, prim toml.Primitive, env map[string]string) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(tbl)) {
		kpath := append(slices.Clip(path), k)
		if k == "" || strings.ContainsAny(k, "=\x00") {
			l.errorf(kpath, "invalid environment variable name")
			continue
		}
		var v string
		l.set(kpath, tbl[k], spec{kind: kindString}, &v)
		env[k] = v
	}
}

// setFields sets each field of a table through its spec into its target,
// in key order; a key without a spec is an unknown key.
func (l *fileLoader) setFields(path []string, fields map[string]toml.Primitive, specs map[string]spec, targets map[string]any) {
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		fpath := append(slices.Clip(path), f)
		sp, ok := specs[f]
		if !ok {
			l.unknown(fpath, specs)
			continue
		}
		l.set(fpath, fields[f], sp, targets[f])
	}
}

// table decodes prim as a TOML table.
func (l *fileLoader) table(path []string, prim toml.Primitive) (map[string]toml.Primitive, bool) {
	// Decoding a non-table into a map is not an error for the library (it
	// leaves the map nil), so check the value's kind first.
	var v any
	err := l.md.PrimitiveDecode(prim, &v)
	if _, isTable := v.(map[string]any); err == nil && isTable {
		var m map[string]toml.Primitive
		if err = l.md.PrimitiveDecode(prim, &m); err == nil {
			return m, true
		}
	}
	l.errorf(path, "wrong type: want a table, found %s", l.found(path, prim, ""))
	return nil, false
}

// set decodes prim according to sp into target (a *int, *string, *[]string
// or *[]int), checks the value and records its source. On any problem the
// target is left unchanged and an error is recorded.
func (l *fileLoader) set(path []string, prim toml.Primitive, sp spec, target any) {
	switch t := target.(type) {
	case *int:
		var v int64
		if err := l.md.PrimitiveDecode(prim, &v); err != nil {
			l.typeError(path, prim, "an integer", err)
			return
		}
		if msg := checkInt64(v, sp.min, sp.max); msg != "" {
			l.errorf(path, "%s", msg)
			return
		}
		*t = int(v)
	case *string:
		var v string
		if err := l.md.PrimitiveDecode(prim, &v); err != nil {
			l.typeError(path, prim, "a string", err)
			return
		}
		if sp.nonEmpty && strings.TrimSpace(v) == "" {
			l.errorf(path, "must not be empty")
			return
		}
		if msg := checkOneOf(v, sp.oneOf); msg != "" {
			l.errorf(path, "%s", msg)
			return
		}
		if sp.check != nil {
			if err := sp.check(v); err != nil {
				l.errorf(path, "%v", err)
				return
			}
		}
		*t = v
	case *[]string:
		var v []string
		if err := l.md.PrimitiveDecode(prim, &v); err != nil {
			l.typeError(path, prim, "an array of strings", err)
			return
		}
		if sp.nonEmpty && len(v) == 0 {
			l.errorf(path, "must not be empty")
			return
		}
		for i, s := range v {
			if sp.check != nil {
				if err := sp.check(s); err != nil {
					l.errorf(path, "element %d: %v", i+1, err)
					return
				}
			}
		}
		if v == nil {
			v = []string{}
		}
		*t = v
	case *[]int:
		var v []int64
		if err := l.md.PrimitiveDecode(prim, &v); err != nil {
			l.typeError(path, prim, "an array of integers", err)
			return
		}
		if sp.nonEmpty && len(v) == 0 {
			l.errorf(path, "must not be empty")
			return
		}
		out := make([]int, len(v))
		for i, n := range v {
			if msg := checkInt64(n, sp.min, sp.max); msg != "" {
				l.errorf(path, "element %d: %s", i+1, msg)
				return
			}
			out[i] = int(n)
		}
		*t = out
	case *float64:
		v, ok := l.number(path, prim)
		if !ok {
			return
		}
		if v < float64(sp.min) || v > float64(sp.max) {
			l.errorf(path, "must be between %d and %d", sp.min, sp.max)
			return
		}
		*t = v
	default:
		panic(fmt.Sprintf("config: unsupported target %T", target))
	}
	l.src[strings.Join(path, ".")] = l.source(path)
}

func (l *fileLoader) typeError(path []string, prim toml.Primitive, want string, err error) {
	elem := ""
	switch want {
	case "an array of strings":
		elem = "string"
	case "an array of integers":
		elem = "integer"
	}
	var pe toml.ParseError
	if errors.As(err, &pe) && strings.Contains(pe.Message, "out of range") {
		l.errorf(path, "%s", pe.Message)
		return
	}
	l.errorf(path, "wrong type: want %s, found %s", want, l.found(path, prim, elem))
}

// found describes the TOML value of prim for a type error. For arrays it
// names the first element that is not of kind elem ("string", "integer").
func (l *fileLoader) found(path []string, prim toml.Primitive, elem string) string {
	var v any
	if err := l.md.PrimitiveDecode(prim, &v); err != nil {
		return strings.ToLower(l.md.Type(path...))
	}
	if arr, ok := v.([]any); ok && elem != "" {
		for i, e := range arr {
			if d := describe(e); !strings.Contains(d, elem+" ") {
				return fmt.Sprintf("an array whose element %d is %s", i+1, d)
			}
		}
	}
	return describe(v)
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("a string (%q)", x)
	case int64:
		return fmt.Sprintf("an integer (%d)", x)
	case float64:
		return fmt.Sprintf("a float (%v)", x)
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case time.Time:
		return "a date-time"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

func (l *fileLoader) unknown(path []string, known map[string]spec) {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	msg := "unknown key"
	if s := Suggest(path[len(path)-1], names, 2); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(path) == 1 {
		l.errorf(path, "%s", msg)
		return
	}
	l.errorf(path, "%s; known keys here: %s", msg, strings.Join(names, ", "))
}

func (l *fileLoader) errorf(path []string, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: l.line(path), Key: strings.Join(path, "."),
		Msg: fmt.Sprintf(format, args...)})
}

func (l *fileLoader) source(path []string) Source {
	return Source{Kind: l.kind, File: l.file, Line: l.line(path)}
}

// probe is a TOML value that always fails to decode; the library then
// reports the position of the key being decoded, which is how a key's line
// is found without re-parsing the file.
type probe struct{}

var errProbe = errors.New("probe")

func (probe) UnmarshalTOML(any) error { return errProbe }

// line returns the line where the key at path is defined, 0 if unknown. A
// table created implicitly (by [a.b] or a.b = 1) has no line of its own; the
// first line of its keys is used.
func (l *fileLoader) line(path []string) int {
	if n := l.probeLine(path); n > 0 {
		return n
	}
	best := 0
	for _, k := range l.md.Keys() {
		if len(k) > len(path) && slices.Equal(k[:len(path)], path) {
			if n := l.probeLine(k); n > 0 && (best == 0 || n < best) {
				best = n
			}
		}
	}
	return best
}

func (l *fileLoader) probeLine(path []string) int {
	prim, ok := l.top[path[0]]
	if !ok {
		return 0
	}
	for _, k := range path[1:] {
		var m map[string]toml.Primitive
		if err := l.md.PrimitiveDecode(prim, &m); err != nil {
			return 0
		}
		if prim, ok = m[k]; !ok {
			return 0
		}
	}
	var p probe
	var pe toml.ParseError
	if err := l.md.PrimitiveDecode(prim, &p); errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

func checkInt(v, lo, hi int) string { return checkInt64(int64(v), lo, hi) }

func checkInt64(v int64, lo, hi int) string {
	if v < int64(lo) {
		return fmt.Sprintf("must be at least %d (got %d)", lo, v)
	}
	if v > int64(hi) {
		return fmt.Sprintf("must be at most %d (got %d)", hi, v)
	}
	return ""
}

func checkRegex(s string) error {
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("invalid regular expression: %v", err)
	}
	return nil
}

func checkGlob(s string) error {
	if s == "" {
		return errors.New("empty glob")
	}
	if _, err := filepath.Match(s, ""); err != nil {
		return fmt.Errorf("invalid glob %q: %v", s, err)
	}
	return nil
}

// Suggest returns the name in known closest to s, at most max edits away,
// or "": the "did you mean" of config keys and of the command line.
func Suggest(s string, known []string, max int) string { return suggest.Closest(s, known, max) }

func cloneEnv(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func itoa(n int) string { return strconv.Itoa(n) }

func replaceAll(s, old, repl string) string { return strings.ReplaceAll(s, old, repl) }
