package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
)

// A web_listen that is not loopback is refused before anything starts
// (no server, no task), unless --web-remote; the error names ssh -L.
func TestWebListenNotLoopbackRefused(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	project := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("web_listen = \"0.0.0.0:0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Run([]string{"--web", "--project", project, "--config", cfg, "--agent", "sim", "build a tiny calculator"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitUsage || !strings.Contains(errOut.String(), "ssh -L") || !strings.Contains(errOut.String(), "--web-remote") {
		t.Fatalf("exit %d, stderr %q: want 2 and a refusal naming ssh -L and --web-remote", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(project, ".hivemind", "tasks")); !os.IsNotExist(err) {
		t.Fatalf("a task was created: %v", err)
	}
}
