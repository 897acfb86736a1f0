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

// Kind is how an agent is run.
type Kind int

// Agent kinds.
const (
	Claude  Kind = iota // Claude Code
	Sim                 // the built-in simulated agent
	Command             // any other command (a config profile or a command line)
	Codex               // Codex CLI (npm @openai/codex)
	Gemini              // Gemini CLI (npm @google/gemini-cli)
)

// Agent is one agent profile a run uses, with the roles that use it.
type Agent struct {
	Name string // the profile as the user named it: "claude", "sim", "codex", "my-agent --x"
	Kind Kind
	// Argv0 is the program a Command agent runs; Shell says it is the
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
	// Bypass: a Claude agent runs in bypassPermissions mode (or with
	// --dangerously-skip-permissions) for at least one role.
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
	// CommandTimeout bounds each command (claude --version, claude auth
	// status); DialTimeout bounds the connection check.
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
		CommandTimeout: 3 * time.Second,
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
		switch a.Kind {
		case Sim:
			out = append(out, Result{Check: "sim", Msg: "built-in simulated agents for " + a.Roles + " (no Claude Code, no network needed)"})
		case Claude:
			out = append(out, claude(ctx, env, a)...)
		case Codex, Gemini:
			out = append(out, otherCLI(ctx, env, a)...)
		default:
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

// claude checks Claude Code: installed, its version, logged in, allowed
// to run in its permission mode as this user, and its API reachable.
func claude(ctx context.Context, env Env, a Agent) []Result {
	path, err := env.LookPath("claude")
	if err != nil {
		return []Result{{Check: "claude command", Status: Fail,
			Msg: "claude (Claude Code, the agent of " + a.Roles + ") is not on PATH",
			Fix: "npm install -g @anthropic-ai/claude-code; or try Hivemind without it: hivemind demo, or --agent sim"}}
	}
	out := []Result{{Check: "claude command", Msg: path}}
	var version, login, network Result
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); version = claudeVersion(ctx, env, path) }()
	go func() { defer wg.Done(); login = claudeLogin(ctx, env, path) }()
	go func() { defer wg.Done(); network = claudeNetwork(ctx, env) }()
	wg.Wait()
	out = append(out, version, login, claudeRoot(env, a), network)
	return out
}

func claudeVersion(ctx context.Context, env Env, path string) Result {
	r := Result{Check: "claude version"}
	ctx, cancel := context.WithTimeout(ctx, env.CommandTimeout)
	defer cancel()
	b, err := env.Output(ctx, path, "--version")
	v := firstLine(string(b))
	switch {
	case ctx.Err() != nil:
		r.Status, r.Msg = Warn, fmt.Sprintf("claude --version did not answer within %v", env.CommandTimeout)
		r.Fix = "run claude --version yourself: a first start may be slow, or waiting for input"
	case err != nil:
		r.Status, r.Msg = Fail, fmt.Sprintf("claude --version failed (%v)", errText(err, v))
		r.Fix = "reinstall Claude Code: npm install -g @anthropic-ai/claude-code"
	default:
		r.Msg = v
	}
	return r
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
// says what failed itself). Unlike workspace.Headline it keeps the spacing,
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

// NotFound is the first check of Run alone, for a screen that marks the
// agents it offers: why a's program is not on PATH, with how to install it
// where known, or "" when it is there or cannot be told (the sim agent, a
// shell line that does not start with a program). It runs no command: it
// costs a PATH lookup.
func NotFound(env Env, a Agent) string {
	prog, install := "", ""
	switch a.Kind {
	case Sim:
		return ""
	case Claude:
		prog, install = "claude", "npm install -g @anthropic-ai/claude-code"
	case Codex, Gemini:
		prog, install = cliChecks[a.Kind].bin, cliChecks[a.Kind].install
	default:
		if prog = a.Argv0; prog == "" || (a.Shell && !plainWord(prog)) {
			return ""
		}
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
