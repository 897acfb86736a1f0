package remote

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The helper resumes a remote Claude session only when the host saved a
// conversation of that id with a message in it; an empty transcript is
// moved aside so the session starts afresh under its id.
func TestClaudeResumeArgv(t *testing.T) {
	const sid = "3f2b9c1e-0d4a-5b6c-8d7e-9f0a1b2c3d4e"
	argv := []string{"claude", "--session-id", sid, "--settings", "/s.json"}
	resumed := []string{"claude", "--resume", sid, "--settings", "/s.json"}
	write := func(t *testing.T, dir, body string) string {
		t.Helper()
		p := filepath.Join(dir, "projects", "-home-w", sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := `{"type":"summary","summary":"x"}` + "\n"
	message := `{"type":"user","message":{"role":"user","content":"hi"}}` + "\n"

	t.Run("saved conversation", func(t *testing.T) {
		home := t.TempDir()
		write(t, filepath.Join(home, ".claude"), header+message)
		if got := claudeResumeArgv(argv, []string{"HOME=" + home}); !slices.Equal(got, resumed) {
			t.Errorf("got %q, want %q", got, resumed)
		}
		if argv[1] != "--session-id" {
			t.Error("the caller's argv was changed")
		}
	})
	t.Run("CLAUDE_CONFIG_DIR", func(t *testing.T) {
		home, cfg := t.TempDir(), t.TempDir()
		write(t, cfg, message)
		if got := claudeResumeArgv(argv, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cfg}); !slices.Equal(got, resumed) {
			t.Errorf("got %q, want %q", got, resumed)
		}
	})
	t.Run("header only", func(t *testing.T) {
		home := t.TempDir()
		p := write(t, filepath.Join(home, ".claude"), header)
		if got := claudeResumeArgv(argv, []string{"HOME=" + home}); !slices.Equal(got, argv) {
			t.Errorf("got %q, want %q", got, argv)
		}
		if _, err := os.Stat(p + ".empty"); err != nil {
			t.Errorf("the empty transcript was not moved aside: %v", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		if got := claudeResumeArgv(argv, []string{"HOME=" + t.TempDir()}); !slices.Equal(got, argv) {
			t.Errorf("got %q, want %q", got, argv)
		}
	})
	t.Run("not a session id", func(t *testing.T) {
		home := t.TempDir()
		write(t, filepath.Join(home, ".claude"), message)
		bad := []string{"claude", "--session-id", "*"}
		if got := claudeResumeArgv(bad, []string{"HOME=" + home}); !slices.Equal(got, bad) {
			t.Errorf("got %q, want %q", got, bad)
		}
	})
}

// The launcher carries the resume request to the helper's command line on
// the host, before the agent's own arguments.
func TestLaunchArgvClaudeResume(t *testing.T) {
	argv := LaunchArgv(Host{Dest: "box"}, "/l/hivemind-hook", "/r/hivemind-hook",
		Agent{Argv: []string{"claude", "--session-id", "x"}, Pass: []string{"ANTHROPIC_API_KEY"}, ClaudeResume: true})
	got := strings.Join(argv, " ")
	want := "/l/hivemind-hook remote-launch --ssh ssh --dest box --helper /r/hivemind-hook --pass ANTHROPIC_API_KEY --claude-resume -- claude --session-id x"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
