package profiles

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/ptyagent"
)

// opencodeLaunch builds an opencode worker's Spec in a temp task dir.
func opencodeLaunch(t *testing.T, l Launch) (ptyagent.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	p, ok := Lookup("opencode")
	if !ok {
		t.Fatal("opencode is not registered")
	}
	// Its data and state directories go under this home.
	l.Base = ptyagent.Spec{Dir: dir, Env: []string{"HOME=" + dir, "XDG_DATA_HOME=", "XDG_STATE_HOME="}}
	l.ID, l.Role, l.TaskDir, l.TaskID = "worker_1", "worker", filepath.Join(dir, "task"), "t1"
	l.Prompt = func() (string, error) { return "You are a worker.", nil }
	spec, err := p.Launch(l)
	if err != nil {
		t.Fatal(err)
	}
	return spec, filepath.Join(l.TaskDir, "settings", "worker_1-opencode")
}

// The command line and configuration: --auto, the model and the saved
// session on a restart, and the plugin and role prompt given as
// OPENCODE_CONFIG_CONTENT (merged over the user's own configuration).
func TestOpencodeLaunch(t *testing.T) {
	spec, dir := opencodeLaunch(t, Launch{Resume: true, SavedSession: "ses_1", Self: "/opt/hivemind",
		RoleConfig: config.RoleConfig{Model: "anthropic/claude-sonnet-4-5", ExtraArgs: []string{"--log-level", "WARN"}}})
	want := []string{"opencode", "--auto", "--model", "anthropic/claude-sonnet-4-5", "--session", "ses_1", "--log-level", "WARN"}
	if !slices.Equal(spec.Argv, want) {
		t.Errorf("argv %q, want %q", spec.Argv, want)
	}
	var cfg struct {
		Plugin       []string `json:"plugin"`
		Instructions []string `json:"instructions"`
	}
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
			if err := json.Unmarshal([]byte(v), &cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(cfg.Plugin) != 1 || cfg.Plugin[0] != "file://"+filepath.Join(dir, "hivemind.js") {
		t.Errorf("plugin %q", cfg.Plugin)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "HIVEMIND-WORKER.md")); err != nil || len(cfg.Instructions) != 1 || string(b) != "You are a worker." {
		t.Errorf("instructions %q: %q %v", cfg.Instructions, b, err)
	}
	if spec.Kind != "opencode" || spec.Submit.Confirm != ptyagent.ConfirmHook {
		t.Errorf("kind %q submit %+v", spec.Kind, spec.Submit)
	}
	// A first start names no session.
	spec, _ = opencodeLaunch(t, Launch{SavedSession: "ses_1"})
	if slices.Contains(spec.Argv, "--session") {
		t.Errorf("first start resumes: %q", spec.Argv)
	}
}

// opencode writes its data and state directories at every start, and
// the write scope skips a directory that is missing when the agent is
// confined: Launch creates them (XDG_DATA_HOME and XDG_STATE_HOME
// honoured) and names them for the scope. (A first start on a busy
// machine, its preflight --version not finished, exited with EACCES on
// mkdir ~/.local.)
func TestOpencodeStateDirsInScope(t *testing.T) {
	spec, dir := opencodeLaunch(t, Launch{})
	home := spec.Dir
	want := []string{filepath.Join(home, ".local", "share", "opencode"), filepath.Join(home, ".local", "state", "opencode"),
		filepath.Join(dir, "usage")} // its plugin writes the usage file there
	if !slices.Equal(spec.Sandbox.Writable, want) {
		t.Errorf("writable %q, want %q", spec.Sandbox.Writable, want)
	}
	for _, d := range want {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
	data := filepath.Join(t.TempDir(), "data")
	p, _ := Lookup("opencode")
	l := Launch{Base: ptyagent.Spec{Dir: home, Env: []string{"HOME=" + home, "XDG_DATA_HOME=" + data}}, ID: "lead", Role: "lead",
		TaskDir: filepath.Join(home, "task"), Prompt: func() (string, error) { return "lead", nil }}
	spec, err := p.Launch(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Sandbox.Writable) == 0 || spec.Sandbox.Writable[0] != filepath.Join(data, "opencode") {
		t.Errorf("XDG_DATA_HOME not honoured: %q", spec.Sandbox.Writable)
	}
	l.Base.Env = []string{"HOME=", "XDG_DATA_HOME=", "XDG_STATE_HOME="}
	if _, err := p.Launch(l); err == nil || !strings.Contains(err.Error(), "HOME") {
		t.Errorf("no home: %v, want an error naming $HOME", err)
	}
}

// The plugin itself, run by Node as opencode runs it (an ES module whose
// export returns the hooks): each event reaches the hook command as the
// Claude event it stands for, with Claude's tool names and input keys; a
// denial is thrown with the role check's reason; a completed assistant
// message becomes a usage line ptyagent.ReadUsage sums; an interrupt is
// no failure.
func TestOpencodePluginRelaysAsClaude(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH:", err)
	}
	_, dir := opencodeLaunch(t, Launch{Self: filepath.Join(t.TempDir(), "hivemind-hook")})
	plugin := filepath.Join(dir, "hivemind.js")
	// A hook command that records what it gets and denies writes to /etc.
	calls := filepath.Join(t.TempDir(), "calls")
	hook := filepath.Join(t.TempDir(), "hook.sh")
	script := "#!/bin/sh\nin=$(cat)\nprintf '%s %s\\n' \"$1\" \"$in\" >> " + calls + "\n" +
		"case \"$1:$in\" in PreToolUse:*'\"/etc/'*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"a worker may not write /etc\"}}';; esac\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(plugin)
	if err != nil {
		t.Fatal(err)
	}
	// The hook command of this test instead of hivemind-hook.
	hookJSON, _ := json.Marshal([]string{hook})
	i := strings.Index(string(src), "const HOOK = ")
	j := strings.Index(string(src)[i:], "\n")
	patched := string(src[:i]) + "const HOOK = " + string(hookJSON) + string(src[i+j:])
	if err := os.WriteFile(plugin, []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	driver := `
import { Hivemind } from ` + jsString(plugin) + `
const h = await Hivemind({ directory: "/w" })
await h["chat.message"]({ sessionID: "ses_9" })
await h["tool.execute.before"]({ tool: "write", sessionID: "ses_9" }, { args: { filePath: "/w/a.go", content: "x" } })
let denied = ""
try { await h["tool.execute.before"]({ tool: "edit", sessionID: "ses_9" }, { args: { filePath: "/etc/passwd" } }) } catch (e) { denied = e.message }
console.log("DENIED:" + denied)
const tokens = { input: 100, output: 20, reasoning: 5, cache: { read: 30, write: 7 } }
await h.event({ event: { type: "message.updated", properties: { info: { id: "m1", role: "assistant", modelID: "claude-x", tokens, time: { created: 1 } } } } })
await h.event({ event: { type: "message.updated", properties: { info: { id: "m1", role: "assistant", modelID: "claude-x", tokens, time: { created: 1, completed: 2 } } } } })
await h.event({ event: { type: "session.error", properties: { sessionID: "ses_9", error: { name: "MessageAbortedError", data: {} } } } })
await h.event({ event: { type: "session.error", properties: { sessionID: "ses_9", error: { name: "APIError", data: { message: "rate limit 429" } } } } })
await h.event({ event: { type: "session.idle", properties: { sessionID: "ses_9" } } })
`
	drv := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(drv, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, drv).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "DENIED:a worker may not write /etc") {
		t.Errorf("the denial was not thrown with its reason:\n%s", out)
	}
	b, _ := os.ReadFile(calls)
	var events []string
	var pre []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		ev, payload, _ := strings.Cut(line, " ")
		events = append(events, ev)
		var m map[string]any
		if err := json.Unmarshal([]byte(payload), &m); err != nil || m["hook_event_name"] != ev {
			t.Errorf("%s payload %s (%v)", ev, payload, err)
		}
		if ev == ptyagent.HookPreToolUse {
			pre = append(pre, m)
		}
	}
	want := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "StopFailure", "Stop"}
	if !slices.Equal(events, want) {
		t.Errorf("hooks %q, want %q", events, want)
	}
	if len(pre) == 2 {
		in, _ := pre[0]["tool_input"].(map[string]any)
		if pre[0]["tool_name"] != "Write" || in["file_path"] != "/w/a.go" || pre[1]["tool_name"] != "Edit" {
			t.Errorf("PreToolUse payloads %v", pre)
		}
	}
	u, err := ptyagent.ReadUsage(filepath.Join(dir, "usage", "usage.jsonl"))
	if err != nil || u.Input != 100 || u.Output != 25 || u.CacheRead != 30 || u.CacheWrite != 7 || u.Model != "claude-x" {
		t.Errorf("usage %+v (%v)", u, err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
