package app

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// agentsOf describes the agents a run with cfg starts here, for the
// preflight: one entry per distinct agent, naming the roles it runs ("2
// workers" when they all run their role's agent, else each worker by id:
// "worker_1"; the workers placed on hosts are checked on their hosts);
// custom commands run in project, as the agents are.
func agentsOf(cfg config.Config, project string) []preflight.Agent {
	var out []preflight.Agent
	for _, u := range localUses(cfg) {
		r, name, who := u.role, u.agent, u.who
		if i := slices.IndexFunc(out, func(a preflight.Agent) bool { return a.Name == name }); i >= 0 {
			out[i].Roles += ", " + who
			out[i].Bypass = out[i].Bypass || (out[i].CLI != nil && bypasses(cfg.Role(r)))
			continue
		}
		a := preflightAgent(cfg, name, project)
		a.Roles = who
		a.Bypass = a.CLI != nil && bypasses(cfg.Role(r))
		out = append(out, a)
	}
	return out
}

// agentUse is one agent run here: its role, its agent and who runs it.
type agentUse struct {
	role       vocab.Role
	agent, who string
}

// localUses are the agents a run with cfg starts on this machine: the Lead,
// the Reviewer, then the workers here (the ones placed on hosts run there),
// as one use "N workers" when they all run the worker role's agent, else
// one use per worker.
func localUses(cfg config.Config) []agentUse {
	uses := []agentUse{
		{vocab.RoleLead, cfg.AgentOf(vocab.RoleLead), string(vocab.RoleLead)},
		{vocab.RoleReviewer, cfg.AgentOf(vocab.RoleReviewer), string(vocab.RoleReviewer)},
	}
	var local []vocab.AgentID
	for i, h := range cfg.WorkerHosts() {
		if h == config.LocalHost {
			local = append(local, vocab.WorkerID(i+1))
		}
	}
	if len(local) == 0 {
		return uses
	}
	if cfg.WorkerTeam() == nil {
		who := fmt.Sprintf("%d worker", len(local))
		if len(local) != 1 {
			who += "s"
		}
		return append(uses, agentUse{vocab.RoleWorker, cfg.AgentOf(vocab.RoleWorker), who})
	}
	for _, id := range local {
		uses = append(uses, agentUse{vocab.RoleWorker, cfg.AgentOfID(id), string(id)})
	}
	return uses
}

// preflightAgent says how agent name of cfg runs, for the preflight: a
// [profiles.<name>] command, a registered CLI, or a command line (run in
// project, as the agents are).
func preflightAgent(cfg config.Config, name, project string) preflight.Agent {
	a := preflight.Agent{Name: name, Dir: project}
	p, builtin := profiles.Lookup(name)
	if cp, ok := cfg.Profile(name); ok && (!builtin || p.Redefinable) {
		if len(cp.Command) > 0 {
			a.Argv0 = cp.Command[0]
		}
		// As the Lead would run it (profileSpec).
		a.Argv = cp.Expand(map[string]string{"role": string(vocab.RoleLead), "agent_id": string(vocab.AgentLead),
			"task_dir": os.TempDir(), "project": project, "model": cfg.Role(vocab.RoleLead).Model})
		return a
	}
	if builtin {
		a.CLI = p.CLI()
		return a
	}
	a.Argv0, a.Shell = preflight.FirstWord(name), true
	a.Argv = []string{"/bin/sh", "-c", name} // as agentFactory.spec runs it
	return a
}

// bypasses reports whether a role runs in bypassPermissions mode (the
// CLI's root check reads it: Claude Code refuses it as root).
func bypasses(rc config.RoleConfig) bool {
	return rc.PermissionMode == "bypassPermissions" || slices.Contains(rc.ExtraArgs, "--dangerously-skip-permissions")
}

// Preflight runs the preflight for the agents of cfg in the world the
// options name. It returns the results and, when a check failed, a
// *preflight.Error.
func (o Options) Preflight(cfg config.Config) ([]preflight.Result, error) {
	project, err := o.ProjectDir()
	if err != nil {
		return nil, err
	}
	rs := preflight.Run(context.Background(), o.preflightEnv(), agentsOf(cfg, project))
	rs = append(rs, hostChecks(context.Background(), cfg)...)
	if preflight.Failed(rs) {
		return rs, &preflight.Error{Results: rs}
	}
	return rs, nil
}

// preflightNotes are the warnings of a passed preflight, for the event log.
func preflightNotes(rs []preflight.Result) []vocab.EventRecord {
	var notes []vocab.EventRecord
	for _, r := range rs {
		if r.Status == preflight.Warn {
			notes = append(notes, vocab.EventRecord{Type: vocab.RecordPreflightWarning,
				Details: map[string]any{"check": r.Check, "message": r.Msg, "fix": r.Fix}})
		}
	}
	return notes
}
