package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/hivemind-dev/hivemind/internal/proto"
)

// ServeEnv names the readiness pipe's descriptor in a server StartServer
// started.
const ServeEnv = "HIVEMIND_SERVE_FD"

// maxServerLog is the size at which a server's log is rotated, while it
// runs (serverLog) and when the next server starts.
const maxServerLog = 16 << 20

// ServerChild reports whether this process is a server StartServer
// started; it returns the readiness pipe (close-on-exec from now on, so
// that no agent holds it) and forgets the variable (agents do not see it).
func ServerChild() (io.WriteCloser, bool) {
	v := os.Getenv(ServeEnv)
	if v == "" {
		return nil, false
	}
	_ = os.Unsetenv(ServeEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, false
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "hivemind-ready"), true
}

// AskSandbox starts what a server that could not start says on its
// readiness pipe when its preflight failed only because Claude Code may
// not bypass permissions as root: the starting terminal asks the question
// the one-process run asks (IS_SANDBOX=1?).
const AskSandbox = "hivemind: ask IS_SANDBOX\n"

// StartServer starts the server of the run args ask for (the command line
// without the program name): the same command line in its own session,
// detached from the terminal, its output appended to the workspace's
// server.log. It returns once the server accepts clients; when the run
// cannot start (a bad flag, a failed preflight, a locked workspace) it
// writes what the server said on stderr and returns its exit code. When
// the server's only problem is root without IS_SANDBOX=1, sandbox (nil:
// no terminal to ask on) asks; its yes (it sets IS_SANDBOX=1 in this
// process's environment) starts the server again with it, and its agents
// run with it.
func StartServer(o Options, args []string, stderr io.Writer, sandbox func() bool) (sock string, code int) {
	sock, code, said, err := startServer(o, args)
	if words, root := strings.CutPrefix(said, AskSandbox); root {
		if sandbox != nil && sandbox() {
			return StartServer(o, args, stderr, nil)
		}
		said = words
	}
	_, _ = io.WriteString(stderr, said) // the server's own words (its stderr until it was ready)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
	}
	return sock, code
}

// startServer starts the server and returns what it said when it could
// not start.
func startServer(o Options, args []string) (sock string, code int, said string, err error) {
	root, err := o.WorkspaceRoot()
	if err != nil {
		return "", ExitError, "", err
	}
	paths, err := pathsOf(root)
	if err != nil {
		return "", ExitError, "", err
	}
	if c, info, err := dialServer(paths.sock, proto.KindInfo, "", false); err == nil {
		_ = c.Close()
		return paths.sock, ExitError, "", fmt.Errorf("a Hivemind server already runs task %s (%s) in %s: hivemind attach --project %s",
			info.TaskID, info.Phase, info.Project, info.Project)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", ExitError, "", err
	}
	// The log is bounded: a large one becomes server.log.1 (the one
	// before is dropped).
	if fi, err := os.Stat(paths.log); err == nil && fi.Size() > maxServerLog {
		_ = os.Rename(paths.log, paths.log+".1")
	}
	log, err := os.OpenFile(paths.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", ExitError, "", err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return "", ExitError, "", err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", ExitError, "", err
	}
	defer r.Close()
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), ServeEnv+"=3")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return "", ExitError, "", err
	}
	_ = w.Close()
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if strings.HasPrefix(string(b), "ok\n") {
		go func() { _ = cmd.Wait() }() // reaped if it ends while this process runs
		return paths.sock, ExitOK, "", nil
	}
	werr := cmd.Wait()
	code = ExitError
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	if len(b) == 0 {
		return "", code, "", fmt.Errorf("the server stopped before it was ready (%v); see %s", werr, paths.log)
	}
	return "", code, string(b), nil
}
