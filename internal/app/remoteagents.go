package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// This file builds the agent of a worker placed on a host (remotework.go
// prepares the host): the sim agent, run by the helper, or Claude Code,
// run as it runs here — the role's prompt and tool limits, every hook in
// one settings file (on the host, naming the installed helper, which
// relays over the forwarded socket), the session id chosen up front —
// with its working dir the host's worktree.

// remoteAgentCheck says why a worker of cfg placed on one of hosts cannot
// run its agent there (nil when every one can): the run stops before
// anything starts.
func remoteAgentCheck(cfg config.Config, hosts []string) error {
	for i, h := range cfg.WorkerHosts() {
		if !slices.Contains(hosts, h) {
			continue
		}
		id := vocab.WorkerID(i + 1)
		agent := cfg.AgentOfID(id)
		if p, ok := profiles.Lookup(agent); !ok || !p.Remote {
			return fmt.Errorf("workers placed on %s run only %s for now (%s's agent %q is not wired for hosts yet): place them here (--workers N), or run Claude Code workers (--agent worker=claude)",
				strings.Join(hosts, ", "), strings.Join(profiles.RemoteNames(), " or "), id, agent)
		}
	}
	return nil
}

// hostAgents are the distinct agents of the workers cfg places on host
// name, in worker order; the worker role's agent when none is placed
// there (`hivemind hosts` checks every host).
func hostAgents(cfg config.Config, name string) []string {
	var out []string
	for i, h := range cfg.WorkerHosts() {
		if a := cfg.AgentOfID(vocab.WorkerID(i + 1)); h == name && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = append(out, cfg.AgentOf(vocab.RoleWorker))
	}
	return out
}

// remoteSpec is the spec of a worker placed on a host: its agent runs
// there under the helper, its PTY carried by ssh.
func (f *agentFactory) remoteSpec(base ptyagent.Spec, id string, resume bool) (ptyagent.Spec, error) {
	rw := f.git.remote
	if err := remoteAgentCheck(f.cfg, []string{rw.workers[id].h.Name}); err != nil {
		return base, err
	}
	agent := f.cfg.AgentOfID(vocab.AgentID(id))
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
	prompt, err := f.prompt(vocab.RoleWorker)
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
		ExtraArgs: roles.ClaudeArgs(roles.DefaultPolicy(vocab.RoleWorker), f.cfg.AgentConfig(vocab.RoleWorker, vocab.AgentID(id)), prompt),
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

// Usage of a remote agent: its CLI's session file (Claude's transcript)
// is on the host. remoteTranscripts keeps a local copy of it per agent,
// appending what the host's file gained since the last turn's end (it is
// append-only), so each read costs one ssh round trip per chunk of new
// bytes, and ptyagent.ReadUsage reads the copy as it reads a local file.
type remoteTranscripts struct {
	rw *remoteWork
	mu sync.Mutex
	of map[string]string // agent → the host path its copy holds
}

// transcriptChunk bounds the bytes of one fetch (Host.Exec keeps 1 MiB
// of output); maxTranscriptFetches the fetches of one read: a longer
// backlog is fetched on the next turn's end.
const (
	transcriptChunk      = 512 << 10
	maxTranscriptFetches = 32
)

func newRemoteTranscripts(rw *remoteWork) *remoteTranscripts {
	return &remoteTranscripts{rw: rw, of: map[string]string{}}
}

// local is usageReader.local: path itself for a local agent, else the
// local copy of the host's path, brought up to date.
func (rt *remoteTranscripts) local(agent, path string) (string, error) {
	if !rt.rw.has(agent) {
		return path, nil
	}
	rh := rt.rw.workers[agent]
	// The path comes from the agent's hook: only a session file's name is
	// fetched.
	if !strings.HasSuffix(path, ".jsonl") || strings.ContainsAny(path, "\n\r\x00") {
		return "", fmt.Errorf("%s: %q is not a session file", agent, path)
	}
	copyPath := filepath.Join(filepath.Dir(rt.rw.td.AgentLogPath(vocab.AgentID(agent))), agent+".host-transcript.jsonl")
	rt.mu.Lock()
	fresh := rt.of[agent] != path
	rt.of[agent] = path
	rt.mu.Unlock()
	flags := os.O_CREATE | os.O_RDWR
	if fresh {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(copyPath, flags, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	off := fi.Size()
	for range maxTranscriptFetches {
		size, data, err := rt.fetch(rh, path, off)
		if err != nil {
			rt.rw.log(vocab.RecordRemoteUsageFailed, agent, map[string]any{"host": rh.h.Name, "error": err.Error()})
			return "", err
		}
		if size < off { // rewritten on the host: copy it again
			if err := f.Truncate(0); err != nil {
				return "", err
			}
			off = 0
			continue
		}
		if _, err := f.WriteAt(data, off); err != nil {
			return "", err
		}
		off += int64(len(data))
		if off >= size || len(data) == 0 {
			break
		}
	}
	return copyPath, nil
}

// fetch returns the size of the host's file and at most transcriptChunk
// of its bytes from off.
func (rt *remoteTranscripts) fetch(rh *remoteHost, path string, off int64) (int64, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	out, err := rh.h.Exec(ctx, "f="+remote.Quote(path)+"; [ -f \"$f\" ] || { echo \"no file $f\" >&2; exit 1; }; wc -c < \"$f\"; tail -c +"+
		strconv.FormatInt(off+1, 10)+" \"$f\" | head -c "+strconv.Itoa(transcriptChunk), nil)
	if err != nil {
		return 0, nil, err
	}
	first, data, ok := strings.Cut(out, "\n")
	size, perr := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if !ok || perr != nil {
		return 0, nil, fmt.Errorf("%s: transcript size: unexpected answer %q", rh.h.Name, firstLineOf(out))
	}
	return size, []byte(data), nil
}
