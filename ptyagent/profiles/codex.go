package profiles

import (
	"encoding/json"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// Codex CLI (npm @openai/codex; docs/agents/codex.md): Claude-style hooks
// given as -c overrides, the role prompt as developer instructions.
func init() {
	register(Profile{
		Name: "codex", Title: "Codex CLI", Kind: ptyagent.ProfileCodex,
		Binary: "codex", NPM: "@openai/codex", Version: "0.169.0", Node: 16,
		Offered: true, Redefinable: true,
		Hook: roles.PreToolUseHook,
		Enforcement: "every call is checked by the PreToolUse hook: an apply_patch (heredoc or tool) as one Write per file it adds, updates, deletes or moves to, any other command as Bash; sandbox workspace-write keeps writes in the working dir and the task dir. " +
			"Not enforced: tools are not removed from what the model is offered (a forbidden call is refused when made); Codex has no StopFailure hook, so a turn ended by an API error or rate limit is read from its session file.",
		Checks: preflight.KeyCheck("codex", codexKeys,
			"codex login (ChatGPT), or a model provider in $CODEX_HOME/config.toml whose env_key is set"),
		Launch: launchCodex,
	})
}

// launchCodex runs Codex with the role prompt as developer instructions
// and Hivemind's hooks as -c overrides (the user's CODEX_HOME is
// untouched). The sandbox keeps writes inside the working dir and the
// task dir; the PreToolUse hook applies the role's paths (roles.Decide
// reads apply_patch).
func launchCodex(l Launch) (ptyagent.Spec, error) {
	prompt, err := l.Prompt()
	if err != nil {
		return l.Base, err
	}
	rc := l.RoleConfig
	o := ptyagent.CodexOptions{
		DeveloperInstructions: prompt,
		Model:                 rc.Model,
		Sandbox:               codexSandbox(l.Confined),
		HookCommand:           ptyagent.HookCommand(l.Self),
		SessionID:             l.SavedSession,
		Resume:                l.Resume && l.SavedSession != "",
		AddDirs:               l.AddDirs,
		// Hivemind made the worktree (or was started in the project): no
		// "Trust this folder?" dialog for an agent nobody watches.
		ExtraArgs: append([]string{"-c", "projects={" + jsonQuote(l.Base.Dir) + "={trust_level=\"trusted\"}}"}, rc.ExtraArgs...),
	}
	return ptyagent.CodexSpec(l.Base, o), nil
}

// codexSandbox is Codex's own --sandbox: workspace-write (writes in the
// working dir and the task dir), or, when the kernel already scopes the
// agent's writes, danger-full-access: Codex's bubblewrap cannot mount
// inside a Landlock domain, and every patch would fail.
func codexSandbox(confined bool) string {
	if confined {
		return "danger-full-access"
	}
	return "workspace-write"
}

// codexKeys are the variables Codex reads a key from, as Codex does: the
// env_key of the model provider $CODEX_HOME/config.toml selects (with
// model_provider), else OPENAI_API_KEY and CODEX_API_KEY. A ChatGPT login
// (auth.json) counts too: CODEX_HOME is then named as set.
func codexKeys(env preflight.Env) []string {
	home := env.Getenv("CODEX_HOME")
	if home == "" {
		if h := env.Getenv("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	keys := []string{"OPENAI_API_KEY", "CODEX_API_KEY"}
	if home == "" {
		return keys
	}
	var cfg struct {
		ModelProvider  string `toml:"model_provider"`
		ModelProviders map[string]struct {
			EnvKey string `toml:"env_key"`
		} `toml:"model_providers"`
	}
	if _, err := toml.DecodeFile(filepath.Join(home, "config.toml"), &cfg); err == nil {
		if p, ok := cfg.ModelProviders[cfg.ModelProvider]; ok && p.EnvKey != "" {
			return []string{p.EnvKey}
		}
	}
	return keys
}

// jsonQuote quotes s as a TOML basic string (JSON's escapes are TOML's).
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
