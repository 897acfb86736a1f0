package ptyagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// realCLI is one real agent CLI driven through the Manager against the
// fake API.
type realCLI struct {
	name     string
	install  string // how to get it
	kind     string // fake API request kind ("messages", "responses", "gemini")
	wantExit int    // exit code after Stop when idle; -1: any
	// spec builds the agent's spec; sid is the session id to resume ("" at
	// first start).
	spec func(base Spec, hookCmd, sid string, resume bool) Spec
	// home prepares the CLI's home for the project and fake API URL and
	// returns the agent environment.
	home func(t *testing.T, project, url, hookCmd string) []string
}

// hookWrapper writes a script running this test binary as the hook client
// (`<script> <Event>`, like hivemind-hook).
func hookWrapper(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hookCmd := filepath.Join(t.TempDir(), "hm-hook")
	if err := os.WriteFile(hookCmd, []byte(fmt.Sprintf("#!/bin/sh\n%s=hook exec '%s' \"$@\"\n", helperEnv, exe)), 0o755); err != nil {
		t.Fatal(err)
	}
	return hookCmd
}

// realManager is a Manager of the agents spec builds (run with bin),
// closed when the test ends; a failed test logs agent's screen, the fake
// API's requests and the events first.
func realManager(t *testing.T, bin string, agent vocab.AgentID, api *fakeapi.Server, rec *recorder, spec func(id vocab.AgentID, resume bool) Spec) *Manager {
	t.Helper()
	m, err := NewManager(ManagerConfig{
		OnEvent:     rec.add,
		StopTimeout: 10 * time.Second,
		Factory: func(id vocab.AgentID, _ vocab.Role, resume bool) (Spec, error) {
			s := spec(id, resume)
			s.Argv[0] = bin
			return s, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if s, ok := m.Session(agent); ok {
			t.Logf("screen:\n%s", s.Text())
		}
		for _, r := range api.Requests() {
			t.Logf("request %s status=%d tools=%v prompt=%q", r.Kind, r.Status, r.HasTools, clip(r.Prompt, 60))
		}
		for _, e := range rec.all() {
			t.Logf("event %s %s %s seq=%d %s", e.Agent, e.Kind, e.Health, e.Seq, clip(e.Detail, 200))
		}
	})
	return m
}

// runRealCLI drives a real CLI against the fake API: ready, three
// injections of 10, 200 and 5000 characters each submitted exactly once
// (the prompt-submit hooks and the API log agree), busy → idle through
// the turn-end hook each time, a stop when idle that leaves no process,
// and a restart with resume that keeps the conversation. The real CLI
// tests run in parallel with each other (after the package's serial
// tests): each has its own home, fake API, Manager and processes, and
// they mostly wait on the CLIs' turns.
func runRealCLI(t *testing.T, c realCLI) {
	t.Parallel()
	bin, ok := agenttest.Binary(c.name)
	if !ok {
		t.Skipf("%s not on PATH: install with `%s` to run the real %s test", c.name, c.install, c.name)
	}
	if testing.Short() {
		t.Skipf("real %s test skipped in -short mode", c.name)
	}
	api := fakeapi.New(fakeapi.DefaultScript())
	t.Cleanup(api.Close)
	project := t.TempDir()
	hookCmd := hookWrapper(t)
	env := c.home(t, project, api.URL(), hookCmd)
	var rec recorder
	var sid string
	m := realManager(t, bin, "lead", api, &rec, func(id vocab.AgentID, resume bool) Spec {
		return c.spec(Spec{Dir: project, BaseEnv: env, Cols: 120, Rows: 40, LogPath: filepath.Join(project, "logs", string(id)+".log")}, hookCmd, sid, resume)
	})
	hooks := func(name string) int {
		return rec.count(func(e Event) bool { return e.Kind == EventHook && e.Detail == name })
	}

	t0 := time.Now()
	if err := m.Start("lead", "lead", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("lead")
	waitFor(t, 90*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
	t.Logf("ready after %s", time.Since(t0).Round(time.Millisecond))

	var msgs []string
	for i, n := range []int{10, 200, 5000} {
		msg := fmt.Sprintf("m%d:", i+1) + strings.Repeat(string(rune('a'+i)), n-3)
		msgs = append(msgs, msg)
		if err := m.Inject("lead", i+1, msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 180*time.Second, "three deliveries", func() bool {
		return rec.count(func(e Event) bool { return e.Kind == EventDelivered || e.Kind == EventDeliveryFailed }) == 3
	})
	// The third turn ends with its Stop hook. (An earlier turn's Stop hook
	// may never come: when the title shows idle first — a hook process
	// slow on a loaded machine — the next message goes in, and Claude
	// cancels the hook still running.)
	waitFor(t, 90*time.Second, "idle after the third turn", func() bool {
		third := false
		for _, e := range rec.all() {
			switch {
			case delivered(3)(e):
				third = true
			case third && e.Kind == EventHook && e.Detail == HookStop:
				return s.Health() == vocab.HealthIdle
			}
		}
		return false
	})
	for i := 1; i <= 3; i++ {
		e, ok := rec.find(delivered(i))
		if !ok {
			t.Errorf("seq %d not delivered", i)
			continue
		}
		t.Logf("seq %d (%d chars): %s", i, len(msgs[i-1]), e.Detail)
	}
	if n := hooks(HookUserPromptSubmit); n != 3 {
		t.Errorf("%d prompt-submit hooks, want 3", n)
	}
	for i, msg := range msgs {
		n := 0
		for _, r := range api.Requests() {
			// Claude's first prompt also carries its system reminders.
			if r.Kind == c.kind && r.HasTools && strings.HasSuffix(r.Prompt, msg) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("message %d (%d chars) reached the API %d times as the prompt", i+1, len(msg), n)
		}
	}
	hs := rec.healths("lead")
	busyIdle := 0
	for i := 1; i < len(hs); i++ {
		if hs[i-1] == vocab.HealthBusy && hs[i] == vocab.HealthIdle {
			busyIdle++
		}
	}
	if busyIdle != 3 {
		t.Errorf("busy → idle %d times: %v", busyIdle, hs)
	}
	// The session id, as the CLI reports it in every hook.
	if e, ok := rec.find(func(e Event) bool { return e.Kind == EventHook && e.Detail == HookStop }); ok {
		var p struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		if sid != "" && p.SessionID != sid {
			t.Errorf("hook session id %q, want %q", p.SessionID, sid)
		}
		sid = p.SessionID
	}
	if sid == "" {
		t.Fatal("no session id in the Stop hook")
	}

	t1 := time.Now()
	if err := m.Stop("lead"); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	t.Logf("stopped in %s, exit code %d", time.Since(t1).Round(time.Millisecond), s.ExitCode())
	if c.wantExit >= 0 && s.ExitCode() != c.wantExit {
		t.Errorf("exit code %d, want %d", s.ExitCode(), c.wantExit)
	}
	assertGone(t, s)

	// Restart resuming the session: the conversation survives.
	if err := m.Start("lead", "lead", true); err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Session("lead")
	if !strings.Contains(strings.Join(s2.Spec().Argv, " "), sid) {
		t.Errorf("restart argv %q lacks the session id %s", s2.Spec().Argv, sid)
	}
	waitFor(t, 90*time.Second, "ready after resume", func() bool { return s2.Health() == vocab.HealthReady })
	if err := m.Inject("lead", 4, "m4: after resume"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "fourth delivery", func() bool { _, ok := rec.find(delivered(4)); return ok })
	waitFor(t, 60*time.Second, "resumed request", func() bool {
		for _, r := range api.Requests() {
			if r.Kind == c.kind && r.HasTools && strings.HasSuffix(r.Prompt, "m4: after resume") {
				if !strings.Contains(string(r.Body), msgs[0]) {
					t.Errorf("the resumed conversation lacks the first message")
				}
				return true
			}
		}
		return false
	})
	waitFor(t, 60*time.Second, "idle after resume", func() bool { return s2.Health() == vocab.HealthIdle })
	m.Stop("lead")
	<-s2.Done()
	assertGone(t, s2)
}

// TestRealClaude runs runRealCLI with Claude Code: hooks in one
// --settings file, a session id chosen up front, /exit when stopped idle,
// --resume.
func TestRealClaude(t *testing.T) {
	sid := uuid.NewString()
	var settings string
	runRealCLI(t, realCLI{name: "claude", install: "npm install -g @anthropic-ai/claude-code", kind: "messages",
		home: func(t *testing.T, project, url, hookCmd string) []string {
			settings = filepath.Join(t.TempDir(), "settings.json")
			if err := WriteClaudeSettings(settings, hookCmd); err != nil {
				t.Fatal(err)
			}
			return claudetest.Env(claudetest.Home(t, project), url)
		},
		spec: func(base Spec, _, _ string, resume bool) Spec {
			return ClaudeSpec(base, ClaudeOptions{SessionID: sid, Resume: resume, SettingsPath: settings,
				AppendSystemPrompt: "You are a test agent."})
		}})
}

// TestRealCodex runs runRealCLI with Codex CLI: hooks and the role prompt
// as -c overrides, the session id learnt from the hooks, `codex resume`.
func TestRealCodex(t *testing.T) {
	runRealCLI(t, realCLI{name: "codex", install: "npm install --prefix DIR @openai/codex (docs/agents/codex.md)",
		kind: "responses", wantExit: -1, // SIGTERM: 143
		home: func(t *testing.T, project, url, _ string) []string {
			home := filepath.Join(t.TempDir(), "codex")
			if err := agenttest.WriteCodexHome(home, url, []string{project}, nil); err != nil {
				t.Fatal(err)
			}
			return agenttest.CodexEnv(home)
		},
		spec: func(base Spec, hookCmd, sid string, resume bool) Spec {
			return CodexSpec(base, CodexOptions{Sandbox: "workspace-write", HookCommand: hookCmd,
				DeveloperInstructions: "You are a test agent.", SessionID: sid, Resume: resume})
		}})
}

// TestRealGemini runs runRealCLI with Gemini CLI: hooks from
// GeminiSettings merged into the test home's settings, --session-id then
// --resume.
func TestRealGemini(t *testing.T) {
	sid := uuid.NewString()
	runRealCLI(t, realCLI{name: "gemini", install: "npm install --prefix DIR @google/gemini-cli (docs/agents/gemini.md)",
		kind: "gemini",
		home: func(t *testing.T, project, url, hookCmd string) []string {
			home := t.TempDir()
			if err := agenttest.WriteGeminiHome(home, []string{project}, nil); err != nil {
				t.Fatal(err)
			}
			// The test home is under /tmp, where Gemini ignores a system
			// settings file (SettingsPath): merge the hooks into the
			// user's settings instead.
			path := filepath.Join(home, ".gemini", "settings.json")
			var user, ours map[string]any
			b, _ := os.ReadFile(path)
			_ = json.Unmarshal(b, &user)
			_ = json.Unmarshal(GeminiSettings(hookCmd, nil, nil), &ours)
			for k, v := range ours {
				// One level deep: ours has security.folderTrust, the
				// user's security.auth.
				um, ok1 := user[k].(map[string]any)
				om, ok2 := v.(map[string]any)
				if ok1 && ok2 {
					for kk, vv := range om {
						um[kk] = vv
					}
					continue
				}
				user[k] = v
			}
			b, _ = json.Marshal(user)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return agenttest.GeminiEnv(home, url)
		},
		spec: func(base Spec, _, _ string, resume bool) Spec {
			return GeminiSpec(base, GeminiOptions{ApprovalMode: "auto_edit", Hooks: true, SessionID: sid, Resume: resume})
		}})
}
