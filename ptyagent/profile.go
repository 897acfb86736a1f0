package ptyagent

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
)

// ClaudeOptions are the flags of one Claude Code agent.
type ClaudeOptions struct {
	Binary             string // default "claude"
	AppendSystemPrompt string // role prompt (--append-system-prompt)
	Model              string
	AllowedTools       []string
	DisallowedTools    []string
	Tools              []string // --tools: the only tools offered to the model
	PermissionMode     string   // --permission-mode (e.g. "acceptEdits", "bypassPermissions")
	SessionID          string   // conversation UUID, chosen at first start
	Resume             bool     // restart: --resume SessionID instead of --session-id
	SettingsPath       string   // hooks settings file (see ClaudeSettings)
	AddDirs            []string // --add-dir
	ExtraArgs          []string // passed through before --settings
}

// Argv returns the command line. --settings comes last because Claude
// Code honours only the last --settings flag.
func (o ClaudeOptions) Argv() []string {
	a := startArgv(o.Binary, "claude", o.SessionID, o.Resume, "--session-id", "--resume")
	if o.Model != "" {
		a = append(a, "--model", o.Model)
	}
	if o.PermissionMode != "" {
		a = append(a, "--permission-mode", o.PermissionMode)
	}
	if len(o.Tools) > 0 {
		a = append(a, "--tools", strings.Join(o.Tools, ","))
	}
	if len(o.AllowedTools) > 0 {
		a = append(a, "--allowedTools", strings.Join(o.AllowedTools, ","))
	}
	if len(o.DisallowedTools) > 0 {
		a = append(a, "--disallowedTools", strings.Join(o.DisallowedTools, ","))
	}
	for _, d := range o.AddDirs {
		a = append(a, "--add-dir", d)
	}
	if o.AppendSystemPrompt != "" {
		a = append(a, "--append-system-prompt", o.AppendSystemPrompt)
	}
	a = append(a, o.ExtraArgs...)
	if o.SettingsPath != "" {
		a = append(a, "--settings", o.SettingsPath)
	}
	return a
}

// startArgv begins a command line: bin (def when empty), then, when id is
// set, newFlag id on a first start or resumeFlag id on a restart.
func startArgv(bin, def, id string, resume bool, newFlag, resumeFlag string) []string {
	if bin == "" {
		bin = def
	}
	a := []string{bin}
	switch {
	case id == "":
	case resume:
		a = append(a, resumeFlag, id)
	default:
		a = append(a, newFlag, id)
	}
	return a
}

// HookCommand returns the executable Claude's hooks should run for a
// Hivemind binary self (the running executable when empty): the light
// `hivemind-hook` next to self, else `hivemind-hook` on PATH, else self
// (whose hidden `hook` sub-command does the same, only slower to start:
// it links the whole TUI). Pass the result to ClaudeSettings.
func HookCommand(self string) string {
	if self == "" {
		exe, err := os.Executable()
		if err != nil {
			return ""
		}
		self = exe
	}
	if p := filepath.Join(filepath.Dir(self), hookrelay.BinaryName); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath(hookrelay.BinaryName); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return self
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// hookArgv returns the shell command line running hookCommand for event:
// `hivemind-hook <Event>` for the standalone hook binary, else
// `<hookCommand> hook <Event>` (hookCommand is shell-quoted when needed).
func hookArgv(hookCommand, event string) string {
	if filepath.Base(hookCommand) == hookrelay.BinaryName {
		return shellQuote(hookCommand) + " " + event
	}
	return shellQuote(hookCommand) + " hook " + event
}

// ClaudeSettings returns one settings JSON installing every hook Hivemind
// listens to, each running `<hookCommand> hook <Event>`, or
// `<hookCommand> <Event>` when hookCommand is the hivemind-hook binary
// (see HookCommand); hookCommand is shell-quoted when needed.
func ClaudeSettings(hookCommand string) []byte {
	type cmd struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type matcher struct {
		Matcher string `json:"matcher,omitempty"`
		Hooks   []cmd  `json:"hooks"`
	}
	hooks := map[string][]matcher{}
	for _, ev := range HookEvents {
		m := matcher{Hooks: []cmd{{Type: "command", Command: hookArgv(hookCommand, ev), Timeout: 10}}}
		if ev == HookPreToolUse || ev == HookPermissionRequest {
			m.Matcher = "*"
		}
		hooks[ev] = []matcher{m}
	}
	b, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	return append(b, '\n')
}

// WriteClaudeSettings writes ClaudeSettings(hookCommand) to path.
func WriteClaudeSettings(path, hookCommand string) error {
	if err := os.WriteFile(path, ClaudeSettings(hookCommand), 0o644); err != nil {
		return fmt.Errorf("ptyagent: write claude settings: %w", err)
	}
	return nil
}

// ClaudeSpec fills spec with Claude Code's command and rules.
func ClaudeSpec(spec Spec, o ClaudeOptions) Spec {
	spec.Argv = o.Argv()
	spec.Kind = ProfileClaude
	spec.Submit = DefaultSubmitRules(ProfileClaude)
	spec.Ready = DefaultReadyRules(ProfileClaude)
	return spec
}

// SimSpec fills spec to run the built-in sim agent: `<self> sim-agent args…`.
// self defaults to the running executable.
func SimSpec(spec Spec, self string, args ...string) (Spec, error) {
	if self == "" {
		exe, err := os.Executable()
		if err != nil {
			return spec, fmt.Errorf("ptyagent: sim agent: %w", err)
		}
		self = exe
	}
	spec.Argv = append([]string{self, "sim-agent"}, args...)
	spec.Kind = ProfileSim
	spec.Submit = DefaultSubmitRules(ProfileSim)
	spec.Ready = DefaultReadyRules(ProfileSim)
	return spec, nil
}

// CustomProfile is a user-defined agent command from config.
type CustomProfile struct {
	// Command is a template split like a shell command line (quotes and
	// backslashes honoured, no expansion); {agent_id}, {role}, {task_dir}
	// and {project} are replaced in each word.
	Command string
	Env     []string // extra KEY=VAL
	Submit  SubmitRules
	Ready   ReadyRules
}

// CustomSpec fills spec from a custom profile; vars holds the template
// values (agent_id, role, task_dir, project).
func CustomSpec(spec Spec, p CustomProfile, vars map[string]string) (Spec, error) {
	words, err := splitWords(p.Command)
	if err != nil {
		return spec, err
	}
	if len(words) == 0 {
		return spec, fmt.Errorf("ptyagent: custom profile: empty command")
	}
	for i, w := range words {
		for k, v := range vars {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		words[i] = w
	}
	spec.Argv = words
	spec.Env = append(spec.Env, p.Env...)
	spec.Kind = ProfileCustom
	spec.Submit, spec.Ready = p.Submit, p.Ready
	return spec, nil
}

// splitWords splits a command line like a POSIX shell would, without any
// expansion.
func splitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("ptyagent: command %q: unterminated quote", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
