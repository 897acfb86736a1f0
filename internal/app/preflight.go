package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/workspace"
)

// agentsOf describes the agents a run with cfg starts, for the preflight:
// one profile runs every role.
func agentsOf(cfg config.Config) []preflight.Agent {
	who := fmt.Sprintf("lead, reviewer, %d worker", cfg.Workers)
	if cfg.Workers != 1 {
		who += "s"
	}
	a := preflight.Agent{Name: cfg.Agent, Roles: who}
	switch cfg.Agent {
	case "sim":
		a.Kind = preflight.Sim
	case "claude":
		a.Kind = preflight.Claude
		for _, r := range roles.Names() {
			rc := cfg.Role(r)
			if rc.PermissionMode == "bypassPermissions" || slices.Contains(rc.ExtraArgs, "--dangerously-skip-permissions") {
				a.Bypass = true
			}
		}
	default:
		a.Kind = preflight.Command
		if p, ok := cfg.Profile(cfg.Agent); ok {
			if len(p.Command) > 0 {
				a.Argv0 = p.Command[0]
			}
		} else {
			a.Argv0, a.Shell = preflight.FirstWord(cfg.Agent), true
		}
	}
	return []preflight.Agent{a}
}

// Preflight runs the preflight for the agents of cfg in the world the
// options name. It returns the results and, when a check failed, a
// *preflight.Error.
func (o Options) Preflight(cfg config.Config) ([]preflight.Result, error) {
	rs := preflight.Run(context.Background(), o.preflightEnv(), agentsOf(cfg))
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
