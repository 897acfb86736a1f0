package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
	"github.com/hivemind-dev/hivemind/vocab"
)

// heavy lists import-path prefixes the hook binary must not link: the
// TUI and terminal-emulator stack, whose package init (go-runewidth's
// tables above all) costs tens of milliseconds per hook.
var heavy = []string{
	"github.com/charmbracelet/", // x/ansi, x/vt, ultraviolet …
	"charm.land/",               // bubbletea, lipgloss, bubbles
	"github.com/mattn/go-runewidth",
	"github.com/rivo/uniseg",
	"github.com/clipperhouse/",
	"github.com/creack/pty",
	"github.com/hivemind-dev/hivemind/ptyagent/screen",
	"github.com/hivemind-dev/hivemind/tui",
	"github.com/hivemind-dev/hivemind/engine",
}

// heavyDeps returns the packages of pkg's import graph (tests excluded)
// that match heavy, plus the main ptyagent package.
func heavyDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/hivemind-dev/hivemind/ptyagent" || slices.ContainsFunc(heavy, func(h string) bool { return strings.HasPrefix(p, h) }) {
			bad = append(bad, p)
		}
	}
	return bad
}

// The hook binary's import graph stays light (what keeps it < 20 ms).
func TestLightImports(t *testing.T) {
	if bad := heavyDeps(t, "."); len(bad) > 0 {
		t.Errorf("hivemind-hook links heavy packages:\n%s", strings.Join(bad, "\n"))
	}
	// The check sees them where they are: the main binary links them.
	if bad := heavyDeps(t, "../.."); !slices.Contains(bad, "github.com/mattn/go-runewidth") {
		t.Errorf("heavy packages of the main binary not detected: %q", bad)
	}
}

// buildBinaries builds hivemind-hook (and, with main, hivemind) into dir.
func buildBinaries(tb testing.TB, dir string, main bool) (hook, hm string) {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go command:", err)
	}
	hook, hm = filepath.Join(dir, hookrelay.BinaryName), filepath.Join(dir, "hivemind")
	builds := [][2]string{{hook, "."}}
	if main {
		builds = append(builds, [2]string{hm, "../.."})
	}
	for _, b := range builds {
		if out, err := exec.Command(goBin, "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	return hook, hm
}

// The built binary decides PreToolUse by role, prints Claude's hook JSON,
// relays every hook, and exits 0 at once without a relay.
func TestBinary(t *testing.T) {
	hook, _ := buildBinaries(t, t.TempDir(), false)
	sock, got, stopRelay := testkit.Relay(t)
	task := filepath.Join(t.TempDir(), ".hivemind", "tasks", "t1")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		hookrelay.EnvHookSocket+"="+sock, hookrelay.EnvAgentID+"=reviewer", hookrelay.EnvRole+"=reviewer",
		hookrelay.EnvTaskDir+"="+task, hookrelay.EnvProject+"="+filepath.Dir(filepath.Dir(filepath.Dir(task))))
	run := func(env []string, stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(hook, args...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	next := func() hookrelay.Message {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("nothing relayed")
			return hookrelay.Message{}
		}
	}

	out := run(env, `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/passwd","content":"x"}}`, "PreToolUse")
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Errorf("no deny printed: %q", out)
	}
	if m := next(); m.Agent != "reviewer" || m.Event != "PreToolUse" || m.Decision != "deny" || m.Reason == "" {
		t.Errorf("relayed %+v", m)
	}
	if out := run(env, `{"session_id":"s1"}`, "Stop"); out != "" {
		t.Errorf("Stop printed %q", out)
	}
	if m := next(); m.Event != "Stop" || !strings.Contains(string(m.Payload), "s1") {
		t.Errorf("relayed %+v", m)
	}

	// No relay in the environment, or none listening: exit 0 at once.
	start := time.Now()
	run([]string{"PATH=" + os.Getenv("PATH")}, "{}", "Stop")
	stopRelay()
	run(env, "{}", "Stop")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v without a relay", d)
	}
}

// BenchmarkHookExec measures what Claude waits for on every hook: exec of
// the hook command plus the relay round trip to a live Hivemind relay
// (ptyagent.Manager's server, with the agent running), for hivemind-hook
// and for the main binary's `hivemind hook`. Run it with
//
//	go test -run '^$' -bench HookExec -benchtime 100x ./cmd/hivemind-hook
//
// p50-ms and p99-ms are the median and 99th percentile per call.
func BenchmarkHookExec(b *testing.B) {
	dir := b.TempDir()
	hook, hm := buildBinaries(b, dir, true)
	sockDir, err := os.MkdirTemp("", "hmb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	// The hooks run from this process, not from the agent's cgroup.
	b.Setenv(ptyagent.EnvCgroups, "off")
	m, err := ptyagent.NewManager(ptyagent.ManagerConfig{
		SocketDir: sockDir,
		Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (ptyagent.Spec, error) {
			return ptyagent.Spec{Argv: []string{"/bin/cat"}, Kind: ptyagent.ProfileCustom, Dir: dir,
				LogPath: filepath.Join(dir, string(id)+".log")}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.Start("worker_1", "worker", false); err != nil {
		b.Fatal(err)
	}
	s, _ := m.Session("worker_1")
	env := append(os.Environ(), hookrelay.EnvHookSocket+"="+m.SocketPath(), hookrelay.EnvAgentID+"=worker_1",
		hookrelay.EnvHookToken+"="+s.Spec().HookToken)
	payload := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`

	for _, c := range []struct {
		name string
		argv []string
	}{
		{"hivemind-hook", []string{hook, "Stop"}},
		{"hivemind_hook", []string{hm, "hook", "Stop"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env, cmd.Stdin = env, strings.NewReader(payload)
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				ds = append(ds, time.Since(start))
			}
			slices.Sort(ds)
			ms := func(q float64) float64 {
				return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.5), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.Logf("%s: %d calls, median %.2f ms, p99 %.2f ms", c.name, len(ds), ms(0.5), ms(0.99))
		})
	}
}
