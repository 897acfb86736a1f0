// Package remote runs agents on other hosts over OpenSSH, as they are:
// the user's ssh (its config, keys, agent and jump hosts) reaches the
// host, and nothing but Hivemind's own small helper binary is put there.
//
// Three parts:
//
//   - Check: one ssh round trip that says whether a host can run agents
//     (reachable, git, the agent CLI, a writable work dir) and, if not,
//     what exactly to fix, in one line.
//   - Install: the helper (hivemind-hook) copied to
//     ~/.cache/hivemind/helper/<content hash>/ on the host, once per build.
//   - Launch and Run: an agent started under a PTY carried by `ssh -tt`.
//     Locally the launcher (`hivemind-hook remote-launch`, started in the
//     agent's local PTY like any agent) sends the agent's environment to
//     the host in a file only the remote user can read, then becomes ssh
//     with the hook relay's socket forwarded back (-R). Remotely the helper
//     (`hivemind-hook remote-run`) starts the agent and, when the
//     connection drops, the agent exits or it is told to stop, kills
//     everything that carries the session's mark. A helper killed outright
//     leaves a record that Reap (`hivemind-hook remote-reap`) acts on.
//
// Everything here uses the standard library only: the hook binary links
// this package and must start fast.
package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Host is one remote host agents can run on.
type Host struct {
	Name string // config name, used in messages ("buildbox")
	// Dest is the ssh destination: anything ssh accepts (an alias of
	// ~/.ssh/config, user@host, ssh://user@host:port).
	Dest string
	// SSHArgs are extra ssh options, before the destination ("-F", file;
	// "-J", jump). They take precedence over Hivemind's own options.
	SSHArgs []string
	// Dir is the remote work directory; "~/…" is under the remote home.
	Dir string
	// Agent is the agent CLI Check looks for ("claude"); "" checks none.
	Agent string
	// SSH is the ssh program (default "ssh").
	SSH string
}

func (h Host) label() string {
	if h.Name != "" {
		return h.Name
	}
	return h.Dest
}

func (h Host) sshBin() string {
	if h.SSH != "" {
		return h.SSH
	}
	return "ssh"
}

// sshArgv is the ssh command line running script (a POSIX sh script,
// whatever the remote login shell is) with extra ssh options.
func (h Host) sshArgv(opts []string, script string) []string {
	a := append([]string{h.sshBin()}, h.SSHArgs...)
	// BatchMode: never a password or passphrase prompt (Hivemind owns the
	// terminal); the keepalives notice a dead connection within ~15 s.
	a = append(a, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
	a = append(a, opts...)
	// "--": a destination starting with "-" is never taken for an option.
	return append(a, "--", h.Dest, remoteShell(script))
}

// remoteShell wraps a script for the remote login shell, which may be
// csh or fish: a single-quoted one-line argument to /bin/sh.
func remoteShell(script string) string {
	return "exec /bin/sh -c " + shq(script)
}

// shq quotes s for sh when it holds anything but safe characters.
func shq(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dirExpr is a sh expression for a remote path: "~" and "~/…" are under
// $HOME, the rest is quoted.
func dirExpr(p string) string {
	switch {
	case p == "" || p == "~":
		return `"$HOME"`
	case strings.HasPrefix(p, "~/"):
		return `"$HOME"/` + shq(strings.TrimPrefix(p, "~/"))
	}
	return shq(p)
}

// run runs script on the host and returns its standard output. An ssh
// failure (exit 255) is diagnosed in one line; a failing script returns
// its exit status and standard error.
func (h Host) run(ctx context.Context, opts []string, script string, stdin io.Reader) (string, error) {
	return h.runMax(ctx, opts, script, stdin, 1<<20)
}

// runMax is run keeping at most max bytes of the standard output.
func (h Host) runMax(ctx context.Context, opts []string, script string, stdin io.Reader, max int) (string, error) {
	argv := h.sshArgv(opts, script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &limited{w: &out, n: max}, &limited{w: &errb, n: 64 << 10}
	// A ControlPersist master forked by this ssh must not hold the pipes.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return out.String(), nil
	}
	if _, lookErr := exec.LookPath(argv[0]); lookErr != nil {
		return "", fmt.Errorf("%s: %s not found locally — install the OpenSSH client", h.label(), argv[0])
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s: ssh %s: no answer in time (%v) — check the network and that sshd answers there", h.label(), h.Dest, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 255 {
		return "", &SSHError{Host: h.label(), Dest: h.Dest, Stderr: errb.String()}
	}
	return out.String(), fmt.Errorf("%s: remote command failed (%v): %s", h.label(), err, firstLine(errb.String()))
}

// SSHError is a connection failure: ssh itself exited 255.
type SSHError struct {
	Host, Dest string
	Stderr     string // what ssh printed
}

// Error is the one-line diagnosis: what ssh said and what to check.
func (e *SSHError) Error() string {
	said := sshSaid(e.Stderr)
	return fmt.Sprintf("%s: ssh: %s — %s", e.Host, said, sshHint(said, e.Dest))
}

// sshSaid picks ssh's message from its standard error: the last line
// that is not a warning, without the "ssh: " prefix and final period.
func sshSaid(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	said := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(strings.TrimRight(lines[i], "\r"))
		if l == "" || strings.HasPrefix(l, "Warning:") || strings.HasPrefix(l, "**") {
			continue
		}
		said = l
		break
	}
	if said == "" {
		return "connection failed (ssh printed nothing)"
	}
	said = strings.TrimPrefix(said, "ssh: ")
	// "user@host: Permission denied (publickey)." → without the address,
	// which the hint names.
	if i := strings.Index(said, ": Permission denied"); i >= 0 {
		said = said[i+2:]
	}
	return strings.TrimSuffix(clip(said, 200), ".")
}

// sshHint says what to check for a known ssh failure.
func sshHint(said, dest string) string {
	l := strings.ToLower(said)
	switch {
	case strings.Contains(l, "permission denied"):
		return "check the key / ssh-agent for " + dest + " (try: ssh -v " + dest + ")"
	case strings.Contains(l, "connection refused"):
		return "is sshd running there, on that port? (try: ssh -v " + dest + ")"
	case strings.Contains(l, "could not resolve hostname"), strings.Contains(l, "name or service not known"):
		return "check the host name, or its Host entry in ~/.ssh/config"
	case strings.Contains(l, "host key verification failed"), strings.Contains(l, "remote host identification has changed"):
		return "the host key is unknown or changed: connect once by hand (ssh " + dest + ") to verify it"
	case strings.Contains(l, "timed out"), strings.Contains(l, "no route to host"), strings.Contains(l, "network is unreachable"):
		return "the host is unreachable from here (network, VPN, firewall?)"
	case strings.Contains(l, "connection closed"), strings.Contains(l, "connection reset"):
		return "the server closed the connection (sshd limits, AllowUsers, or a firewall?)"
	}
	return "try: ssh -v " + dest
}

// firstLine is the first line of what ssh or the remote end printed, for a
// one-line error: never empty ("no message") and at most 200 runes, since
// the other end may print anything.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no message"
	}
	return clip(s, 200)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// limited writes at most n bytes to w and drops the rest (ssh and the
// remote side are not trusted to be brief).
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

// MinGit is the oldest git the remote side may have (worktrees, and
// `git worktree list --porcelain` as gitwork reads it).
var MinGit = [2]int{2, 20}

// Report is what Check found on a host.
type Report struct {
	Home         string // remote $HOME
	User         string
	OS, Arch     string // Go names (linux, amd64); "" when unknown
	Uname        string // `uname -sm`
	Path         string // the remote PATH of a non-interactive ssh session
	Git          string // `git --version`; "" when missing
	Agent        string // the agent's `--version` line; "" when missing
	Dir          string // the work dir, expanded
	DirWritable  bool
	dirErr       string
	agentPresent bool
}

// CheckError lists what is wrong with a host, in one line.
type CheckError struct {
	Host     string
	Problems []string
}

func (e *CheckError) Error() string {
	return e.Host + ": " + strings.Join(e.Problems, "; ")
}

// checkScript prints key=value lines about the host. One round trip.
func checkScript(agent, dir string) string {
	s := `echo "home=$HOME"; echo "user=$(id -un 2>/dev/null)"; echo "uname=$(uname -sm 2>/dev/null)"; echo "path=$PATH"; ` +
		`if command -v git >/dev/null 2>&1; then echo "git=$(git --version 2>&1 | head -n 1)"; else echo "git="; fi; `
	if agent != "" {
		s += `a=` + shq(agent) + `; if command -v "$a" >/dev/null 2>&1; then echo "agentok=1"; echo "agent=$("$a" --version </dev/null 2>&1 | head -n 1)"; fi; `
	}
	s += `mkdir -p "$HOME"/.cache/hivemind/run; d=` + dirExpr(dir) + `; echo "dir=$d"; ` +
		`if e=$( { mkdir -p "$d" && t=$(mktemp "$d/.hivemind-probe.XXXXXX") && rm -f "$t"; } 2>&1 ); then echo "dirok=1"; else echo "direrr=$(printf %s "$e" | head -n 1)"; fi`
	return s
}

// Check tells whether the host can run agents: ssh reaches it without a
// prompt, git (MinGit or newer) and the agent CLI are on its PATH, and
// the work dir is (or can be made) writable. The error, a *SSHError or
// *CheckError, is one line naming each problem and its fix.
func Check(ctx context.Context, h Host) (Report, error) {
	out, err := h.run(ctx, nil, checkScript(h.Agent, h.Dir), nil)
	if err != nil {
		return Report{}, err
	}
	r := parseReport(out)
	var probs []string
	if r.Git == "" {
		probs = append(probs, fmt.Sprintf("git not found on the remote PATH (%s) — install git there", r.Path))
	} else if v, ok := gitVersion(r.Git); !ok || v[0] < MinGit[0] || (v[0] == MinGit[0] && v[1] < MinGit[1]) {
		probs = append(probs, fmt.Sprintf("%s is older than git %d.%d — upgrade git there", r.Git, MinGit[0], MinGit[1]))
	}
	if h.Agent != "" && !r.agentPresent {
		probs = append(probs, fmt.Sprintf("%s not found on the remote PATH (%s) — install it there, or put its directory on the PATH of non-interactive ssh sessions", h.Agent, r.Path))
	}
	if !r.DirWritable {
		probs = append(probs, fmt.Sprintf("work dir %s is not writable by %s (%s) — create it or choose another dir", r.Dir, r.User, r.dirErr))
	}
	if err := checkForwarding(ctx, h, r.Home, r.User); err != nil {
		probs = append(probs, err.Error())
	}
	if len(probs) > 0 {
		return r, &CheckError{Host: h.label(), Problems: probs}
	}
	return r, nil
}

// checkForwarding asks sshd to forward a unix socket from the host back
// here, as every agent's hook relay needs. Servers hardened with
// DisableForwarding, AllowStreamLocalForwarding no or (OpenSSH 9.2 checks
// it for unix sockets too) AllowTcpForwarding no refuse it.
func checkForwarding(ctx context.Context, h Host, home, user string) error {
	if !strings.HasPrefix(home, "/") {
		return fmt.Errorf("the remote $HOME %q is not an absolute path", home)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := home + "/.cache/hivemind/run"
	sock := dir + "/probe-" + hex.EncodeToString(b[:]) + ".sock"
	if len(sock) >= maxSocketPath {
		return fmt.Errorf("the remote home %s is too long for a unix socket path under it (%d bytes, at most %d)", home, len(sock), maxSocketPath)
	}
	// The local end is never connected to: any path will do. The dir must
	// exist before ssh asks for the forward, hence the first connection
	// of Check creating it (mkdir in the script below runs too late).
	opts := []string{"-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "ExitOnForwardFailure=yes",
		"-R", sock + ":" + filepath.Join(os.TempDir(), "hivemind-probe.sock")}
	_, err := h.run(ctx, opts, "rm -f "+shq(sock), nil)
	var se *SSHError
	if errors.As(err, &se) && strings.Contains(se.Stderr, "forwarding failed") {
		return fmt.Errorf("sshd refuses to forward a unix socket back (the hook relay needs it) — allow it in the host's sshd_config: AllowStreamLocalForwarding yes and AllowTcpForwarding yes, no DisableForwarding (or in a Match User %s block)", user)
	}
	if err != nil {
		return fmt.Errorf("forwarding probe: %v", err)
	}
	return nil
}

func parseReport(out string) Report {
	var r Report
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = clip(strings.TrimSpace(v), 300)
		switch k {
		case "home":
			r.Home = v
		case "user":
			r.User = v
		case "uname":
			r.Uname = v
			r.OS, r.Arch = goPlatform(v)
		case "path":
			r.Path = v
		case "git":
			r.Git = v
		case "agentok":
			r.agentPresent = true
		case "agent":
			r.Agent = v
		case "dir":
			r.Dir = v
		case "dirok":
			r.DirWritable = true
		case "direrr":
			r.dirErr = v
		}
	}
	return r
}

// gitVersion reads major and minor from `git --version` ("git version
// 2.39.5", "git version 2.39.3 (Apple Git-146)").
func gitVersion(s string) ([2]int, bool) {
	rest, ok := strings.CutPrefix(s, "git version ")
	words := strings.Fields(rest)
	if !ok || len(words) == 0 {
		return [2]int{}, false
	}
	f := strings.SplitN(words[0], ".", 3)
	if len(f) < 2 {
		return [2]int{}, false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	return [2]int{a, b}, err1 == nil && err2 == nil
}

// goPlatform maps `uname -sm` to Go's GOOS and GOARCH.
func goPlatform(uname string) (goos, goarch string) {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return "", ""
	}
	goos = strings.ToLower(f[0])
	switch f[1] {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64":
		goarch = "arm64"
	case "i386", "i686":
		goarch = "386"
	case "armv7l", "armv6l":
		goarch = "arm"
	default:
		goarch = f[1]
	}
	return goos, goarch
}
