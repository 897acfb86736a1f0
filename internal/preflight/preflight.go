package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Status is the outcome of one check.
type Status int

// Outcomes, in order of severity.
const (
	OK Status = iota
	Warn
	Fail
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	default:
		return "fail"
	}
}

// CheckRoot is the check that Claude Code may bypass permissions as this
// user (its fix, IS_SANDBOX=1, is the user's call to make).
const CheckRoot = "claude as root"

// Result is one check: what was checked, what was found, and for a warning
// or failure what to do about it.
type Result struct {
	Check  string // e.g. "claude command", "claude login"
	Status Status
	Msg    string
	Fix    string
}

// String is the result on one line: status, check, finding, fix.
func (r Result) String() string {
	s := fmt.Sprintf("%-4s  %-16s %s", r.Status, r.Check, r.Msg)
	if r.Fix != "" {
		s += " — fix: " + r.Fix
	}
	return s
}

// CLI is what the preflight knows of a registered agent CLI
// (ptyagent/profiles fills it from each profile): its program, how to
// install it, the version Hivemind was tested with, the Node.js it needs,
// and its own checks.
type CLI struct {
	Bin     string // the program ("" for the built-in sim agent: nothing to look for)
	Title   string // what it is, for messages ("Claude Code")
	Install string // the install command, for fixes
	Tested  string // the version Hivemind was tested with ("" when none)
	Node    int    // the Node.js major version it needs (0: none)
	// About is the one line of a CLI without a program (the sim agent).
	About string
	// Checks are the CLI's own checks after its command and version
	// (login, keys, network), run concurrently with the version check.
	Checks func(ctx context.Context, env Env, a Agent, path string) []Result
}

// Agent is one agent profile a run uses, with the roles that use it.
type Agent struct {
	Name string // the profile as the user named it: "claude", "sim", "codex", "my-agent --x"
	// CLI is the registered CLI the agent runs; nil for a command (a
	// config profile or a command line), whose Argv0 is checked.
	CLI *CLI
	// Argv0 is the program a command agent runs; Shell says it is the
	// first word of a command line run with sh -c (then builtins and
	// expansions cannot be checked).
	Argv0 string
	Shell bool
	// Argv is the whole command a Command agent runs (sh -c line, or a
	// profile's command) and Dir the directory it runs in (the project):
	// relative program paths are taken from there, and Env.Probe runs it.
	Argv  []string
	Dir   string
	Roles string // who runs it, for messages: "lead, reviewer, 2 workers"
	// Bypass: the agent runs in bypassPermissions mode (or with
	// --dangerously-skip-permissions) for at least one role (Claude
	// Code's root check reads it).
	Bypass bool
}

// Env is the outside world the checks look at.
type Env struct {
	LookPath func(file string) (string, error)
	Getenv   func(key string) string
	// Root reports whether the process runs as root.
	Root bool
	// Container is a sign this is a container ("/.dockerenv"), or "".
	Container string
	// Output runs a command and returns its standard output; a non-zero
	// exit is an *exec.ExitError with the output still returned.
	Output func(ctx context.Context, argv ...string) ([]byte, error)
	// Dial opens a TCP connection (for the API reachability check).
	Dial func(ctx context.Context, address string) error
	// CommandTimeout bounds each command (<cli> --version, claude auth
	// status): generous, as a Node CLI's first start under load takes
	// seconds; DialTimeout bounds the connection check.
	CommandTimeout time.Duration
	DialTimeout    time.Duration
	// Probe, when set (hivemind doctor sets ProbeCommand), runs a custom
	// agent's command in a terminal to its first prompt, bounded; nil
	// checks only that it can start (a run's own preflight: no side
	// effects, no delay).
	Probe func(ctx context.Context, argv []string, dir string) Probe
}

// System is the real environment of this process.
func System() Env {
	container := ""
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			container = f
			break
		}
	}
	if container == "" && os.Getenv("container") != "" {
		container = "container=" + os.Getenv("container")
	}
	return Env{
		LookPath:  exec.LookPath,
		Getenv:    os.Getenv,
		Root:      os.Geteuid() == 0,
		Container: container,
		Output: func(ctx context.Context, argv ...string) ([]byte, error) {
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Stdin = nil
			cmd.WaitDelay = 500 * time.Millisecond // a child holding the pipe must not hold us
			return cmd.Output()
		},
		Dial: func(ctx context.Context, address string) error {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", address)
			if err != nil {
				return err
			}
			return c.Close()
		},
		CommandTimeout: 15 * time.Second,
		DialTimeout:    1500 * time.Millisecond,
	}
}

// Failed reports whether any result is a failure.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Error is a failed preflight: the results of every check.
type Error struct{ Results []Result }

// Error names the failed checks and their fixes in one line.
func (e *Error) Error() string {
	var parts []string
	for _, r := range e.Results {
		if r.Status == Fail {
			p := r.Check + ": " + r.Msg
			if r.Fix != "" {
				p += " (fix: " + r.Fix + ")"
			}
			parts = append(parts, p)
		}
	}
	return "agent setup: " + strings.Join(parts, "; ")
}

// Run checks every agent and returns the results in order. The slow
// checks (commands, network) run concurrently, each under its deadline.
func Run(ctx context.Context, env Env, agents []Agent) []Result {
	var out []Result
	seen := map[string]bool{}
	for _, a := range agents {
		if seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		if a.CLI != nil {
			out = append(out, cli(ctx, env, a)...)
		} else {
			out = append(out, command(ctx, env, a)...)
		}
	}
	return out
}

// shellWords are shell keywords and builtins a command line may start
// with: there is no program to look for.
var shellWords = map[string]bool{"exec": true, "cd": true, "export": true, "set": true, "source": true,
	".": true, "eval": true, "if": true, "for": true, "while": true, "{": true, "(": true, "command": true}

// plainWord reports whether w names a program (no expansion, no builtin).
func plainWord(w string) bool {
	return !shellWords[w] && !strings.ContainsAny(w, "$`(){};|&<>*?[]~'\"\\=")
}

// FirstWord returns the program a shell command line runs: its first word
// after leading VAR=value assignments, unquoted when the whole word is in
// quotes ('/opt/my agent/run' is not split). Anything else (an expansion,
// a builtin) is returned as is, and then not checked.
func FirstWord(line string) string {
	line = strings.TrimSpace(line)
	for line != "" {
		if q := line[0]; q == '\'' || q == '"' {
			if end := strings.IndexByte(line[1:], q); end >= 0 && (end+2 == len(line) || line[end+2] == ' ' || line[end+2] == '\t') {
				if w := line[1 : end+1]; !strings.ContainsAny(w, "$`\\") {
					return w
				}
			}
		}
		w, rest, _ := strings.Cut(line, " ")
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && !strings.ContainsAny(k, "/$`'\"") {
			line = strings.TrimSpace(rest)
			continue
		}
		return w
	}
	return ""
}

// cli checks a registered CLI: on PATH, its version against the tested
// one, the Node.js it needs, then its own checks (concurrently).
func cli(ctx context.Context, env Env, a Agent) []Result {
	c := a.CLI
	if c.Bin == "" {
		return []Result{{Check: a.Name, Msg: c.About + " for " + a.Roles}}
	}
	path, err := env.LookPath(c.Bin)
	if err != nil {
		who := "the agent of " + a.Roles
		if c.Title != "" {
			who = c.Title + ", " + who
		}
		return []Result{{Check: c.Bin + " command", Status: Fail,
			Msg: fmt.Sprintf("%s (%s) is not on PATH", c.Bin, who),
			Fix: c.Install + "; or choose another agent for those roles (--agent, [roles.<role>] agent); hivemind demo runs without any agent installed"}}
	}
	out := []Result{{Check: c.Bin + " command", Msg: path + " for " + a.Roles}}
	var version []Result
	var own []Result
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); version = cliVersion(ctx, env, c, path) }()
	if c.Checks != nil {
		wg.Add(1)
		go func() { defer wg.Done(); own = c.Checks(ctx, env, a, path) }()
	}
	wg.Wait()
	return append(append(out, version...), own...)
}

// versionRE finds a version number in a CLI's --version output.
var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+[\w.-]*`)

// cliVersion runs `<bin> --version` and says whether it is the version
// Hivemind was tested with, and whether Node.js is recent enough.
func cliVersion(ctx context.Context, env Env, c *CLI, path string) []Result {
	r := Result{Check: c.Bin + " version"}
	vctx, cancel := context.WithTimeout(ctx, env.CommandTimeout)
	defer cancel()
	b, err := env.Output(vctx, path, "--version")
	v := firstLine(string(b))
	switch {
	case vctx.Err() != nil:
		r.Status, r.Msg = Warn, fmt.Sprintf("%s --version did not answer within %v", c.Bin, env.CommandTimeout)
		r.Fix = "run " + c.Bin + " --version yourself: a first start may be slow, or waiting for input"
	case err != nil:
		r.Status, r.Msg = Fail, fmt.Sprintf("%s --version failed (%v)", c.Bin, errText(err, v))
		r.Fix = "reinstall it: " + c.Install
	default:
		r.Msg = TestedWith(c.Tested, v)
		if have := versionRE.FindString(v); c.Tested != "" && have != c.Tested {
			r.Status = Warn
			r.Fix = "if its agents misbehave, install the tested version: " + pinned(c.Install, c.Tested)
		}
	}
	out := []Result{r}
	if c.Node > 0 {
		if n := nodeCheck(ctx, env, c); n != nil {
			out = append(out, *n)
		}
	}
	return out
}

// TestedWith is a CLI's version line against the tested version:
// "2.1.197 (Claude Code); tested with 2.1.197" or "…; tested with X; you have Y".
func TestedWith(tested, said string) string {
	if tested == "" {
		return said
	}
	have := versionRE.FindString(said)
	switch {
	case have == tested:
		return said + "; tested with " + tested
	case have == "":
		return fmt.Sprintf("%s; tested with %s; cannot tell which version this is", said, tested)
	}
	return fmt.Sprintf("tested with %s; you have %s", tested, have)
}

// pinned is an npm install command for exactly version v.
func pinned(install, v string) string {
	f := strings.Fields(install)
	if len(f) == 0 {
		return install
	}
	f[len(f)-1] += "@" + v
	return strings.Join(f, " ")
}

// nodeCheck says whether node on PATH is at least c.Node; nil when node
// cannot be asked (a CLI that ships its own runtime still runs).
func nodeCheck(ctx context.Context, env Env, c *CLI) *Result {
	path, err := env.LookPath("node")
	if err != nil {
		return nil
	}
	nctx, cancel := context.WithTimeout(ctx, env.CommandTimeout)
	defer cancel()
	b, err := env.Output(nctx, path, "--version")
	if err != nil {
		return nil
	}
	v := strings.TrimPrefix(firstLine(string(b)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return nil
	}
	r := Result{Check: c.Bin + " runtime", Msg: fmt.Sprintf("Node %s (needs ≥ %d)", v, c.Node)}
	if n < c.Node {
		r.Status = Fail
		r.Fix = fmt.Sprintf("install Node.js %d or newer (%s needs it)", c.Node, c.Bin)
	}
	return &r
}

// authStatus is `claude auth status --json` (Claude Code 2.1.x).
type authStatus struct {
	LoggedIn     *bool  `json:"loggedIn"`
	AuthMethod   string `json:"authMethod"`
	APIProvider  string `json:"apiProvider"`
	APIKeySource string `json:"apiKeySource"`
}

func claudeLogin(ctx context.Context, env Env, path string) Result {
	r := Result{Check: "claude login"}
	ctx, cancel := context.WithTimeout(ctx, env.CommandTimeout)
	defer cancel()
	b, err := env.Output(ctx, path, "auth", "status", "--json")
	var st authStatus
	if jerr := json.Unmarshal(b, &st); jerr == nil && st.LoggedIn != nil {
		if *st.LoggedIn {
			how := st.AuthMethod
			if st.APIKeySource != "" {
				how += " from " + st.APIKeySource
			}
			if st.APIProvider != "" && st.APIProvider != "firstParty" {
				how += ", " + st.APIProvider
			}
			r.Msg = "logged in (" + how + ")"
			return r
		}
		r.Status, r.Msg = Fail, "Claude Code is not logged in: its agents would stop at \"Please run /login\""
		r.Fix = "export ANTHROPIC_API_KEY=…, or run claude once and log in with /login (claude setup-token for a long-lived token)"
		return r
	}
	// An older Claude Code without `auth status`: look for the usual
	// credentials instead.
	if ctx.Err() != nil {
		r.Status, r.Msg = Warn, fmt.Sprintf("claude auth status did not answer within %v; login not checked", env.CommandTimeout)
		return r
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
		"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if env.Getenv(k) != "" {
			r.Msg = k + " is set"
			return r
		}
	}
	r.Status = Warn
	r.Msg = fmt.Sprintf("could not ask Claude Code whether it is logged in (%v) and no API key is set", errText(err, firstLine(string(b))))
	r.Fix = "if the agents stop at a login prompt: export ANTHROPIC_API_KEY=…, or run claude and /login"
	return r
}

func claudeRoot(env Env, a Agent) Result {
	r := Result{Check: CheckRoot}
	switch {
	case !env.Root:
		r.Msg = "not running as root"
	case !a.Bypass:
		r.Msg = "root, and no role bypasses permissions"
	case env.Getenv("IS_SANDBOX") == "1":
		r.Msg = "root with IS_SANDBOX=1: Claude Code may bypass permissions (the agents run unattended)"
	default:
		r.Status = Fail
		r.Msg = "running as root: Claude Code refuses to bypass permissions (the mode Hivemind's agents run in) under root unless told it is in a sandbox"
		where := "if this is a container or VM you can throw away"
		if env.Container != "" {
			where = "this looks like a container (" + env.Container + "): if it is one you can throw away"
		}
		r.Fix = where + ", run IS_SANDBOX=1 hivemind …; otherwise run hivemind as a normal user, or set permission_mode = \"acceptEdits\" under [roles.lead], [roles.reviewer] and [roles.worker] in .hivemind/config.toml (agents then stop at some permission prompts)"
	}
	return r
}

// defaultAPI is where Claude Code connects without ANTHROPIC_BASE_URL.
const defaultAPI = "https://api.anthropic.com"

func claudeNetwork(ctx context.Context, env Env) Result {
	r := Result{Check: "claude network"}
	for _, k := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if env.Getenv(k) != "" {
			r.Msg = k + " is set: the cloud provider's endpoint is not checked"
			return r
		}
	}
	base, what := env.Getenv("ANTHROPIC_BASE_URL"), "ANTHROPIC_BASE_URL"
	if base == "" {
		base, what = defaultAPI, "the Anthropic API"
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		r.Status, r.Msg = Fail, fmt.Sprintf("ANTHROPIC_BASE_URL=%q is not an http(s) URL", base)
		r.Fix = "set it to the API's address, e.g. https://api.anthropic.com, or unset it"
		return r
	}
	target := hostPort(u)
	via := ""
	if p := proxyFor(env, u); p != "" {
		pu, err := url.Parse(p)
		if err != nil || pu.Host == "" {
			r.Status, r.Msg = Warn, fmt.Sprintf("proxy %q is not a URL; network not checked", p)
			return r
		}
		via = " via proxy " + hostPort(pu)
		target = hostPort(pu)
	}
	ctx, cancel := context.WithTimeout(ctx, env.DialTimeout)
	defer cancel()
	if err := env.Dial(ctx, target); err != nil {
		r.Status = Fail
		r.Msg = fmt.Sprintf("cannot reach %s (%s%s): %v", what, hostPort(u), via, errText(err, ""))
		r.Fix = "check the network connection (or HTTPS_PROXY); for a local or corporate endpoint set ANTHROPIC_BASE_URL"
		if what == "ANTHROPIC_BASE_URL" {
			r.Fix = "start the server ANTHROPIC_BASE_URL points at, correct it, or unset it to use the Anthropic API"
		}
		return r
	}
	r.Msg = "reached " + hostPort(u) + via
	return r
}

// hostPort is the host:port a URL connects to.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// proxyFor returns the proxy the environment names for u, or "" (NO_PROXY
// hosts and domain suffixes respected; the loopback never goes through
// a proxy).
func proxyFor(env Env, u *url.URL) string {
	get := func(k string) string {
		if v := env.Getenv(k); v != "" {
			return v
		}
		return env.Getenv(strings.ToLower(k))
	}
	host := u.Hostname()
	if host == "localhost" || net.ParseIP(host).IsLoopback() {
		return ""
	}
	for _, n := range strings.Split(get("NO_PROXY"), ",") {
		n = strings.TrimSpace(n)
		if n == "*" {
			return ""
		}
		n = strings.TrimPrefix(strings.TrimPrefix(n, "*"), ".")
		if n != "" && (host == n || strings.HasSuffix(host, "."+n)) {
			return ""
		}
	}
	p := get("HTTPS_PROXY")
	if u.Scheme == "http" {
		p = get("HTTP_PROXY")
	}
	if p != "" && !strings.Contains(p, "://") {
		p = "http://" + p
	}
	return p
}

// firstLine is the first line of a command's output, trimmed: a version or
// an error as the CLI printed it, "" when it printed nothing (errText then
// says what failed itself). Unlike vocab.Headline it keeps the spacing,
// and unlike remote's it adds no words of its own.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// errText is err, with the command's own words when it printed any.
func errText(err error, said string) string {
	if err == nil {
		return said
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if said == "" {
			said = firstLine(string(ee.Stderr))
		}
		if said != "" {
			return fmt.Sprintf("exit code %d: %s", ee.ExitCode(), said)
		}
	}
	return err.Error()
}

// ClaudeChecks are Claude Code's own checks: logged in, allowed to run
// in its permission mode as this user, and its API reachable.
func ClaudeChecks(ctx context.Context, env Env, a Agent, path string) []Result {
	var login, network Result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); login = claudeLogin(ctx, env, path) }()
	go func() { defer wg.Done(); network = claudeNetwork(ctx, env) }()
	wg.Wait()
	return []Result{login, claudeRoot(env, a), network}
}

// NotFound is the first check of Run alone, for a screen that marks the
// agents it offers: why a's program is not on PATH, with how to install it
// where known, or "" when it is there or cannot be told (the sim agent, a
// shell line that does not start with a program). It runs no command: it
// costs a PATH lookup.
func NotFound(env Env, a Agent) string {
	prog, install := a.Argv0, ""
	switch {
	case a.CLI != nil:
		prog, install = a.CLI.Bin, a.CLI.Install
		if prog == "" {
			return ""
		}
	case prog == "" || (a.Shell && !plainWord(prog)):
		return ""
	}
	if _, err := env.LookPath(prog); err == nil {
		return ""
	}
	if p, ok := nonExecutable(env, prog); ok {
		return prog + " is not executable (chmod +x " + p + ")"
	}
	msg := prog + " is not on PATH"
	if install != "" {
		msg += " (" + install + ")"
	}
	return msg
}
