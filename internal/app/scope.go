package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// WriteScopeStatus is the one line that says whether agents' writes are
// confined by the kernel here: the doctor, `hivemind roles`, the start of
// every run. self is this executable (for the confining helper).
func WriteScopeStatus(self string) string {
	if !sandbox.Available() {
		return sandbox.StatusOff
	}
	if scopeHelper(self) == "" {
		return "write scopes: off (no " + hookrelay.BinaryName + " with sandbox-exec next to hivemind or on PATH) — roles are enforced by tool checks only"
	}
	return sandbox.Status()
}

// confines reports whether this run's local agents are confined by write
// scopes (Landlock available and a helper that can apply them).
func (f *agentFactory) confines() bool {
	return sandbox.Available() && scopeHelper(f.self) != ""
}

// scopeCaveats are what the write scopes of this run do not cover.
func scopeCaveats(git *gitWire) []string {
	var c []string
	if git == nil {
		c = append(c, "not a git project: workers write the project directory itself, the workspace inside it included")
	} else if git.remote != nil {
		c = append(c, "remote workers are confined by nothing on this machine")
	}
	return c
}

// scopeHelper is the binary that confines agents (hivemind-hook's
// sandbox-exec), "" when there is none or it cannot confine (an older
// hivemind-hook without sandbox-exec).
func scopeHelper(self string) string {
	h := ptyagent.HookCommand(self)
	if filepath.Base(h) != hookrelay.BinaryName || !helperConfines(h) {
		return ""
	}
	return h
}

// helperWorks caches helperConfines per helper path.
var helperWorks sync.Map

// helperConfines runs helper's sandbox-exec once (a few ms) and reports
// whether it ran a command through it: an older hook binary takes the
// sub-command for a hook name and exits 0 without running anything.
func helperConfines(helper string) bool {
	if ok, found := helperWorks.Load(helper); found {
		return ok.(bool)
	}
	out, err := exec.Command(helper, sandbox.Wrap(helper, nil, []string{"sh", "-c", "echo confined"})[1:]...).Output()
	ok := err == nil && string(out) == "confined\n"
	helperWorks.Store(helper, ok)
	return ok
}

// confine sets spec's write scope (writeScope) and its private TMPDIR,
// when agents can be confined here; remote agents are confined by nothing
// on this machine (their host runs them).
func (f *agentFactory) confine(spec ptyagent.Spec, id vocab.AgentID, role vocab.Role) (ptyagent.Spec, error) {
	helper := scopeHelper(f.self)
	if !sandbox.Available() || helper == "" {
		return spec, nil
	}
	tmp := agentTempDir(f.td, id)
	dirs := []string{f.td.OutboxDir(id), tmp}
	if home, err := os.UserHomeDir(); err == nil {
		// The build caches' usual parent: a missing one could not be
		// created from inside the scope.
		dirs = append(dirs, filepath.Join(home, ".cache"))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return spec, fmt.Errorf("write scope of %s: %w", id, err)
		}
	}
	spec.Env = append(spec.Env, "TMPDIR="+tmp)
	// The CLI's own state directories (its profile's Launch) come first.
	spec.Sandbox = ptyagent.Sandbox{Helper: helper, Writable: append(spec.Sandbox.Writable, f.writeScope(spec, id, role, tmp)...)}
	return spec, nil
}

// writeScope lists what agent id may write: its own outbox, its private
// temp dir, the state and caches of the agent CLIs and of ordinary builds
// (Go, Node, Python), the role's configured extras; a worker also its
// working directory (its git worktree, or the project when there is no
// git) and the parts of .git its worktree's own git commands need. The
// Lead and the Reviewer get nothing of the project: the user's checkout
// is read-only for them. Shared-knowledge notes go into the outbox too
// (agents/<id>/knowledge/). Nobody gets the engine's files (state.json,
// events, backups, procs/, blobs/, assignments/), the workspace's
// context/, other agents' outboxes, the main checkout or its refs.
func (f *agentFactory) writeScope(spec ptyagent.Spec, id vocab.AgentID, role vocab.Role, tmp string) []string {
	w := []string{f.td.OutboxDir(id), tmp}
	home, _ := os.UserHomeDir()
	if home != "" {
		// No directory that holds programs (~/go/bin, ~/.local/bin,
		// ~/.cargo/bin) or Hivemind's own config (~/.config): an agent
		// that could replace them would run unconfined later.
		for _, p := range []string{".claude", ".claude.json", ".codex", ".gemini", ".cache", ".npm",
			"go/pkg/mod", ".cargo/registry", ".cargo/git"} {
			w = append(w, filepath.Join(home, p))
		}
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"} {
		w = append(w, filepath.SplitList(envOf(spec, k))...)
	}
	for _, p := range filepath.SplitList(envOf(spec, "GOPATH")) {
		w = append(w, filepath.Join(p, "pkg", "mod"))
	}
	if role == vocab.RoleWorker {
		w = append(w, spec.Dir)
		if f.git != nil {
			w = append(w, f.git.repo.WorkerGitDirs(string(id))...)
		}
	}
	for _, p := range f.cfg.Role(role).Writable {
		switch {
		case strings.HasPrefix(p, "~/") && home != "":
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(f.project, p)
		}
		w = append(w, p)
	}
	return sandbox.Dedup(w)
}

// envOf is the value of k in spec's environment (its own entries first,
// then this process's).
func envOf(spec ptyagent.Spec, k string) string {
	for i := len(spec.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(spec.Env[i], k+"="); ok {
			return v
		}
	}
	return os.Getenv(k)
}

// removeAgentTempDirs removes the private temp dirs of td's agents.
func removeAgentTempDirs(td *workspace.TaskDir) {
	dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(agentTempDir(td, "x")), td.ID()+"-*"))
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// agentTempDir is agent id's private TMPDIR: short (unix socket paths
// made in it must stay under ~100 bytes) and outside the workspace.
func agentTempDir(td *workspace.TaskDir, id vocab.AgentID) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("hivemind-%d", os.Getuid()), td.ID()+"-"+string(id))
}
