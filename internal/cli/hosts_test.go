package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/internal/sshtest"
)

// hostsProject is a project whose config names the sshtest server as the
// host "box" (plus extra config text).
func hostsProject(t *testing.T, s *sshtest.Server, extra string) string {
	t.Helper()
	project := t.TempDir()
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[hosts.box]\nssh = " + strconv.Quote(s.Alias) + "\nssh_options = [\"-F\", " + strconv.Quote(s.Config) + "]\n" + extra
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return project
}

// helperBeside builds hivemind-hook beside the test binary, where a run
// finds the helper it copies to hosts (remote.HelperFor), as `make build`
// puts it beside hivemind.
func helperBeside(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(self), remote.HelperName)
	if out, err := exec.Command("go", "build", "-o", p, "../../cmd/hivemind-hook").CombinedOutput(); err != nil {
		t.Fatalf("go build hivemind-hook: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = os.Remove(p) })
}

// `hivemind hosts`: a line per host, ok with versions or the one-line
// diagnosis; exit 1 when one is broken. The preflight of a run placed on
// the broken host stops it with the same line.
func TestHostsCommand(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	helperBeside(t)
	s.AddAlias("hm-badkey", sshtest.AliasOptions{UnknownKey: true})
	project := hostsProject(t, s, "\n[hosts.broken]\nssh = \"hm-badkey\"\nssh_options = [\"-F\", "+strconv.Quote(s.Config)+"]\n")

	var out, errOut strings.Builder
	code := Run([]string{"--project", project, "--agent", "sim", "hosts"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitError {
		t.Errorf("exit %d, want %d\n%s%s", code, app.ExitError, out.String(), errOut.String())
	}
	// A line per host; its checks on the host indented below it.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, " ") {
			lines = append(lines, l)
		}
	}
	if !strings.Contains(out.String(), "ok    box: hivemind hook ") {
		t.Errorf("no hook readiness line for box:\n%s", out.String())
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ok    box: "+s.User+"@Linux") || !strings.Contains(lines[0], "git version") ||
		!strings.HasPrefix(lines[1], "fail  broken: ssh: ") || !strings.Contains(lines[1], "Permission denied") {
		t.Errorf("hosts output:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "1 of 2 hosts cannot run agents") {
		t.Errorf("stderr: %s", errOut.String())
	}

	// A run with a worker on the broken host stops at the preflight.
	out.Reset()
	errOut.Reset()
	code = Run([]string{"--headless", "--project", project, "--agent", "sim", "--workers", "1@broken", "fix the login bug"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitError || !strings.Contains(errOut.String(), "fail  host broken") || !strings.Contains(errOut.String(), "Permission denied") {
		t.Errorf("run on a broken host: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	// doctor checks the hosts the run would use.
	out.Reset()
	errOut.Reset()
	code = Run([]string{"--project", project, "--agent", "sim", "--workers", "1@box", "doctor"}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitOK || !strings.Contains(out.String(), "ok    host box") {
		t.Errorf("doctor: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
