// Package profiles is the one place an agent CLI is described: each file
// registers one Profile (claude.go, codex.go, gemini.go, opencode.go,
// sim.go) holding everything Hivemind knows of that CLI — its program and
// npm package, the version it was tested with and the Node.js it needs,
// how it is launched for a role, its PTY rules (a ptyagent.Behavior under
// its Kind, with the format its session file records usage in), its
// preflight checks, the dialect of its pre-tool hook and how the role
// policies reach it, and whether it runs on remote hosts. Config,
// preflight, the start screen, roles, remote placement and help iterate
// over Registered(); adding a CLI is adding a file.
package profiles

import (
	"context"
	"fmt"
	"slices"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Profile is one built-in agent CLI.
type Profile struct {
	Name  string               // as --agent and config name it ("claude")
	Title string               // what it is, for messages ("Claude Code")
	Kind  ptyagent.ProfileKind // its PTY rules (registered with Behavior when set)
	// Behavior, when set, is registered under Kind (a CLI whose rules
	// live in ptyagent, such as Claude Code's, leaves it nil).
	Behavior *ptyagent.Behavior
	Binary   string // the program on PATH ("" for the built-in sim agent)
	// NPM is its npm package and Version the version Hivemind was tested
	// with (pinned by .ci/run and make real-agents: cmd/pinned prints
	// them). Global: installed with npm -g rather than under the agents
	// prefix.
	NPM     string
	Version string
	Global  bool
	// Node is the Node.js major version it needs (0: none, or a native
	// binary).
	Node int
	// Offered: the start screen offers it for every role (the sim agent
	// is a demo, offered only where configured).
	Offered bool
	// Redefinable: a [profiles.<name>] table of the same name replaces it.
	Redefinable bool
	// Remote: workers placed on hosts may run it.
	Remote bool
	// Enforcement says how the role policies reach it and what is not
	// enforced (`hivemind roles`).
	Enforcement string
	// Hook is the dialect its pre-tool hook speaks (how the role checks
	// read its tool calls and write a denial back): one of
	// roles.HookDialects, or roles.NoHook for a CLI that sends none.
	Hook *roles.HookDialect
	// Checks are its own preflight checks after command and version
	// (login, keys, network); About is the line of a CLI without a
	// program.
	Checks func(ctx context.Context, env preflight.Env, a preflight.Agent, path string) []preflight.Result
	About  string
	// Launch builds the agent's Spec.
	Launch func(Launch) (ptyagent.Spec, error)
}

// Launch is what a profile's Launch gets to build one agent's Spec.
type Launch struct {
	Base   ptyagent.Spec // working dir, env, log, timeouts: filled by the caller
	ID     string        // agent id
	Role   vocab.Role
	Resume bool // a restart: continue the saved session when there is one
	// Prompt returns the role's prompt (built in or the user's).
	Prompt     func() (string, error)
	RoleConfig config.RoleConfig
	TaskDir    string // the task's directory
	TaskID     string
	Self       string // this executable (sim-agent, hook command)
	// SavedSession is the session id the CLI reported at its last turn
	// end ("" when none): CLIs that choose their own ids resume it.
	SavedSession string
	// AddDirs are directories outside Base.Dir the agent must reach (the
	// task dir of a worker in its worktree).
	AddDirs []string
	SimArgs []string // the sim agent's flags
	// Confined: the kernel scopes this agent's writes (internal/sandbox),
	// so a CLI whose own sandbox cannot run inside that scope (Codex's
	// bubblewrap) leaves writes to it.
	Confined bool
}

var registry []Profile

// register adds p, registering its name with config, its enforcement
// line with roles and its Behavior with ptyagent. It panics on a
// duplicate or an incomplete profile: both are found by any test.
func register(p Profile) {
	switch {
	case p.Name == "" || p.Kind == "" || p.Launch == nil || p.Enforcement == "" || p.Hook == nil:
		panic(fmt.Sprintf("profiles: %q: Name, Kind, Launch, Enforcement and Hook are required", p.Name))
	case p.Hook != roles.NoHook && !slices.Contains(roles.HookDialects(), p.Hook):
		panic(fmt.Sprintf("profiles: %q: Hook %q is not a dialect the hook reads (roles.HookDialects)", p.Name, p.Hook.Name))
	case p.Binary != "" && (p.NPM == "" || p.Version == ""):
		panic(fmt.Sprintf("profiles: %q: a CLI with a program needs its npm package and tested version", p.Name))
	}
	if _, dup := Lookup(p.Name); dup {
		panic("profiles: " + p.Name + " registered twice")
	}
	if p.Behavior != nil {
		ptyagent.RegisterKind(p.Kind, *p.Behavior)
	}
	if _, ok := ptyagent.KindBehavior(p.Kind); !ok {
		panic(fmt.Sprintf("profiles: %q: kind %q has no ptyagent.Behavior", p.Name, p.Kind))
	}
	config.RegisterAgent(p.Name)
	roles.RegisterEnforcement(p.Name, p.Enforcement)
	i := 0
	for i < len(registry) && registry[i].Name < p.Name {
		i++
	}
	registry = slices.Insert(registry, i, p)
}

// Registered are the profiles, by name.
func Registered() []Profile { return slices.Clone(registry) }

// Lookup returns the profile named name.
func Lookup(name string) (Profile, bool) {
	for _, p := range registry {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Names are the profiles' names, sorted.
func Names() []string { return names(func(Profile) bool { return true }) }

// Offered are the names of the profiles the start screen offers.
func Offered() []string { return names(func(p Profile) bool { return p.Offered }) }

// RemoteNames are the names of the profiles that run on hosts.
func RemoteNames() []string { return names(func(p Profile) bool { return p.Remote }) }

// names are the names of the profiles keep keeps, sorted.
func names(keep func(Profile) bool) []string {
	var out []string
	for _, p := range registry {
		if keep(p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// CLI is the profile as the preflight checks it.
func (p Profile) CLI() *preflight.CLI {
	c := &preflight.CLI{Bin: p.Binary, Title: p.Title, Tested: p.Version, Node: p.Node, About: p.About}
	if p.NPM != "" {
		c.Install = "npm install -g " + p.NPM
	}
	if p.Checks != nil {
		c.Checks = p.Checks
	}
	return c
}

// InstallSpec is the npm package at the tested version ("pkg@1.2.3").
func (p Profile) InstallSpec() string { return p.NPM + "@" + p.Version }
