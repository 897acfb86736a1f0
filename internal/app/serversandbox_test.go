package app

import (
	"io"
	"os"
	"strings"
	"testing"
)

// sandboxServerEnv makes this test binary a server StartServer started
// (TestStartServerAsksSandbox): it is ready only with IS_SANDBOX=1, and
// says its preflight failed on the root check alone otherwise.
const sandboxServerEnv = "HIVEMIND_TEST_SANDBOX_SERVER"

const rootFailure = "hivemind: the agents cannot start; nothing was started or created:\n  fail  claude as root   running as root — fix: run IS_SANDBOX=1 hivemind …\n"

// On the --server path the question the one-process run asks as root
// (IS_SANDBOX=1?) is asked by the starting terminal before the server
// detaches: yes starts the server again with IS_SANDBOX=1 in its
// environment (its agents inherit it); no, or no terminal to ask on, says
// why it did not start and the fix, and starts nothing.
func TestStartServerAsksSandbox(t *testing.T) {
	if os.Getenv(sandboxServerEnv) != "" {
		ready, ok := ServerChild()
		if !ok {
			os.Exit(9)
		}
		if os.Getenv("IS_SANDBOX") == "1" {
			_, _ = io.WriteString(ready, "ok\n")
			_ = ready.Close()
			return
		}
		_, _ = io.WriteString(ready, AskSandbox+rootFailure)
		_ = ready.Close()
		os.Exit(ExitError)
	}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv(sandboxServerEnv, "1")
	args := []string{"-test.run=^TestStartServerAsksSandbox$", "-test.count=1"}
	for _, tc := range []struct {
		name   string
		ask    bool // a terminal to ask on
		answer bool
		code   int
	}{{"headless", false, false, ExitError}, {"no", true, false, ExitError}, {"yes", true, true, ExitOK}} {
		t.Setenv("IS_SANDBOX", "")
		o := Options{Workspace: t.TempDir()}
		asked := 0
		var sandbox func() bool
		if tc.ask {
			sandbox = func() bool {
				asked++
				if tc.answer {
					_ = os.Setenv("IS_SANDBOX", "1") // as the question's yes does
				}
				return tc.answer
			}
		}
		var stderr strings.Builder
		_, code := StartServer(o, args, &stderr, sandbox)
		if code != tc.code || (tc.ask && asked != 1) {
			t.Errorf("%s: exit %d, asked %d times; want %d, asked once on a terminal\n%s", tc.name, code, asked, tc.code, stderr.String())
		}
		switch {
		case strings.Contains(stderr.String(), AskSandbox):
			t.Errorf("%s: the question's mark was printed:\n%s", tc.name, stderr.String())
		case tc.code != ExitOK && stderr.String() != rootFailure:
			t.Errorf("%s: said\n%s\nwant the server's reason and fix:\n%s", tc.name, stderr.String(), rootFailure)
		case tc.code == ExitOK && stderr.Len() > 0:
			t.Errorf("%s: said %q", tc.name, stderr.String())
		}
	}
}
