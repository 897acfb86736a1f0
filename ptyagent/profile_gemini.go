package ptyagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Gemini CLI (npm @google/gemini-cli, measured on 0.61.0;
// docs/agents/gemini.md). Its hooks have their own event names; each is
// installed to run Hivemind's hook command under the Claude event it
// stands for, so the relay and the session see the events they know.

// geminiHooks maps Gemini CLI's hook events to Hivemind's. BeforeTool runs
// the PreToolUse check, which answers in Gemini's format
// ({"decision":"deny","reason":…}) when the payload's hook_event_name is
// BeforeTool (roles.PreToolUse).
var geminiHooks = []struct{ gemini, hivemind string }{
	{"SessionStart", HookSessionStart},
	{"BeforeTool", HookPreToolUse},
	{"BeforeAgent", HookUserPromptSubmit},
	{"AfterAgent", HookStop},
	{"Notification", HookNotification},
	{"SessionEnd", HookSessionEnd},
}

// GeminiOptions are the flags of one Gemini CLI agent.
type GeminiOptions struct {
	Binary string // default "gemini"
	Model  string // -m; also skips the model router's extra request
	// ApprovalMode is default, auto_edit, yolo or plan (read-only).
	ApprovalMode string
	// SessionID is the session UUID, chosen at first start
	// (--session-id); with Resume the command is --resume SessionID.
	SessionID string
	Resume    bool
	// SettingsPath is a settings file (see GeminiSettings) given as
	// GEMINI_CLI_SYSTEM_SETTINGS_PATH: it overrides the user's and the
	// project's settings without touching them. Gemini ignores it (with a
	// warning) when a parent directory is writable by others, as /tmp is.
	SettingsPath string
	// Hooks says Hivemind's hooks are installed (GeminiSettings, in
	// SettingsPath or the user's settings): the BeforeAgent hook then
	// confirms each message.
	Hooks       bool
	IncludeDirs []string // --include-directories
	ExtraArgs   []string
}

// Argv returns the command line.
func (o GeminiOptions) Argv() []string {
	a := startArgv(o.Binary, "gemini", o.SessionID, o.Resume, "--session-id", "--resume")
	if o.Model != "" {
		a = append(a, "--model", o.Model)
	}
	if o.ApprovalMode != "" {
		a = append(a, "--approval-mode", o.ApprovalMode)
	}
	for _, d := range o.IncludeDirs {
		a = append(a, "--include-directories", d)
	}
	return append(a, o.ExtraArgs...)
}

// GeminiSettings returns a settings JSON turning off the folder-trust
// dialogs, installing Hivemind's hooks
// (hookCommand as for ClaudeSettings; empty for none), loading the role
// prompt from contextFiles (context.fileName: file names Gemini looks
// for in the workspace, like GEMINI.md) and removing tools from what the
// model is offered (tools.exclude, e.g. write_file and replace for a
// read-only role).
func GeminiSettings(hookCommand string, contextFiles, excludeTools []string) []byte {
	type cmd struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"` // milliseconds
	}
	type group struct {
		Matcher string `json:"matcher,omitempty"`
		Hooks   []cmd  `json:"hooks"`
	}
	// No folder-trust dialog: it would stop an agent nobody watches (for
	// the project, and for every --include-directories), and the user
	// chose the project by starting Hivemind in it.
	settings := map[string]any{"security": map[string]any{"folderTrust": map[string]any{"enabled": false}}}
	if hookCommand != "" {
		hooks := map[string][]group{}
		for _, h := range geminiHooks {
			g := group{Hooks: []cmd{{Type: "command", Command: hookArgv(hookCommand, h.hivemind), Timeout: 10000}}}
			if h.hivemind == HookPreToolUse {
				g.Matcher = "*"
			}
			hooks[h.gemini] = []group{g}
		}
		settings["hooks"] = hooks
	}
	if len(contextFiles) > 0 {
		// Included directories may hold them (the role prompt's own).
		settings["context"] = map[string]any{"fileName": contextFiles, "loadMemoryFromIncludeDirectories": true}
	}
	if len(excludeTools) > 0 {
		settings["tools"] = map[string]any{"exclude": excludeTools}
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	return append(b, '\n')
}

// WriteGeminiSettings writes GeminiSettings(…) to path.
func WriteGeminiSettings(path, hookCommand string, contextFiles, excludeTools []string) error {
	if err := os.WriteFile(path, GeminiSettings(hookCommand, contextFiles, excludeTools), 0o644); err != nil {
		return fmt.Errorf("ptyagent: write gemini settings: %w", err)
	}
	return nil
}

// GeminiSpec fills spec with Gemini CLI's command and rules: typed as a
// bracketed paste with a separate Enter (an Enter within ~100 ms of a
// plain burst of keys is swallowed), confirmed by the BeforeAgent hook
// when the settings file installs the hooks (the screen otherwise); ready
// when the composer shows; busy until the AfterAgent hook.
func GeminiSpec(spec Spec, o GeminiOptions) Spec {
	spec.Argv = o.Argv()
	spec.Kind = ProfileGemini
	if o.SettingsPath != "" {
		spec.Env = append(spec.Env, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="+o.SettingsPath)
	}
	spec.Submit = hookSubmit(ProfileGemini, o.Hooks)
	spec.Ready = DefaultReadyRules(ProfileGemini)
	return spec
}

// GeminiHome is the directory holding Gemini CLI's .gemini for agents
// started from this process: GEMINI_CLI_HOME when set, else the home.
func GeminiHome() string {
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// GeminiResumable returns the chat files in which Gemini CLI saved
// session sid under home (GeminiHome) with something to resume, none when
// there is nothing to resume: a chat file
// .gemini/tmp/<project>/chats/session-<date>-<sid[:8]>.json[l] whose
// sessionId is sid and that holds a user or model message. Gemini saves a
// session when it starts, before any message; such a file is moved aside
// (to .empty), as --session-id refuses an existing id and --resume one
// without messages ("No previous sessions found"): either would fail every
// restart of an agent that died early.
func GeminiResumable(home, sid string) []string {
	if len(sid) < 8 || home == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*-"+sid[:8]+".json*"))
	var found []string
	for _, p := range files {
		if filepath.Ext(p) != ".json" && filepath.Ext(p) != ".jsonl" {
			continue
		}
		switch geminiChat(p, sid) {
		case chatResumable:
			found = append(found, p)
		case chatEmpty:
			_ = os.Rename(p, p+".empty")
		}
	}
	return found
}

// GeminiResumeLoaded is the ReadyRules.Loaded of a Gemini CLI started
// with --resume from the chat files chats (GeminiResumable), called
// before it starts. Gemini draws its prompt before it loads the saved
// conversation (a UI effect once its client is up; seconds on a busy
// machine), and a message submitted in between goes to a fresh chat
// that the load then replaces: the model never sees the conversation
// with it, and the turn answers the old one. Loading the conversation
// appends a record to its file ({"$set":{"sessionId":…}}; a .json file
// is rewritten as .jsonl), so the conversation is loaded once one of
// the files has grown past its size now.
func GeminiResumeLoaded(chats []string) func() bool {
	size := make([]int64, len(chats))
	for i, p := range chats {
		size[i] = fileSize(p)
	}
	return func() bool {
		for i, p := range chats {
			if fileSize(p) > size[i] || (filepath.Ext(p) == ".json" && fileSize(p+"l") > 0) {
				return true
			}
		}
		return false
	}
}

// fileSize is the size of the file at path, -1 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

type chatKind int

const (
	chatOther     chatKind = iota // another session, or unreadable
	chatEmpty                     // session sid, nothing to resume
	chatResumable                 // session sid with a message
)

// geminiChat reads a chat file as Gemini CLI does to list sessions: one
// JSON record per line, the first naming the session (a .json file is one
// record holding "messages"). It reads at most 64 MiB.
func geminiChat(path, sid string) chatKind {
	f, err := os.Open(path)
	if err != nil {
		return chatOther
	}
	defer f.Close()
	type message struct {
		Type      string          `json:"type"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []any           `json:"toolCalls"`
		Thoughts  []any           `json:"thoughts"`
	}
	var rec struct {
		SessionID string    `json:"sessionId"`
		Messages  []message `json:"messages"`
		message
	}
	r := io.LimitReader(f, 64<<20)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	if filepath.Ext(path) == ".json" {
		// The older format: the whole file is one (indented) record.
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if !atEOF {
				return 0, nil, nil
			}
			return len(data), data, bufio.ErrFinalToken
		})
	}
	kind := chatOther
	for sc.Scan() {
		rec.SessionID, rec.Messages, rec.message = "", nil, message{}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if kind == chatOther {
			if rec.SessionID != sid {
				return chatOther
			}
			kind = chatEmpty
		}
		for _, m := range append(rec.Messages, rec.message) {
			if geminiResumableMessage(m.Type, m.Content, len(m.ToolCalls)+len(m.Thoughts)) {
				return chatResumable
			}
		}
	}
	return kind
}

// geminiResumableMessage is Gemini CLI's isResumableMessageRecord: a user
// message other than a command or injected context, or a model message
// with text, tool calls or thoughts.
func geminiResumableMessage(typ string, content json.RawMessage, calls int) bool {
	text := geminiText(content)
	switch typ {
	case "user":
		return text != "" && !strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "?") &&
			!strings.HasPrefix(text, "<session_context>") && !strings.HasPrefix(text, "<hook_context>")
	case "gemini":
		return text != "" || calls > 0
	}
	return false
}

// geminiText is a message's content as text (a string, or parts with
// "text"), trimmed.
func geminiText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return strings.TrimSpace(b.String())
}
