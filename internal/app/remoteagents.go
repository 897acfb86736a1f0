package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/workspace"
)

// This file builds the agent of a worker placed on a host (remotework.go
// prepares the host): the sim agent, run by the helper, or Claude Code,
// run as it runs here — the role's prompt and tool limits, every hook in
// one settings file (on the host, naming the installed helper, which
// relays over the forwarded socket), the session id chosen up front —
// with its working dir the host's worktree.

// remoteSpec is the spec of a worker placed on a host: its agent runs
// there under the helper, its PTY carried by ssh.
func (f *agentFactory) remoteSpec(base ptyagent.Spec, id string, resume bool) (ptyagent.Spec, error) {
	rw := f.git.remote
	agent := f.cfg.AgentOf(workspace.RoleWorker)
	if agent != "sim" && agent != "claude" {
		return base, fmt.Errorf("%s: workers on other hosts run the sim agent or Claude Code only for now (agent %q is not wired for hosts yet: run its workers here, or use --agent worker=claude)", id, agent)
	}
	if err := rw.place(&base, id); err != nil {
		return base, err
	}
	rh := rw.workers[id]
	if agent == "claude" {
		spec, a, err := f.remoteClaude(base, rh, id, resume)
		if err != nil {
			return spec, err
		}
		spec.Argv = rw.launch(id, a)
		return spec, nil
	}
	spec, err := ptyagent.SimSpec(base, f.self, f.simArgsFor(id)...)
	if err != nil {
		return spec, err
	}
	spec.Argv = rw.launch(id, remote.Agent{Argv: append([]string{rh.helper}, spec.Argv[1:]...)})
	return spec, nil
}

// remoteClaude is Claude Code's spec and command for a worker on host rh.
// Its settings file is written on the host; whether the session is
// resumed is decided there too (remote.Agent.ClaudeResume: the transcript
// is on the host). The API settings of this environment reach it in the
// run's environment file, never on a command line (claudePassed).
func (f *agentFactory) remoteClaude(base ptyagent.Spec, rh *remoteHost, id string, resume bool) (ptyagent.Spec, remote.Agent, error) {
	prompt, err := f.prompt(workspace.RoleWorker)
	if err != nil {
		return base, remote.Agent{}, err
	}
	settings := rh.taskDir + "/settings/" + id + ".json"
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	q := remote.Quote
	if _, err := rh.h.Exec(ctx, "set -e; mkdir -p "+q(rh.taskDir+"/settings")+"; t="+q(settings)+".tmp.$$; cat > \"$t\"; mv -f \"$t\" "+q(settings),
		bytes.NewReader(ptyagent.ClaudeSettings(rh.helper))); err != nil {
		return base, remote.Agent{}, fmt.Errorf("claude settings of %s on %s: %w", id, rh.h.Name, err)
	}
	o := ptyagent.ClaudeOptions{
		Binary:       rh.h.Agent,
		SessionID:    ptyagent.ClaudeSessionID(f.td.ID(), id),
		SettingsPath: settings,
		// The task dir mirror is outside the worktree, as locally.
		AddDirs:   []string{rh.taskDir},
		ExtraArgs: roles.ClaudeArgs(roles.DefaultPolicy(workspace.RoleWorker), f.cfg.Role(workspace.RoleWorker), prompt),
	}
	spec := ptyagent.ClaudeSpec(base, o)
	return spec, remote.Agent{Argv: spec.Argv, Pass: claudePassed(os.Environ(), base.Env), ClaudeResume: resume}, nil
}

// claudePassed names the variables of Claude Code's API and behaviour set
// here (ANTHROPIC_*: base URL, key, token, model, headers; CLAUDE_CODE_*;
// the DISABLE_* switches) that a remote Claude gets too. Local paths
// (HOME, CLAUDE_CONFIG_DIR) are not: the host has its own.
func claudePassed(envs ...[]string) []string {
	var names []string
	seen := map[string]bool{}
	for _, env := range envs {
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if seen[name] {
				continue
			}
			if strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "CLAUDE_CODE_") || strings.HasPrefix(name, "DISABLE_") {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}
