package roles

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
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
				case s[i] == '`', s[i] == '$' && i+1 < len(s) && s[i+1] == '(':
					subst = true
					word.WriteByte(s[i])
				default:
					word.WriteByte(s[i])
				}
			}
		case c == '`', c == '$' && i+1 < len(s) && s[i+1] == '(':
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
	"true": nil, "false": nil, "test": nil, "[": nil, "[[": nil, "jq": nil, "column": nil, "paste": nil,
	"fold": nil, "od": nil, "hexdump": nil, "strings": nil, "seq": nil, "cd": nil, "pushd": nil, "popd": nil,
	"export": nil, "unset": nil, "set": nil, ":": nil, "printenv": nil, "env": checkEnv, "nproc": nil,
	"ps": nil, "sed": checkSed, "git": checkGit, "go": checkGo, "command": checkCommand, "sleep": nil,
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
		return "command substitution ($(...), backticks, <(...)) is not allowed; run the commands one by one"
	}
	for _, c := range cmds {
		for _, r := range c.redirs {
			if r.writes() {
				return fmt.Sprintf("the redirection %q writes the file %q", r.op, r.target)
			}
		}
		words := commandWords(c.words)
		if len(words) == 0 {
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

var sedWriteRe = regexp.MustCompile(`(^|[;{}\s/])[wWe](\s|$)`)

func checkSed(args []string) string {
	for _, a := range args {
		if a == "--in-place" || strings.HasPrefix(a, "--in-place=") {
			return "sed --in-place changes files"
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'i') {
			return "sed -i changes files"
		}
		if !strings.HasPrefix(a, "-") && sedWriteRe.MatchString(a) {
			return "this sed script may write files or run commands (w/W/e)"
		}
	}
	return ""
}

var gitReadOnly = map[string]bool{
	"log": true, "show": true, "diff": true, "status": true, "blame": true, "ls-files": true, "ls-tree": true,
	"rev-parse": true, "rev-list": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true,
	"show-ref": true, "diff-tree": true, "diff-files": true, "diff-index": true, "merge-base": true,
	"name-rev": true, "count-objects": true, "for-each-ref": true, "whatchanged": true, "version": true,
	"help": true, "branch": true, "tag": true, "remote": true, "config": true, "stash": true, "worktree": true,
	"reflog": true,
}

func checkGit(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		switch a := args[i]; {
		case a == "-C":
			i += 2
			continue
		case a == "--no-pager" || a == "-P" || a == "--no-optional-locks" || strings.HasPrefix(a, "--git-dir=") || strings.HasPrefix(a, "--work-tree="):
			i++
			continue
		default:
			return fmt.Sprintf("git option %s is not allowed for read-only roles", a)
		}
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	if !gitReadOnly[sub] {
		return fmt.Sprintf("git %s may change the repository", sub)
	}
	if a := hasArg(rest, "--output", "-O", "--open-files-in-pager"); a != "" {
		return fmt.Sprintf("git %s %s writes files or runs a program", sub, a)
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

func checkGo(args []string) string {
	if len(args) == 0 {
		return ""
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
