package config

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestRoleAgents(t *testing.T) {
	project := "agent = \"claude\"\n\n[roles.reviewer]\nagent = \"codex\"\n\n[roles.worker]\nagent = \"gemini\"\n"
	ws, ud := dirs(t, project, "")
	pf := filepath.Join(ws, FileName)
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"}
	if got := cfg.Team(); !reflect.DeepEqual(got, want) {
		t.Errorf("team %v, want %v", got, want)
	}
	if s := src.Of("roles.reviewer.agent"); s != (Source{Kind: SourceProject, File: pf, Line: 4}) {
		t.Errorf("reviewer agent source %v", s)
	}
	if !cfg.Mixed() || cfg.TeamString() != "lead=claude,reviewer=codex,worker=gemini" {
		t.Errorf("mixed %v, team %q", cfg.Mixed(), cfg.TeamString())
	}

	// One agent on the command line runs every role, whatever the files say.
	all := "codex"
	cfg, src, err = Load(ws, ud, Overrides{Agent: &all})
	if err != nil || cfg.Mixed() || cfg.AgentOf("worker") != "codex" || src.Of("agent").String() != "flag --agent" {
		t.Errorf("--agent codex: %v team %v source %v", err, cfg.Team(), src.Of("agent"))
	}
	if _, ok := src["roles.worker.agent"]; ok {
		t.Error("--agent codex left the file's source for roles.worker.agent")
	}
	if d := cfg.Describe(src); !strings.Contains(d, `agent = "codex"`) || strings.Contains(d, `"gemini"`) {
		t.Errorf("describe after --agent codex:\n%s", d)
	}

	// The list form sets only the roles it names.
	some := "lead=gemini,worker=sim"
	cfg, src, err = Load(ws, ud, Overrides{Agent: &some})
	if err != nil {
		t.Fatal(err)
	}
	want = map[vocab.Role]string{"lead": "gemini", "reviewer": "codex", "worker": "sim"}
	if got := cfg.Team(); !reflect.DeepEqual(got, want) || src.Of("roles.lead.agent").String() != "flag --agent" {
		t.Errorf("--agent %s: team %v, lead source %v", some, got, src.Of("roles.lead.agent"))
	}
	d := cfg.Describe(src)
	for _, line := range []string{`agent = "gemini"  `, `# flag --agent`, `agent = "codex"`, pf + ":4"} {
		if !strings.Contains(d, line) {
			t.Errorf("describe lacks %q:\n%s", line, d)
		}
	}
}

func TestAgentErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, flag, want string }{
		{"typo in role agent", "[roles.reviewer]\nagent = \"codx\"\n", "",
			`2: roles.reviewer.agent: unknown agent "codx" (did you mean "codex"?); to run a program of that name give its path (./codx) or define [profiles.codx]`},
		{"typo in top agent", "agent = \"gemni\"\n", "", `1: agent: unknown agent "gemni" (did you mean "gemini"?)`},
		{"typo of a profile", "agent = \"aidr\"\n[profiles.aider]\ncommand = [\"aider\"]\n", "", `did you mean "aider"?`},
		{"empty role agent", "[roles.worker]\nagent = \"\"\n", "", "2: roles.worker.agent: must not be empty"},
		{"flag typo", "", "cluade", `--agent: unknown agent "cluade" (did you mean "claude"?)`},
		{"flag role typo", "", "reveiwer=codex", `--agent: unknown role "reveiwer" (did you mean "reviewer"?); roles: lead, reviewer, worker`}, //nolint:misspell // the typo is what the test feeds in
		{"flag role twice", "", "worker=codex,worker=gemini", "--agent: role worker given twice"},
		{"flag item without agent", "", "lead=codex,worker", `--agent: "worker": want role=agent`},
		{"flag agent typo per role", "", "worker=gemnii", `--agent: worker: unknown agent "gemnii" (did you mean "gemini"?)`},
		{"worker beyond workers", "workers = 2\n\n[agents.worker_3]\nagent = \"codex\"\n", "",
			"4: agents.worker_3.agent: worker_3 is not a worker of this team of 2 (workers = 2): valid ids are worker_1, worker_2"},
		{"flag worker beyond workers", "", "worker_5=codex", "--agent: worker_5 is not a worker of this team of 2 (workers = 2): valid ids are worker_1, worker_2"},
		{"not a worker id", "[agents.lead]\nagent = \"codex\"\n", "", `1: agents.lead: "lead" is not a worker id: want worker_1 … worker_32`},
		{"worker id not canonical", "[agents.worker_02]\nagent = \"codex\"\n", "", `agents.worker_02: "worker_02" is not a worker id`},
		{"unknown key in worker table", "[agents.worker_1]\nagnet = \"codex\"\n", "", `2: agents.worker_1.agnet: unknown key (did you mean "agent"?); known keys here: agent, model`},
		{"worker agent typo", "[agents.worker_1]\nagent = \"gemnii\"\n", "", `2: agents.worker_1.agent: unknown agent "gemnii" (did you mean "gemini"?)`},
		{"empty worker agent", "[agents.worker_1]\nagent = \"\"\n", "", "2: agents.worker_1.agent: must not be empty"},
		{"empty worker model", "[agents.worker_1]\nmodel = \"\"\n", "", "2: agents.worker_1.model: must not be empty"},
		{"worker model beyond workers", "workers = 2\n\n[agents.worker_3]\nmodel = \"gpt-5\"\n", "",
			"4: agents.worker_3.model: worker_3 is not a worker of this team of 2"},
		{"unpriced worker model under budget_usd", "budget_usd = 5\n\n[agents.worker_2]\nmodel = \"my-model\"\n", "",
			`budget_usd: the worker_2's model "my-model" has no price`},
		{"agents not a table", "agents = \"codex\"\n", "", "1: agents: wrong type: want a table"},
		{"flag worker twice", "", "worker_1=codex,worker_1=gemini", "--agent: worker worker_1 given twice"},
		{"flag worker id typo", "", "worker_01=codex", `--agent: "worker_01" is not a worker id`},
		{"flag worker agent typo", "", "worker_2=gemnii", `--agent: worker_2: unknown agent "gemnii"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, ud := dirs(t, tc.file, "")
			var ov Overrides
			if tc.flag != "" {
				ov.Agent = &tc.flag
			}
			_, _, err := Load(ws, ud, ov)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	// Command lines and paths are never second-guessed.
	for _, ok := range []string{"./codx", "codx --fast", "aider", "FOO=1 my-agent"} {
		ws, ud := dirs(t, "", "")
		if _, _, err := Load(ws, ud, Overrides{Agent: &ok}); err != nil {
			t.Errorf("--agent %q: %v", ok, err)
		}
	}
}

func TestParseAgentFlag(t *testing.T) {
	for in, want := range map[string]AgentFlag{
		"codex":                            {All: "codex"},
		"my-agent --x=1":                   {All: "my-agent --x=1"},
		"reviewer=codex, worker = gemini ": {PerRole: map[vocab.Role]string{"reviewer": "codex", "worker": "gemini"}},
		"lead=my-agent --fast":             {PerRole: map[vocab.Role]string{"lead": "my-agent --fast"}},
		"worker_1=codex,worker_2=gemini": {PerRole: map[vocab.Role]string{},
			PerWorker: map[vocab.AgentID]string{"worker_1": "codex", "worker_2": "gemini"}},
		"lead=claude,worker=gemini,worker_2=codex": {PerRole: map[vocab.Role]string{"lead": "claude", "worker": "gemini"},
			PerWorker: map[vocab.AgentID]string{"worker_2": "codex"}},
	} {
		got, err := ParseAgentFlag(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseAgentFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestWorkerAgents(t *testing.T) {
	project := "agent = \"claude\"\nworkers = 3\n\n[roles.worker]\nagent = \"gemini\"\n\n[agents.worker_2]\nagent = \"codex\"\n"
	ws, ud := dirs(t, project, "")
	pf := filepath.Join(ws, FileName)
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[vocab.AgentID]string{"lead": "claude", "reviewer": "claude", "worker_1": "gemini", "worker_2": "codex", "worker_3": "gemini"} {
		if got := cfg.AgentOfID(id); got != want {
			t.Errorf("AgentOfID(%s) = %q, want %q", id, got, want)
		}
	}
	if s := src.Of("agents.worker_2.agent"); s != (Source{Kind: SourceProject, File: pf, Line: 8}) {
		t.Errorf("worker_2 agent source %v", s)
	}
	if got, want := cfg.TeamString(), "lead=claude,reviewer=claude,worker=gemini,worker_2=codex"; got != want {
		t.Errorf("team %q, want %q", got, want)
	}
	if d := cfg.Describe(src); !strings.Contains(d, "[agents.worker_2]\nagent = \"codex\"") {
		t.Errorf("describe lacks [agents.worker_2]:\n%s", d)
	}

	// Only a worker of its own is mixed: every agent claude but worker_2.
	only := Default().WithAgents(AgentFlag{PerWorker: map[vocab.AgentID]string{"worker_2": "codex"}})
	if !only.Mixed() || only.TeamString() != "lead=claude,reviewer=claude,worker=claude,worker_2=codex" {
		t.Errorf("one worker of its own: mixed %v team %q", only.Mixed(), only.TeamString())
	}
	if Default().Mixed() {
		t.Error("the default team is mixed")
	}

	for _, tc := range []struct{ flag, want string }{
		// A worker id in the flag overrides the role in the same flag and
		// the file.
		{"lead=claude,worker=sim,worker_1=codex", "lead=claude,reviewer=claude,worker=sim,worker_1=codex"},
		{"worker_3=sim", "lead=claude,reviewer=claude,worker=gemini,worker_2=codex,worker_3=sim"},
		// The worker role in the flag runs every worker the flag does
		// not name; one agent for all runs everyone.
		{"worker=sim", "lead=claude,reviewer=claude,worker=sim"},
		{"codex", "codex"},
	} {
		flag := tc.flag
		cfg, src, err := Load(ws, ud, Overrides{Agent: &flag})
		if err != nil {
			t.Fatalf("--agent %s: %v", flag, err)
		}
		if got := cfg.TeamString(); got != tc.want {
			t.Errorf("--agent %s: team %q, want %q", flag, got, tc.want)
		}
		if _, ok := cfg.WorkerAgents["worker_2"]; !ok {
			if _, stale := src["agents.worker_2.agent"]; stale {
				t.Errorf("--agent %s dropped worker_2's agent but kept its source", flag)
			}
		}
	}

	// A flag's worker count decides which worker ids are valid.
	one := 1
	if _, _, err := Load(ws, ud, Overrides{Workers: &one}); err == nil || !strings.Contains(err.Error(), pf+":8: agents.worker_2.agent: worker_2 is not a worker of this team of 1 (workers = 1): valid ids are worker_1") {
		t.Errorf("--workers 1 with [agents.worker_2]: %v", err)
	}
}

// A worker's own model ([agents.<worker>] model) replaces its role's for
// that worker alone, shows in `hivemind config` and is priced like a
// role's.
func TestWorkerModels(t *testing.T) {
	project := "workers = 2\n\n[roles.worker]\nmodel = \"gpt-5\"\n\n[agents.worker_2]\nagent = \"codex\"\nmodel = \"my-model\"\n"
	ws, ud := dirs(t, project, "")
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[vocab.AgentID]string{"lead": "", "reviewer": "", "worker_1": "gpt-5", "worker_2": "my-model"} {
		if got := cfg.AgentConfig(vocab.RoleOf(id), id).Model; got != want {
			t.Errorf("%s's model %q, want %q", id, got, want)
		}
	}
	if s := src.Of("agents.worker_2.model"); s.Kind != SourceProject || s.Line != 8 {
		t.Errorf("worker_2 model source %v", s)
	}
	if d := cfg.Describe(src); !strings.Contains(d, "[agents.worker_2]\nagent = \"codex\"") || !strings.Contains(d, "model = \"my-model\"") {
		t.Errorf("describe lacks worker_2's model:\n%s", d)
	}
	if u := cfg.UnpricedModels(); len(u) != 1 || u[0].Model != "my-model" || !slices.Equal(u[0].Roles, []string{"worker_2"}) {
		t.Errorf("unpriced %+v, want my-model (worker_2)", u)
	}
	// --agent for the worker keeps its model, as a role's model stays
	// under --agent.
	if got := cfg.WithAgents(AgentFlag{All: "codex"}).AgentConfig(vocab.RoleWorker, "worker_2").Model; got != "my-model" {
		t.Errorf("after --agent codex: %q", got)
	}
}
