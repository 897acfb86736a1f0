package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the wrapper: `<test> sandbox-exec …`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// requireLandlock skips t where the kernel has no Landlock.
func requireLandlock(t *testing.T) {
	t.Helper()
	if !Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
}

func TestWrapUnwrap(t *testing.T) {
	argv := Wrap("/x/hivemind-hook", []string{"/a", "/b c"}, []string{"sh", "-c", "--rw /z"})
	if argv[0] != "/x/hivemind-hook" || argv[1] != Command {
		t.Fatalf("Wrap = %q", argv)
	}
	w, a, err := Unwrap(argv[2:])
	if err != nil || !slices.Equal(w, []string{"/a", "/b c"}) || !slices.Equal(a, []string{"sh", "-c", "--rw /z"}) {
		t.Fatalf("Unwrap = %q %q %v", w, a, err)
	}
	for _, bad := range [][]string{{}, {"--rw", "rel", "--", "x"}, {"--"}, {"-x", "--", "y"}, {"--rw", "/a"}} {
		if _, _, err := Unwrap(bad); err == nil {
			t.Errorf("Unwrap(%q) accepted", bad)
		}
	}
}

func TestDedup(t *testing.T) {
	got := Dedup([]string{"/a/b", "/a", "", "rel", "/ab", "/a/", "/c//d/"})
	if want := []string{"/a", "/ab", "/c/d"}; !slices.Equal(got, want) {
		t.Fatalf("Dedup = %q, want %q", got, want)
	}
}

func TestStatusSaysWhetherConfined(t *testing.T) {
	s := Status()
	if Available() != strings.HasPrefix(s, "write scopes: on") {
		t.Fatalf("Status %q with ABI %d", s, ABI())
	}
	if !Available() && s != StatusOff {
		t.Fatalf("Status %q", s)
	}
}

// confined runs script under sh in the sandbox with writes allowed only
// beneath allow; it returns the combined output.
func confined(t *testing.T, allow []string, script string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, Wrap(exe, allow, []string{"sh", "-c", script})[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// A hostile agent tries every way to write outside its scope: directly,
// from a child shell, from a double-forked orphan in a new session, by
// renaming or linking a file out, by removing, and by signalling its
// parent. Each is refused by the kernel; writes inside the scope work.
func TestHostileWritesRefused(t *testing.T) {
	requireLandlock(t)
	root := t.TempDir()
	own, other := filepath.Join(root, "own"), filepath.Join(root, "other")
	for _, d := range []string{own, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(other, "state.json")
	if err := os.WriteFile(keep, []byte("engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
set -u
try() { if ( eval "$2" ) 2>/dev/null; then echo "ALLOWED $1"; else echo "refused $1"; fi; }
try write "echo x > $OTHER/new"
try truncate "echo x > $OTHER/state.json"
try append "echo x >> $OTHER/state.json"
try child "sh -c 'echo x > $OTHER/child'"
try remove "rm -f $OTHER/state.json"
try mkdir "mkdir $OTHER/d"
try symlink "ln -s /etc $OTHER/l"
echo mine > $OWN/f
try rename "mv $OWN/f $OTHER/moved"
try link "ln $OWN/f $OTHER/hard"
try kill "kill -0 $PPID_OUT"
echo inside > $OWN/ok && echo wrote-own
echo x > /dev/null && echo wrote-null
setsid sh -c "sh -c 'echo x > $OTHER/orphan 2>/dev/null; echo \$? > $OWN/orphan.rc' &" 
`
	t.Setenv("OWN", own)
	t.Setenv("OTHER", other)
	t.Setenv("PPID_OUT", strconv.Itoa(os.Getpid()))
	out, err := confined(t, []string{own}, script)
	if err != nil {
		t.Fatalf("confined script: %v\n%s", err, out)
	}
	if strings.Contains(out, "ALLOWED") {
		t.Errorf("a write outside the scope was allowed:\n%s", out)
	}
	for _, w := range []string{"refused write", "refused truncate", "refused child", "refused remove",
		"refused mkdir", "refused symlink", "refused rename", "refused link", "refused kill", "wrote-own", "wrote-null"} {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in:\n%s", w, out)
		}
	}
	// The double-forked orphan outlives the script: wait for its report.
	rc := waitFile(t, filepath.Join(own, "orphan.rc"))
	if strings.TrimSpace(rc) == "0" {
		t.Errorf("an orphan in a new session wrote outside the scope")
	}
	if b, _ := os.ReadFile(keep); string(b) != "engine" {
		t.Errorf("state.json = %q", b)
	}
	entries, _ := os.ReadDir(other)
	if len(entries) != 1 {
		t.Errorf("other holds %d entries, want only state.json", len(entries))
	}
}

// A command the wrapper cannot run is reported (exit 127, named), and
// nothing runs.
func TestWrapperReportsFailures(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, Command, "--", "/nonexistent/agent")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(string(b), "/nonexistent/agent") {
		t.Fatalf("missing command: %v %q", err, b)
	}
}

func waitFile(t *testing.T, p string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never written", p)
	return ""
}
