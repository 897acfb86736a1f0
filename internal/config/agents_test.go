package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/workspace"
)

func TestRoleAgents(t *testing.T) {
	project := "agent = \"claude\"\n\n[roles.reviewer]\nagent = \"codex\"\n\n[roles.worker]\nagent = \"gemini\"\n"
	ws, ud := dirs(t, project, "")
	pf := filepath.Join(ws, FileName)
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[workspace.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"}
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
	want = map[workspace.Role]string{"lead": "gemini", "reviewer": "codex", "worker": "sim"}
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
		"reviewer=codex, worker = gemini ": {PerRole: map[workspace.Role]string{"reviewer": "codex", "worker": "gemini"}},
		"lead=my-agent --fast":             {PerRole: map[workspace.Role]string{"lead": "my-agent --fast"}},
	} {
		got, err := ParseAgentFlag(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseAgentFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}
