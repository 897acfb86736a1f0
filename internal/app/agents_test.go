package app

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// rate_limit_cooldown_seconds and scrollback_lines (0 included: no
// scrollback) reach every agent's ptyagent.Spec as given, for the
// built-in sim agent, a [profiles.<name>] agent and a custom command line.
func TestAgentSpecRateLimitCooldown(t *testing.T) {
	project, td := newTask(t)
	cfg := config.Default()
	cfg.RateLimitCooldownSeconds = 7
	cfg.ScrollbackLines = 0
	cfg.Profiles["echoer"] = config.Profile{Command: []string{"cat"}, Submit: config.SubmitLine}
	for _, profile := range []string{"sim", "echoer", "cat -u"} {
		f := &agentFactory{cfg: cfg.WithAgents(config.AgentFlag{All: profile}), project: project, td: td, self: "/bin/true"}
		spec, err := f.spec("worker_1", vocab.RoleWorker, false)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if spec.RateLimitCooldown != 7*time.Second {
			t.Errorf("%s: RateLimitCooldown %v, want 7s", profile, spec.RateLimitCooldown)
		}
		if spec.Scrollback != 0 {
			t.Errorf("%s: Scrollback %d, want 0", profile, spec.Scrollback)
		}
	}
}

// A worker's own model ([agents.<worker>] model) reaches its command line
// (a built-in CLI's --model, a profile's {model}); the other workers keep
// the role's.
func TestAgentSpecWorkerModel(t *testing.T) {
	project, td := newTask(t)
	cfg := config.Default()
	cfg.Roles[vocab.RoleWorker] = config.RoleConfig{Model: "role-model", PermissionMode: "bypassPermissions"}
	cfg.WorkerModels = map[vocab.AgentID]string{"worker_2": "own-model"}
	cfg.Profiles["echoer"] = config.Profile{Command: []string{"echo", "{model}"}, Submit: config.SubmitLine}
	for _, agent := range []string{"claude", "echoer"} {
		f := &agentFactory{cfg: cfg.WithAgents(config.AgentFlag{All: agent}), project: project, td: td, self: "/opt/hm/hivemind"}
		for id, want := range map[vocab.AgentID]string{"worker_1": "role-model", "worker_2": "own-model"} {
			spec, err := f.spec(id, vocab.RoleWorker, false)
			if err != nil {
				t.Fatalf("%s %s: %v", agent, id, err)
			}
			argv := strings.Join(spec.Argv, " ")
			if other := map[string]string{"role-model": "own-model", "own-model": "role-model"}[want]; !strings.Contains(argv, want) || strings.Contains(argv, other) {
				t.Errorf("%s %s argv lacks %q (or has %q): %s", agent, id, want, other, argv)
			}
		}
	}
}

// Each role runs its own agent: Claude Lead, Codex Reviewer, Gemini
// Workers, each with its role prompt, Hivemind's hooks and its resume.
func TestAgentSpecMixedTeam(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", privateDir(t))
	project, td := newTask(t)
	cfg := config.Default().WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"reviewer": "codex", "worker": "gemini"}})
	f := &agentFactory{cfg: cfg, project: project, td: td, self: "/opt/hm/hivemind"}
	kinds := map[vocab.Role]ptyagent.ProfileKind{"lead": ptyagent.ProfileClaude, "reviewer": ptyagent.ProfileCodex, "worker": ptyagent.ProfileGemini}
	specs := map[vocab.Role]ptyagent.Spec{}
	for role, kind := range kinds {
		s, err := f.spec(vocab.AgentID(role)+"_x", role, false)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if s.Kind != kind {
			t.Errorf("%s runs %s, want %s", role, s.Kind, kind)
		}
		specs[role] = s
	}
	codex := strings.Join(specs["reviewer"].Argv, " ")
	for _, want := range []string{"codex --no-daemon", "--sandbox workspace-write", "developer_instructions=", "hooks.PreToolUse=", "--dangerously-bypass-hook-trust", `projects={"` + project + `"={trust_level="trusted"}}`} {
		if !strings.Contains(codex, want) {
			t.Errorf("codex argv lacks %q: %s", want, codex)
		}
	}
	gem := specs["worker"]
	argv := strings.Join(gem.Argv, " ")
	sid := ptyagent.ClaudeSessionID(td.ID(), "worker_x")
	for _, want := range []string{"gemini --session-id " + sid, "--approval-mode yolo", "--include-directories"} {
		if !strings.Contains(argv, want) {
			t.Errorf("gemini argv lacks %q: %s", want, argv)
		}
	}
	var settings string
	for _, kv := range gem.Env {
		if v, ok := strings.CutPrefix(kv, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="); ok {
			settings = v
		}
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatalf("gemini settings: %v", err)
	}
	for _, want := range []string{`"BeforeTool"`, `"matcher": "*"`, `hivemind hook PreToolUse`, `"HIVEMIND-WORKER.md"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("gemini settings lack %s:\n%s", want, b)
		}
	}
	if role, err := os.ReadFile(filepath.Join(filepath.Dir(settings), "HIVEMIND-WORKER.md")); err != nil || !strings.Contains(string(role), "Worker") {
		t.Errorf("gemini role file: %v %.80q", err, role)
	}
	if !slices.Contains(gem.Argv, filepath.Dir(settings)) {
		t.Errorf("the role file's directory is not a workspace directory: %v", gem.Argv)
	}

	// A finished turn's session id is what a restart resumes.
	recordSession(sessionPath(td.Dir(), "reviewer_x"), []byte(`{"session_id":"019abc"}`))
	recordSession(sessionPath(td.Dir(), "worker_x"), []byte(`{"session_id":"`+sid+`"}`))
	s, _ := f.spec("reviewer_x", "reviewer", true)
	if a := s.Argv; a[1] != "resume" || a[len(a)-1] != "019abc" {
		t.Errorf("codex resume argv: %v", a)
	}
	// Gemini: resumed only when its chat file holds a message (one saved
	// at start with none is refused by --resume and by --session-id).
	gemHome := t.TempDir()
	t.Setenv("GEMINI_CLI_HOME", gemHome)
	s, _ = f.spec("worker_x", "worker", true)
	if !strings.Contains(strings.Join(s.Argv, " "), "--session-id "+sid) {
		t.Errorf("gemini restart without a saved chat: %v", s.Argv)
	}
	chats := filepath.Join(gemHome, ".gemini", "tmp", "p", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	chat := `{"sessionId":"` + sid + `"}` + "\n" + `{"id":"1","type":"user","content":[{"text":"[HIVEMIND] go"}]}` + "\n"
	if err := os.WriteFile(filepath.Join(chats, "session-2026-11-24T10-00-"+sid[:8]+".jsonl"), []byte(chat), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ = f.spec("worker_x", "worker", true)
	if !strings.Contains(strings.Join(s.Argv, " "), "--resume "+sid) {
		t.Errorf("gemini resume argv: %v", s.Argv)
	}
}

// privateDir is a directory only its owner may write, up to /, as Gemini
// CLI wants for a system settings file (t.TempDir is below /tmp).
func privateDir(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil || profiles.InsecureDir(home) != "" {
		t.Skip("no private home directory for Gemini's settings")
	}
	d, err := os.MkdirTemp(home, ".hivemind-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// The start screen offers the built-in CLIs, the profiles, then what the
// configured team runs besides (sim here), each marked when its program
// is not on PATH.
func TestAgentChoices(t *testing.T) {
	cfg := config.Default().WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"reviewer": "sim", "worker": "codex"}})
	cfg.Profiles["aider"] = config.Profile{Command: []string{"aider", "--yes"}}
	env := preflight.Env{LookPath: func(f string) (string, error) {
		if f == "claude" || f == "codex" {
			return "/usr/bin/" + f, nil
		}
		return "", exec.ErrNotFound
	}}
	got := agentChoices(cfg, env)
	var want []tui.AgentChoice // every offered profile, in the registry's order
	for _, p := range profiles.Registered() {
		if !p.Offered {
			continue
		}
		c := tui.AgentChoice{Name: p.Name}
		if _, err := env.LookPath(p.Binary); err != nil {
			c.Missing = p.Binary + " is not on PATH (npm install -g " + p.NPM + ")"
		}
		want = append(want, c)
	}
	want = append(want, tui.AgentChoice{Name: "aider", Missing: "aider is not on PATH"}, tui.AgentChoice{Name: "sim"})
	if len(want) < 5 || want[2] != (tui.AgentChoice{Name: "gemini", Missing: "gemini is not on PATH (npm install -g @google/gemini-cli)"}) {
		t.Fatalf("the registry's offer changed: %q", want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("choices %q\nwant %q", got, want)
	}
}

// newTask creates a task with one worker in a new project.
func newTask(t *testing.T) (string, *workspace.TaskDir) {
	t.Helper()
	project := t.TempDir()
	ws, err := workspace.Open(workspace.DefaultRoot(project))
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "x", Project: project, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return project, td
}

// Each agent's account (whose rate limit it shares) is its CLI, so a
// limited Claude Code holds new work for the Claude agents only.
func TestMachineAccountsFromTheTeam(t *testing.T) {
	cfg := config.Default().WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"reviewer": "codex", "worker": "gemini"}})
	cfg.Workers = 2
	got := newMachine(cfg, false).Cfg.Accounts
	want := map[vocab.AgentID]string{"lead": "claude", "reviewer": "codex", "worker_1": "gemini", "worker_2": "gemini"}
	if !maps.Equal(got, want) {
		t.Fatalf("accounts %v, want %v", got, want)
	}
}
