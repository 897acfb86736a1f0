package ptyagent

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestClaudeArgv(t *testing.T) {
	o := ClaudeOptions{AppendSystemPrompt: "You are the lead.", Model: "opus", AllowedTools: []string{"Read", "Write"},
		DisallowedTools: []string{"Bash"}, PermissionMode: "acceptEdits", SessionID: "1234",
		SettingsPath: "/tmp/s.json", ExtraArgs: []string{"--verbose"}}
	got := o.Argv()
	want := []string{"claude", "--session-id", "1234", "--model", "opus", "--permission-mode", "acceptEdits",
		"--allowedTools", "Read,Write", "--disallowedTools", "Bash", "--append-system-prompt", "You are the lead.",
		"--verbose", "--settings", "/tmp/s.json"}
	if !slices.Equal(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	o.Resume = true
	if got := o.Argv(); got[1] != "--resume" || got[2] != "1234" {
		t.Errorf("resume argv %q", got)
	}
}

func TestClaudeSettings(t *testing.T) {
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	if err := json.Unmarshal(ClaudeSettings("/opt/my dir/hivemind"), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Hooks) != len(HookEvents) {
		t.Errorf("%d hooks", len(s.Hooks))
	}
	for _, ev := range HookEvents {
		h := s.Hooks[ev]
		if len(h) != 1 || len(h[0].Hooks) != 1 || h[0].Hooks[0].Command != `'/opt/my dir/hivemind' hook `+ev {
			t.Errorf("%s: %+v", ev, h)
		}
	}
	if s.Hooks[HookPreToolUse][0].Matcher != "*" {
		t.Error("PreToolUse matcher")
	}
}

func TestCustomSpec(t *testing.T) {
	p := CustomProfile{Command: `aider --message-file "{task_dir}/x y.md" --name '{agent_id}' plain\ word`, Env: []string{"A=1"}}
	s, err := CustomSpec(Spec{}, p, map[string]string{"task_dir": "/t", "agent_id": "worker_1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"aider", "--message-file", "/t/x y.md", "--name", "worker_1", "plain word"}
	if !slices.Equal(s.Argv, want) || s.Kind != ProfileCustom || s.Env[0] != "A=1" {
		t.Errorf("spec %+v", s)
	}
	if _, err := CustomSpec(Spec{}, CustomProfile{Command: `a "b`}, nil); err == nil || !strings.Contains(err.Error(), "quote") {
		t.Errorf("unterminated quote: %v", err)
	}
}

func TestSimSpec(t *testing.T) {
	s, err := SimSpec(Spec{}, "/bin/hivemind", "--fast")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Argv, []string{"/bin/hivemind", "sim-agent", "--fast"}) || s.Kind != ProfileSim || s.Ready.Mode != ReadyHook {
		t.Errorf("%+v", s)
	}
}
