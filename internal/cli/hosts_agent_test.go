package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/sshtest"
)

// `hivemind hosts` runs the workers' CLI's own checks on the host, as the
// preflight runs them here: a Claude Code that is not the tested version
// and not logged in there fails the host, naming both; the run's API
// settings reach the host's checks (its network check dials the
// ANTHROPIC_BASE_URL given here, from the host).
func TestHostsRunAgentChecksThere(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	bin := filepath.Join(s.Home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(bin, "claude")
	script := "#!/bin/sh\ncase \"$1\" in\n--version) echo '2.1.332 (Claude Code)';;\nauth) echo '{\"loggedIn\": false}';;\nesac\n"
	if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chown(bin, s.UID, s.GID)
	_ = os.Chown(claude, s.UID, s.GID)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("ANTHROPIC_BASE_URL", "http://"+ln.Addr().String())
	project := hostsProject(t, s, "agent = "+strconv.Quote(claude)+"\n")

	var out, errOut strings.Builder
	code := Run([]string{"--project", project, "--agent", "claude", "hosts"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitError {
		t.Errorf("exit %d, want %d (not logged in on the host)\n%s%s", code, app.ExitError, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{"box: claude version", "tested with 2.1.197; you have 2.1.332", "box: claude login", "Claude Code is not logged in", "box: claude network"} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cannot reach") {
		t.Errorf("the host's network check did not use the run's ANTHROPIC_BASE_URL:\n%s", got)
	}
}
