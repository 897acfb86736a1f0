package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
)

// hostCheckTimeout bounds one host's Check (two ssh round trips, each
// with ssh's own 10 s ConnectTimeout).
const hostCheckTimeout = 40 * time.Second

// RemoteHost is the remote.Host of the configured host name, checked for
// the agent of the first worker cfg places there (hostAgentChecks checks
// the others).
func RemoteHost(cfg config.Config, name string) remote.Host {
	h := cfg.Hosts[name]
	return remote.Host{Name: name, Dest: h.SSH, SSHArgs: h.SSHOptions, Dir: h.Dir,
		Agent: remoteAgentCommand(cfg, hostAgents(cfg, name)[0], h)}
}

// remoteAgentCommand is the command a worker of cfg running agent runs on
// host h: the host's agent setting, else the agent's own command; "" for
// the sim agent, which the helper itself runs.
func remoteAgentCommand(cfg config.Config, agent string, h config.Host) string {
	switch {
	case agent == "sim":
		return ""
	case h.Agent != "":
		return h.Agent
	}
	if p, ok := profiles.Lookup(agent); ok && p.Remote {
		return p.Binary
	}
	if p, ok := cfg.Profile(agent); ok && len(p.Command) > 0 {
		return p.Command[0]
	}
	return preflight.FirstWord(agent)
}

// HostResult is one host's Check.
type HostResult struct {
	Name   string
	Report remote.Report
	Err    error // one line: what is missing and how to fix it
	// Agent are the workers' CLI's own checks run on the host (version,
	// login, …: hostAgentChecks).
	Agent []preflight.Result
}

// String is the host's line for `hivemind hosts`.
func (r HostResult) String() string {
	status := "ok  "
	if r.Err != nil {
		if r.Agent == nil {
			return fmt.Sprintf("fail  %s", r.Err)
		}
		status = "fail" // the host is fine, its agent CLI is not: say which check
	}
	rep := r.Report
	parts := []string{rep.User + "@" + rep.Uname, rep.Git}
	if rep.Agent != "" {
		parts = append(parts, "agent "+rep.Agent)
	}
	parts = append(parts, "dir "+rep.Dir)
	s := fmt.Sprintf("%s  %s: %s", status, r.Name, strings.Join(parts, ", "))
	for _, a := range r.Agent {
		s += "\n      " + a.String()
	}
	return s
}

// CheckHosts runs remote.Check on the named hosts in parallel; the
// results are in the order of names.
func CheckHosts(ctx context.Context, cfg config.Config, names []string) []HostResult {
	out := make([]HostResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, hostCheckTimeout)
			defer cancel()
			h := RemoteHost(cfg, name)
			rep, err := remote.Check(ctx, h)
			out[i] = HostResult{Name: name, Report: rep, Err: err}
			if err == nil {
				out[i].Agent = append(hostAgentChecks(ctx, cfg, h, rep), hostReadiness(ctx, cfg, h, rep)...)
				if preflight.Failed(out[i].Agent) {
					out[i].Err = &preflight.Error{Results: out[i].Agent}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// helperSelf is the running Hivemind, beside which the helper builds are
// (remote.HelperFor); tests point it elsewhere.
var helperSelf = os.Executable

// hostReadiness are the checks a local agent passes by running on this
// machine that a host's workers need on the host too: Hivemind's helper
// (the agents' hooks) for this build installed there, or installable by
// the run; and for Claude Code workers, Claude's first run done there
// (onboarding, the host's work dir trusted), when a worker placed there
// runs Claude Code. Nothing on the host changes.
func hostReadiness(ctx context.Context, cfg config.Config, h remote.Host, rep remote.Report) []preflight.Result {
	hook := preflight.Result{Check: h.Name + ": hivemind hook", Status: preflight.OK}
	self, err := helperSelf()
	helper := ""
	if err == nil {
		helper, err = remote.HelperFor(self, rep.OS, rep.Arch)
	}
	var inst remote.Installed
	present := false
	if err == nil {
		inst, present, err = remote.HelperInstalled(ctx, h, helper)
	}
	switch {
	case err != nil:
		hook.Status, hook.Msg = preflight.Fail, err.Error()
	case present:
		hook.Msg = fmt.Sprintf("%s %s installed at %s", remote.HelperName, inst.Version, inst.Path)
	default:
		hook.Msg = fmt.Sprintf("%s %s not installed yet: a run copies it to %s", remote.HelperName, inst.Version, inst.Path)
	}
	rs := []preflight.Result{hook}
	if !slices.Contains(hostAgents(cfg, h.Name), "claude") {
		return rs
	}
	return append(rs, hostClaudeReady(ctx, h, rep))
}

// hostClaudeReady checks Claude Code's first run on host h: onboarding
// done and the work dir (or a parent) trusted, as a worker's Claude needs
// to start without a dialog nobody answers.
func hostClaudeReady(ctx context.Context, h remote.Host, rep remote.Report) preflight.Result {
	r := preflight.Result{Check: h.Name + ": claude first run", Status: preflight.OK}
	st, err := remote.CheckClaude(ctx, h, rep.Dir)
	firstRun := fmt.Sprintf("run `claude` once on %s as %s in %s: log in, finish onboarding and trust the folder", h.Name, rep.User, rep.Dir)
	switch {
	case err != nil:
		r.Status, r.Msg = preflight.Warn, err.Error()
	case !st.Found:
		r.Status, r.Msg, r.Fix = preflight.Fail, fmt.Sprintf("Claude Code was never run there (no %s)", st.Path), firstRun
	case !st.Onboarded:
		r.Status, r.Msg, r.Fix = preflight.Fail, fmt.Sprintf("Claude Code's onboarding is not done there (%s has no hasCompletedOnboarding)", st.Path), firstRun
	case st.Trusted == "":
		r.Status, r.Msg, r.Fix = preflight.Fail, fmt.Sprintf("the work dir %s is not trusted by Claude Code there (a trust dialog would stop every worker)", rep.Dir), firstRun
	default:
		r.Msg = fmt.Sprintf("onboarding done, %s trusted (%s)", st.Trusted, st.Path)
	}
	return r
}

// usedHosts are the remote hosts a run with cfg places agents on, in
// order of first use.
func usedHosts(cfg config.Config) []string {
	var names []string
	seen := map[string]bool{}
	for _, h := range cfg.WorkerHosts() {
		if h != config.LocalHost && !seen[h] {
			seen[h] = true
			names = append(names, h)
		}
	}
	return names
}

// hostChecks are the preflight results of the hosts the run uses.
func hostChecks(ctx context.Context, cfg config.Config) []preflight.Result {
	names := usedHosts(cfg)
	if len(names) == 0 {
		return nil
	}
	if err := remoteAgentCheck(cfg, names); err != nil {
		return []preflight.Result{{Check: "remote workers", Status: preflight.Fail, Msg: err.Error()}}
	}
	var rs []preflight.Result
	for _, r := range CheckHosts(ctx, cfg, names) {
		res := preflight.Result{Check: "host " + r.Name, Status: preflight.OK, Msg: strings.TrimPrefix(r.String(), "ok    "+r.Name+": ")}
		if r.Err != nil {
			res.Status, res.Msg = preflight.Fail, r.Err.Error()
		}
		if r.Agent != nil {
			// The host itself is fine; its CLI's checks are lines of their own.
			res.Status = preflight.OK
			res.Msg, _, _ = strings.Cut(strings.TrimPrefix(r.String(), "fail  "+r.Name+": "), "\n")
		}
		rs = append(rs, res)
		rs = append(rs, r.Agent...)
	}
	return rs
}
