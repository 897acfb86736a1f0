package app

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/workspace"
)

// agentsOf describes the agents a run with cfg starts, for the
// preflight: one entry per distinct agent, naming the roles it runs.
func agentsOf(cfg config.Config, project string) []preflight.Agent {
	var out []preflight.Agent
	for _, r := range workspace.Roles() {
		name := cfg.AgentOf(r)
		who := string(r)
		if r == workspace.RoleWorker {
			who = fmt.Sprintf("%d worker", cfg.Workers)
			if cfg.Workers != 1 {
				who += "s"
			}
		}
		if i := slices.IndexFunc(out, func(a preflight.Agent) bool { return a.Name == name }); i >= 0 {
			out[i].Roles += ", " + who
			out[i].Bypass = out[i].Bypass || (out[i].Kind == preflight.Claude && bypasses(cfg.Role(r)))
			continue
		}
		a := preflightAgent(cfg, name, project)
		a.Roles = who
		a.Bypass = a.Kind == preflight.Claude && bypasses(cfg.Role(r))
		out = append(out, a)
	}
	return out
}

// preflightAgent says how agent name of cfg runs, for the preflight: a
// [profiles.<name>] command, a built-in CLI, or a command line (run in
// project, as the agents are).
func preflightAgent(cfg config.Config, name, project string) preflight.Agent {
	a := preflight.Agent{Name: name, Dir: project}
	if p, ok := cfg.Profile(name); ok {
		a.Kind = preflight.Command
		if len(p.Command) > 0 {
			a.Argv0 = p.Command[0]
		}
		// As the Lead would run it (profileSpec).
		a.Argv = p.Expand(map[string]string{"role": string(workspace.RoleLead), "agent_id": string(workspace.AgentLead),
			"task_dir": os.TempDir(), "project": project, "model": cfg.Role(workspace.RoleLead).Model})
		return a
	}
	switch name {
	case "sim":
		a.Kind = preflight.Sim
	case "claude":
		a.Kind = preflight.Claude
	case "codex":
		a.Kind = preflight.Codex
	case "gemini":
		a.Kind = preflight.Gemini
	default:
		a.Kind = preflight.Command
		a.Argv0, a.Shell = preflight.FirstWord(name), true
		a.Argv = []string{"/bin/sh", "-c", name} // as agentFactory.spec runs it
	}
	return a
}

// bypasses reports whether a Claude role runs in bypassPermissions mode.
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
func preflightNotes(rs []preflight.Result) []workspace.EventRecord {
	var notes []workspace.EventRecord
	for _, r := range rs {
		if r.Status == preflight.Warn {
			notes = append(notes, workspace.EventRecord{Type: "preflight_warning",
				Details: map[string]any{"check": r.Check, "message": r.Msg, "fix": r.Fix}})
		}
	}
	return notes
}
