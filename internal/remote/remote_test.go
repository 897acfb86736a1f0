package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sshtest"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
)

// helperBin is hivemind-hook built once for the package's tests.
var helperBin string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "remote-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		helperBin = filepath.Join(dir, HelperName)
		if out, err := exec.Command("go", "build", "-o", helperBin, "../../cmd/hivemind-hook").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build hivemind-hook: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// host is the harness server's default alias as a Host.
func host(s *sshtest.Server, alias string) Host {
	return Host{Name: "buildbox", Dest: alias, SSHArgs: []string{"-F", s.Config}, Dir: "~/work"}
}

// fakeAgentPath returns a PATH holding a `fakeagent` CLI before the
// system's.
func fakeAgentPath(t *testing.T, s *sshtest.Server) string {
	dir := filepath.Join(s.Dir, "agentbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fakeagent"), []byte("#!/bin/sh\necho 'fakeagent 1.2.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + ":/usr/local/bin:/usr/bin:/bin"
}

// A healthy host passes the check, which reports what it found.
func TestCheck(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	alias := s.AddAlias("withagent", sshtest.AliasOptions{Env: []string{"PATH=" + fakeAgentPath(t, s)}})
	h := host(s, alias)
	h.Agent = "fakeagent"
	r, err := Check(ctx(t), h)
	if err != nil {
		t.Fatalf("check: %v\nsshd log:\n%s", err, s.Log())
	}
	if r.Home != s.Home || r.User != s.User || r.Dir != s.Home+"/work" || !r.DirWritable ||
		!strings.HasPrefix(r.Git, "git version ") || r.Agent != "fakeagent 1.2.3" || r.OS != "linux" || r.Arch == "" {
		t.Errorf("report %+v", r)
	}
}

// Each broken host gets one line saying what is wrong and what to do.
func TestCheckDiagnoses(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	closed := s.AddAlias("closed", sshtest.AliasOptions{Port: sshtest.ClosedPort(t), NoControlMaster: true})
	badKey := s.AddAlias("badkey", sshtest.AliasOptions{UnknownKey: true, NoControlMaster: true})
	noGit := s.AddAlias("nogit", sshtest.AliasOptions{Env: []string{"PATH=" + s.PathWithout("git")}})
	for _, c := range []struct {
		name  string
		host  func(Host) Host
		wants []string
	}{
		{"unreachable port", func(h Host) Host { h.Dest = closed; return h },
			[]string{"buildbox: ssh: connect to host 127.0.0.1 port", "Connection refused — is sshd running there"}},
		{"unknown key", func(h Host) Host { h.Dest = badKey; return h },
			[]string{"buildbox: ssh: Permission denied (publickey) — check the key / ssh-agent for badkey"}},
		{"unknown host name", func(h Host) Host { h.SSHArgs = nil; h.Dest = "no-such-host.invalid"; return h },
			[]string{"buildbox: ssh: Could not resolve hostname no-such-host.invalid", "check the host name"}},
		{"git missing", func(h Host) Host { h.Dest = noGit; return h },
			[]string{"buildbox: git not found on the remote PATH (" + s.Dir + "/path-", ") — install git there"}},
		{"agent missing", func(h Host) Host { h.Agent = "no-such-agent"; return h },
			[]string{"buildbox: no-such-agent not found on the remote PATH (", "— install it there"}},
		{"dir not writable", func(h Host) Host { h.Dir = "/root/hm-work"; return h },
			[]string{"buildbox: work dir /root/hm-work is not writable by " + s.User + " (mkdir: ", "Permission denied) — create it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, c.host(host(s, s.Alias)), c.wants)
		})
	}
}

// A server that forbids forwarding cannot carry the hook relay: said so.
func TestCheckForwardingRefused(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{SSHDConfig: []string{"AllowTcpForwarding no"}})
	check(t, host(s, s.Alias), []string{"buildbox: sshd refuses to forward a unix socket back (the hook relay needs it) — allow it"})
}

// check runs Check on a broken host and wants a one-line diagnosis
// holding each of wants.
func check(t *testing.T, h Host, wants []string) {
	t.Helper()
	_, err := Check(ctx(t), h)
	if err == nil {
		t.Fatal("check passed")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("diagnosis %q\nlacks %q", msg, w)
		}
	}
}

// The helper is copied once per build, under its content hash, and runs.
func TestInstall(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.Alias)
	first, err := Install(ctx(t), h, helperBin)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Copied || !strings.HasPrefix(first.Path, s.Home+"/.cache/hivemind/helper/"+first.Version+"/") {
		t.Errorf("first install %+v", first)
	}
	again, err := Install(ctx(t), h, helperBin)
	if err != nil || again.Copied || again.Path != first.Path {
		t.Errorf("second install %+v, %v", again, err)
	}
	if out := s.Run(first.Path + " remote-ping"); strings.TrimSpace(out) != pingAnswer {
		t.Errorf("ping: %q", out)
	}
	// Another build gets its own directory.
	other := filepath.Join(t.TempDir(), HelperName)
	b, _ := os.ReadFile(helperBin)
	if err := os.WriteFile(other, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if inst, err := Install(ctx(t), h, other); err != nil || !inst.Copied || inst.Version == first.Version {
		t.Errorf("other build %+v, %v", inst, err)
	}
}

// remoteAgent starts argv on the harness host through a Manager (hook
// relay, token, local PTY, emulator), as Hivemind would.
type remoteAgent struct {
	s      *sshtest.Server
	h      Host
	inst   Installed
	m      *ptyagent.Manager
	events chan ptyagent.Event
}

func startRemote(t *testing.T, kind ptyagent.ProfileKind, script string) (*remoteAgent, *ptyagent.Session) {
	t.Helper()
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.Alias)
	if _, err := Check(ctx(t), h); err != nil {
		t.Fatal(err)
	}
	inst, err := Install(ctx(t), h, helperBin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.Log())
		}
	})
	ra := &remoteAgent{s: s, h: h, inst: inst, events: make(chan ptyagent.Event, 256)}
	sockDir, err := os.MkdirTemp("", "rsock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	m, err := ptyagent.NewManager(ptyagent.ManagerConfig{
		SocketDir:   sockDir,
		StopTimeout: 3 * time.Second,
		OnEvent: func(e ptyagent.Event) {
			select {
			case ra.events <- e:
			default:
			}
		},
		Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (ptyagent.Spec, error) {
			argv := LaunchArgv(h, helperBin, inst.Path, Agent{Argv: []string{"sh", "-c", strings.ReplaceAll(script, "$HELPER", inst.Path)}})
			return ptyagent.Spec{Argv: argv, Kind: kind, Cols: 120, Rows: 40,
				Env: []string{"HIVEMIND_TASK_DIR=/remote/task"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ra.m = m
	t.Cleanup(func() { m.Close() })
	if err := m.Start("worker_1", "worker", false); err != nil {
		t.Fatal(err)
	}
	sess, ok := m.Session("worker_1")
	if !ok {
		t.Fatal("no session")
	}
	return ra, sess
}

// waitScreen waits until the screen holds want.
func waitScreen(t *testing.T, s *ptyagent.Session, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.Text(), want) {
		select {
		case <-s.Done():
			t.Fatalf("agent exited (%s) before %q:\n%s", s.HealthDetail(), want, s.Text())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the screen:\n%s", want, s.Text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A remote agent runs in a remote PTY shown by the local emulator: it
// prints, receives typed input, follows resizes, and has the HIVEMIND_*
// environment but not the local session's mark or socket.
func TestRemoteAgentPTY(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileCustom,
		`echo "id=$HIVEMIND_AGENT_ID task=$HIVEMIND_TASK_DIR tok=${#HIVEMIND_HOOK_TOKEN} local=${HIVEMIND_SESSION_MARK:-none} sock=$HIVEMIND_HOOK_SOCKET"; `+
			`echo "term=$TERM/$COLORTERM tty=$(tty) who=$(id -un)"; `+
			`while read l; do echo "got:$l size:$(stty size)"; done`)
	waitScreen(t, sess, "id=worker_1 task=/remote/task tok=32 local=none sock="+ra.s.Home+"/.cache/hivemind/run/")
	waitScreen(t, sess, "term=xterm-256color/truecolor tty=/dev/pts/")
	waitScreen(t, sess, "who="+ra.s.User)
	if _, err := sess.Write([]byte("hello ~. there\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, sess, "got:hello ~. there size:40 120")
	if err := sess.Resize(100, 30); err != nil {
		t.Fatal(err)
	}
	// The new size reaches the remote PTY through ssh's window-change.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(sess.Text(), "size:30 100") {
		if time.Now().After(deadline) {
			t.Fatalf("resize not seen remotely:\n%s", sess.Text())
		}
		_, _ = sess.Write([]byte("x\r"))
		time.Sleep(100 * time.Millisecond)
	}
}

// A hook sent on the remote host, over the forwarded socket, reaches the
// local relay with the session's token: the sim profile becomes ready on
// SessionStart, and the Stop hook's payload arrives as an event. The
// relay's checks hold across the forward: a forged token is refused, and
// the sender the relay sees (SO_PEERCRED: the local ssh) passes its
// cgroup check where ptyagent tracks by cgroup.
func TestRemoteHook(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileSim,
		`echo '{}' | HIVEMIND_HOOK_TOKEN=forged "$HELPER" Notification; `+
			`echo '{"session_id":"r1"}' | "$HELPER" SessionStart; echo started; `+
			`read l; echo '{"session_id":"r1","last_assistant_message":"remote done"}' | "$HELPER" Stop; echo stopped; cat`)
	waitScreen(t, sess, "the hook token does not match agent \"worker_1\"'s session")
	waitScreen(t, sess, "started")
	for deadline := time.Now().Add(30 * time.Second); sess.Health() != vocab.HealthReady; {
		if time.Now().After(deadline) {
			t.Fatalf("not ready (health %s) — SessionStart did not arrive:\n%s", sess.Health(), sess.Text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := sess.Write([]byte("go\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, sess, "stopped")
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-ra.events:
			if e.Kind == ptyagent.EventHook && e.Detail == ptyagent.HookStop {
				if !strings.Contains(string(e.Payload), "remote done") {
					t.Errorf("Stop payload %s", e.Payload)
				}
				return
			}
		case <-timeout:
			t.Fatalf("no Stop hook event:\n%s", sess.Text())
		}
	}
}

// detachedScript is an agent that outlives a hang-up of its terminal
// (it ignores SIGHUP and never reads the terminal) and starts a process
// that leaves its session and ignores SIGHUP too (as Claude's Bash tool's
// commands do): only the remote helper's clean-up ends them.
const detachedScript = `trap "" HUP; setsid sh -c 'exec sleep 300' </dev/null >/dev/null 2>&1 & echo READY; exec sleep 300`

// remoteProcs returns the remote processes of the harness's sessions and
// those of them that carry a remote session mark.
func remoteProcs(s *sshtest.Server) (all, markedProcs []int) {
	all = s.Procs()
	for _, pid := range all {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if strings.Contains(string(b), "\x00"+MarkEnv+"=") || strings.HasPrefix(string(b), MarkEnv+"=") {
			markedProcs = append(markedProcs, pid)
		}
	}
	return all, markedProcs
}

// Killing the local ssh (SIGKILL: nothing local cleans up) drops the
// connection; the remote helper sees the hang-up and leaves nothing
// running, detached processes included.
func TestKillSSHLeavesNothingRemote(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileCustom, detachedScript)
	waitScreen(t, sess, "READY")
	if _, marked := remoteProcs(ra.s); len(marked) < 2 {
		t.Fatalf("remote agent and its detached child not both found: %v", marked)
	}
	if err := syscall.Kill(sess.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if left := ra.s.WaitNoProcs(30 * time.Second); len(left) > 0 {
		t.Errorf("remote processes left after the connection dropped: %v", left)
	}
	select {
	case <-sess.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("local session not done")
	}
}

// A stop through the Manager (SIGTERM to ssh) also leaves nothing.
func TestStopLeavesNothingRemote(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileCustom, detachedScript)
	waitScreen(t, sess, "READY")
	if err := ra.m.Stop("worker_1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("not stopped")
	}
	if left := ra.s.WaitNoProcs(30 * time.Second); len(left) > 0 {
		t.Errorf("remote processes left after stop: %v", left)
	}
	if ents, _ := os.ReadDir(filepath.Join(ra.s.Home, ".cache/hivemind/run")); len(ents) > 0 {
		t.Errorf("run dirs left: %v", ents)
	}
}

// A helper killed outright (SIGKILL on the host) cleans nothing up; the
// next run's ReapHost does.
func TestReapAfterHelperKilled(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileCustom, detachedScript)
	waitScreen(t, sess, "READY")
	runRoot := filepath.Join(ra.s.Home, ".cache/hivemind/run")
	ents, err := os.ReadDir(runRoot)
	if err != nil || len(ents) != 1 {
		t.Fatalf("run dirs %v, %v", ents, err)
	}
	pid, _, ok := readProcFile(filepath.Join(runRoot, ents[0].Name(), procFile))
	if !ok {
		t.Fatal("no proc file")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("local session not done after the remote helper died")
	}
	// The agent and its detached child outlived the helper.
	if _, marked := remoteProcs(ra.s); len(marked) == 0 {
		t.Fatal("nothing survived the helper: the reap below proves nothing")
	}
	out, err := ReapHost(ctx(t), ra.h, ra.inst.Path)
	if err != nil {
		t.Fatal(err)
	}
	if out != "reaped 2 processes of 1 sessions" { // the agent and its detached child
		t.Errorf("reap said %q", out)
	}
	if left := ra.s.WaitNoProcs(10 * time.Second); len(left) > 0 {
		t.Errorf("left after reap: %v", left)
	}
	if ents, _ := os.ReadDir(runRoot); len(ents) > 0 {
		t.Errorf("run dirs left: %v", ents)
	}
}

// A live session is left alone by a reap that does not name it; one
// that names it (a previous run's session, on a host that did not see
// that run die) ends it: its helper, the agent and its detached child.
func TestReapSparesLiveSessions(t *testing.T) {
	ra, sess := startRemote(t, ptyagent.ProfileCustom, detachedScript)
	waitScreen(t, sess, "READY")
	out, err := ReapHost(ctx(t), ra.h, ra.inst.Path)
	if err != nil || out != "reaped 0 processes of 0 sessions" {
		t.Fatalf("reap: %q, %v", out, err)
	}
	if _, marked := remoteProcs(ra.s); len(marked) < 2 {
		t.Errorf("the live session lost processes: %v", marked)
	}
	ents, err := os.ReadDir(filepath.Join(ra.s.Home, ".cache/hivemind/run"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("run dirs %v, %v", ents, err)
	}
	out, err = ReapHost(ctx(t), ra.h, ra.inst.Path, ents[0].Name())
	if err != nil || !strings.HasSuffix(out, " processes of 1 sessions") || strings.HasPrefix(out, "reaped 0 ") {
		t.Errorf("named reap: %q, %v", out, err)
	}
	if left := ra.s.WaitNoProcs(10 * time.Second); len(left) > 0 {
		t.Errorf("left after the named reap: %v", left)
	}
}

func TestEnvAndQuoting(t *testing.T) {
	env := string(remoteEnv([]string{"HIVEMIND_AGENT_ID=w1", "HIVEMIND_SESSION_MARK=1-00", "HIVEMIND_HOOK_SOCKET=/l",
		"PATH=/x", "SECRET=s", "COLORTERM=truecolor", "HOME=/root"}, []string{"SECRET"}, "7-0123456789abcdef"))
	got := strings.Split(strings.TrimSuffix(env, "\x00"), "\x00")
	want := []string{"HIVEMIND_AGENT_ID=w1", "SECRET=s", "COLORTERM=truecolor", MarkEnv + "=7-0123456789abcdef"}
	if !slices.Equal(got, want) {
		t.Errorf("remote env %q, want %q", got, want)
	}
	for in, want := range map[string]string{"": `"$HOME"`, "~": `"$HOME"`, "~/a b": `"$HOME"/'a b'`, "/srv/w": "/srv/w", "/it's": `'/it'\''s'`} {
		if got := dirExpr(in); got != want {
			t.Errorf("dirExpr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParsers(t *testing.T) {
	for in, want := range map[string][2]int{"git version 2.39.5": {2, 39}, "git version 2.39.3 (Apple Git-146)": {2, 39}, "git version 1.8": {1, 8}} {
		if got, ok := gitVersion(in); !ok || got != want {
			t.Errorf("gitVersion(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "git version ", "git version x.y", "hub version 2.1", "git version 2"} {
		if got, ok := gitVersion(in); ok {
			t.Errorf("gitVersion(%q) = %v, want not ok", in, got)
		}
	}
	for in, want := range map[string]bool{"123-0123456789abcdef": true, "1-ffffffffffffffff": true, "-0123456789abcdef": false,
		"123-0123456789ABCDEF": false, "123-0123456789abcde": false, "../x": false, "probe-1.sock": false} {
		if ValidMark(in) != want {
			t.Errorf("ValidMark(%q) = %v", in, !want)
		}
	}
	for in, want := range map[string][2]string{"Linux x86_64": {"linux", "amd64"}, "Darwin arm64": {"darwin", "arm64"}, "Linux aarch64": {"linux", "arm64"}, "weird": {"", ""}} {
		if os, arch := goPlatform(in); os != want[0] || arch != want[1] {
			t.Errorf("goPlatform(%q) = %s/%s", in, os, arch)
		}
	}
	for stderr, want := range map[string]string{
		"Warning: Permanently added 'x' (ED25519) to the list of known hosts.\r\nci@10.0.0.7: Permission denied (publickey).\r\n": "Permission denied (publickey)",
		"ssh: connect to host 10.0.0.7 port 22: Connection timed out\n":                                                           "connect to host 10.0.0.7 port 22: Connection timed out",
		"": "connection failed (ssh printed nothing)",
	} {
		if got := sshSaid(stderr); got != want {
			t.Errorf("sshSaid(%q) = %q, want %q", stderr, got, want)
		}
	}
	if h := sshHint("connect to host x port 22: Connection timed out", "x"); !strings.Contains(h, "unreachable") {
		t.Errorf("hint %q", h)
	}
}

// A launch that cannot reach the host ends the agent with ssh's
// diagnosis as its last words (what the engine reports) and ssh's status
// for a connection failure, 255.
func TestLaunchUnreachable(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.AddAlias("closed", sshtest.AliasOptions{Port: sshtest.ClosedPort(t), NoControlMaster: true}))
	sess, err := ptyagent.Start(ptyagent.Spec{ID: "worker_1",
		Argv: LaunchArgv(h, helperBin, "/nowhere/"+HelperName, Agent{Argv: []string{"true"}})})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	select {
	case <-sess.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("still running:\n%s", sess.Text())
	}
	// The screen is 120 columns wide: the line wraps.
	if d := sess.HealthDetail(); sess.ExitCode() != 255 || !strings.Contains(d, "last output: hivemind: remote agent: closed: ssh: connect to host 127.0.0.1 port ") ||
		!strings.Contains(d, "Connection refused — is sshd") {
		t.Errorf("exit %d, detail %q", sess.ExitCode(), d)
	}
}

// A start that fails on the host (no work dir, no helper) says why and
// leaves no run dir (its environment file holds the token).
func TestLaunchFailsOnHost(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	inst, err := Install(ctx(t), host(s, s.Alias), helperBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, helper, want string
	}{
		{"no work dir", "~/missing", inst.Path, "can't cd to"},
		{"no helper", "~", "/nowhere/" + HelperName, "hivemind: /nowhere/hivemind-hook is missing on this host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := host(s, s.Alias)
			h.Dir = c.dir
			sess, err := ptyagent.Start(ptyagent.Spec{ID: "worker_1", Env: []string{"HIVEMIND_HOOK_TOKEN=secret"},
				Argv: LaunchArgv(h, helperBin, c.helper, Agent{Argv: []string{"true"}})})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			select {
			case <-sess.Done():
			case <-time.After(30 * time.Second):
				t.Fatalf("still running:\n%s", sess.Text())
			}
			if d := sess.HealthDetail(); sess.ExitCode() != 1 || !strings.Contains(d, c.want) {
				t.Errorf("exit %d, detail %q", sess.ExitCode(), d)
			}
			if ents, _ := os.ReadDir(filepath.Join(s.Home, ".cache/hivemind/run")); len(ents) > 0 {
				t.Errorf("run dirs left: %v", ents)
			}
		})
	}
}
