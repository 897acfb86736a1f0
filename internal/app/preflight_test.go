package app

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/vocab"
)

func TestAgentsOf(t *testing.T) {
	cfg, _, err := config.Load(t.TempDir(), t.TempDir(), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	with := func(agent string, f func(*config.Config)) config.Config {
		c := cfg
		c.Agent = agent
		c.Roles = map[vocab.Role]config.RoleConfig{}
		for k, v := range cfg.Roles {
			c.Roles[k] = v
		}
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want preflight.Agent
	}{
		{"default claude bypasses permissions", with("claude", nil),
			preflight.Agent{Name: "claude", CLI: cliOf("claude"), Roles: "lead, reviewer, 2 workers", Bypass: true, Dir: "/p"}},
		{"claude in acceptEdits", with("claude", func(c *config.Config) {
			for r, rc := range c.Roles {
				rc.PermissionMode = "acceptEdits"
				c.Roles[r] = rc
			}
		}), preflight.Agent{Name: "claude", CLI: cliOf("claude"), Roles: "lead, reviewer, 2 workers", Dir: "/p"}},
		{"one worker", with("sim", func(c *config.Config) { c.Workers = 1 }),
			preflight.Agent{Name: "sim", CLI: cliOf("sim"), Roles: "lead, reviewer, 1 worker", Bypass: true, Dir: "/p"}},
		{"profile", with("codex", func(c *config.Config) {
			c.Profiles = map[string]config.Profile{"codex": {Command: []string{"codex", "--full-auto", "--cd", "{project}"}}}
		}), preflight.Agent{Name: "codex", Argv0: "codex", Roles: "lead, reviewer, 2 workers",
			Argv: []string{"codex", "--full-auto", "--cd", "/p"}, Dir: "/p"}},
		{"command line", with("FOO=1 my-agent --x", nil),
			preflight.Agent{Name: "FOO=1 my-agent --x", Argv0: "my-agent", Shell: true, Roles: "lead, reviewer, 2 workers",
				Argv: []string{"/bin/sh", "-c", "FOO=1 my-agent --x"}, Dir: "/p"}},
	} {
		if got := agentsOf(tc.cfg, "/p"); len(got) != 1 || agentKey(got[0]) != agentKey(tc.want) {
			t.Errorf("%s: got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	// A mixed team: one check per agent, naming its roles.
	mixed := with("claude", nil).WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"reviewer": "codex", "worker": "gemini"}})
	want := []preflight.Agent{{Name: "claude", CLI: cliOf("claude"), Roles: "lead", Bypass: true, Dir: "/p"},
		{Name: "codex", CLI: cliOf("codex"), Roles: "reviewer", Bypass: true, Dir: "/p"}, {Name: "gemini", CLI: cliOf("gemini"), Roles: "2 workers", Bypass: true, Dir: "/p"}}
	if got := agentsOf(mixed, "/p"); !slices.Equal(mapKeys(got), mapKeys(want)) {
		t.Errorf("mixed team: got %+v\nwant %+v", got, want)
	}
	// Mixed workers: each worker is named by id, with its own agent's
	// entry; a worker of the Lead's agent joins the Lead's entry.
	workers := with("claude", func(c *config.Config) { c.Workers = 3 }).WithAgents(config.AgentFlag{
		PerRole:   map[vocab.Role]string{"worker": "gemini"},
		PerWorker: map[vocab.AgentID]string{"worker_1": "codex", "worker_3": "claude"}})
	want = []preflight.Agent{{Name: "claude", CLI: cliOf("claude"), Roles: "lead, reviewer, worker_3", Bypass: true, Dir: "/p"},
		{Name: "codex", CLI: cliOf("codex"), Roles: "worker_1", Bypass: true, Dir: "/p"},
		{Name: "gemini", CLI: cliOf("gemini"), Roles: "worker_2", Bypass: true, Dir: "/p"}}
	if got := agentsOf(workers, "/p"); !slices.Equal(mapKeys(got), mapKeys(want)) {
		t.Errorf("mixed workers: got %+v\nwant %+v", got, want)
	}
	// Workers on a host are checked there: only worker_2 here needs its CLI.
	placed := workers
	placed.Workers = 2
	placed.Placement = []config.Placement{{Host: "gpu", Count: 1}, {Host: config.LocalHost, Count: 1}}
	want = []preflight.Agent{{Name: "claude", CLI: cliOf("claude"), Roles: "lead, reviewer", Bypass: true, Dir: "/p"},
		{Name: "gemini", CLI: cliOf("gemini"), Roles: "worker_2", Bypass: true, Dir: "/p"}}
	if got := agentsOf(placed, "/p"); !slices.Equal(mapKeys(got), mapKeys(want)) {
		t.Errorf("mixed workers, worker_1 on a host: got %+v\nwant %+v", got, want)
	}
}

func TestResumeAgents(t *testing.T) {
	task := vocab.Task{Agent: "sim", Workers: 3}
	for _, tc := range []struct {
		name        string
		o           Options
		cfgAgent    string
		cfgWorkers  int
		wantAgent   string
		wantWorkers int
		wantNotes   []string
	}{
		{"config default is ignored", Options{}, "claude", 2, "sim", 3, nil},
		{"same flags", Options{Agent: "sim", AgentSet: true, WorkersSet: true}, "sim", 3, "sim", 3, nil},
		{"--agent overrides, noted", Options{Agent: "claude", AgentSet: true}, "claude", 3, "claude", 3, []string{"agent_overridden"}},
		{"--workers is ignored, noted", Options{WorkersSet: true}, "sim", 5, "sim", 3, []string{"workers_kept"}},
	} {
		cfg := config.Config{Agent: tc.cfgAgent, Workers: tc.cfgWorkers}
		got, notes := ResumeAgents(tc.o, cfg, task)
		var types []string
		for _, n := range notes {
			types = append(types, string(n.Type))
		}
		if got.Agent != tc.wantAgent || got.Workers != tc.wantWorkers || strings.Join(types, ",") != strings.Join(tc.wantNotes, ",") {
			t.Errorf("%s: agent %q workers %d notes %v; want %q %d %v", tc.name, got.Agent, got.Workers, types, tc.wantAgent, tc.wantWorkers, tc.wantNotes)
		}
	}
	// A mixed team is kept per role; --agent role=… changes the roles it
	// names.
	mixed := vocab.Task{Agent: "claude", Agents: map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"}, Workers: 2}
	got, notes := ResumeAgents(Options{}, config.Default(), mixed)
	if got.TeamString() != "lead=claude,reviewer=codex,worker=gemini" || len(notes) != 0 {
		t.Errorf("mixed resume: %s %v", got.TeamString(), notes)
	}
	got, notes = ResumeAgents(Options{Agent: "worker=sim", AgentSet: true}, config.Default(), mixed)
	if got.TeamString() != "lead=claude,reviewer=codex,worker=sim" || len(notes) != 1 || notes[0].Details["task_agent"] != "lead=claude,reviewer=codex,worker=gemini" {
		t.Errorf("mixed resume with --agent worker=sim: %s %v", got.TeamString(), notes)
	}
	// Workers of their own agent are kept; --agent worker_N=… changes the
	// one it names, --agent worker=… every worker.
	perWorker := mixed
	perWorker.WorkerAgents = map[vocab.AgentID]string{"worker_1": "codex"}
	cfg := config.Default().WithAgents(config.AgentFlag{PerWorker: map[vocab.AgentID]string{"worker_2": "sim"}})
	got, notes = ResumeAgents(Options{}, cfg, perWorker)
	if got.TeamString() != "lead=claude,reviewer=codex,worker=gemini,worker_1=codex" || len(notes) != 0 {
		t.Errorf("per-worker resume: %s %v", got.TeamString(), notes)
	}
	if got.AgentOfID("worker_1") != "codex" || got.AgentOfID("worker_2") != "gemini" {
		t.Errorf("per-worker resume: worker_1 %s worker_2 %s", got.AgentOfID("worker_1"), got.AgentOfID("worker_2"))
	}
	for flag, want := range map[string]string{
		"worker_2=sim": "lead=claude,reviewer=codex,worker=gemini,worker_1=codex,worker_2=sim",
		"worker=sim":   "lead=claude,reviewer=codex,worker=sim",
	} {
		got, notes = ResumeAgents(Options{Agent: flag, AgentSet: true}, config.Default(), perWorker)
		if got.TeamString() != want || len(notes) != 1 || notes[0].Details["task_agent"] != "lead=claude,reviewer=codex,worker=gemini,worker_1=codex" {
			t.Errorf("per-worker resume with --agent %s: %s %v", flag, got.TeamString(), notes)
		}
	}
	// A task from before task.json named its agent keeps the config's.
	if got, _ := ResumeAgents(Options{}, config.Config{Agent: "claude", Workers: 2}, vocab.Task{}); got.Agent != "claude" || got.Workers != 2 {
		t.Errorf("old task: %+v", got)
	}
}

// The wired resume runs the task's agents: a sim task resumed with the
// config default (claude) gets the sim factory, and its preflight is
// the sim's (which passes on a machine without Claude Code).
func TestNewAppResumeKeepsAgents(t *testing.T) {
	noClaude := testkit.NoClaude(t)
	project := t.TempDir()
	o := simOptions(project)
	o.CheckEnv = noClaude
	a, err := New(o, vocab.Task{Description: "build a tiny calculator"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := New(Options{Project: project, Resume: true, CheckEnv: noClaude}, vocab.Task{}, io.Discard)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer b.Close()
	if b.cfg.Agent != "sim" || b.cfg.Workers != 2 {
		t.Errorf("resumed with agent %q, %d workers; want sim, 2", b.cfg.Agent, b.cfg.Workers)
	}
}

// cliOf is the preflight CLI of a registered profile.
func cliOf(name string) *preflight.CLI {
	p, _ := profiles.Lookup(name)
	return p.CLI()
}

// agentKey is a preflight agent as text (its CLI by program and tested
// version: each lookup builds a new CLI).
func agentKey(a preflight.Agent) string {
	cli := "-"
	if a.CLI != nil {
		cli = a.CLI.Bin + "@" + a.CLI.Tested + "/" + a.CLI.About
	}
	a.CLI = nil
	return fmt.Sprintf("%+v %s", a, cli)
}

func mapKeys(as []preflight.Agent) []string {
	var out []string
	for _, a := range as {
		out = append(out, agentKey(a))
	}
	return out
}

// The start screen's pick runs as the --agent value that makes it: each
// worker of its own is named after the roles.
func TestAgentFlagWorkers(t *testing.T) {
	for _, tc := range []struct {
		t    vocab.Task
		want string
	}{
		{vocab.Task{Agents: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "claude"}}, "claude"},
		{vocab.Task{Agents: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "codex"},
			WorkerAgents: map[vocab.AgentID]string{"worker_1": "codex", "worker_2": "gemini"}},
			"lead=claude,reviewer=claude,worker=codex,worker_2=gemini"},
	} {
		if got := agentFlag(tc.t); got != tc.want {
			t.Errorf("agentFlag(%v, %v) = %q, want %q", tc.t.Agents, tc.t.WorkerAgents, got, tc.want)
		}
		if _, err := config.ParseAgentFlag(tc.want); err != nil {
			t.Errorf("%q does not parse: %v", tc.want, err)
		}
	}
}
