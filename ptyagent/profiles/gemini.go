package profiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// Gemini CLI (npm @google/gemini-cli; docs/agents/gemini.md): its own
// hooks installed under the Claude events they stand for, the role prompt
// as a context file.
func init() {
	register(Profile{
		Name: "gemini", Title: "Gemini CLI", Kind: ptyagent.ProfileGemini,
		Binary: "gemini", NPM: "@google/gemini-cli", Version: "0.61.0", Node: 20,
		Offered: true, Redefinable: true,
		Hook: roles.BeforeToolHook,
		Enforcement: "every call is checked by the BeforeTool hook (write_file as Write, replace as Edit, run_shell_command as Bash, read tools as Read; any other tool only for workers); approval mode yolo, so no dialog stops an agent. " +
			"Not enforced: tools are not removed from what the model is offered; a call larger than the hook's 8 MiB limit gets Claude's denial, which Gemini does not read.",
		Checks: preflight.KeyCheck("gemini", preflight.Keys("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"),
			"a Google login in ~/.gemini (run gemini once and sign in)"),
		Launch: launchGemini,
	})
}

// launchGemini runs Gemini CLI with a settings file of its own (hooks,
// including BeforeTool for the role checks, and the role prompt as a
// context file) given as GEMINI_CLI_SYSTEM_SETTINGS_PATH, in yolo mode
// (no approval dialogs: the BeforeTool hook decides), with a session id
// chosen up front.
func launchGemini(l Launch) (ptyagent.Spec, error) {
	prompt, err := l.Prompt()
	if err != nil {
		return l.Base, err
	}
	dir, err := geminiDir(l.TaskDir, l.TaskID, l.ID)
	if err != nil {
		return l.Base, err
	}
	// The prompt is a context file in a directory of the agent's
	// workspace; its name is the role's, so no other agent loads it.
	roleFile := "HIVEMIND-" + strings.ToUpper(string(l.Role)) + ".md"
	if err := os.WriteFile(filepath.Join(dir, roleFile), []byte(prompt), 0o644); err != nil {
		return l.Base, err
	}
	settings := filepath.Join(dir, "settings.json")
	if err := ptyagent.WriteGeminiSettings(settings, ptyagent.HookCommand(l.Self), []string{roleFile, "GEMINI.md"}, nil); err != nil {
		return l.Base, err
	}
	sid := ptyagent.ClaudeSessionID(l.TaskID, l.ID)
	// A session with messages is resumed though no turn ended (the agent
	// died in its first); one without is moved aside.
	var chats []string
	if l.Resume {
		chats = ptyagent.GeminiResumable(ptyagent.GeminiHome(), sid)
	}
	o := ptyagent.GeminiOptions{
		Model:        l.RoleConfig.Model,
		ApprovalMode: "yolo",
		SessionID:    sid,
		Resume:       len(chats) > 0,
		SettingsPath: settings,
		Hooks:        true,
		IncludeDirs:  append([]string{dir}, l.AddDirs...),
		ExtraArgs:    l.RoleConfig.ExtraArgs,
	}
	spec := ptyagent.GeminiSpec(l.Base, o)
	if o.Resume {
		// Ready once the saved conversation is loaded, not when the
		// prompt is first drawn.
		spec.Ready.Loaded = ptyagent.GeminiResumeLoaded(chats)
	}
	return spec, nil
}

// geminiDir is the agent's directory for its settings and role file.
// Gemini ignores a system settings file below a directory others may
// write (such as /tmp): then the user's cache directory is used instead.
func geminiDir(taskDir, taskID, id string) (string, error) {
	dirs := []string{filepath.Join(taskDir, "settings", id)}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "hivemind", "gemini", taskID, id))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			continue
		}
		if why := InsecureDir(d); why == "" {
			return d, nil
		}
	}
	return "", fmt.Errorf("gemini: no directory for %s's settings that Gemini CLI accepts (%s is below a directory others may write: %s); set XDG_CACHE_HOME to a private directory",
		id, dirs[0], InsecureDir(dirs[0]))
}

// InsecureDir names the first of d and its parents that group or others
// may write, as Gemini CLI checks a system settings file ("" if none).
func InsecureDir(d string) string {
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
