package roles

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The Bash checks are a guard rail against a model that drifts out of its
// role, not a sandbox: they parse the command the way a shell splits it
// (quotes, operators, redirections) and accept only commands known to be
// read-only. Anything they do not understand is denied, with the reason.

// shellCmd is one simple command of a command line.
type shellCmd struct {
	words  []string
	redirs []redirect
}

// redirect is one redirection: its operator (">", ">>", ">&", "<", ...)
// and its target word.
type redirect struct{ op, target string }

// writes reports whether the redirection may create or change a file.
func (r redirect) writes() bool {
	if !strings.Contains(r.op, ">") {
		return false
	}
	switch r.target {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return false
	}
	if r.op == ">&" || r.op == "<&" {
		// fd duplication (2>&1, >&2) or closing (>&-).
		if r.target == "-" || isDigits(r.target) {
			return false
		}
	}
	return true
}

// parseShell splits a command line into simple commands. subst is true when
// the line contains command or process substitution ($(...), `...`,
// <(...), >(...)), whose inner commands it does not analyse.
func parseShell(s string) (cmds []shellCmd, subst bool) {
	var (
		cur      shellCmd
		word     strings.Builder
		inWord   bool
		pendOp   string   // redirection waiting for its target
		heredocs []string // here-document delimiters to skip at the next newline
	)
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if pendOp != "" {
			cur.redirs = append(cur.redirs, redirect{op: pendOp, target: w})
			if pendOp == "<<" || pendOp == "<<-" {
				heredocs = append(heredocs, w)
			}
			pendOp = ""
			return
		}
		cur.words = append(cur.words, w)
	}
	endCmd := func() {
		endWord()
		if pendOp != "" {
			cur.redirs = append(cur.redirs, redirect{op: pendOp})
			pendOp = ""
		}
		if len(cur.words) > 0 || len(cur.redirs) > 0 {
			cmds = append(cmds, cur)
		}
		cur = shellCmd{}
	}

	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					word.WriteByte(s[i+1])
					inWord = true
				}
				i++
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
					i++
					word.WriteByte(s[i])
				case s[i] == '`', s[i] == '$' && i+1 < len(s) && s[i+1] == '(', evalExpansion(s, i):
					subst = true
					word.WriteByte(s[i])
				default:
					word.WriteByte(s[i])
				}
			}
		case c == '`', c == '$' && i+1 < len(s) && s[i+1] == '(', evalExpansion(s, i):
			subst = true
			word.WriteByte(c)
			inWord = true
		case (c == '<' || c == '>') && i+1 < len(s) && s[i+1] == '(':
			subst = true
			i++
		case c == '#' && !inWord:
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n':
			endCmd()
			for _, delim := range heredocs {
				i = skipHeredoc(s, i, delim)
			}
			heredocs = nil
		case c == '&' && i+1 < len(s) && s[i+1] == '>':
			endWord()
			op := "&>"
			i++
			if i+1 < len(s) && s[i+1] == '>' {
				op = "&>>"
				i++
			}
			pendOp = op
		case c == '>' || c == '<':
			// A word made only of digits right before is the fd number.
			if inWord && isDigits(word.String()) {
				word.Reset()
				inWord = false
			}
			endWord()
			op := string(c)
			for i+1 < len(s) && len(op) < 3 && strings.IndexByte("<>&|-", s[i+1]) >= 0 {
				next := op + string(s[i+1])
				if !validRedirOp(next) {
					break
				}
				op = next
				i++
			}
			pendOp = op
		case strings.IndexByte(";&|()", c) >= 0:
			endCmd()
			// Two-character operators (&&, ||, ;;, |&) need no special care:
			// the second character just ends an empty command.
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds, subst
}

// evalExpansion reports whether the '$' at s[i] starts an expansion that
// makes bash evaluate text as code: an arithmetic $[...], or a ${...}
// with indirection (${!x}), an array subscript (${a[i]}: the subscript is
// arithmetic, and arithmetic evaluates variables' values recursively, so
// a value like 'a[$(cmd)]' runs cmd) or a transformation (${x@P} expands
// a prompt string, command substitutions included).
func evalExpansion(s string, i int) bool {
	if s[i] != '$' || i+1 >= len(s) {
		return false
	}
	switch s[i+1] {
	case '[':
		return true
	case '{':
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			end = len(s) - i - 2
		}
		body := s[i+2 : i+2+end]
		return strings.HasPrefix(body, "!") || strings.ContainsAny(body, "[@")
	}
	return false
}

func validRedirOp(op string) bool {
	switch op {
	case ">", ">>", ">|", ">&", "<", "<<", "<<<", "<<-", "<>", "<&":
		return true
	}
	return false
}

// skipHeredoc returns the index of the newline ending the here-document
// that starts after index i (a newline) and ends at a line equal to delim.
func skipHeredoc(s string, i int, delim string) int {
	for i < len(s) {
		j := strings.IndexByte(s[i+1:], '\n')
		var line string
		if j < 0 {
			line = s[i+1:]
			j = len(s) - i - 1
		} else {
			line = s[i+1 : i+1+j]
		}
		i += j + 1
		if strings.TrimLeft(line, "\t") == delim {
			return i
		}
	}
	return i
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// safeVarRe names the variables a read-only command line may set: locale,
// time zone and output width only. Any other variable may change what a
// program runs (PAGER, GIT_PAGER, GIT_EXTERNAL_DIFF, GIT_CONFIG_*,
// GIT_SSH_COMMAND, LD_PRELOAD, PATH, BASH_ENV …), and an exported one
// keeps doing so for the rest of the command line.
var safeVarRe = regexp.MustCompile(`^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|COLUMNS|LINES)$`)

// safeValueRe is what a safe variable's value may hold: no quotes, no
// expansions, nothing arithmetic could evaluate.
var safeValueRe = regexp.MustCompile(`^[A-Za-z0-9_.,:@%+/-]*$`)

// checkAssignment returns why the assignment word w (NAME=value) is not
// allowed, "" if it is.
func checkAssignment(w string) string {
	name, value, _ := strings.Cut(w, "=")
	if !safeVarRe.MatchString(name) {
		return fmt.Sprintf("setting the variable %q is not allowed (it may change what a program runs); read-only commands may set only LANG, LC_*, TZ, NO_COLOR, COLUMNS and LINES", name)
	}
	if !safeValueRe.MatchString(value) {
		return fmt.Sprintf("the value of %s must be plain (letters, digits and . , : @ %% + / - _)", name)
	}
	return ""
}

// loopVarRe is a for-loop variable a read-only line may use: lower-case,
// like the shell-local names scripts use, never one of the upper-case
// variables programs read from the environment.
var loopVarRe = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// shellKeywords are dropped before the command name.
var shellKeywords = map[string]bool{
	"!": true, "if": true, "then": true, "else": true, "elif": true, "do": true,
	"while": true, "until": true, "{": true, "}": true, "fi": true, "done": true, "esac": true,
}

// commandWords returns the words from the command name on, without leading
// variable assignments and shell keywords. A for/case/select header runs
// nothing and yields nil.
func commandWords(words []string) []string {
	for len(words) > 0 && (assignRe.MatchString(words[0]) || shellKeywords[words[0]]) {
		words = words[1:]
	}
	if len(words) > 0 && (words[0] == "for" || words[0] == "case" || words[0] == "select") {
		return nil
	}
	return words
}

// loopVar returns the variable a for/select header assigns, "" if the
// words are no such header.
func loopVar(words []string) string {
	for len(words) > 0 && shellKeywords[words[0]] {
		words = words[1:]
	}
	if len(words) > 1 && (words[0] == "for" || words[0] == "select") {
		return words[1]
	}
	return ""
}

// writerVerbs explain commands that change files.
var writerVerbs = map[string]string{
	"rm": "deletes files", "rmdir": "deletes directories", "unlink": "deletes files", "shred": "destroys files",
	"mv": "moves files", "cp": "copies files", "install": "copies files", "rsync": "copies files", "scp": "copies files",
	"touch": "creates files", "mkdir": "creates directories", "mktemp": "creates files", "ln": "creates links",
	"chmod": "changes file modes", "chown": "changes file owners", "chgrp": "changes file groups",
	"truncate": "changes files", "dd": "writes files", "tee": "writes files", "patch": "changes files",
	"tar": "may write files", "zip": "writes files", "unzip": "writes files", "gzip": "writes files", "gunzip": "writes files",
	"curl": "may download files", "wget": "downloads files",
	"sh": "runs arbitrary commands", "bash": "runs arbitrary commands", "zsh": "runs arbitrary commands",
	"eval": "runs arbitrary commands", "exec": "runs arbitrary commands", "source": "runs arbitrary commands", ".": "runs arbitrary commands",
	"xargs": "runs arbitrary commands", "sudo": "runs arbitrary commands", "python": "runs arbitrary code",
	"python3": "runs arbitrary code", "node": "runs arbitrary code", "perl": "runs arbitrary code", "ruby": "runs arbitrary code",
	"awk": "can write files", "make": "runs arbitrary commands", "npm": "runs arbitrary commands", "npx": "runs arbitrary commands",
}

// readOnlyCommands are the commands read-only Bash accepts; a non-nil
// check looks at the arguments.
var readOnlyCommands = map[string]func(args []string) string{
	"ls": nil, "cat": nil, "head": nil, "tail": nil, "wc": nil, "grep": nil, "egrep": nil, "fgrep": nil,
	"rg": checkRg, "find": checkFind, "tree": checkTree, "file": nil, "stat": nil, "du": nil, "df": nil,
	"pwd": nil, "echo": nil, "printf": nil, "sort": checkSort, "uniq": checkUniq, "cut": nil, "tr": nil,
	"nl": nil, "tac": nil, "rev": nil, "diff": nil, "cmp": nil, "comm": nil, "which": nil, "type": nil,
	"date": nil, "whoami": nil, "id": nil, "uname": nil, "basename": nil, "dirname": nil, "realpath": nil,
	"readlink": nil, "sha256sum": nil, "sha1sum": nil, "sha512sum": nil, "md5sum": nil, "cksum": nil,
	"true": nil, "false": nil, "test": checkTest, "[": checkTest, "[[": checkDoubleBracket, "jq": nil, "column": nil, "paste": nil,
	"fold": nil, "od": nil, "hexdump": nil, "strings": nil, "seq": nil, "cd": nil, "pushd": nil, "popd": nil,
	"export": checkExport, "unset": nil, "set": checkSet, ":": nil, "printenv": nil, "env": checkEnv, "nproc": nil,
	"ps": nil, "sed": checkSed, "git": checkGit, "go": checkGo, "command": checkCommand, "sleep": nil,
}

func init() {
	// Checks that take the arguments of commands listed above.
	readOnlyCommands["printf"] = checkPrintf
	readOnlyCommands["file"] = checkFile
	readOnlyCommands["date"] = checkDate
}

// checkExport allows exporting only what an assignment may set.
func checkExport(args []string) string {
	for _, a := range args {
		if assignRe.MatchString(a) {
			if why := checkAssignment(a); why != "" {
				return why
			}
		}
	}
	return ""
}

// setOptions are the shell options a read-only line may turn on or off.
var setOptions = map[string]bool{
	"pipefail": true, "errexit": true, "nounset": true, "xtrace": true, "verbose": true, "noclobber": true, "noglob": true,
}

// checkSet allows error-handling and tracing options, not -a/allexport
// (which exports every later assignment) nor -k (which passes assignment
// arguments to commands) nor new positional parameters.
func checkSet(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "-o" || a == "+o") && i+1 < len(args) {
			i++
			if !setOptions[args[i]] {
				return fmt.Sprintf("set -o %s is not allowed for read-only roles (allowed: set -euxv, -o pipefail)", args[i])
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') || strings.Trim(a[1:], "euxvfCo") != "" {
			return fmt.Sprintf("set %s is not allowed for read-only roles (allowed: set -euxv, -o pipefail)", a)
		}
		if strings.HasSuffix(a, "o") && i+1 < len(args) { // -euo pipefail
			i++
			if !setOptions[args[i]] {
				return fmt.Sprintf("set -o %s is not allowed for read-only roles (allowed: set -euxv, -o pipefail)", args[i])
			}
		}
	}
	return ""
}

func checkPrintf(args []string) string {
	if len(args) > 0 && strings.HasPrefix(args[0], "-v") {
		return "printf -v assigns a variable; print the value instead"
	}
	return ""
}

func checkFile(args []string) string {
	if a := shortOrLong(args, 'C', "--compile"); a != "" {
		return "file -C writes a compiled magic file"
	}
	return ""
}

func checkDate(args []string) string {
	if a := shortOrLong(args, 's', "--set"); a != "" {
		return "date -s sets the system clock"
	}
	return ""
}

// checkTest denies -v, which evaluates an array subscript (code) in bash.
func checkTest(args []string) string {
	if slices.Contains(args, "-v") || slices.Contains(args, "-R") {
		return "test -v is not allowed (bash evaluates its argument's subscript as code)"
	}
	return ""
}

// checkDoubleBracket denies [[ arithmetic comparisons: bash evaluates
// their operands as arithmetic, and variables' values recursively, which
// can run commands ('a[$(cmd)]'). Use test or [ instead.
func checkDoubleBracket(args []string) string {
	for _, a := range args {
		switch a {
		case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
			return fmt.Sprintf("[[ ... %s ... ]] evaluates its operands as arithmetic code; use [ ... %s ... ] (test) instead", a, a)
		}
	}
	return checkTest(args)
}

// shortOrLong returns the first argument that is the short option c (alone
// or in a cluster like -xc) or the long option long (alone or with =).
func shortOrLong(args []string, c byte, long string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if long != "" && (a == long || strings.HasPrefix(a, long+"=")) {
			return a
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return a
		}
	}
	return ""
}

func readOnlyCommandNames() []string {
	names := make([]string, 0, len(readOnlyCommands))
	for n := range readOnlyCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// bashReadOnlyViolation returns why cmd is not read-only, "" if it is.
func bashReadOnlyViolation(cmd string) string {
	cmds, subst := parseShell(cmd)
	if subst {
		return "command substitution ($(...), backticks, <(...)) and expansions that evaluate code ($[...], ${!x}, ${a[i]}, ${x@P}) are not allowed; run the commands one by one"
	}
	for _, c := range cmds {
		for _, r := range c.redirs {
			if r.writes() {
				return fmt.Sprintf("the redirection %q writes the file %q", r.op, r.target)
			}
		}
		for _, w := range c.words {
			if !assignRe.MatchString(w) && !shellKeywords[w] {
				break
			}
			if assignRe.MatchString(w) {
				if why := checkAssignment(w); why != "" {
					return why
				}
			}
		}
		words := commandWords(c.words)
		if len(words) == 0 {
			if v := loopVar(c.words); v != "" && !loopVarRe.MatchString(v) {
				return fmt.Sprintf("the loop variable %q may be read by programs from the environment; use a lower-case name", v)
			}
			continue
		}
		name := words[0]
		if strings.Contains(name, "/") {
			return fmt.Sprintf("%q: run commands by name, not by path", name)
		}
		if verb, ok := writerVerbs[name]; ok {
			return fmt.Sprintf("%q %s", name, verb)
		}
		check, ok := readOnlyCommands[name]
		if !ok {
			return fmt.Sprintf("%q is not on the read-only command list (%s)", name, strings.Join(readOnlyCommandNames(), " "))
		}
		if check != nil {
			if why := check(words[1:]); why != "" {
				return why
			}
		}
	}
	return ""
}

func hasArg(args []string, names ...string) string {
	for _, a := range args {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return a
			}
		}
	}
	return ""
}

func positional(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

func checkFind(args []string) string {
	if a := hasArg(args, "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"); a != "" {
		return fmt.Sprintf("find %s can change files or run commands", a)
	}
	return ""
}

func checkRg(args []string) string {
	if a := hasArg(args, "--pre"); a != "" {
		return "rg --pre runs a command"
	}
	return ""
}

func checkTree(args []string) string {
	if a := hasArg(args, "-o"); a != "" {
		return "tree -o writes a file"
	}
	return ""
}

func checkSort(args []string) string {
	for _, a := range args {
		if a == "-o" || strings.HasPrefix(a, "--output") || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
			return "sort -o writes a file"
		}
		if strings.HasPrefix(a, "--compress-program") {
			return "sort --compress-program runs a command"
		}
	}
	return ""
}

func checkUniq(args []string) string {
	if len(positional(args)) > 1 {
		return "uniq with an output file writes it"
	}
	return ""
}

func checkEnv(args []string) string {
	for _, a := range args {
		if a == "-S" || strings.HasPrefix(a, "--split-string") || (!strings.HasPrefix(a, "-") && !assignRe.MatchString(a)) {
			return "env with a command runs that command; run it directly"
		}
	}
	return ""
}

func checkCommand(args []string) string {
	if len(args) > 0 && (args[0] == "-v" || args[0] == "-V") {
		return ""
	}
	return "command runs another command; run it directly"
}

// checkSed allows sed scripts made only of commands that print, edit the
// pattern space or branch; w, W, e, the s flags w and e (write a file, run
// a command), -i (edit in place) and -f (a script the check cannot see)
// are denied.
func checkSed(args []string) string {
	var scripts []string
	hasE := false
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			return "sed --in-place changes files"
		case a == "--file" || strings.HasPrefix(a, "--file="):
			return "sed -f runs a script file the read-only check cannot see; give the script inline"
		case strings.HasPrefix(a, "--expression="):
			scripts, hasE = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case a == "--expression":
			if i+1 < len(args) {
				i++
				scripts, hasE = append(scripts, args[i]), true
			}
		case a == "--line-length" || a == "-l":
			i++
		case strings.HasPrefix(a, "--"):
			switch strings.SplitN(a, "=", 2)[0] {
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data",
				"--posix", "--debug", "--sandbox", "--line-length", "--follow-symlinks", "--help", "--version":
			default:
				return fmt.Sprintf("sed option %s is not allowed for read-only roles", a)
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 'n', 'E', 'r', 's', 'u', 'z':
				case 'l':
					if k == len(a)-1 {
						i++
					}
					k = len(a)
				case 'i':
					return "sed -i changes files"
				case 'f':
					return "sed -f runs a script file the read-only check cannot see; give the script inline"
				case 'e':
					hasE = true
					if k+1 < len(a) {
						scripts = append(scripts, a[k+1:])
					} else if i+1 < len(args) {
						i++
						scripts = append(scripts, args[i])
					}
					k = len(a)
				default:
					return fmt.Sprintf("sed option -%c is not allowed for read-only roles", a[k])
				}
			}
		default:
			rest = append(rest, a)
		}
	}
	if !hasE && len(rest) > 0 {
		scripts = append(scripts, rest[0])
	}
	for _, sc := range scripts {
		if why := sedScriptViolation(sc); why != "" {
			return "sed script " + strconv.Quote(sc) + ": " + why
		}
	}
	return ""
}

// sedScriptViolation parses a sed script (GNU syntax) and returns why it
// may write a file or run a command, "" if it only reads. What it does not
// understand is denied.
func sedScriptViolation(sc string) string {
	i := 0
	skipSpace := func() {
		for i < len(sc) && (sc[i] == ' ' || sc[i] == '\t') {
			i++
		}
	}
	// delimited skips a delimited part (regex or replacement) ending at an
	// unescaped delim; false when it does not end.
	delimited := func(delim byte) bool {
		for i < len(sc) {
			switch sc[i] {
			case '\\':
				i += 2
				continue
			case '\n':
				return false
			case delim:
				i++
				return true
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(sc) && (sc[i] >= '0' && sc[i] <= '9'):
			for i < len(sc) && (sc[i] >= '0' && sc[i] <= '9' || sc[i] == '~') {
				i++
			}
		case i < len(sc) && sc[i] == '$':
			i++
		case i < len(sc) && sc[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < len(sc) && (sc[i] == 'I' || sc[i] == 'M') {
				i++
			}
		case i+1 < len(sc) && sc[i] == '\\':
			d := sc[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		return true
	}
	toLineEnd := func() {
		for i < len(sc) && sc[i] != '\n' {
			i++
		}
	}
	for i < len(sc) {
		skipSpace()
		if i >= len(sc) {
			break
		}
		if c := sc[i]; c == ';' || c == '\n' || c == '}' {
			i++
			continue
		}
		if !address() {
			return "unterminated address"
		}
		skipSpace()
		if i < len(sc) && sc[i] == ',' {
			i++
			skipSpace()
			if i < len(sc) && (sc[i] == '+' || sc[i] == '~') {
				i++
			}
			if !address() {
				return "unterminated address"
			}
		}
		skipSpace()
		for i < len(sc) && sc[i] == '!' {
			i++
			skipSpace()
		}
		if i >= len(sc) {
			return "address without a command"
		}
		c := sc[i]
		i++
		switch c {
		case 'p', 'P', '=', 'l', 'q', 'Q', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', 'F', '{':
		case '#', ':', 'b', 't', 'T', 'a', 'i', 'c', 'r', 'R':
			// Labels, branches, text and reading files run to the end
			// of the line (labels and branches also end at ';').
			if c == 'b' || c == 't' || c == 'T' {
				for i < len(sc) && sc[i] != ';' && sc[i] != '\n' && sc[i] != '}' {
					i++
				}
			} else {
				toLineEnd()
			}
		case 's', 'y':
			if i >= len(sc) || sc[i] == '\n' || sc[i] == '\\' {
				return "bad " + string(c) + " command"
			}
			d := sc[i]
			i++
			for range 2 { // pattern, then replacement
				if !delimited(d) {
					return "unterminated " + string(c) + " command"
				}
			}
			if c == 'y' {
				break
			}
			for i < len(sc) && strings.IndexByte("gpiImM0123456789", sc[i]) >= 0 {
				i++
			}
			if i < len(sc) && (sc[i] == 'w' || sc[i] == 'e') {
				return "the s flag " + string(sc[i]) + " writes a file or runs a command"
			}
		case 'w', 'W':
			return "the " + string(c) + " command writes a file"
		case 'e':
			return "the e command runs a command"
		default:
			return fmt.Sprintf("the command %q is not known to be read-only", c)
		}
	}
	return ""
}

var gitReadOnly = map[string]bool{
	"log": true, "show": true, "diff": true, "status": true, "blame": true, "ls-files": true, "ls-tree": true,
	"rev-parse": true, "rev-list": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true,
	"show-ref": true, "diff-tree": true, "diff-files": true, "diff-index": true, "merge-base": true,
	"name-rev": true, "count-objects": true, "for-each-ref": true, "whatchanged": true, "version": true,
	"branch": true, "tag": true, "remote": true, "config": true, "stash": true, "worktree": true,
	"reflog": true,
}

func checkGit(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch a := args[i]; {
		case a == "-C":
			i += 2
			continue
		case a == "--no-pager" || a == "-P" || a == "--no-optional-locks":
			i++
			continue
		default:
			// -c, --config-env, --exec-path, --git-dir, --work-tree,
			// -p/--paginate and the rest can make git run programs.
			return fmt.Sprintf("git option %s is not allowed for read-only roles (allowed before the command: -C <dir>, --no-pager)", a)
		}
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	if sub == "help" {
		return "git help opens a viewer program; use git <command> -h"
	}
	if !gitReadOnly[sub] {
		return fmt.Sprintf("git %s may change the repository", sub)
	}
	if a := hasArg(rest, "--output", "--open-files-in-pager", "--ext-diff", "--textconv", "--filters"); a != "" {
		return fmt.Sprintf("git %s %s writes files or runs a program", sub, a)
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "-O") {
			return fmt.Sprintf("git %s %s runs a program", sub, a)
		}
	}
	pos := positional(rest)
	switch sub {
	case "branch", "tag":
		if a := hasArg(rest, "-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "--force",
			"-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-a", "-s", "--annotate", "--sign"); a != "" && !(sub == "branch" && a == "-a") {
			return fmt.Sprintf("git %s %s changes the repository", sub, a)
		}
		if len(pos) > 0 && hasArg(rest, "-l", "--list") == "" {
			return fmt.Sprintf("git %s with a name changes the repository; use git %s --list", sub, sub)
		}
	case "remote":
		if len(pos) > 0 && pos[0] != "show" && pos[0] != "get-url" {
			return "git remote " + pos[0] + " changes the repository"
		}
		if len(pos) > 1 && pos[0] == "show" && !slices.Contains(rest, "-n") {
			return "git remote show contacts the remote (and runs ssh); use git remote show -n or git remote -v"
		}
	case "config":
		if hasArg(rest, "--get", "--get-all", "--get-regexp", "--list", "-l") == "" {
			return "git config without --get/--list changes the configuration"
		}
	case "stash", "worktree":
		if len(pos) > 0 && pos[0] != "list" && pos[0] != "show" {
			return fmt.Sprintf("git %s %s changes the repository", sub, pos[0])
		}
		if len(pos) == 0 && sub == "stash" {
			return "git stash changes the working tree"
		}
	case "reflog":
		if len(pos) > 0 && pos[0] != "show" {
			return "git reflog " + pos[0] + " changes the repository"
		}
	}
	return ""
}

// goExecFlags are build flags that make the go command run a program.
var goExecFlags = map[string]bool{"toolexec": true, "vettool": true, "exec": true}

func checkGo(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && goExecFlags[name] {
			return fmt.Sprintf("go %s %s runs a program", args[0], a)
		}
	}
	switch args[0] {
	case "list", "doc", "version", "vet", "help":
		return ""
	case "env":
		if a := hasArg(args[1:], "-w", "-u"); a != "" {
			return "go env " + a + " changes the Go configuration"
		}
		return ""
	}
	return fmt.Sprintf("go %s may write files or run code", args[0])
}

// engineFiles are the files no agent may touch, even with full Bash.
var engineFiles = []string{"state.json", "events.jsonl"}

// bashTouchesEngineFiles returns why cmd would modify an engine-owned file,
// "" if it does not seem to.
func bashTouchesEngineFiles(cmd string) string {
	cmds, _ := parseShell(cmd)
	isEngine := func(w string) bool { return slices.Contains(engineFiles, path.Base(w)) }
	for _, c := range cmds {
		for _, r := range c.redirs {
			if r.writes() && isEngine(r.target) {
				return fmt.Sprintf("The command redirects output into %s.", r.target)
			}
		}
		words := commandWords(c.words)
		if len(words) == 0 {
			continue
		}
		name := path.Base(words[0])
		args := positional(words[1:])
		var targets []string
		switch name {
		case "cp", "install", "ln", "rsync", "scp":
			if len(args) > 0 {
				targets = args[len(args)-1:]
			}
		case "rm", "unlink", "shred", "mv", "touch", "truncate", "tee", "dd", "chmod", "chown":
			targets = args
		case "sed", "perl":
			if slices.ContainsFunc(words[1:], func(a string) bool {
				return strings.HasPrefix(a, "--in-place") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'i'))
			}) {
				targets = args
			}
		}
		for _, t := range targets {
			if isEngine(t) {
				return fmt.Sprintf("The command %s would modify %s.", name, t)
			}
		}
	}
	return ""
}
