package config

import (
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hivemind-dev/hivemind/internal/pricing"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Permission modes Claude Code accepts for --permission-mode (claude
// --help, version 2.1.197).
var permissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}

// Plan approval modes: who approves a plan before the team builds it.
const (
	// PlanApprovalReviewer: the Reviewer's approval starts the build.
	PlanApprovalReviewer = "reviewer"
	// PlanApprovalHuman: after the Reviewer approves, the user approves
	// the plan or sends it back to the Lead with feedback.
	PlanApprovalHuman = "human"
)

// PlanApprovals are the valid plan_approval values.
var PlanApprovals = []string{PlanApprovalReviewer, PlanApprovalHuman}

// Submit styles of an agent profile.
const (
	// SubmitPaste sends a message as a bracketed paste, then Enter after
	// SubmitDelayMS (what Claude Code needs for messages over ~62 bytes).
	SubmitPaste = "paste"
	// SubmitLine types the message followed by Enter in one write.
	SubmitLine = "line"
)

// Config is the effective configuration.
type Config struct {
	// Workers is the number of worker agents (flag --workers).
	Workers int
	// Agent is the agent profile: "claude", "sim", the name of a
	// [profiles.<name>] table, or a custom command line (flag --agent).
	Agent string
	// PlanApproval is PlanApprovalReviewer or PlanApprovalHuman (flag
	// --plan-approval).
	PlanApproval string
	// Roles holds per-role agent settings, keyed by role name; it always
	// has an entry for lead, reviewer and worker.
	Roles map[vocab.Role]RoleConfig
	// QuietPeriodMS: a trigger file is complete after this long unchanged.
	QuietPeriodMS int
	// HangSeconds: no output and no idle signal this long while working
	// means the agent hangs.
	HangSeconds int
	// AgentTimeoutSeconds bounds one assignment.
	AgentTimeoutSeconds int
	// StallSeconds: an agent idle this long with an assignment it has not
	// completed gets one reminder, then the run needs a human.
	StallSeconds int
	// RateLimitCooldownSeconds is how long an agent that hit a rate limit
	// stays rate_limited before it counts as idle again and held messages
	// flow.
	RateLimitCooldownSeconds int
	// MaxRetries is how many retries each retry path gets (agent restarts,
	// re-sends of rejected work, rate-limited turns) before needs_human;
	// 0 means none.
	MaxRetries int
	// MaxRevisionCycles is how many plan review rounds run before
	// needs_human.
	MaxRevisionCycles int
	// BackoffSeconds are the restart delays; the last repeats.
	BackoffSeconds []int
	// ScrollbackLines is how many lines each pane keeps above its screen.
	ScrollbackLines int
	// FPS caps the TUI frame rate.
	FPS int
	// ServerIdleSeconds: a server whose task waits on a human stays up
	// this long with no client attached.
	ServerIdleSeconds int
	// NotifyCommand runs (sh -c) when a server's task needs a human or
	// ends.
	NotifyCommand string
	// Web: the server serves the web client too (on WebListen).
	Web bool
	// WebListen is the web client's host:port.
	WebListen string
	// RetentionFullDays keeps a finished task's whole directory this long.
	RetentionFullDays int
	// RetentionSummaryDays keeps a finished task's summary this long.
	RetentionSummaryDays int
	// Check is a shell command that verifies a worker's changes (for
	// worktree merges); empty means none.
	Check string
	// WorktreeCopy are globs of untracked files copied into worker
	// worktrees.
	WorktreeCopy []string
	// WorkerAgents are the [agents.<worker id>] agents: a worker named
	// here runs its agent instead of its role's (see AgentOfID).
	WorkerAgents map[vocab.AgentID]string
	// WorkerModels are the [agents.<worker id>] models: a worker named
	// here runs its model instead of its role's (see AgentConfig).
	WorkerModels map[vocab.AgentID]string
	// Profiles are the custom agent profiles, by name.
	Profiles map[string]Profile
	// BudgetUSD caps a task's estimated spend (0: no cap).
	BudgetUSD float64
	// BudgetTokens caps a task's tokens (0: no cap); see RoleConfig's too.
	BudgetTokens int
	// Pricing are [pricing."model"] prices replacing or adding to the
	// shipped table (Prices).
	Pricing pricing.Table
	// Hosts are the remote hosts agents can run on, by name.
	Hosts map[string]Host
	// Placement is the --workers N@host placement; nil places workers by
	// [roles.worker] hosts (see WorkerHosts).
	Placement []Placement

	// Files says which files were considered.
	Files Files
}

// RoleConfig is the [roles.<role>] table.
type RoleConfig struct {
	// Agent runs this role instead of the top-level Agent ("": that one);
	// see Config.AgentOf.
	Agent string
	// Model is passed as --model when not empty.
	Model string
	// ExtraArgs are appended to the agent's command line.
	ExtraArgs []string
	// BudgetTokens caps the tokens of the role's agents together (0: no
	// cap).
	BudgetTokens int
	// PermissionMode is Claude Code's --permission-mode.
	PermissionMode string
	// Hosts is the placement: host names in order of preference
	// (LocalHost is this machine); empty is this machine.
	Hosts []string
	// Writable are extra paths this role's agents may write (their write
	// scope, enforced by Landlock where the kernel has it; "~/" is the
	// home directory). The defaults (own outbox, CLI state, caches, temp;
	// a worker's worktree) are always granted.
	Writable []string
}

// WorkerAgent is an [agents.<worker id>] table.
type WorkerAgent struct {
	// Agent runs that worker instead of the [roles.worker] agent.
	Agent string
	// Model is that worker's model instead of the [roles.worker] model.
	Model string
}

// Profile is a [profiles.<name>] table: how to run and drive an agent CLI
// other than the built-in ones.
type Profile struct {
	// Command is the argv template. Placeholders {role}, {agent_id},
	// {task_dir}, {project} and {model} are replaced by the launcher (see
	// Expand).
	Command []string
	// Env are extra environment variables for the agent process.
	Env map[string]string
	// Submit is SubmitPaste or SubmitLine.
	Submit string
	// SubmitDelayMS is the pause between a paste and its Enter.
	SubmitDelayMS int
	// ReadyRegex, when set, must match the screen before the agent counts
	// as ready.
	ReadyRegex string
	// ReadyQuietMS is how long the agent must be silent to count as ready.
	ReadyQuietMS int
}

// Files are the configuration files and folders Load considered.
type Files struct {
	// User is the user-level config file (may not exist).
	User string
	// Project is the project config file, or the --config file.
	Project string
	// UserRolesDir and ProjectRolesDir hold role prompt overrides.
	UserRolesDir    string
	ProjectRolesDir string
}

// Overrides are the values set by command-line flags. Nil pointers are
// flags that were not given.
type Overrides struct {
	Workers *int
	// Agent is --agent: one agent for every role, or agents per role
	// (see ParseAgentFlag).
	Agent  *string
	Budget *float64 // --budget: budget_usd
	// PlanApproval (flag --plan-approval) is checked like plan_approval.
	PlanApproval *string
	// Placement is --workers N@host (see ParseWorkers).
	Placement []Placement
	// ConfigFile (flag --config) replaces the project config file; it must
	// exist.
	ConfigFile string
}

// Source kinds.
const (
	SourceDefault = "default"
	SourceUser    = "user"
	SourceProject = "project"
	SourceFlag    = "flag"
)

// Source says where one value came from.
type Source struct {
	Kind string // SourceDefault, SourceUser, SourceProject or SourceFlag
	File string // for user and project
	Line int    // for user and project
	Flag string // for flag, e.g. "--workers"
}

// String renders the source for humans: "default", "flag --workers",
// "project /p/.hivemind/config.toml:3".
func (s Source) String() string {
	switch s.Kind {
	case SourceFlag:
		return "flag " + s.Flag
	case SourceUser, SourceProject:
		if s.Line > 0 {
			return s.Kind + " " + s.File + ":" + itoa(s.Line)
		}
		return s.Kind + " " + s.File
	default:
		return SourceDefault
	}
}

// Sources maps a dotted key ("workers", "roles.lead.model",
// "profiles.codex.command") to where its effective value came from. Keys
// missing from the map are defaults.
type Sources map[string]Source

// Of returns the source of key, "default" when it was never set.
func (s Sources) Of(key string) Source {
	if src, ok := s[key]; ok {
		return src
	}
	return Source{Kind: SourceDefault}
}

// Default returns the built-in configuration: every key's default from
// the key tables (keys.go).
func Default() Config {
	c := Config{
		Roles:        map[vocab.Role]RoleConfig{},
		WorkerAgents: map[vocab.AgentID]string{},
		WorkerModels: map[vocab.AgentID]string{},
		Profiles:     map[string]Profile{},
		Pricing:      pricing.Table{},
		Hosts:        map[string]Host{},
	}
	applyDefaults(&c, topKeys)
	for _, r := range vocab.Roles() {
		var rc RoleConfig
		applyDefaults(&rc, roleKeys)
		c.Roles[r] = rc
	}
	return c
}

// QuietPeriod returns QuietPeriodMS as a duration.
func (c Config) QuietPeriod() time.Duration {
	return time.Duration(c.QuietPeriodMS) * time.Millisecond
}

// HangTimeout returns HangSeconds as a duration.
func (c Config) HangTimeout() time.Duration { return time.Duration(c.HangSeconds) * time.Second }

// AgentTimeout returns AgentTimeoutSeconds as a duration.
func (c Config) AgentTimeout() time.Duration {
	return time.Duration(c.AgentTimeoutSeconds) * time.Second
}

// StallTimeout returns StallSeconds as a duration.
func (c Config) StallTimeout() time.Duration { return time.Duration(c.StallSeconds) * time.Second }

// RateLimitCooldown returns RateLimitCooldownSeconds as a duration.
func (c Config) RateLimitCooldown() time.Duration {
	return time.Duration(c.RateLimitCooldownSeconds) * time.Second
}

// Backoff returns BackoffSeconds as durations.
func (c Config) Backoff() []time.Duration {
	d := make([]time.Duration, len(c.BackoffSeconds))
	for i, s := range c.BackoffSeconds {
		d[i] = time.Duration(s) * time.Second
	}
	return d
}

// Role returns the settings of role (zero value for an unknown role).
func (c Config) Role(role vocab.Role) RoleConfig { return c.Roles[role] }

// AgentConfig returns the [roles.<role>] table agent id in role runs
// with: its role's, with a worker's own [agents.<worker>] model.
func (c Config) AgentConfig(role vocab.Role, id vocab.AgentID) RoleConfig {
	rc := c.Roles[role]
	if m := c.WorkerModels[id]; m != "" && role == vocab.RoleWorker {
		rc.Model = m
	}
	return rc
}

// Profile returns the custom profile with that name, if defined.
func (c Config) Profile(name string) (Profile, bool) {
	p, ok := c.Profiles[name]
	return p, ok
}

// ProfileNames returns the custom profile names, sorted.
func (c Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SubmitDelay returns SubmitDelayMS as a duration.
func (p Profile) SubmitDelay() time.Duration {
	return time.Duration(p.SubmitDelayMS) * time.Millisecond
}

// ReadyQuiet returns ReadyQuietMS as a duration.
func (p Profile) ReadyQuiet() time.Duration {
	return time.Duration(p.ReadyQuietMS) * time.Millisecond
}

// Expand returns the command with every "{name}" placeholder replaced by
// vars[name]; unknown placeholders are left as they are.
func (p Profile) Expand(vars map[string]string) []string {
	out := make([]string, len(p.Command))
	for i, arg := range p.Command {
		for k, v := range vars {
			arg = replaceAll(arg, "{"+k+"}", v)
		}
		out[i] = arg
	}
	return out
}

// UserDir returns the user-level Hivemind config folder:
// $XDG_CONFIG_HOME/hivemind, or ~/.config/hivemind. env is os.Getenv in
// production.
func UserDir(env func(string) string) string {
	if env == nil {
		env = os.Getenv
	}
	if x := env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "hivemind")
	}
	home := env("HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	return filepath.Join(home, ".config", "hivemind")
}
