package preflight

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeWorld is a fake PATH, environment, user, commands and network.
type fakeWorld struct {
	path    map[string]string // program → full path
	env     map[string]string
	root    bool
	outputs map[string]fakeOut // "claude --version" → output
	up      map[string]bool    // host:port that accept connections
	mu      sync.Mutex         // the checks run concurrently
	calls   []string
	dialed  []string
}

type fakeOut struct {
	out  string
	err  error
	hang bool // never answers (until the deadline)
}

func (w *fakeWorld) env_() Env {
	return Env{
		LookPath: func(f string) (string, error) {
			if p, ok := w.path[f]; ok {
				return p, nil
			}
			return "", exec.ErrNotFound
		},
		Getenv: func(k string) string { return w.env[k] },
		Root:   w.root,
		Output: func(ctx context.Context, argv ...string) ([]byte, error) {
			key := strings.Join(argv, " ")
			w.mu.Lock()
			w.calls = append(w.calls, key)
			w.mu.Unlock()
			o, ok := w.outputs[key]
			if !ok {
				return nil, errors.New("unexpected command " + key)
			}
			if o.hang {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return []byte(o.out), o.err
		},
		Dial: func(ctx context.Context, addr string) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.dialed = append(w.dialed, addr)
			if w.up[addr] {
				return nil
			}
			return errors.New("connection refused")
		},
		CommandTimeout: 200 * time.Millisecond,
		DialTimeout:    200 * time.Millisecond,
	}
}

// healthyClaude is a machine where Claude Code can run.
func healthyClaude() *fakeWorld {
	return &fakeWorld{
		path: map[string]string{"claude": "/usr/bin/claude"},
		env:  map[string]string{"ANTHROPIC_API_KEY": "sk-x"},
		outputs: map[string]fakeOut{
			"/usr/bin/claude --version":          {out: "2.1.197 (Claude Code)\n"},
			"/usr/bin/claude auth status --json": {out: `{"loggedIn": true, "authMethod": "api_key", "apiProvider": "firstParty", "apiKeySource": "ANTHROPIC_API_KEY"}`},
		},
		up: map[string]bool{"api.anthropic.com:443": true},
	}
}

var claudeAgent = Agent{Name: "claude", CLI: testClaude, Roles: "lead, reviewer, 2 workers", Bypass: true}

// find returns the result of the named check.
func find(t *testing.T, rs []Result, check string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no %q check in %v", check, rs)
	return Result{}
}

func TestClaudeChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		world  func(w *fakeWorld)
		agent  Agent
		check  string
		status Status
		msg    string // substring of Msg
		fix    string // substring of Fix
	}{
		{name: "healthy: command", check: "claude command", status: OK, msg: "/usr/bin/claude"},
		{name: "healthy: version", check: "claude version", status: OK, msg: "2.1.197 (Claude Code)"},
		{name: "healthy: login", check: "claude login", status: OK, msg: "logged in (api_key from ANTHROPIC_API_KEY)"},
		{name: "healthy: root", check: "claude as root", status: OK, msg: "not running as root"},
		{name: "healthy: network", check: "claude network", status: OK, msg: "reached api.anthropic.com:443"},
		{name: "missing binary", world: func(w *fakeWorld) { delete(w.path, "claude") },
			check: "claude command", status: Fail, msg: "not on PATH", fix: "npm install -g @anthropic-ai/claude-code"},
		{name: "version fails", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude --version"] = fakeOut{out: "", err: errors.New("exit status 127")}
		}, check: "claude version", status: Fail, msg: "claude --version failed", fix: "reinstall"},
		{name: "version hangs", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude --version"] = fakeOut{hang: true}
		}, check: "claude version", status: Warn, msg: "did not answer within"},
		{name: "not logged in", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude auth status --json"] = fakeOut{out: `{"loggedIn": false, "authMethod": "none"}`, err: errors.New("exit status 1")}
		}, check: "claude login", status: Fail, msg: "not logged in", fix: "ANTHROPIC_API_KEY"},
		{name: "old claude without auth status, key set", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude auth status --json"] = fakeOut{out: "error: unknown command 'auth'", err: errors.New("exit status 1")}
		}, check: "claude login", status: OK, msg: "ANTHROPIC_API_KEY is set"},
		{name: "old claude without auth status, no key", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude auth status --json"] = fakeOut{out: "error: unknown command 'auth'", err: errors.New("exit status 1")}
			delete(w.env, "ANTHROPIC_API_KEY")
		}, check: "claude login", status: Warn, msg: "could not ask Claude Code"},
		{name: "bedrock login", world: func(w *fakeWorld) {
			w.outputs["/usr/bin/claude auth status --json"] = fakeOut{out: `{"loggedIn": true, "authMethod": "third_party", "apiProvider": "bedrock"}`}
		}, check: "claude login", status: OK, msg: "third_party, bedrock"},
		{name: "root bypassing permissions", world: func(w *fakeWorld) { w.root = true },
			check: "claude as root", status: Fail, msg: "refuses to bypass permissions", fix: "IS_SANDBOX=1 hivemind"},
		{name: "root in a sandbox", world: func(w *fakeWorld) { w.root = true; w.env["IS_SANDBOX"] = "1" },
			check: "claude as root", status: OK, msg: "IS_SANDBOX=1"},
		{name: "root without bypass", world: func(w *fakeWorld) { w.root = true },
			agent: Agent{Name: "claude", CLI: testClaude, Roles: "lead"}, check: "claude as root", status: OK, msg: "no role bypasses"},
		{name: "no network", world: func(w *fakeWorld) { w.up = nil },
			check: "claude network", status: Fail, msg: "cannot reach the Anthropic API (api.anthropic.com:443)", fix: "HTTPS_PROXY"},
		{name: "base url down", world: func(w *fakeWorld) { w.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:8080/v1" },
			check: "claude network", status: Fail, msg: "cannot reach ANTHROPIC_BASE_URL (127.0.0.1:8080)", fix: "start the server"},
		{name: "base url up", world: func(w *fakeWorld) {
			w.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:8080"
			w.up["127.0.0.1:8080"] = true
		}, check: "claude network", status: OK, msg: "reached 127.0.0.1:8080"},
		{name: "base url not a url", world: func(w *fakeWorld) { w.env["ANTHROPIC_BASE_URL"] = "localhost:8080" },
			check: "claude network", status: Fail, msg: "not an http(s) URL"},
		{name: "through a proxy", world: func(w *fakeWorld) {
			w.env["HTTPS_PROXY"] = "proxy.corp:3128"
			w.up = map[string]bool{"proxy.corp:3128": true}
		}, check: "claude network", status: OK, msg: "via proxy proxy.corp:3128"},
		{name: "no_proxy skips the proxy", world: func(w *fakeWorld) {
			w.env["https_proxy"] = "http://proxy.corp:3128"
			w.env["no_proxy"] = ".anthropic.com"
		}, check: "claude network", status: OK, msg: "reached api.anthropic.com:443"},
		{name: "vertex not dialled", world: func(w *fakeWorld) { w.env["CLAUDE_CODE_USE_VERTEX"] = "1"; w.up = nil },
			check: "claude network", status: OK, msg: "not checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := healthyClaude()
			if tc.world != nil {
				tc.world(w)
			}
			a := claudeAgent
			if tc.agent.Name != "" {
				a = tc.agent
			}
			rs := Run(context.Background(), w.env_(), []Agent{a})
			r := find(t, rs, tc.check)
			if r.Status != tc.status || !strings.Contains(r.Msg, tc.msg) || !strings.Contains(r.Fix, tc.fix) {
				t.Errorf("got %s\nwant status %s, msg ~%q, fix ~%q", r, tc.status, tc.msg, tc.fix)
			}
			if (tc.status == Fail) != Failed(rs) {
				t.Errorf("Failed = %v with %v", Failed(rs), rs)
			}
			if r.Status == Fail && r.Fix == "" {
				t.Errorf("a failure without a fix: %s", r)
			}
		})
	}
}

// A missing claude stops at the first check: no command is run.
func TestClaudeMissingRunsNothing(t *testing.T) {
	w := healthyClaude()
	w.path = nil
	rs := Run(context.Background(), w.env_(), []Agent{claudeAgent})
	if len(rs) != 1 || rs[0].Status != Fail || len(w.calls) != 0 || len(w.dialed) != 0 {
		t.Fatalf("results %v, commands %v, dialled %v", rs, w.calls, w.dialed)
	}
	e := &Error{Results: rs}
	if !strings.Contains(e.Error(), "claude command: claude (Claude Code, the agent of lead, reviewer, 2 workers) is not on PATH (fix: npm install") {
		t.Errorf("error: %s", e)
	}
}

// The slow checks run side by side: each of the three waits until the
// other two have started, or until its deadline (generous: a loaded
// machine is slow to start them). Run one after another, the first would
// wait alone until its deadline.
func TestClaudeChecksRunConcurrently(t *testing.T) {
	w := healthyClaude()
	env := w.env_()
	env.CommandTimeout, env.DialTimeout = time.Minute, time.Minute
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	var alone atomic.Int32
	wait := func(ctx context.Context) error {
		started.Done()
		select {
		case <-all:
			return errors.New("refused")
		case <-ctx.Done():
			alone.Add(1)
			return ctx.Err()
		}
	}
	output := env.Output
	env.Output = func(ctx context.Context, argv ...string) ([]byte, error) {
		switch strings.Join(argv, " ") {
		case "/usr/bin/claude --version", "/usr/bin/claude auth status --json":
			return nil, wait(ctx)
		}
		return output(ctx, argv...)
	}
	env.Dial = func(ctx context.Context, addr string) error { return wait(ctx) }
	rs := Run(context.Background(), env, []Agent{claudeAgent})
	if n := alone.Load(); n > 0 {
		t.Errorf("%d of the three slow checks waited alone until their deadline: they do not run side by side", n)
	}
	if r := find(t, rs, "claude network"); r.Status != Fail {
		t.Errorf("network: %s", r)
	}
}

func TestCommandAgents(t *testing.T) {
	w := &fakeWorld{path: map[string]string{"codex": "/usr/local/bin/codex", "bash": "/bin/bash"}}
	for _, tc := range []struct {
		agent  Agent
		status Status
		msg    string
	}{
		{Agent{Name: "codex", Argv0: "codex", Roles: "lead"}, OK, "/usr/local/bin/codex for lead"},
		{Agent{Name: "gemini", Argv0: "gemini", Roles: "lead"}, Fail, "gemini (the agent of lead) is not installed"},
		{Agent{Name: "FOO=1 bash -c x", Argv0: FirstWord("FOO=1 bash -c x"), Shell: true, Roles: "lead"}, OK, "/bin/bash"},
		{Agent{Name: "my-agnet --fast", Argv0: FirstWord("my-agnet --fast"), Shell: true, Roles: "lead"}, Fail, "my-agnet (the agent of lead) is not installed"},
		{Agent{Name: "exec foo", Argv0: FirstWord("exec foo"), Shell: true, Roles: "lead"}, Warn, "not checked"},
		{Agent{Name: "$AGENT", Argv0: FirstWord("$AGENT"), Shell: true, Roles: "lead"}, Warn, "not checked"},
		{Agent{Name: "sim", CLI: testSim, Roles: "lead"}, OK, "built-in simulated agents"},
	} {
		rs := Run(context.Background(), w.env_(), []Agent{tc.agent})
		if len(rs) != 1 || rs[0].Status != tc.status || !strings.Contains(rs[0].Msg, tc.msg) {
			t.Errorf("%q: got %v, want %s ~%q", tc.agent.Name, rs, tc.status, tc.msg)
		}
	}
}

func TestFirstWord(t *testing.T) {
	for in, want := range map[string]string{
		"codex --full-auto":          "codex",
		"  FOO=1 BAR=x my-agent --x": "my-agent",
		"'/opt/my agent/run' -v":     "/opt/my agent/run",
		`"/usr/bin/tool"`:            "/usr/bin/tool",
		"'$HOME/x' y":                "'$HOME/x'",
		"$AGENT --x":                 "$AGENT",
		"exec foo":                   "exec",
		"FOO=1":                      "",
		"":                           "",
		"/bin/sh -c 'echo hi'":       "/bin/sh",
	} {
		if got := FirstWord(in); got != want {
			t.Errorf("FirstWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResultLine(t *testing.T) {
	r := Result{Check: "claude command", Status: Fail, Msg: "not found", Fix: "install it"}
	if got, want := r.String(), "fail  claude command   not found — fix: install it"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if strings.Contains(r.String(), "\n") {
		t.Error("a result takes more than one line")
	}
}

// NotFound is the PATH check of Run alone: it marks what Run fails for a
// missing program, and says how to install a built-in CLI.
func TestNotFound(t *testing.T) {
	w := &fakeWorld{path: map[string]string{"codex": "/usr/local/bin/codex", "bash": "/bin/bash"}}
	for _, tc := range []struct {
		agent Agent
		want  string
	}{
		{claudeAgent, "claude is not on PATH (npm install -g @anthropic-ai/claude-code)"},
		{Agent{Name: "codex", CLI: testCodex}, ""},
		{Agent{Name: "gemini", CLI: testGemini}, "gemini is not on PATH (npm install -g @google/gemini-cli)"},
		{Agent{Name: "sim", CLI: testSim}, ""},
		{Agent{Name: "aider", Argv0: "aider"}, "aider is not on PATH"},
		{Agent{Name: "FOO=1 bash -c x", Argv0: FirstWord("FOO=1 bash -c x"), Shell: true}, ""},
		{Agent{Name: "$AGENT", Argv0: FirstWord("$AGENT"), Shell: true}, ""},
	} {
		got := NotFound(w.env_(), tc.agent)
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.agent.Name, got, tc.want)
		}
		a := tc.agent
		a.Roles = "lead"
		if rs := Run(context.Background(), w.env_(), []Agent{a}); (got != "") != (rs[0].Status == Fail) {
			t.Errorf("%q: NotFound %q but Run's first check %v", a.Name, got, rs[0])
		}
	}
}
