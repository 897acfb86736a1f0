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

// StartServer starts the server of the run args ask for (the command line
// without the program name): the same command line in its own session,
// detached from the terminal, its output appended to the workspace's
// server.log. It returns once the server accepts clients; when the run
// cannot start (a bad flag, a failed preflight, a locked workspace) it
// writes what the server said on stderr and returns its exit code.
func StartServer(o Options, args []string, stderr io.Writer) (sock string, code int) {
	sock, code, err := startServer(o, args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
	}
	return sock, code
}

func startServer(o Options, args []string, stderr io.Writer) (string, int, error) {
	root, err := o.WorkspaceRoot()
	if err != nil {
		return "", ExitError, err
	}
	paths, err := pathsOf(root)
	if err != nil {
		return "", ExitError, err
	}
	if c, info, err := dialServer(paths.sock, proto.KindInfo, "", false); err == nil {
		_ = c.Close()
		return paths.sock, ExitError, fmt.Errorf("a Hivemind server already runs task %s (%s) in %s: hivemind attach --project %s",
			info.TaskID, info.Phase, info.Project, info.Project)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", ExitError, err
	}
	// The log is bounded: a large one becomes server.log.1 (the one
	// before is dropped).
	if fi, err := os.Stat(paths.log); err == nil && fi.Size() > maxServerLog {
		_ = os.Rename(paths.log, paths.log+".1")
	}
	log, err := os.OpenFile(paths.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", ExitError, err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return "", ExitError, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", ExitError, err
	}
	defer r.Close()
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), ServeEnv+"=3")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return "", ExitError, err
	}
	_ = w.Close()
	said, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if strings.HasPrefix(string(said), "ok\n") {
		go func() { _ = cmd.Wait() }() // reaped if it ends while this process runs
		return paths.sock, ExitOK, nil
	}
	werr := cmd.Wait()
	code := ExitError
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	if len(said) == 0 {
		return "", code, fmt.Errorf("the server stopped before it was ready (%v); see %s", werr, paths.log)
	}
	_, _ = stderr.Write(said) // the server's own words (its stderr until it was ready)
	return "", code, nil
}
