package app

import (
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// agentFactory builds the ptyagent.Spec of each agent from its agent
// (config.AgentIn: a worker's own, else its role's): a registered CLI
// (ptyagent/profiles), a [profiles.<name>] from config, or a custom
// command line run with sh -c.
type agentFactory struct {
	cfg     config.Config
	project string
	td      *workspace.TaskDir
	self    string // this executable, for sim-agent and hook commands
	seed    int64
	simArgs []string // extra sim-agent flags (demo scenarios, tests)
	git     *gitWire // git projects: workers run in their own worktrees
}

// spec is the ptyagent.ManagerConfig Factory: the agent's command line
// (build), confined to its role's write scope (confine, scope.go).
func (f *agentFactory) spec(id vocab.AgentID, role vocab.Role, resume bool) (ptyagent.Spec, error) {
	spec, err := f.build(id, role, resume)
	if err != nil || (role == vocab.RoleWorker && f.git != nil && f.git.remote.has(string(id))) {
		return spec, err // a remote worker runs under its host's rules
	}
	return f.confine(spec, id, role)
}

// build is the agent's command line and environment.
func (f *agentFactory) build(id vocab.AgentID, role vocab.Role, resume bool) (ptyagent.Spec, error) {
	base := ptyagent.Spec{
		Dir: f.project,
		Env: []string{
			ptyagent.EnvTaskDir + "=" + f.td.Dir(),
			ptyagent.EnvProject + "=" + f.project,
		},
		LogPath:     f.td.AgentLogPath(id),
		Scrollback:  f.cfg.ScrollbackLines,
		HangTimeout: f.cfg.HangTimeout(),
		// Zero (a Config not from Load) keeps ptyagent's default.
		RateLimitCooldown: f.cfg.RateLimitCooldown(),
	}
	name := string(id) // the CLI specs and worktrees name agents by string
	if role == vocab.RoleWorker && f.git != nil {
		if err := f.git.placeWorker(&base, name); err != nil {
			return base, err
		}
		if f.git.remote.has(name) {
			return f.remoteSpec(base, name, resume)
		}
	}
	agent := f.cfg.AgentIn(role, id)
	p, builtin := profiles.Lookup(agent)
	if cp, ok := f.cfg.Profile(agent); ok && (!builtin || p.Redefinable) {
		return f.profileSpec(base, agent, name, role, cp)
	}
	if builtin {
		return p.Launch(f.launch(base, name, role, resume))
	}
	// Anything else is a command line: run it through the shell so pipes
	// and quoting work as the user typed them.
	base.Argv = []string{"/bin/sh", "-c", agent}
	base.Kind = ptyagent.ProfileCustom
	return base, nil
}

// launch is what a registered profile needs to build agent id's Spec.
func (f *agentFactory) launch(base ptyagent.Spec, id string, role vocab.Role, resume bool) profiles.Launch {
	return profiles.Launch{
		Base: base, ID: id, Role: role, Resume: resume,
		Prompt:       func() (string, error) { return f.prompt(role) },
		RoleConfig:   f.cfg.AgentConfig(role, vocab.AgentID(id)),
		TaskDir:      f.td.Dir(),
		TaskID:       f.td.ID(),
		Self:         f.self,
		SavedSession: f.savedSession(id),
		AddDirs:      f.taskDirOutside(base.Dir),
		SimArgs:      f.simArgsFor(id),
		Confined:     f.confines(),
	}
}

// prompt is the role's prompt (built in, or the user's override).
func (f *agentFactory) prompt(role vocab.Role) (string, error) {
	prompt, _, err := roles.Prompt(role, f.cfg.Files.ProjectRolesDir, f.cfg.Files.UserRolesDir)
	if err != nil {
		return "", fmt.Errorf("role prompt for %s: %w", role, err)
	}
	return prompt, nil
}

// taskDirOutside returns the task dir when it lies outside dir (a
// --workspace outside the project, or a worker in its git worktree), so
// the agent's tools may reach it; else nil.
func (f *agentFactory) taskDirOutside(dir string) []string {
	if rel, err := filepath.Rel(dir, f.td.Dir()); err != nil || strings.HasPrefix(rel, "..") {
		return []string{f.td.Dir()}
	}
	return nil
}

// profileSpec runs a [profiles.<name>] agent from config.
func (f *agentFactory) profileSpec(base ptyagent.Spec, name, id string, role vocab.Role, p config.Profile) (ptyagent.Spec, error) {
	argv := p.Expand(map[string]string{
		"role": string(role), "agent_id": id, "task_dir": f.td.Dir(), "project": base.Dir,
		"model": f.cfg.AgentConfig(role, vocab.AgentID(id)).Model,
	})
	if len(argv) == 0 {
		return base, fmt.Errorf("profile %s: empty command", name)
	}
	base.Argv = argv
	base.Kind = ptyagent.ProfileCustom
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		base.Env = append(base.Env, k+"="+p.Env[k])
	}
	base.Submit = ptyagent.DefaultSubmitRules(ptyagent.ProfileCustom)
	base.Submit.Paste = p.Submit == config.SubmitPaste
	base.Submit.EnterDelay = p.SubmitDelay()
	base.Ready = ptyagent.ReadyRules{Mode: ptyagent.ReadyQuiet, Quiet: p.ReadyQuiet(), Pattern: p.ReadyRegex}
	return base, nil
}

// simArgsFor are the sim agent's flags for agent id.
func (f *agentFactory) simArgsFor(id string) []string {
	return append([]string{"--seed", strconv.FormatInt(f.seed+agentSalt(id), 10)}, f.simArgs...)
}

// agentSalt varies the sim seed per agent.
func agentSalt(id string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int64(h.Sum32() % 10007)
}

// bridge turns agent-layer events into engine events and records.
type bridge struct {
	runner *runnerLink
	td     *workspace.TaskDir
	usage  *usageReader
}

// onEvent is the ptyagent.ManagerConfig OnEvent.
func (b *bridge) onEvent(ev ptyagent.Event) {
	at := ev.At
	if at.IsZero() {
		at = time.Now()
	}
	id := ev.Agent
	switch ev.Kind {
	case ptyagent.EventHealth:
		b.runner.Send(engine.AgentHealth{Agent: id, Health: ev.Health, ExitCode: ev.ExitCode,
			PID: ev.PID, Detail: ev.Detail, Cause: ev.Cause, Stopped: ev.Stopped, When: engine.When{At: at}})
	case ptyagent.EventDelivered:
		b.runner.Send(engine.InjectionResult{Agent: id, Seq: ev.Seq, Delivered: true, Detail: ev.Detail, When: engine.When{At: at}})
	case ptyagent.EventDeliveryFailed:
		b.runner.Send(engine.InjectionResult{Agent: id, Seq: ev.Seq, Delivered: false, Detail: ev.Detail, When: engine.When{At: at}})
	case ptyagent.EventHookDenied:
		b.runner.Log(vocab.RecordToolDenied, string(ev.Agent), map[string]any{"reason": ev.Detail})
	case ptyagent.EventHook:
		// Health changes already carry what hooks mean; the raw hooks
		// would only flood the log. A turn's end names the session to
		// resume (Codex and Gemini; Claude's id is chosen up front) and
		// updates the usage.
		if ev.Detail == ptyagent.HookStop {
			recordSession(sessionPath(b.td.Dir(), string(ev.Agent)), ev.Payload)
		}
		if b.usage != nil {
			b.usage.onHook(string(ev.Agent), ev.Detail, ev.Payload)
		}
	}
}

// onHeartbeat is the ptyagent.ManagerConfig OnHeartbeat.
func (b *bridge) onHeartbeat(agent vocab.AgentID, at time.Time) {
	_ = b.td.WriteHeartbeat(agent, at)
}

// ResumeAgents returns cfg with the agents task t started with (its
// task.json): the same agent for each role and each worker that ran its
// own, and the same worker count, so a
// resumed task runs what it ran before whatever the config says now.
// --agent given on resume overrides the agents it names for this run; the
// worker count stays the task's (its state names its workers). Either is
// noted in the event log.
func ResumeAgents(o Options, cfg config.Config, t vocab.Task) (config.Config, []vocab.EventRecord) {
	var notes []vocab.EventRecord
	if t.Agent != "" {
		cfg = cfg.WithAgents(config.AgentFlag{All: t.Agent}).WithAgents(config.AgentFlag{PerRole: t.Agents, PerWorker: t.WorkerAgents})
		task := cfg.TeamString()
		if o.AgentSet {
			// The flag was checked when the config was loaded.
			if f, err := config.ParseAgentFlag(o.Agent); err == nil {
				cfg = cfg.WithAgents(f)
			}
			if cfg.TeamString() != task {
				notes = append(notes, vocab.EventRecord{Type: vocab.RecordAgentOverridden,
					Details: map[string]any{"task_agent": task, "agent": cfg.TeamString(), "why": "--agent given on resume"}})
			}
		}
	}
	if t.Workers > 0 && cfg.Workers != t.Workers {
		if o.WorkersSet {
			notes = append(notes, vocab.EventRecord{Type: vocab.RecordWorkersKept,
				Details: map[string]any{"workers": t.Workers, "ignored": cfg.Workers, "why": "a resumed task keeps its workers"}})
		}
		cfg.Workers = t.Workers
	}
	return cfg, notes
}
