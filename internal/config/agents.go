package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/workspace"
)

// Built-in agents: what `agent` (top level or under [roles.<role>]) and
// --agent name without a [profiles.<name>] table. Each agent CLI's profile
// registers its name (RegisterAgent, from ptyagent/profiles). A profile
// named like a built-in CLI replaces it; claude and sim cannot be
// redefined.
var builtinAgents []string

// RegisterAgent makes name a built-in agent.
func RegisterAgent(name string) {
	if !slices.Contains(builtinAgents, name) {
		builtinAgents = append(builtinAgents, name)
		slices.Sort(builtinAgents)
	}
}

// AgentOf returns the agent that runs role: its [roles.<role>] agent, else
// the top-level agent.
func (c Config) AgentOf(role workspace.Role) string {
	if a := c.Roles[role].Agent; a != "" {
		return a
	}
	return c.Agent
}

// Team returns the agent of each role, keyed by role name.
func (c Config) Team() map[workspace.Role]string {
	t := make(map[workspace.Role]string)
	for _, r := range workspace.Roles() {
		t[r] = c.AgentOf(r)
	}
	return t
}

// Mixed reports whether the roles do not all run the same agent.
func (c Config) Mixed() bool {
	for _, r := range workspace.Roles() {
		if c.AgentOf(r) != c.AgentOf(workspace.RoleLead) {
			return true
		}
	}
	return false
}

// TeamString is the team in the --agent form: the agent alone when every
// role runs it, else "lead=…,reviewer=…,worker=…".
func (c Config) TeamString() string {
	if !c.Mixed() {
		return c.Agent
	}
	var parts []string
	for _, r := range workspace.Roles() {
		parts = append(parts, string(r)+"="+c.AgentOf(r))
	}
	return strings.Join(parts, ",")
}

// AgentFlag is a parsed --agent value: one agent for every role (All), or
// agents for some roles (PerRole, role → agent).
type AgentFlag struct {
	All     string
	PerRole map[workspace.Role]string
}

// ParseAgentFlag parses --agent: an agent for every role ("codex", a
// profile name, or a command line), or a comma-separated list of
// role=agent ("reviewer=codex,worker=gemini"). A value whose first word
// before "=" is a bare lower-case word is the list form, so a command line
// starting with a variable assignment must be a profile.
func ParseAgentFlag(s string) (AgentFlag, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return AgentFlag{}, fmt.Errorf("must not be empty")
	}
	if !perRoleForm(s) {
		return AgentFlag{All: s}, nil
	}
	f := AgentFlag{PerRole: map[workspace.Role]string{}}
	for _, item := range strings.Split(s, ",") {
		name, agent, ok := strings.Cut(strings.TrimSpace(item), "=")
		name, agent = strings.TrimSpace(name), strings.TrimSpace(agent)
		if !ok || agent == "" {
			return AgentFlag{}, fmt.Errorf("%q: want role=agent (e.g. reviewer=codex,worker=gemini)", item)
		}
		role, err := workspace.ParseRole(name)
		if err != nil {
			return AgentFlag{}, err
		}
		if _, dup := f.PerRole[role]; dup {
			return AgentFlag{}, fmt.Errorf("role %s given twice", role)
		}
		f.PerRole[role] = agent
	}
	return f, nil
}

// perRoleForm reports whether s starts with "word=" (lower-case letters).
func perRoleForm(s string) bool {
	k, _, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// checkAgentName returns a did-you-mean error for an agent that is one
// word, neither built in nor a profile, and close to one of those: a typo
// ("codx") would otherwise run as a command of that name.
func checkAgentName(v string, profiles []string) string {
	if strings.ContainsAny(v, " \t/") || slices.Contains(builtinAgents, v) || slices.Contains(profiles, v) {
		return ""
	}
	known := slices.Concat(builtinAgents, profiles)
	if sg := Suggest(v, known, 2); sg != "" {
		return fmt.Sprintf("unknown agent %q (did you mean %q?); to run a program of that name give its path (./%s) or define [profiles.%s]", v, sg, v, v)
	}
	return ""
}

// checkAgents checks the agent names the files set, once the profiles of
// both files are known.
func checkAgents(cfg Config, src Sources) Errors {
	var errs Errors
	profiles := cfg.ProfileNames()
	check := func(key, v string) {
		if msg := checkAgentName(v, profiles); msg != "" {
			s := src.Of(key)
			errs = append(errs, &Error{File: s.File, Line: s.Line, Key: key, Msg: msg})
		}
	}
	check("agent", cfg.Agent)
	for _, r := range workspace.Roles() {
		if a := cfg.Roles[r].Agent; a != "" {
			check("roles."+string(r)+".agent", a)
		}
	}
	return errs
}

// applyAgentFlag applies --agent: one agent for every role replaces the
// per-role agents of the files too; the list form sets the roles it names.
func applyAgentFlag(cfg *Config, src Sources, v string) *Error {
	f, err := ParseAgentFlag(v)
	if err != nil {
		return &Error{Key: "--agent", Msg: err.Error()}
	}
	profiles := cfg.ProfileNames()
	flag := Source{Kind: SourceFlag, Flag: "--agent"}
	if f.All != "" {
		if msg := checkAgentName(f.All, profiles); msg != "" {
			return &Error{Key: "--agent", Msg: msg}
		}
		src["agent"] = flag
		for _, r := range workspace.Roles() {
			delete(src, "roles."+string(r)+".agent")
		}
	}
	for _, r := range workspace.Roles() {
		if a, ok := f.PerRole[r]; ok {
			if msg := checkAgentName(a, profiles); msg != "" {
				return &Error{Key: "--agent", Msg: string(r) + ": " + msg}
			}
			src["roles."+string(r)+".agent"] = flag
		}
	}
	*cfg = cfg.WithAgents(f)
	return nil
}

// WithAgents returns c with f applied: f.All runs every role (the
// per-role agents are dropped), f.PerRole sets the roles it names. The
// Roles map is copied, never changed in place.
func (c Config) WithAgents(f AgentFlag) Config {
	c.Roles = maps.Clone(c.Roles)
	if c.Roles == nil {
		c.Roles = map[workspace.Role]RoleConfig{}
	}
	if f.All != "" {
		c.Agent = f.All
	}
	for _, r := range workspace.Roles() {
		rc := c.Roles[r]
		if f.All != "" {
			rc.Agent = ""
		}
		if a, ok := f.PerRole[r]; ok {
			rc.Agent = a
		}
		c.Roles[r] = rc
	}
	return c
}
