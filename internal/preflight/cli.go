package preflight

import (
	"context"
	"fmt"
	"strings"
)

// cliFacts are what the preflight checks of Codex CLI and Gemini CLI.
type cliFacts struct {
	bin, install string
	// keys are the variables that hold a key or select a login; login
	// says where else credentials may live when none is set.
	keys  []string
	login string
}

var cliChecks = map[Kind]cliFacts{
	Codex: {bin: "codex", install: "npm install -g @openai/codex",
		keys:  []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		login: "codex login (ChatGPT), or a model provider in $CODEX_HOME/config.toml whose env_key is set"},
	Gemini: {bin: "gemini", install: "npm install -g @google/gemini-cli",
		keys:  []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"},
		login: "a Google login in ~/.gemini (run gemini once and sign in)"},
}

// otherCLI checks Codex or Gemini CLI: on PATH, its version, and a key
// (a missing key only warns: both CLIs have logins kept in their homes).
func otherCLI(ctx context.Context, env Env, a Agent) []Result {
	f := cliChecks[a.Kind]
	path, err := env.LookPath(f.bin)
	if err != nil {
		return []Result{{Check: f.bin + " command", Status: Fail,
			Msg: fmt.Sprintf("%s (the agent of %s) is not on PATH", f.bin, a.Roles),
			Fix: f.install + "; or choose another agent for those roles (--agent, [roles.<role>] agent)"}}
	}
	out := []Result{{Check: f.bin + " command", Msg: path + " for " + a.Roles}}
	v := Result{Check: f.bin + " version"}
	vctx, cancel := context.WithTimeout(ctx, env.CommandTimeout)
	defer cancel()
	b, err := env.Output(vctx, path, "--version")
	switch {
	case vctx.Err() != nil:
		v.Status, v.Msg = Warn, fmt.Sprintf("%s --version did not answer within %v", f.bin, env.CommandTimeout)
	case err != nil:
		v.Status, v.Msg, v.Fix = Fail, fmt.Sprintf("%s --version failed (%v)", f.bin, errText(err, firstLine(string(b)))), "reinstall it: "+f.install
	default:
		v.Msg = firstLine(string(b))
	}
	out = append(out, v)
	key := Result{Check: f.bin + " key"}
	for _, k := range f.keys {
		if env.Getenv(k) != "" {
			key.Msg = k + " is set"
			return append(out, key)
		}
	}
	key.Status = Warn
	key.Msg = "none of " + strings.Join(f.keys, ", ") + " is set"
	key.Fix = "set one, or make sure of " + f.login
	return append(out, key)
}
