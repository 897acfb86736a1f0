package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/internal/sshtest"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// A remote worker's usage is read from a local copy of the transcript on
// its host, brought up to date at each read with what the host's file
// gained; a file rewritten there is copied again, and a path that is not
// a session file is refused.
func TestRemoteTranscripts(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(vocab.Task{Description: "x", Project: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(td.AgentLogPath("worker_1")), 0o755); err != nil {
		t.Fatal(err)
	}
	var logged []string
	rh := &remoteHost{h: remote.Host{Name: "box", Dest: s.Alias, SSHArgs: []string{"-F", s.Config}}}
	rw := &remoteWork{td: td, workers: map[string]*remoteHost{"worker_1": rh},
		log: func(typ vocab.RecordType, agent string, d map[string]any) { logged = append(logged, string(typ)) }}
	rt := newRemoteTranscripts(rw)

	host := filepath.Join(s.Home, "t.jsonl")
	put := func(data string) {
		t.Helper()
		if err := os.WriteFile(host, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(host, s.UID, s.GID); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		p, err := rt.local("worker_1", host)
		if err != nil {
			t.Fatal(err)
		}
		if p == host || !strings.HasPrefix(p, td.Dir()) {
			t.Fatalf("copy at %s, want one in the task dir", p)
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Fatalf("copy holds %d bytes %.60q…, want %d bytes %.60q…", len(got), got, len(want), want)
		}
	}
	line := `{"type":"assistant","message":{"usage":{"input_tokens":3,"output_tokens":5}}}` + "\n"
	put(line)
	check(line)
	// More than a chunk appended: fetched in several round trips.
	big := line + strings.Repeat(line, 2*transcriptChunk/len(line))
	put(big)
	check(big)
	put(line + line[:10])
	check(line + line[:10])

	if p, err := rt.local("worker_2", "/x/local.jsonl"); err != nil || p != "/x/local.jsonl" {
		t.Errorf("a local agent's path: %s, %v", p, err)
	}
	for _, bad := range []string{"/etc/passwd", s.Home + "/a\n.jsonl"} {
		if _, err := rt.local("worker_1", bad); err == nil {
			t.Errorf("%q fetched", bad)
		}
	}
	if _, err := rt.local("worker_1", s.Home+"/missing.jsonl"); err == nil || !slices.Contains(logged, "remote_usage_failed") {
		t.Errorf("a missing file: %v, logged %v", err, logged)
	}
}

// Remote Claude gets the API and behaviour variables set here, by name
// (values travel in the run's environment file), never local paths.
func TestClaudePassed(t *testing.T) {
	got := claudePassed([]string{"HOME=/h", "ANTHROPIC_API_KEY=k", "PATH=/bin", "DISABLE_TELEMETRY=1", "CLAUDE_CONFIG_DIR=/c"},
		[]string{"ANTHROPIC_BASE_URL=http://x", "ANTHROPIC_API_KEY=k2", "CLAUDE_CODE_MAX_RETRIES=1", "HIVEMIND_TASK_DIR=/t"})
	want := []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_MAX_RETRIES", "DISABLE_TELEMETRY"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// The host check looks for the CLI the workers run (the role placed on
// hosts), not the default agent's.
func TestRemoteAgentCommand(t *testing.T) {
	for _, c := range []struct {
		cfg  config.Config
		host config.Host
		want string
	}{
		{config.Config{Agent: "claude"}, config.Host{}, "claude"},
		{config.Config{Agent: "claude"}, config.Host{Agent: "/opt/bin/claude"}, "/opt/bin/claude"},
		{config.Config{Agent: "sim"}, config.Host{Agent: "/opt/bin/claude"}, ""},
		{config.Config{Agent: "claude"}.WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"worker": "sim"}}), config.Host{}, ""},
		{config.Config{Agent: "sim"}.WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"worker": "claude"}}), config.Host{}, "claude"},
		{config.Config{Agent: "sim"}.WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"worker": "codex"}}), config.Host{}, "codex"},
	} {
		if got := remoteAgentCommand(c.cfg, c.cfg.AgentOf(vocab.RoleWorker), c.host); got != c.want {
			t.Errorf("%s (host agent %q): %q, want %q", c.cfg.TeamString(), c.host.Agent, got, c.want)
		}
	}
}

// Workers on hosts run their own CLI there: each placed worker's agent is
// checked, and a host's checks cover every CLI placed on it.
func TestRemoteMixedWorkers(t *testing.T) {
	cfg := config.Config{Agent: "claude", Workers: 3,
		Placement: []config.Placement{{Host: "gpu", Count: 2}, {Host: config.LocalHost, Count: 1}}}
	sim2 := cfg.WithAgents(config.AgentFlag{PerWorker: map[vocab.AgentID]string{"worker_2": "sim", "worker_3": "codex"}})
	if err := remoteAgentCheck(sim2, []string{"gpu"}); err != nil {
		t.Errorf("claude and sim workers on gpu, codex here: %v", err)
	}
	if got := hostAgents(sim2, "gpu"); !slices.Equal(got, []string{"claude", "sim"}) {
		t.Errorf("agents on gpu: %v", got)
	}
	if got := hostAgents(sim2, "other"); !slices.Equal(got, []string{"claude"}) {
		t.Errorf("agents of a host with no worker: %v", got)
	}
	codex2 := cfg.WithAgents(config.AgentFlag{PerWorker: map[vocab.AgentID]string{"worker_2": "codex"}})
	err := remoteAgentCheck(codex2, []string{"gpu"})
	if err == nil || !strings.Contains(err.Error(), `worker_2's agent "codex" is not wired for hosts`) {
		t.Errorf("codex worker on gpu: %v", err)
	}
}
