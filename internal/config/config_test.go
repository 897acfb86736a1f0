package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
)

// dirs returns a project workspace dir and a user dir; files are written
// only when content is not empty.
func dirs(t *testing.T, project, user string) (string, string) {
	t.Helper()
	root := t.TempDir()
	ws, ud := filepath.Join(root, "proj", ".hivemind"), filepath.Join(root, "user", "hivemind")
	for d, content := range map[string]string{ws: project, ud: user} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(filepath.Join(d, FileName), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ws, ud
}

func TestDefaultsWithoutFiles(t *testing.T) {
	ws, ud := dirs(t, "", "")
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Files = Files{User: filepath.Join(ud, FileName), Project: filepath.Join(ws, FileName),
		UserRolesDir: filepath.Join(ud, "roles"), ProjectRolesDir: filepath.Join(ws, "roles")}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}
	if len(src) != 0 {
		t.Errorf("sources of defaults: %v", src)
	}
	if cfg.QuietPeriod().String() != "300ms" || cfg.HangTimeout().String() != "2m0s" ||
		cfg.AgentTimeout().String() != "30m0s" || !reflect.DeepEqual(cfg.Backoff(), []time.Duration{5 * time.Second, 15 * time.Second, 45 * time.Second}) ||
		cfg.RateLimitCooldown() != time.Minute {
		t.Errorf("durations: %v %v %v %v %v", cfg.QuietPeriod(), cfg.HangTimeout(), cfg.AgentTimeout(), cfg.Backoff(), cfg.RateLimitCooldown())
	}
}

func TestPrecedence(t *testing.T) {
	user := `workers = 3
agent = "sim"
fps = 20
backoff_seconds = [1, 2]

[roles.lead]
model = "user-model"
extra_args = ["--verbose"]

[profiles.codex]
command = ["codex"]
env = { A = "user", B = "user" }
`
	project := `fps = 50
rate_limit_cooldown_seconds = 90

[roles.lead]
model = "project-model"

[profiles.codex]
submit = "line"
env.B = "project"
`
	ws, ud := dirs(t, project, user)
	workers, agent := 5, "claude"
	cfg, src, err := Load(ws, ud, Overrides{Workers: &workers})
	if err != nil {
		t.Fatal(err)
	}
	uf, pf := filepath.Join(ud, FileName), filepath.Join(ws, FileName)
	checks := []struct {
		key  string
		got  any
		want any
		src  Source
	}{
		{"workers", cfg.Workers, 5, Source{Kind: SourceFlag, Flag: "--workers"}},
		{"agent", cfg.Agent, "sim", Source{Kind: SourceUser, File: uf, Line: 2}},
		{"fps", cfg.FPS, 50, Source{Kind: SourceProject, File: pf, Line: 1}},
		{"backoff_seconds", cfg.BackoffSeconds, []int{1, 2}, Source{Kind: SourceUser, File: uf, Line: 4}},
		{"roles.lead.model", cfg.Roles["lead"].Model, "project-model", Source{Kind: SourceProject, File: pf, Line: 5}},
		{"roles.lead.extra_args", cfg.Roles["lead"].ExtraArgs, []string{"--verbose"}, Source{Kind: SourceUser, File: uf, Line: 8}},
		{"roles.lead.permission_mode", cfg.Roles["lead"].PermissionMode, "bypassPermissions", Source{Kind: SourceDefault}},
		{"hang_seconds", cfg.HangSeconds, 120, Source{Kind: SourceDefault}},
		{"rate_limit_cooldown_seconds", cfg.RateLimitCooldownSeconds, 90, Source{Kind: SourceProject, File: pf, Line: 2}},
		{"profiles.codex.command", cfg.Profiles["codex"].Command, []string{"codex"}, Source{Kind: SourceUser, File: uf, Line: 11}},
		{"profiles.codex.submit", cfg.Profiles["codex"].Submit, "line", Source{Kind: SourceProject, File: pf, Line: 8}},
		{"profiles.codex.env.A", cfg.Profiles["codex"].Env["A"], "user", Source{Kind: SourceUser, File: uf, Line: 12}},
		{"profiles.codex.env.B", cfg.Profiles["codex"].Env["B"], "project", Source{Kind: SourceProject, File: pf, Line: 9}},
		{"profiles.codex.ready_quiet_ms", cfg.Profiles["codex"].ReadyQuietMS, 500, Source{Kind: SourceDefault}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
		if got := src.Of(c.key); got != c.src {
			t.Errorf("source of %s = %+v, want %+v", c.key, got, c.src)
		}
	}

	// The --agent flag beats both files.
	cfg, src, err = Load(ws, ud, Overrides{Agent: &agent})
	if err != nil || cfg.Agent != "claude" || src.Of("agent").String() != "flag --agent" || cfg.Workers != 3 {
		t.Errorf("agent flag: %v %q %v workers=%d", err, cfg.Agent, src.Of("agent"), cfg.Workers)
	}
	if cfg.PlanApproval != PlanApprovalReviewer || src.Of("plan_approval").Kind != SourceDefault {
		t.Errorf("plan_approval default = %q from %v", cfg.PlanApproval, src.Of("plan_approval"))
	}
	human := PlanApprovalHuman
	cfg, src, err = Load(ws, ud, Overrides{PlanApproval: &human})
	if err != nil || cfg.PlanApproval != PlanApprovalHuman || src.Of("plan_approval").String() != "flag --plan-approval" {
		t.Errorf("plan approval flag: %v %q %v", err, cfg.PlanApproval, src.Of("plan_approval"))
	}
}

func TestConfigFileFlagReplacesProjectFile(t *testing.T) {
	ws, ud := dirs(t, "workers = 4\n", "fps = 10\n")
	alt := filepath.Join(t.TempDir(), "alt.toml")
	if err := os.WriteFile(alt, []byte("\nworkers = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, src, err := Load(ws, ud, Overrides{ConfigFile: alt})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 7 || cfg.FPS != 10 || src.Of("workers").String() != "project "+alt+":2" {
		t.Errorf("workers=%d fps=%d src=%v", cfg.Workers, cfg.FPS, src.Of("workers"))
	}
	if cfg.Files.Project != alt {
		t.Errorf("Files.Project = %q", cfg.Files.Project)
	}
}

// TestErrors checks the exact message of every kind of config error.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string // each line of the error, after "<file>:"
	}{
		{"syntax", "workers = \n", []string{"1:11: syntax error: expected value but found '\\n' instead"}},
		{"syntax duplicate key", "fps = 1\nfps = 2\n", []string{"2:9: syntax error: Key 'fps' has already been defined."}},
		{"unknown top key", "wrokers = 2\n", []string{`1: wrokers: unknown key (did you mean "workers"?)`}},
		{"unknown top key no suggestion", "\n\ncolour = \"red\"\n", []string{"3: colour: unknown key"}},
		{"unknown table", "[ui]\ntheme = 1\n", []string{"1: ui: unknown key"}},
		{"unknown role key", "[roles.lead]\nmodle = \"x\"\n", []string{
			`2: roles.lead.modle: unknown key (did you mean "model"?); known keys here: agent, budget_tokens, extra_args, hosts, model, permission_mode, writable`}},
		{"unknown role", "[roles.planner]\nmodel = \"x\"\n", []string{
			`1: roles.planner: unknown role "planner"; roles: lead, reviewer, worker`}},
		{"role typo", "[roles.wroker]\nmodel = \"x\"\n", []string{
			`1: roles.wroker: unknown role "wroker" (did you mean "worker"?); roles: lead, reviewer, worker`}},
		{"unknown profile key", "[profiles.x]\ncommand = [\"x\"]\nready = 1\n", []string{
			`3: profiles.x.ready: unknown key; known keys here: command, env, ready_quiet_ms, ready_regex, submit, submit_delay_ms`}},
		{"int as string", "workers = \"two\"\n", []string{`1: workers: wrong type: want an integer, found a string ("two")`}},
		{"int as float", "\nfps = 29.97\n", []string{"2: fps: wrong type: want an integer, found a float (29.97)"}},
		{"int as bool", "max_retries = true\n", []string{"1: max_retries: wrong type: want an integer, found a boolean (true)"}},
		{"string as int", "agent = 1\n", []string{"1: agent: wrong type: want a string, found an integer (1)"}},
		{"string as array", "check = [\"go\", \"test\"]\n", []string{"1: check: wrong type: want a string, found an array"}},
		{"array as string", "worktree_copy = \".env\"\n", []string{`1: worktree_copy: wrong type: want an array of strings, found a string (".env")`}},
		{"array element", "backoff_seconds = [5, \"15\"]\n", []string{`1: backoff_seconds: wrong type: want an array of integers, found an array whose element 2 is a string ("15")`}},
		{"table as value", "roles = 3\n", []string{"1: roles: wrong type: want a table, found an integer (3)"}},
		{"role as value", "[roles]\nlead = \"opus\"\n", []string{`2: roles.lead: wrong type: want a table, found a string ("opus")`}},
		{"nested role type", "[roles.worker]\nextra_args = \"--verbose\"\n", []string{
			`2: roles.worker.extra_args: wrong type: want an array of strings, found a string ("--verbose")`}},
		{"env value type", "[profiles.x]\ncommand = [\"x\"]\nenv = { A = 1 }\n", []string{
			"3: profiles.x.env.A: wrong type: want a string, found an integer (1)"}},
		{"too small", "workers = 0\n", []string{"1: workers: must be at least 1 (got 0)"}},
		{"too large", "workers = 99\n", []string{"1: workers: must be at most 32 (got 99)"}},
		{"cooldown too small", "rate_limit_cooldown_seconds = 0\n", []string{"1: rate_limit_cooldown_seconds: must be at least 1 (got 0)"}},
		{"cooldown too large", "rate_limit_cooldown_seconds = 86401\n", []string{"1: rate_limit_cooldown_seconds: must be at most 86400 (got 86401)"}},
		{"cooldown as string", "rate_limit_cooldown_seconds = \"1m\"\n", []string{`1: rate_limit_cooldown_seconds: wrong type: want an integer, found a string ("1m")`}},
		{"negative element", "backoff_seconds = [5, -1]\n", []string{"1: backoff_seconds: element 2: must be at least 0 (got -1)"}},
		{"empty list", "backoff_seconds = []\n", []string{"1: backoff_seconds: must not be empty"}},
		{"overflow", "hang_seconds = 99999999999999999999\n", []string{"1:16: syntax error: 99999999999999999999 is out of range for int64"}},
		{"empty agent", "agent = \" \"\n", []string{"1: agent: must not be empty"}},
		{"budget negative", "budget_usd = -1\n", []string{"1: budget_usd: must be between 0 and 1000000"}},
		{"budget as string", "budget_usd = \"5\"\n", []string{`1: budget_usd: wrong type: want a number, found a string ("5")`}},
		{"price key", "[pricing.\"m\"]\nintput = 1\n", []string{
			`2: pricing.m.intput: unknown key (did you mean "input"?); known keys here: cache_read, cache_write, input, output`}},
		{"price as string", "[pricing.m]\noutput = \"1\"\n", []string{`2: pricing.m.output: wrong type: want a number, found a string ("1")`}},
		// Durations are range-checked before any arithmetic (18446744074 s
		// once wrapped to 290 ms), and zero is rejected where it means
		// nothing instead of silently becoming a default.
		{"duration that would wrap", "hang_seconds = 18446744074\n", []string{"1: hang_seconds: must be at most 604800 (got 18446744074)"}},
		{"agent timeout too large", "agent_timeout_seconds = 604801\n", []string{"1: agent_timeout_seconds: must be at most 604800 (got 604801)"}},
		{"retention too large", "retention_full_days = 9223372036854775807\n", []string{"1: retention_full_days: must be at most 36500 (got 9223372036854775807)"}},
		{"quiet period zero", "quiet_period_ms = 0\n", []string{"1: quiet_period_ms: must be at least 10 (got 0)"}},
		{"stall too small", "stall_seconds = 0\n", []string{"1: stall_seconds: must be at least 10 (got 0)"}},
		{"stall too large", "stall_seconds = 604801\n", []string{"1: stall_seconds: must be at most 604800 (got 604801)"}},
		{"permission mode", "[roles.reviewer]\npermission_mode = \"yolo\"\n", []string{
			`2: roles.reviewer.permission_mode: invalid value "yolo" (want one of: acceptEdits, auto, bypassPermissions, default, dontAsk, plan)`}},
		{"plan approval typo", "plan_approval = \"humna\"\n", []string{
			`1: plan_approval: invalid value "humna" (want one of: reviewer, human); did you mean "human"?`}},
		{"plan approval", "plan_approval = \"nobody\"\n", []string{
			`1: plan_approval: invalid value "nobody" (want one of: reviewer, human)`}},
		{"submit", "[profiles.x]\ncommand = [\"x\"]\nsubmit = \"type\"\n", []string{
			`3: profiles.x.submit: invalid value "type" (want one of: paste, line)`}},
		{"regex", "[profiles.x]\ncommand = [\"x\"]\nready_regex = \"([\"\n", []string{
			"3: profiles.x.ready_regex: invalid regular expression: error parsing regexp: missing closing ]: `[`"}},
		{"glob", "worktree_copy = [\".env\", \"[\"]\n", []string{`1: worktree_copy: element 2: invalid glob "[": syntax error in pattern`}},
		{"profile without command", "\n[profiles.aider]\nsubmit = \"line\"\n", []string{
			`2: profiles.aider: command is required (an array of strings, e.g. ["codex", "--full-auto"])`}},
		{"empty command", "[profiles.x]\ncommand = []\n", []string{"2: profiles.x.command: must not be empty",
			`1: profiles.x: command is required (an array of strings, e.g. ["codex", "--full-auto"])`}},
		{"builtin profile", "[profiles.claude]\ncommand = [\"claude\"]\n", []string{
			`1: profiles.claude: "claude" is a built-in agent and cannot be redefined; choose another profile name`}},
		{"several errors in line order", "fps = 0\nworkers = \"x\"\nbogus = 1\n", []string{
			"1: fps: must be at least 1 (got 0)",
			`2: workers: wrong type: want an integer, found a string ("x")`,
			"3: bogus: unknown key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, ud := dirs(t, tc.file, "")
			_, _, err := Load(ws, ud, Overrides{})
			if err == nil {
				t.Fatal("no error")
			}
			file := filepath.Join(ws, FileName)
			var want []string
			for _, w := range tc.want {
				want = append(want, file+":"+w)
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != file || ce.Line == 0 {
				t.Errorf("errors.As *Error: %+v", ce)
			}
		})
	}
}

func TestUserFileErrorsNameUserFile(t *testing.T) {
	ws, ud := dirs(t, "fps = 0\n", "\nworkers = \"x\"\n")
	_, _, err := Load(ws, ud, Overrides{})
	want := filepath.Join(ud, FileName) + `:2: workers: wrong type: want an integer, found a string ("x")` + "\n" +
		filepath.Join(ws, FileName) + ":1: fps: must be at least 1 (got 0)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestFlagAndFileErrors(t *testing.T) {
	ws, ud := dirs(t, "", "")
	zero, blank, gate := 0, " ", "humans"
	_, _, err := Load(ws, ud, Overrides{Workers: &zero, Agent: &blank, PlanApproval: &gate})
	if err == nil || err.Error() != "--workers: must be at least 1 (got 0)\n--agent: must not be empty\n"+
		`--plan-approval: invalid value "humans" (want one of: reviewer, human); did you mean "human"?` {
		t.Errorf("flags: %v", err)
	}
	missing := filepath.Join(ws, "nope.toml")
	_, _, err = Load(ws, ud, Overrides{ConfigFile: missing})
	if err == nil || err.Error() != missing+": config file does not exist" {
		t.Errorf("missing --config: %v", err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(ws, ud, Overrides{ConfigFile: filepath.Join(ws, "dir.toml")})
	if err == nil || !strings.Contains(err.Error(), "dir.toml: cannot read: ") {
		t.Errorf("unreadable --config: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	user := "agent = \"codex\"\n\n[profiles.codex]\ncommand = [\"codex\", \"--full-auto\"]\nenv = { OPENAI_BASE_URL = \"http://127.0.0.1:9\" }\n"
	project := "workers = 3\n[roles.reviewer]\nmodel = \"opus\"\n"
	ws, ud := dirs(t, project, user)
	workers := 4
	cfg, src, err := Load(ws, ud, Overrides{Workers: &workers})
	if err != nil {
		t.Fatal(err)
	}
	out := cfg.Describe(src)
	// Paths differ per run; the golden file has placeholders.
	out = strings.ReplaceAll(out, filepath.Join(ud, FileName), "<user>/config.toml")
	out = strings.ReplaceAll(out, filepath.Join(ws, FileName), "<project>/config.toml")
	golden.RequireEqual(t, out)

	// The description is itself a valid config file that loads to the
	// same values.
	ws2, ud2 := dirs(t, cfg.Describe(src), "")
	again, _, err := Load(ws2, ud2, Overrides{})
	if err != nil {
		t.Fatalf("Describe output does not load: %v", err)
	}
	again.Files, cfg.Files = Files{}, Files{}
	if !reflect.DeepEqual(again, cfg) {
		t.Errorf("round trip:\n%+v\n%+v", again, cfg)
	}
}

func TestUserDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := UserDir(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})); got != "/x/hivemind" {
		t.Errorf("xdg: %s", got)
	}
	if got := UserDir(env(map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"})); got != "/h/.config/hivemind" {
		t.Errorf("relative xdg is ignored (XDG spec): %s", got)
	}
	if got := UserDir(env(map[string]string{"HOME": "/h"})); got != "/h/.config/hivemind" {
		t.Errorf("home: %s", got)
	}
}

func TestProfileExpand(t *testing.T) {
	p := Profile{Command: []string{"aider", "--model", "{model}", "--read", "{task_dir}/plan.md", "{unknown}"}}
	got := p.Expand(map[string]string{"model": "sonnet", "task_dir": "/t"})
	want := []string{"aider", "--model", "sonnet", "--read", "/t/plan.md", "{unknown}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
}

// budget_usd takes an integer or a float; [pricing."model"] changes one
// price of a shipped model and adds new models, over the shipped table.
func TestBudgetAndPricing(t *testing.T) {
	ws, ud := dirs(t, "budget_usd = 2.5\n[pricing.\"claude-sonnet-4\"]\noutput = 20\n[pricing.my-model]\ninput = 1\noutput = 2\n", "budget_usd = 9\n")
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BudgetUSD != 2.5 || src.Of("budget_usd").String() == "default" {
		t.Errorf("budget %v from %v", cfg.BudgetUSD, src.Of("budget_usd"))
	}
	p := cfg.Prices()
	if got := p["claude-sonnet-4"]; got.Input != 3 || got.Output != 20 {
		t.Errorf("claude-sonnet-4: %+v", got)
	}
	if got, ok := p.Cost("my-model-v2", 1_000_000, 1_000_000, 0, 0); !ok || got != 3 {
		t.Errorf("my-model-v2: %v %v", got, ok)
	}
	if !strings.Contains(cfg.Describe(src), "[pricing.my-model]\ninput = 1") {
		t.Errorf("describe:\n%s", cfg.Describe(src))
	}
}
