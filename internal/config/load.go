package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
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
	"github.com/hivemind-dev/hivemind/vocab"
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
		if msg := checkInt(*flags.Workers, MinWorkers, MaxWorkers); msg != "" {
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
	errs = append(errs, checkWorkerIDs(cfg, src)...)
	if flags.Budget != nil {
		if b := *flags.Budget; b < 0 || b > 1_000_000 || b != b {
			errs = append(errs, &Error{Key: "--budget", Msg: "must be between 0 and 1000000 (USD)"})
		} else {
			cfg.BudgetUSD = b
			src["budget_usd"] = Source{Kind: SourceFlag, Flag: "--budget"}
		}
	}

	errs = append(errs, checkBudgetPrices(cfg, src)...)

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

// defaultProfile is the starting point of a profile a file defines.
func defaultProfile() Profile {
	p := Profile{Env: map[string]string{}}
	applyDefaults(&p, profileKeys)
	return p
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

	for _, name := range slices.Sorted(maps.Keys(l.top)) {
		path := []string{name}
		k, ok := lookup(topKeys, name)
		switch {
		case !ok:
			l.unknown(path, names(topKeys))
		case k.load != nil:
			k.load(l, path, l.top[name])
		default:
			l.set(path, l.top[name], k.spec, k.field(cfg))
		}
	}
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
	return l.errs
}

// setKeys sets each field of a table through its key in keys into t, in
// name order; a name without a key is an unknown key.
func setKeys[T any](l *fileLoader, path []string, fields map[string]toml.Primitive, keys []key[T], t *T) {
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		fpath := append(slices.Clip(path), f)
		k, ok := lookup(keys, f)
		switch {
		case !ok:
			l.unknown(fpath, names(keys))
		case k.field != nil:
			l.set(fpath, fields[f], k.spec, k.field(t))
		}
	}
}

func (l *fileLoader) roles(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tbl)) {
		rpath := append(slices.Clip(path), name)
		role, err := vocab.ParseRole(name)
		if err != nil {
			l.errorf(rpath, "%v", err)
			continue
		}
		fields, ok := l.table(rpath, tbl[name])
		if !ok {
			continue
		}
		rc := l.cfg.Roles[role]
		setKeys(l, rpath, fields, roleKeys, &rc)
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
		if env, ok := fields["env"]; ok {
			l.env(append(slices.Clip(ppath), "env"), env, p.Env)
		}
		setKeys(l, ppath, fields, profileKeys, &p)
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
	case *bool:
		var v bool
		if err := l.md.PrimitiveDecode(prim, &v); err != nil {
			l.typeError(path, prim, "true or false", err)
			return
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

func (l *fileLoader) unknown(path []string, known []string) {
	names := slices.Sorted(slices.Values(known))
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

// checkListen accepts a host:port the web client can listen on.
func checkListen(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:0): %v", s, err)
	}
	if host == "" {
		return fmt.Errorf("%q names no host: give one (127.0.0.1 for this machine only)", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number 0–65535 (0: a free one)", s)
	}
	return nil
}
