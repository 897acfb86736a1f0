package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Defaults and ranges other packages use: each is defined here once.
const (
	// DefaultWorkers is the number of workers without workers or --workers.
	DefaultWorkers = 2
	// MinWorkers and MaxWorkers bound workers and --workers.
	MinWorkers = 1
	MaxWorkers = 32
	// DefaultHangSeconds is hang_seconds' default: no turn progress this
	// long while working means the agent hangs.
	DefaultHangSeconds = 120
	// DefaultRateLimitCooldownSeconds is rate_limit_cooldown_seconds'
	// default.
	DefaultRateLimitCooldownSeconds = 60
	// DefaultReadyQuietMS is a profile's ready_quiet_ms default: output
	// silence before an agent without other ready signals counts as ready.
	DefaultReadyQuietMS = 500
)

const (
	noMax = int(^uint(0) >> 1)
	// Every value that becomes a duration is range-checked before any
	// arithmetic, so none can wrap (18446744074 s once became 290 ms).
	maxSeconds = 7 * 24 * 3600 // a week
	maxDays    = 100 * 365
	// A trigger file must stay unchanged this long at least to count as
	// complete: 0 would take half-written files.
	minQuietMS = 10
	// An agent idle this long with unfinished work gets a reminder.
	minStallSeconds = 10
	// maxBudgetTokens bounds budget_tokens: a trillion tokens.
	maxBudgetTokens = 1_000_000_000_000
)

// Value kinds of the schema.
type kind int

const (
	kindInt kind = iota
	kindString
	kindStrings
	kindInts
	kindTable
	kindFloat
	kindBool
)

// spec describes one known key's value: its kind and range.
type spec struct {
	kind     kind
	min, max int                  // ints, int elements and floats
	nonEmpty bool                 // strings and arrays
	oneOf    []string             // strings
	check    func(s string) error // strings
}

// key is one configuration key of a table whose values go into a T
// (Config for the top level, RoleConfig under [roles.<role>], Profile
// under [profiles.<name>]): the one place that says its name, type,
// default, range, Go field and meaning. Default, Load, Describe and
// README's Config keys table (TestREADMEConfigKeys) derive from these
// tables; a key is added by adding its line.
type key[T any] struct {
	name string
	spec
	// def is the built-in value (int, string, float64, []int or
	// []string); nil: the field's zero value.
	def any
	// field is the T field the value goes into; nil for a table with its
	// own loader.
	field func(*T) any
	// load decodes a table key (top level only).
	load func(l *fileLoader, path []string, prim toml.Primitive)
	// omitEmpty leaves the key out of Describe while its value is empty.
	omitEmpty bool
	// Documentation (README's Config keys table): typ replaces the type
	// derived from spec, defText the rendered def, show the key column.
	typ, defText, show, doc string
}

// topKeys are the top-level keys, in the order `hivemind config` and
// README list them.
var topKeys = []key[Config]{
	{name: "workers", spec: spec{kind: kindInt, min: MinWorkers, max: MaxWorkers}, def: DefaultWorkers,
		field: func(c *Config) any { return &c.Workers },
		doc:   "number of Worker agents (flag `--workers`)"},
	{name: "agent", spec: spec{kind: kindString, nonEmpty: true}, def: "claude",
		field: func(c *Config) any { return &c.Agent },
		doc:   "agent of every role: `claude`, `codex`, `gemini`, `opencode`, `sim`, a `[profiles.<name>]`, or a command line (flag `--agent`; `--agent reviewer=codex,worker=gemini` per role)"},
	{name: "plan_approval", spec: spec{kind: kindString, oneOf: PlanApprovals}, def: PlanApprovalReviewer,
		field: func(c *Config) any { return &c.PlanApproval },
		doc:   "who approves the plan: the Reviewer alone, or the Reviewer then you — the TUI shows the plan rendered (`a` approves, `f` sends feedback); headless, write `plan-decision.md` in the task directory (first line `approve`, or `revise` and the feedback below it). Flag `--plan-approval`"},
	{name: "quiet_period_ms", spec: spec{kind: kindInt, min: minQuietMS, max: 60_000}, def: 300,
		field: func(c *Config) any { return &c.QuietPeriodMS },
		doc:   "a trigger file counts as complete after this long unchanged (or when its writer's turn ends)"},
	{name: "hang_seconds", spec: spec{kind: kindInt, min: 1, max: maxSeconds}, def: DefaultHangSeconds,
		field: func(c *Config) any { return &c.HangSeconds },
		doc:   "no turn progress this long while working (a hook or session file growth for Claude, Codex, Gemini; any output for other agents) → hang warning at half, then restart; while an agent starts, nothing shown this long is a hang too, and each start in a row that hung before the agent was ever ready doubles the next start's allowance (at most 8×), so a CLI that starts slowly on a busy machine is not restarted into the same wall"},
	{name: "agent_timeout_seconds", spec: spec{kind: kindInt, min: 1, max: maxSeconds}, def: 1800,
		field: func(c *Config) any { return &c.AgentTimeoutSeconds },
		doc:   "longest time one assignment may take"},
	{name: "stall_seconds", spec: spec{kind: kindInt, min: minStallSeconds, max: maxSeconds}, def: 120,
		field: func(c *Config) any { return &c.StallSeconds },
		doc:   "an agent idle this long after its assignment without producing what it asks gets one reminder, then the run needs a human"},
	{name: "rate_limit_cooldown_seconds", spec: spec{kind: kindInt, min: 1, max: 86_400}, def: DefaultRateLimitCooldownSeconds,
		field: func(c *Config) any { return &c.RateLimitCooldownSeconds },
		doc:   "an agent that hit a rate limit stays `rate_limited` this long, then counts as idle again and held messages are sent"},
	{name: "max_retries", spec: spec{kind: kindInt, min: 0, max: 100}, def: 3,
		field: func(c *Config) any { return &c.MaxRetries },
		doc:   "retries of any kind (restarts, rejected markers and fixes, rate-limited turns) before the run needs a human; 0 = none"},
	{name: "max_revision_cycles", spec: spec{kind: kindInt, min: 1, max: 100}, def: 3,
		field: func(c *Config) any { return &c.MaxRevisionCycles },
		doc:   "plan ↔ review rounds before the run needs a human"},
	{name: "backoff_seconds", spec: spec{kind: kindInts, min: 0, max: 86_400, nonEmpty: true}, def: []int{5, 15, 45},
		field: func(c *Config) any { return &c.BackoffSeconds },
		doc:   "delays before restarting a crashed agent; the last repeats"},
	{name: "scrollback_lines", spec: spec{kind: kindInt, min: 0, max: 1_000_000}, def: 5000,
		field: func(c *Config) any { return &c.ScrollbackLines },
		doc:   "lines each pane keeps above its screen (0: none)"},
	{name: "fps", spec: spec{kind: kindInt, min: 1, max: 240}, def: 30,
		field: func(c *Config) any { return &c.FPS },
		doc:   "TUI frame-rate cap"},
	{name: "server_idle_seconds", spec: spec{kind: kindInt, min: 0, max: maxSeconds}, def: 1800,
		field: func(c *Config) any { return &c.ServerIdleSeconds },
		doc:   "a team run with `--server` whose task waits on you (needs_human, error) stays up this long with no client attached, then stops (the task stays resumable); a finished task's server stops as soon as no client is attached"},
	{name: "notify_command", spec: spec{kind: kindString}, def: "",
		field: func(c *Config) any { return &c.NotifyCommand },
		doc:   "a team run with `--server` runs this shell command (`sh -c`, in the project, at most 30 s, output in `server.log`) when its task needs you or ends, with `HIVEMIND_PHASE`, `HIVEMIND_REASON`, `HIVEMIND_TASK`, `HIVEMIND_PROJECT` and `HIVEMIND_CLIENTS` (clients attached) in its environment; \"\" runs nothing"},
	{name: "web", spec: spec{kind: kindBool}, def: false,
		field: func(c *Config) any { return &c.Web },
		doc:   "a team run in a server (`--server`, `--web`) also serves the web client on `web_listen`: its URL, with a token, is printed, in `web.json` of the workspace (mode 0600) and in `hivemind ls` (`hivemind web` turns it on for a running team)"},
	{name: "web_listen", spec: spec{kind: kindString, nonEmpty: true, check: checkListen}, def: "127.0.0.1:0",
		field: func(c *Config) any { return &c.WebListen },
		doc:   "the web client's address (port 0: a free one); an address that is not loopback also needs the flag `--web-remote` (serve it through TLS or `ssh -L`)"},
	{name: "retention_full_days", spec: spec{kind: kindInt, min: 0, max: maxDays}, def: 7,
		field: func(c *Config) any { return &c.RetentionFullDays },
		doc:   "keep a finished task's whole directory this long"},
	{name: "retention_summary_days", spec: spec{kind: kindInt, min: 0, max: maxDays}, def: 30,
		field: func(c *Config) any { return &c.RetentionSummaryDays },
		doc:   "keep a finished task's summary (task, final state, friction) this long"},
	{name: "check", spec: spec{kind: kindString},
		field: func(c *Config) any { return &c.Check },
		doc:   "shell command that verifies a worker's changes (used by worktree merges)"},
	{name: "worktree_copy", spec: spec{kind: kindStrings, check: checkGlob}, def: []string{".env*"},
		field: func(c *Config) any { return &c.WorktreeCopy }, typ: "array of globs",
		doc: "untracked files copied into worker worktrees"},
	{name: "budget_usd", spec: spec{kind: kindFloat, min: 0, max: 1_000_000}, def: 0.0,
		field: func(c *Config) any { return &c.BudgetUSD },
		doc:   "the task's estimated spend at which it stops for you (0: no cap; flag `--budget`)"},
	{name: "budget_tokens", spec: spec{kind: kindInt, min: 0, max: maxBudgetTokens}, def: 0,
		field: func(c *Config) any { return &c.BudgetTokens },
		doc:   "the task's tokens (input + output + cache read + cache write, as the header counts them) at which it stops for you; needs no price (0: no cap)"},
	{name: "pricing", spec: spec{kind: kindTable}, load: (*fileLoader).pricing,
		show: `[pricing."<model>"]`, defText: "shipped table",
		doc: "a model's prices, replacing or adding to the shipped table"},
	{name: "roles", spec: spec{kind: kindTable}, load: (*fileLoader).roles,
		show: "[roles.<role>]", doc: "`<role>` is `lead`, `reviewer` or `worker`"},
	{name: "agents", spec: spec{kind: kindTable}, load: (*fileLoader).workerAgents,
		show: "[agents.<worker>]", doc: "`<worker>` is a worker id, `worker_1` … `worker_<workers>`: that worker's own agent (`--agent worker_2=gemini`) and model"},
	{name: "hosts", spec: spec{kind: kindTable}, load: (*fileLoader).hosts,
		show: "[hosts.<name>]", doc: "a remote host agents can run on (see Remote workers)"},
	{name: "profiles", spec: spec{kind: kindTable}, load: (*fileLoader).profiles,
		show: "[profiles.<name>]", doc: "a custom agent CLI, selected with `agent = \"<name>\"` or `--agent <name>` (`claude` and `sim` are built in and cannot be redefined)"},
}

// roleKeys are the keys of a [roles.<role>] table.
var roleKeys = []key[RoleConfig]{
	{name: "agent", spec: spec{kind: kindString, nonEmpty: true},
		field: func(r *RoleConfig) any { return &r.Agent }, defText: "the top-level `agent`",
		doc: "that role's agent (same values as `agent`)"},
	{name: "model", spec: spec{kind: kindString},
		field: func(r *RoleConfig) any { return &r.Model },
		doc:   "model for that role (`--model`); empty = the agent's default"},
	{name: "extra_args", spec: spec{kind: kindStrings}, def: []string{},
		field: func(r *RoleConfig) any { return &r.ExtraArgs },
		doc:   "extra arguments for that role's agent command"},
	{name: "budget_tokens", spec: spec{kind: kindInt, min: 0, max: maxBudgetTokens}, def: 0,
		field: func(r *RoleConfig) any { return &r.BudgetTokens },
		doc:   "the tokens that role's agents together may use before the task stops for you, counted as `budget_tokens` (0: no cap)"},
	// bypassPermissions: agents run unattended, and a permission dialog
	// would stall the run. Role limits are still enforced: removed tools
	// (--disallowedTools) and PreToolUse hook denials apply in every
	// permission mode.
	{name: "permission_mode", spec: spec{kind: kindString, oneOf: permissionModes}, def: "bypassPermissions",
		field: func(r *RoleConfig) any { return &r.PermissionMode }, typ: "string",
		doc: "Claude Code `--permission-mode`: `acceptEdits`, `auto`, `bypassPermissions`, `default`, `dontAsk`, `plan`"},
	{name: "hosts", spec: spec{kind: kindStrings},
		field: func(r *RoleConfig) any { return &r.Hosts }, omitEmpty: true, typ: "array of host names", defText: "`[]`",
		doc: "workers only: place workers on these `[hosts.<name>]` in order (up to each one's `max_agents`), then here (`\"local\"`); see Remote workers"},
	{name: "writable", spec: spec{kind: kindStrings},
		field: func(r *RoleConfig) any { return &r.Writable }, omitEmpty: true, typ: "array of paths", defText: "`[]`",
		doc: "extra paths that role's agents may write, beyond their write scope (Reliability); `~/` is your home, relative paths are in the project"},
}

// workerAgentKeys are the keys of an [agents.<worker>] table.
var workerAgentKeys = []key[WorkerAgent]{
	{name: "agent", spec: spec{kind: kindString, nonEmpty: true},
		field: func(w *WorkerAgent) any { return &w.Agent }, defText: "`[roles.worker]`'s `agent`",
		doc: "that worker's agent (same values as `agent`); it overrides the worker role's"},
	{name: "model", spec: spec{kind: kindString, nonEmpty: true},
		field: func(w *WorkerAgent) any { return &w.Model }, defText: "`[roles.worker]`'s `model`",
		doc: "that worker's model (`--model`); it overrides the worker role's"},
}

// profileKeys are the keys of a [profiles.<name>] table.
var profileKeys = []key[Profile]{
	{name: "command", spec: spec{kind: kindStrings, nonEmpty: true},
		field: func(p *Profile) any { return &p.Command }, defText: "required",
		doc: "the command; `{role}`, `{agent_id}`, `{task_dir}`, `{project}` and `{model}` are replaced per agent"},
	{name: "env", spec: spec{kind: kindTable}, typ: "table of strings", defText: "`{}`",
		doc: "extra environment variables"},
	{name: "submit", spec: spec{kind: kindString, oneOf: []string{SubmitPaste, SubmitLine}}, def: SubmitPaste,
		field: func(p *Profile) any { return &p.Submit },
		doc:   "how a `[HIVEMIND]` line is typed: bracketed paste then Enter, or the text and Enter in one write"},
	{name: "submit_delay_ms", spec: spec{kind: kindInt, min: 0, max: 60_000}, def: 80,
		field: func(p *Profile) any { return &p.SubmitDelayMS },
		doc:   "pause between the paste and its Enter"},
	{name: "ready_regex", spec: spec{kind: kindString, check: checkRegex},
		field: func(p *Profile) any { return &p.ReadyRegex }, typ: "regular expression",
		doc: "when set, the screen must match it before the agent counts as ready"},
	{name: "ready_quiet_ms", spec: spec{kind: kindInt, min: 0, max: 600_000}, def: DefaultReadyQuietMS,
		field: func(p *Profile) any { return &p.ReadyQuietMS },
		doc:   "output silence needed before the agent counts as ready"},
}

// applyDefaults sets every key of keys with a default in t.
func applyDefaults[T any](t *T, keys []key[T]) {
	for _, k := range keys {
		if k.def == nil || k.field == nil {
			continue
		}
		dst := reflect.ValueOf(k.field(t)).Elem()
		v := reflect.ValueOf(k.def)
		if v.Kind() == reflect.Slice { // never share the table's array
			v = reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v)
		}
		dst.Set(v)
	}
}

// lookup returns the key named name.
func lookup[T any](keys []key[T], name string) (key[T], bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return key[T]{}, false
}

// names lists the keys' names, in table order.
func names[T any](keys []key[T]) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// shown returns the value of k in t and whether Describe shows it: a key
// with a field, unless omitEmpty and empty.
func shown[T any](t *T, k key[T]) (any, bool) {
	if k.field == nil {
		return nil, false
	}
	v := reflect.ValueOf(k.field(t)).Elem()
	if k.omitEmpty && (v.Kind() == reflect.Slice || v.Kind() == reflect.String) && v.Len() == 0 {
		return nil, false
	}
	return v.Interface(), true
}

// KeyDoc is one row of README's Config keys table.
type KeyDoc struct{ Key, Type, Default, Doc string }

// KeyDocs returns README's Config keys table, row by row: the top-level
// keys in order, each [roles.<role>] and [profiles.<name>] table followed
// by its keys.
func KeyDocs() []KeyDoc {
	var out []KeyDoc
	for _, k := range topKeys {
		out = append(out, k.keyDoc(""))
		switch k.name {
		case "roles":
			for _, rk := range roleKeys {
				out = append(out, rk.keyDoc("roles.<role>."))
			}
		case "pricing":
			for _, pk := range priceKeys {
				out = append(out, pk.keyDoc(`pricing."<model>".`))
			}
		case "agents":
			for _, wk := range workerAgentKeys {
				out = append(out, wk.keyDoc("agents.<worker>."))
			}
		case "hosts":
			for _, hk := range hostKeys {
				out = append(out, hk.keyDoc("hosts.<name>."))
			}
		case "profiles":
			for _, pk := range profileKeys {
				out = append(out, pk.keyDoc("profiles.<name>."))
			}
		}
	}
	return out
}

func (k key[T]) keyDoc(prefix string) KeyDoc {
	d := KeyDoc{Key: "`" + prefix + k.name + "`", Type: k.typ, Default: k.defText, Doc: k.doc}
	if k.show != "" {
		d.Key = "`" + k.show + "`"
	}
	if d.Type == "" {
		d.Type = k.typeText()
	}
	if d.Default == "" && k.kind != kindTable {
		def := k.def
		if def == nil {
			def = reflect.Zero(reflect.TypeOf(k.field(new(T))).Elem()).Interface()
		}
		d.Default = "`" + tomlValue(def) + "`"
	}
	return d
}

// typeText is the type column derived from the spec: "integer 1–32",
// `"paste"` or `"line"`.
func (s spec) typeText() string {
	rng := func(what string) string {
		if s.max == noMax {
			return fmt.Sprintf("%s ≥ %d", what, s.min)
		}
		return fmt.Sprintf("%s %d–%d", what, s.min, s.max)
	}
	switch s.kind {
	case kindInt:
		return rng("integer")
	case kindFloat:
		return rng("number")
	case kindInts:
		return rng("array of integers")
	case kindStrings:
		return "array of strings"
	case kindTable:
		return "table"
	case kindBool:
		return "boolean"
	}
	if len(s.oneOf) > 0 {
		q := make([]string, len(s.oneOf))
		for i, v := range s.oneOf {
			q[i] = "`" + tomlString(v) + "`"
		}
		return strings.Join(q, " or ")
	}
	return "string"
}
