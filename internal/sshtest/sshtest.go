// Package sshtest runs a real OpenSSH server on this machine as a "remote
// host" for tests: a second Unix user with its own home, reached over
// loopback with throwaway keys, so code that drives `ssh` is tested against
// the real client and server rather than a fake.
//
// It installs nothing: it needs Debian's openssh-server (/usr/sbin/sshd)
// and ssh-keygen, and root (to create the user and to start sshd, which
// must switch users). Without them the test is skipped with the reason.
// Each Server has its own sshd on a free loopback port with a private
// sshd_config, keys, known_hosts and an ssh_config, so a test runs plain
// `ssh -F s.Config s.Alias …`.
package sshtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/procenv"
)

// DefaultUser is the Unix user that plays the remote host.
const DefaultUser = "hivemind-remote"

// SSHD is the OpenSSH server binary the harness runs.
const SSHD = "/usr/sbin/sshd"

// instanceEnv is set (by sshd's SetEnv) in every session of one Server,
// so Procs and the clean-up find exactly that server's remote processes.
const instanceEnv = "HIVEMIND_SSHTEST"

// Options configure a Server; the zero value is the default.
type Options struct {
	User  string // default DefaultUser
	Alias string // Host alias in the ssh_config (default "hm-remote")
	// ReadyTimeout bounds the wait for sshd to listen (default 20 s).
	ReadyTimeout time.Duration
	// SSHDConfig lines come before the harness's own (for most keywords
	// sshd takes the first value): "AllowTcpForwarding no", say.
	SSHDConfig []string
}

// Server is one running sshd and the files a client needs to reach it.
type Server struct {
	Alias string // Host alias of the ssh_config
	User  string // remote user name
	UID   int
	GID   int
	// Home is the remote sessions' $HOME: a fresh directory of this
	// server's (sshd sets HOME to it), so servers sharing the user do not
	// share state. The user's own home is only the sessions' first cwd.
	Home   string
	Port   int
	Dir    string // everything of this server: keys, configs, control sockets
	Config string // ssh_config: `ssh -F Config Alias`

	id     string
	t      testing.TB
	hostPK string // host public key line, for known_hosts
	mu     sync.Mutex
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}
	nkeys  int
	once   sync.Once
	// hostKey, extra and ready start sshd again (Up).
	hostKey string
	extra   []string
	ready   time.Duration
}

// Start starts a server for the test and stops it at the test's end.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sshtest: needs root (to create the remote user and run sshd)")
	}
	if _, err := os.Stat(SSHD); err != nil {
		t.Skipf("sshtest: %s missing: install Debian's openssh-server (apt-get install openssh-server)", SSHD)
	}
	for _, b := range []string{"ssh", "ssh-keygen", "useradd", "usermod"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("sshtest: %s not found: %v", b, err)
		}
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Alias == "" {
		o.Alias = "hm-remote"
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 20 * time.Second
	}
	s := &Server{Alias: o.Alias, User: o.User, t: t, id: randHex(8)}
	if err := s.ensureUser(); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	// Short and readable by the remote user: sshd reads the authorized
	// keys as that user, and the user's sessions read PathWithout dirs.
	dir, err := os.MkdirTemp("", "sshtest-")
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	s.Home = filepath.Join(dir, "home")
	if err := os.Mkdir(s.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(s.Home, s.UID, s.GID); err != nil {
		t.Fatal(err)
	}
	// sshd's privilege separation directory; Debian's service creates it
	// at boot, which a container without the service never does.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	s.keygen(hostKey)
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	s.hostPK = strings.TrimSpace(string(pub))
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Config = filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(s.Config, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	s.hostKey, s.extra, s.ready = hostKey, o.SSHDConfig, o.ReadyTimeout
	var lastErr error
	for try := 0; try < 5; try++ {
		// Another process may take the free port before sshd binds it:
		// then sshd exits at once and we try another.
		if lastErr = s.startSSHD(0); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("sshtest: %v", lastErr)
	}
	s.AddAlias(o.Alias, AliasOptions{})
	return s
}

// ensureUser creates the remote user with a home when missing (idempotent)
// and makes sure sshd does not take the account for a locked one.
func (s *Server) ensureUser() error {
	if _, err := user.Lookup(s.User); err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return fmt.Errorf("look up user %s: %w", s.User, err)
		}
		// Password "*": useradd's default "!" marks the account locked,
		// and without PAM sshd refuses even key logins to it.
		out, err := accountTool("useradd", "--create-home", "--shell", "/bin/sh", "--password", "*", s.User)
		// A concurrent test package may have created it meanwhile.
		if err != nil && !bytes.Contains(out, []byte("already exists")) {
			return fmt.Errorf("useradd %s: %v: %s", s.User, err, out)
		}
	}
	if locked(s.User) {
		if out, err := accountTool("usermod", "--password", "*", s.User); err != nil {
			return fmt.Errorf("usermod --password '*' %s: %v: %s", s.User, err, out)
		}
	}
	u, err := user.Lookup(s.User)
	if err != nil {
		return fmt.Errorf("look up user %s: %w", s.User, err)
	}
	s.UID, _ = strconv.Atoi(u.Uid)
	s.GID, _ = strconv.Atoi(u.Gid)
	if err := os.MkdirAll(u.HomeDir, 0o755); err != nil {
		return err
	}
	return os.Chown(u.HomeDir, s.UID, s.GID)
}

// accountTool runs useradd or usermod, again (a few times, backing off)
// while another process holds the lock of /etc/passwd: test packages run
// in parallel, and each starts servers.
func accountTool(name string, args ...string) ([]byte, error) {
	wait := 50 * time.Millisecond
	for try := 0; ; try++ {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err == nil || try == 6 || !bytes.Contains(out, []byte("lock")) {
			return out, err
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// locked reports whether the user's password field in /etc/shadow marks
// the account locked ("!…").
func locked(name string) bool {
	b, err := os.ReadFile("/etc/shadow")
	if err != nil {
		return true // cannot tell: unlock, which is idempotent
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[0] == name {
			return strings.HasPrefix(f[1], "!")
		}
	}
	return true
}

func (s *Server) keygen(path string) {
	s.t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest", "-f", path).CombinedOutput(); err != nil {
		s.t.Fatalf("sshtest: ssh-keygen: %v: %s", err, out)
	}
}

// startSSHD starts sshd on a free port and waits until it listens.
// startSSHD starts sshd on port (a free one when 0).
func (s *Server) startSSHD(port int) error {
	hostKey, extra, timeout := s.hostKey, s.extra, s.ready
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return err
		}
	}
	cfg := filepath.Join(s.Dir, "sshd_config")
	conf := strings.Join(append(slices.Clone(extra),
		"ListenAddress 127.0.0.1",
		"Port "+strconv.Itoa(port),
		"HostKey "+hostKey,
		"PidFile none",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"AuthorizedKeysFile "+filepath.Join(s.Dir, "authorized_keys"),
		// The keys live in a temp dir under /tmp, which is world-writable.
		"StrictModes no",
		"AllowUsers "+s.User,
		"PermitRootLogin no",
		// AliasOptions.Env rides on authorized_keys environment="…".
		"PermitUserEnvironment yes",
		"AllowStreamLocalForwarding yes",
		"StreamLocalBindUnlink yes",
		"X11Forwarding no",
		"PrintMotd no",
		"PrintLastLog no",
		"MaxSessions 100",
		"MaxStartups 100:30:200",
		"SetEnv "+instanceEnv+"="+s.id+" HOME="+s.Home,
		"",
	), "\n")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(SSHD, "-D", "-e", "-f", cfg)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	log := &syncBuffer{}
	exited := make(chan struct{})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		want := fmt.Sprintf("Server listening on 127.0.0.1 port %d", port)
		seen := false
		for sc.Scan() {
			log.WriteLine(sc.Text())
			if !seen && strings.Contains(sc.Text(), want) {
				seen = true
				close(listening)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		_ = cmd.Wait()
		_ = pw.Close()
		close(exited)
	}()
	select {
	case <-listening:
	case <-exited:
		return fmt.Errorf("sshd exited before listening:\n%s", log.String())
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("sshd not listening after %v:\n%s", timeout, log.String())
	}
	s.mu.Lock()
	s.cmd, s.log, s.exited, s.Port = cmd, log, exited, port
	s.mu.Unlock()
	return nil
}

// AliasOptions describe one more way to reach the server (AddAlias).
type AliasOptions struct {
	// Env is set in every session of the alias, after sshd's own
	// variables (PATH=… restricts the remote PATH).
	Env []string
	// UnknownKey logs in with a key the server does not accept.
	UnknownKey bool
	// Port connects to this port instead of the server's (a closed port
	// makes an unreachable host).
	Port int
	// NoControlMaster leaves out the connection sharing options.
	NoControlMaster bool
}

// AddAlias adds a Host block to the ssh_config (each alias with its own
// key) and returns the alias.
func (s *Server) AddAlias(alias string, o AliasOptions) string {
	s.t.Helper()
	s.mu.Lock()
	s.nkeys++
	n := s.nkeys
	s.mu.Unlock()
	key := filepath.Join(s.Dir, fmt.Sprintf("id_%d", n))
	s.keygen(key)
	if !o.UnknownKey {
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			s.t.Fatal(err)
		}
		line := strings.TrimSpace(string(pub))
		if len(o.Env) > 0 {
			var opts []string
			for _, kv := range o.Env {
				opts = append(opts, `environment="`+strings.ReplaceAll(kv, `"`, `\"`)+`"`)
			}
			line = strings.Join(opts, ",") + " " + line
		}
		s.appendFile("authorized_keys", line+"\n")
	}
	port := s.Port
	if o.Port != 0 {
		port = o.Port
	}
	s.appendFile("known_hosts", alias+" "+s.hostPK+"\n")
	lines := []string{
		"Host " + alias,
		"  HostName 127.0.0.1",
		"  Port " + strconv.Itoa(port),
		"  User " + s.User,
		"  IdentityFile " + key,
		"  IdentitiesOnly yes",
		"  IdentityAgent none",
		"  HostKeyAlias " + alias,
		"  UserKnownHostsFile " + filepath.Join(s.Dir, "known_hosts"),
		"  GlobalKnownHostsFile /dev/null",
		"  StrictHostKeyChecking yes",
		"  BatchMode yes",
		"  ConnectTimeout 10",
		"  LogLevel ERROR",
	}
	if !o.NoControlMaster {
		lines = append(lines,
			"  ControlMaster auto",
			// Per alias: %C hashes host, port and user, which all
			// aliases share.
			"  ControlPath "+filepath.Join(s.Dir, "cm-"+alias),
			"  ControlPersist 60")
	}
	s.appendFile("ssh_config", strings.Join(lines, "\n")+"\n\n")
	return alias
}

func (s *Server) appendFile(name, text string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.Dir, name), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		s.t.Fatal(err)
	}
}

// SSH returns an ssh command to the alias running the remote command line.
func (s *Server) SSH(ctx context.Context, alias string, remote ...string) *exec.Cmd {
	args := append([]string{"-F", s.Config, alias}, remote...)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs a remote command line on the default alias and returns its
// output, failing the test on error.
func (s *Server) Run(remote string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Standard output only: ssh's own notes on stderr (a control master
	// going away: "muxclient: master hello exchange failed") are not the
	// command's answer.
	var stderr bytes.Buffer
	cmd := s.SSH(ctx, s.Alias, remote)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("sshtest: ssh %s %q: %v\n%s%s\nsshd log:\n%s", s.Alias, remote, err, out, stderr.Bytes(), s.Log())
	}
	return string(out)
}

// Log returns what sshd logged so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// PathWithout returns a directory, readable by the remote user, of
// symlinks to every program in /usr/bin and /bin except the named ones:
// a PATH on which those programs are missing.
func (s *Server) PathWithout(names ...string) string {
	s.t.Helper()
	dir, err := os.MkdirTemp(s.Dir, "path-")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	skip := map[string]bool{}
	for _, n := range names {
		skip[n] = true
	}
	for _, src := range []string{"/usr/bin", "/bin"} {
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			if skip[e.Name()] {
				continue
			}
			_ = os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	return dir
}

// Procs returns the live processes started in this server's sessions
// (they carry its instance variable, set by sshd), whoever their parent
// is now.
func (s *Server) Procs() []int {
	return procenv.ProcsWithEnv(s.UID, instanceEnv+"="+s.id)
}

// WaitNoProcs waits until none of this server's session processes is left
// (or timeout) and returns those still alive.
func (s *Server) WaitNoProcs(timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		left := s.Procs()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		// Process exit cannot be waited on for a non-child: poll /proc.
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the shared connections, sshd and every process its sessions
// left, and removes the server's files. Only once: afterwards sshd's pid
// may be another process's.
func (s *Server) stop() { s.once.Do(s.stopOnce) }

func (s *Server) stopOnce() {
	if s.Config != "" {
		if b, err := os.ReadFile(s.Config); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if alias, ok := strings.CutPrefix(line, "Host "); ok {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_ = exec.CommandContext(ctx, "ssh", "-F", s.Config, "-O", "exit", alias).Run()
					cancel()
				}
			}
		}
	}
	s.killSSHD()
	for i := 0; i < 50; i++ {
		left := s.Procs()
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.Dir != "" {
		_ = os.RemoveAll(s.Dir)
	}
}

// killSSHD kills sshd and the connection processes it forked (they are
// in sessions of their own), which drops every connection.
func (s *Server) killSSHD() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	desc := descendants(cmd.Process.Pid)
	_ = cmd.Process.Kill()
	for _, pid := range desc {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// After its connections: they hold sshd's output pipe, which Wait
	// waits for.
	<-exited
}

// Down takes the host off the network: sshd and its connections are
// killed (the sessions see their connection drop) and its port refuses
// connections until Up.
func (s *Server) Down() { s.killSSHD() }

// Up starts sshd again on the same port (after Down), with the same
// keys and configuration.
func (s *Server) Up() {
	s.t.Helper()
	s.mu.Lock()
	port, running := s.Port, s.cmd != nil
	s.mu.Unlock()
	if running {
		return
	}
	if err := s.startSSHD(port); err != nil {
		s.t.Fatalf("sshtest: sshd again on port %d: %v", port, err)
	}
}

// descendants returns every process below pid.
func descendants(root int) []int {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	stack := []int{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			out = append(out, c)
			stack = append(stack, c)
		}
	}
	return out
}

// ClosedPort returns a loopback port nothing listens on (just now).
func ClosedPort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// syncBuffer collects sshd's log lines (bounded) for failure messages.
type syncBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuffer) WriteLine(l string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) >= 500 {
		b.lines = b.lines[1:]
	}
	b.lines = append(b.lines, l)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
