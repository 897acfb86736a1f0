package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
)

// Variables of the remote side.
const (
	// localMarkEnv is ptyagent's session mark. It is not sent: on a host
	// that is this machine (tests) the local session would take the
	// remote processes for its own.
	localMarkEnv = "HIVEMIND_SESSION_MARK"
	// MarkEnv marks every remote process of one session, so the helper
	// (and Reap) find them all, whatever session or parent they have.
	MarkEnv = "HIVEMIND_REMOTE_MARK"
)

// Agent is one agent command to run on a host.
type Agent struct {
	Argv []string // command and arguments, looked up on the remote PATH
	// Pass names the local environment variables sent to the agent besides
	// every HIVEMIND_* one (ANTHROPIC_API_KEY, say). Values travel in a
	// file only the remote user can read, never on a command line.
	Pass []string
	// ClaudeResume: Argv is Claude Code's with `--session-id <id>`, to be
	// started as `--resume <id>` when the host saved that conversation
	// (the helper looks, on the host, as it starts the agent).
	ClaudeResume bool
}

// LaunchArgv is the local command line that runs the agent on the host
// under a PTY: helper is the local hivemind-hook, remoteHelper the path
// Install returned. Start it in a local PTY (ptyagent) with the agent's
// HIVEMIND_* environment, as a local agent.
func LaunchArgv(h Host, helper, remoteHelper string, a Agent) []string {
	argv := []string{helper, "remote-launch", "--ssh", h.sshBin(), "--dest", h.Dest, "--helper", remoteHelper}
	if h.Dir != "" {
		argv = append(argv, "--dir", h.Dir)
	}
	for _, o := range h.SSHArgs {
		argv = append(argv, "--ssh-arg", o)
	}
	for _, p := range a.Pass {
		argv = append(argv, "--pass", p)
	}
	if a.ClaudeResume {
		argv = append(argv, claudeResumeFlag)
	}
	return append(append(argv, "--"), a.Argv...)
}

type strList []string

func (l *strList) String() string     { return strings.Join(*l, ",") }
func (l *strList) Set(s string) error { *l = append(*l, s); return nil }

// maxSocketPath bounds a unix socket path (sun_path is 104 bytes on the
// BSDs and macOS, 108 on Linux).
const maxSocketPath = 100

// ValidMark reports whether s has the shape of a session mark (ptyagent's
// "<pid>-<16 hex>"), the only names a run dir may have. No regexp: the
// hook binary compiles nothing at start-up.
func ValidMark(s string) bool {
	pid, hexPart, ok := strings.Cut(s, "-")
	if !ok || pid == "" || len(hexPart) != 16 {
		return false
	}
	return strings.Trim(pid, "0123456789") == "" && strings.Trim(hexPart, "0123456789abcdef") == ""
}

// Launch is `hivemind-hook remote-launch`: it sends the agent's
// environment to the host, then replaces itself with `ssh -tt`, which
// carries the local PTY to a remote one and forwards the remote hook
// socket to the local relay. It returns only on failure, having printed
// why on stderr (the agent's screen): the exit status.
func Launch(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("remote-launch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sshArgs, pass strList
	ssh := fs.String("ssh", "ssh", "ssh program")
	dest := fs.String("dest", "", "ssh destination")
	helper := fs.String("helper", "", "the helper's path on the host")
	dir := fs.String("dir", "", "remote work directory")
	fs.Var(&sshArgs, "ssh-arg", "extra ssh option (repeatable)")
	fs.Var(&pass, "pass", "environment variable to send (repeatable)")
	claudeResume := fs.Bool(strings.TrimPrefix(claudeResumeFlag, "--"), false, "resume the Claude session of --session-id when the host saved it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	argv := fs.Args()
	if *dest == "" || *helper == "" || len(argv) == 0 {
		fmt.Fprintln(stderr, "usage: hivemind-hook remote-launch --dest D --helper P [--dir D] [--ssh-arg A]… [--pass NAME]… [--claude-resume] -- command…")
		return 2
	}
	h := Host{Dest: *dest, SSHArgs: sshArgs, SSH: *ssh}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "hivemind: remote agent: %v\r\n", err)
		var se *SSHError
		if errors.As(err, &se) {
			// The host cannot be reached: ssh's own status, so the
			// caller tells it from the agent's failure.
			return 255
		}
		return 1
	}
	id := os.Getenv(localMarkEnv)
	if !ValidMark(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	}
	env := remoteEnv(os.Environ(), pass, id)
	localSock := os.Getenv(hookrelay.EnvHookSocket)

	// The run dir first (its absolute path names the remote socket), with
	// the environment in it. Never as a master of shared connections: one
	// born here would live in the agent's process tree and die with it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	out, err := h.run(ctx, []string{"-o", "ControlMaster=no"},
		`umask 077; r="$HOME"/.cache/hivemind/run/`+id+`; mkdir -p "$r" && cat > "$r/env" && echo "$r"`,
		bytes.NewReader(env))
	cancel()
	if err != nil {
		return fail(err)
	}
	run := strings.TrimSpace(out)
	sock := run + "/hook.sock"
	if !strings.HasPrefix(run, "/") || len(sock) >= maxSocketPath {
		return fail(fmt.Errorf("%s: remote run dir %q unusable (a socket path must be absolute and under %d bytes)", *dest, clip(run, 120), maxSocketPath))
	}
	// A start that fails before the helper runs removes the run dir: the
	// environment file in it holds secrets.
	script := `r=` + shq(run) + `; h=` + shq(*helper) + `; cd ` + dirExpr(*dir) + ` || { rm -rf "$r"; exit 1; }; ` +
		`if [ ! -x "$h" ]; then rm -rf "$r"; echo "hivemind: $h is missing on this host: install the helper again (hivemind hosts)" >&2; exit 1; fi; ` +
		`exec "$h" remote-run "$r"`
	if *claudeResume {
		script += " " + claudeResumeFlag
	}
	script += " --"
	for _, a := range argv {
		script += " " + shq(a)
	}
	opts := []string{
		"-tt",        // a remote PTY, the local one in raw mode
		"-e", "none", // no escape character: "~." typed to an agent stays text
		"-o", "ControlMaster=no", "-o", "ControlPath=none", // its own connection: killing ssh ends it all
		"-o", "ExitOnForwardFailure=yes",
	}
	if localSock != "" {
		opts = append(opts, "-R", sock+":"+localSock)
	}
	sshArgv := h.sshArgv(opts, script)
	bin, err := exec.LookPath(sshArgv[0])
	if err != nil {
		return fail(fmt.Errorf("%s: %s not found locally — install the OpenSSH client", *dest, sshArgv[0]))
	}
	// exec keeps the pid, the PTY and the session's mark: to ptyagent the
	// ssh process is the agent.
	err = syscall.Exec(bin, sshArgv, os.Environ())
	return fail(fmt.Errorf("%s: exec %s: %w", *dest, bin, err))
}

// remoteEnv is the agent's environment for the host, NUL-separated: every
// HIVEMIND_* variable but the local socket and mark, the passed ones, the
// colour capability (TERM travels with the PTY request) and the remote
// mark. The remote helper adds the hook socket's path.
func remoteEnv(local, pass []string, id string) []byte {
	var b bytes.Buffer
	for _, kv := range local {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == localMarkEnv, name == hookrelay.EnvHookSocket, name == MarkEnv:
			continue
		case strings.HasPrefix(name, "HIVEMIND_"), name == "COLORTERM", slices.Contains(pass, name):
			b.WriteString(kv)
			b.WriteByte(0)
		}
	}
	b.WriteString(MarkEnv + "=" + id)
	b.WriteByte(0)
	return b.Bytes()
}
