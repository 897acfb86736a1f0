package ptyagent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestCodexArgv(t *testing.T) {
	first := CodexOptions{Binary: "/bin/codex", Sandbox: "read-only", Model: "m", AddDirs: []string{"/task"},
		DeveloperInstructions: "You are the \"Reviewer\".\nDo not edit source.\tTabs \\ and \x01.", HookCommand: "/opt/hm/hivemind-hook"}
	a := first.Argv()
	want := []string{"/bin/codex", "--no-daemon", "--model", "m", "--sandbox", "read-only", "--ask-for-approval", "never", "--add-dir", "/task"}
	if strings.Join(a[:len(want)], " ") != strings.Join(want, " ") {
		t.Fatalf("argv %q", a)
	}
	if a[len(a)-1] != "--dangerously-bypass-hook-trust" {
		t.Errorf("hooks installed without trusting them: %q", a)
	}
	// Every -c value is TOML that Codex reads back to what we meant.
	hooks := map[string]string{}
	for i := 0; i+1 < len(a); i++ {
		if a[i] != "-c" {
			continue
		}
		var v struct {
			DeveloperInstructions *string `toml:"developer_instructions"`
			Hooks                 map[string][]struct {
				Matcher *string `toml:"matcher"`
				Hooks   []struct {
					Type    string `toml:"type"`
					Command string `toml:"command"`
				} `toml:"hooks"`
			} `toml:"hooks"`
		}
		if _, err := toml.Decode(a[i+1], &v); err != nil {
			t.Fatalf("-c %q is not TOML: %v", a[i+1], err)
		}
		if d := v.DeveloperInstructions; d != nil && *d != first.DeveloperInstructions {
			t.Errorf("developer_instructions round trip: %q", *d)
		}
		for ev, groups := range v.Hooks {
			g := groups[0]
			hooks[ev] = g.Hooks[0].Command
			if (g.Matcher != nil) != (ev == HookPreToolUse || ev == HookPermissionRequest) {
				t.Errorf("%s matcher %v", ev, g.Matcher)
			}
		}
	}
	for _, ev := range codexHookEvents {
		if hooks[ev] != "/opt/hm/hivemind-hook "+ev {
			t.Errorf("hook %s runs %q", ev, hooks[ev])
		}
	}

	resumed := CodexOptions{SessionID: "01a2-thread", Resume: true}.Argv()
	if strings.Join(resumed, " ") != "codex resume --no-daemon --ask-for-approval never 01a2-thread" {
		t.Errorf("resume argv %q", resumed)
	}
	// Codex picks the id itself: a first start never names one.
	if a := (CodexOptions{SessionID: "thread-42"}).Argv(); strings.Contains(strings.Join(a, " "), "thread-42") {
		t.Errorf("first start argv %q names a session", a)
	}
}

func TestGeminiArgvAndSettings(t *testing.T) {
	a := GeminiOptions{SessionID: "u-1", ApprovalMode: "plan", Model: "gm", IncludeDirs: []string{"/task"}}.Argv()
	if got := strings.Join(a, " "); got != "gemini --session-id u-1 --model gm --approval-mode plan --include-directories /task" {
		t.Errorf("argv %q", got)
	}
	if got := strings.Join(GeminiOptions{SessionID: "u-1", Resume: true}.Argv(), " "); got != "gemini --resume u-1" {
		t.Errorf("resume argv %q", got)
	}

	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
		Context  struct{ FileName []string }
		Tools    struct{ Exclude []string }
		Security struct{ FolderTrust struct{ Enabled *bool } }
	}
	if err := json.Unmarshal(GeminiSettings("/opt/hm/hivemind-hook", []string{"ROLE.md"}, []string{"write_file"}), &s); err != nil {
		t.Fatal(err)
	}
	for _, h := range geminiHooks {
		g := s.Hooks[h.gemini]
		if len(g) != 1 || g[0].Hooks[0].Command != "/opt/hm/hivemind-hook "+h.hivemind {
			t.Errorf("%s hook %+v", h.gemini, g)
		}
	}
	// BeforeTool runs the role check on every tool (roles.PreToolUse
	// answers it in Gemini's format).
	if g := s.Hooks["BeforeTool"]; len(g) != 1 || g[0].Matcher != "*" {
		t.Errorf("BeforeTool hook %+v, want one matching every tool", g)
	}
	if e := s.Security.FolderTrust.Enabled; e == nil || *e {
		t.Error("folder trust dialogs not turned off")
	}
	if len(s.Context.FileName) != 1 || len(s.Tools.Exclude) != 1 {
		t.Errorf("settings %+v", s)
	}

	spec := GeminiSpec(Spec{}, GeminiOptions{SettingsPath: "/p/settings.json"})
	if spec.Kind != ProfileGemini || spec.Submit.Confirm != ConfirmScreen || !spec.Submit.Paste ||
		strings.Join(spec.Env, " ") != "GEMINI_CLI_SYSTEM_SETTINGS_PATH=/p/settings.json" {
		t.Errorf("spec without hooks: %+v", spec)
	}
	if c := CodexSpec(Spec{}, CodexOptions{HookCommand: "h"}); c.Submit.Confirm != ConfirmHook || c.Ready.Pattern == "" {
		t.Errorf("codex spec %+v", c)
	}
}

// Gemini's saved session is resumed only with a message in it; one saved
// at start with none is moved aside (so --session-id can start it again);
// another session sharing the file name's 8-character prefix is left.
func TestGeminiResumable(t *testing.T) {
	home := t.TempDir()
	sid := "12642b7a-e6ba-5810-81eb-81cb065cd965"
	if GeminiResumable(home, sid) != nil {
		t.Fatal("resumable in an empty home")
	}
	chats := filepath.Join(home, ".gemini", "tmp", "proj", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(chats, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := `{"sessionId":"` + sid + `","projectHash":"x","startTime":"2026-11-24T16:45:12Z","kind":"main"}` + "\n"
	other := write("session-2026-11-24T16-40-12642b7a.jsonl",
		`{"sessionId":"12642b7a-0000-0000-0000-000000000000"}`+"\n"+`{"id":"m1","type":"user","content":[{"text":"hello"}]}`+"\n")
	empty := write("session-2026-11-24T16-45-12642b7a.jsonl", head+`{"id":"i1","type":"info","content":"started"}`+"\n"+
		`{"id":"u0","type":"user","content":"/stats"}`+"\n")
	if GeminiResumable(home, sid) != nil {
		t.Fatal("a session with no message counted as resumable")
	}
	if _, err := os.Stat(empty + ".empty"); err != nil {
		t.Errorf("the empty session was not moved aside: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another session was touched: %v", err)
	}
	for name, msg := range map[string]string{
		"user text":      `{"id":"u1","type":"user","content":[{"text":"[HIVEMIND] Do subtask st_1"}]}`,
		"model toolcall": `{"id":"g1","type":"gemini","content":"","toolCalls":[{"name":"write_file"}]}`,
	} {
		p := write("session-2026-11-24T16-46-12642b7a.jsonl", head+msg+"\n")
		if GeminiResumable(home, sid) == nil {
			t.Errorf("%s: not resumable", name)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	// The older format: one indented record with the messages.
	write("session-2026-11-24T16-47-12642b7a.json", "{\n  \"sessionId\": \""+sid+"\",\n  \"messages\": [\n    {\"type\": \"user\", \"content\": \"go\"}\n  ]\n}\n")
	if GeminiResumable(home, sid) == nil {
		t.Error("a .json session with a message: not resumable")
	}
	if GeminiResumable(home, "short") != nil {
		t.Fatal("a malformed id matched")
	}
}

// A resumed Gemini is ready only once it has loaded its saved
// conversation (it draws its prompt first; a message typed before the
// load goes to a chat the load replaces): loading appends a record to
// the chat file, or rewrites a .json file as .jsonl.
func TestGeminiResumeLoaded(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "session-2026-11-28T10-04-e7f63e29.jsonl")
	legacy := filepath.Join(dir, "session-2026-11-27T10-04-e7f63e29.json")
	for _, p := range []string{jsonl, legacy} {
		if err := os.WriteFile(p, []byte(`{"sessionId":"e7f63e29"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		chats []string
		load  func() error
	}{
		"jsonl appended": {[]string{jsonl}, func() error {
			f, err := os.OpenFile(jsonl, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString(`{"$set":{"sessionId":"e7f63e29"}}` + "\n")
			return errors.Join(err, f.Close())
		}},
		"json rewritten as jsonl": {[]string{legacy}, func() error {
			return os.WriteFile(legacy+"l", []byte(`{"sessionId":"e7f63e29"}`+"\n"), 0o600)
		}},
	} {
		loaded := GeminiResumeLoaded(tc.chats)
		if loaded() {
			t.Fatalf("%s: loaded before anything was written", name)
		}
		if err := tc.load(); err != nil {
			t.Fatal(err)
		}
		if !loaded() {
			t.Errorf("%s: not loaded after the write", name)
		}
	}
	if GeminiResumeLoaded([]string{filepath.Join(dir, "gone.jsonl")})() {
		t.Error("a missing file counted as loaded")
	}
}
