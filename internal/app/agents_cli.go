package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Codex CLI and Gemini CLI agents (docs/agents/codex.md, gemini.md): the
// role prompt, hooks and role checks each CLI's own way, the working
// directory the agent's (a worker's worktree), and the session resumed
// after a restart when one was saved.

// codexSpec runs Codex with the role prompt as developer instructions and
// Hivemind's hooks as -c overrides (the user's CODEX_HOME is untouched).
// The sandbox keeps writes inside the working dir and the task dir; the
// PreToolUse hook applies the role's paths (roles.Decide reads apply_patch).
func (f *agentFactory) codexSpec(base ptyagent.Spec, id string, role workspace.Role, resume bool) (ptyagent.Spec, error) {
	prompt, err := f.prompt(role)
	if err != nil {
		return base, err
	}
	rc := f.cfg.Role(role)
	sid := f.savedSession(id)
	o := ptyagent.CodexOptions{
		DeveloperInstructions: prompt,
		Model:                 rc.Model,
		Sandbox:               f.codexSandbox(),
		HookCommand:           ptyagent.HookCommand(f.self),
		SessionID:             sid,
		Resume:                resume && sid != "",
		AddDirs:               f.taskDirOutside(base.Dir),
		// Hivemind made the worktree (or was started in the project): no
		// "Trust this folder?" dialog for an agent nobody watches.
		ExtraArgs: append([]string{"-c", "projects={" + tomlQuote(base.Dir) + "={trust_level=\"trusted\"}}"}, rc.ExtraArgs...),
	}
	return ptyagent.CodexSpec(base, o), nil
}

// geminiSpec runs Gemini CLI with a settings file of its own (hooks,
// including BeforeTool for the role checks, and the role prompt as a
// context file) given as GEMINI_CLI_SYSTEM_SETTINGS_PATH, in yolo mode
// (no approval dialogs: the BeforeTool hook decides), with a session id
// chosen up front.
func (f *agentFactory) geminiSpec(base ptyagent.Spec, id string, role workspace.Role, resume bool) (ptyagent.Spec, error) {
	prompt, err := f.prompt(role)
	if err != nil {
		return base, err
	}
	dir, err := f.geminiDir(id)
	if err != nil {
		return base, err
	}
	// The prompt is a context file in a directory of the agent's
	// workspace; its name is the role's, so no other agent loads it.
	roleFile := "HIVEMIND-" + strings.ToUpper(string(role)) + ".md"
	if err := os.WriteFile(filepath.Join(dir, roleFile), []byte(prompt), 0o644); err != nil {
		return base, err
	}
	settings := filepath.Join(dir, "settings.json")
	if err := ptyagent.WriteGeminiSettings(settings, ptyagent.HookCommand(f.self), []string{roleFile, "GEMINI.md"}, nil); err != nil {
		return base, err
	}
	rc := f.cfg.Role(role)
	sid := ptyagent.ClaudeSessionID(f.td.ID(), id)
	o := ptyagent.GeminiOptions{
		Model:        rc.Model,
		ApprovalMode: "yolo",
		SessionID:    sid,
		// A session with messages is resumed though no turn ended (the
		// agent died in its first); one without is moved aside.
		Resume:       resume && ptyagent.GeminiResumable(ptyagent.GeminiHome(), sid),
		SettingsPath: settings,
		Hooks:        true,
		IncludeDirs:  append([]string{dir}, f.taskDirOutside(base.Dir)...),
		ExtraArgs:    rc.ExtraArgs,
	}
	return ptyagent.GeminiSpec(base, o), nil
}

// geminiDir is the agent's directory for its settings and role file.
// Gemini ignores a system settings file below a directory others may
// write (such as /tmp): then the user's cache directory is used instead.
func (f *agentFactory) geminiDir(id string) (string, error) {
	dirs := []string{filepath.Join(f.td.Dir(), "settings", id)}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "hivemind", "gemini", f.td.ID(), id))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			continue
		}
		if why := insecureDir(d); why == "" {
			return d, nil
		}
	}
	return "", fmt.Errorf("gemini: no directory for %s's settings that Gemini CLI accepts (%s is below a directory others may write: %s); set XDG_CACHE_HOME to a private directory",
		id, dirs[0], insecureDir(dirs[0]))
}

// insecureDir names the first of d and its parents that group or others
// may write, as Gemini CLI checks a system settings file ("" if none).
func insecureDir(d string) string {
	for {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o022 != 0 {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// sessionPath is the file recording the session id an agent's CLI
// reported at the end of a turn (a saved conversation to resume).
func sessionPath(taskDir, id string) string {
	return filepath.Join(taskDir, "settings", id+".session")
}

// savedSession is the recorded session id of agent id ("" when none).
func (f *agentFactory) savedSession(id string) string {
	b, err := os.ReadFile(sessionPath(f.td.Dir(), id))
	if err != nil || len(b) > 200 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordSession saves the session id of a Stop hook's payload, for
// resume (Codex chooses its ids; Gemini's is saved only once a turn is).
func recordSession(path string, payload []byte) {
	var p struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(payload, &p) != nil || p.SessionID == "" || len(p.SessionID) > 100 || strings.ContainsAny(p.SessionID, "/\n") {
		return
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte(p.SessionID+"\n"), 0o644)
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
