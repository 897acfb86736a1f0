package app

import (
	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/workspace"
)

// newMachine builds the engine's state machine from the effective config.
// internal/config owns every default and range check; each value is passed
// as it is (max_retries = 0 means no retries). With git, a checkpoint
// merges the workers' branches before its review. Each agent's account —
// whose rate limit it shares — is its CLI: a limited Claude Code holds new
// work for the Claude agents, not for a Codex Reviewer.
func newMachine(cfg config.Config, git bool) engine.Machine {
	m := engine.Machine{Cfg: engine.NewConfig(cfg)}
	m.Cfg.Git, m.Cfg.Check = git, cfg.Check
	m.Cfg.Accounts = map[string]string{
		workspace.AgentLead:     cfg.AgentOf(workspace.RoleLead),
		workspace.AgentReviewer: cfg.AgentOf(workspace.RoleReviewer),
	}
	for n := 1; n <= cfg.Workers; n++ {
		m.Cfg.Accounts[workspace.WorkerID(n)] = cfg.AgentOf(workspace.RoleWorker)
	}
	return m
}
