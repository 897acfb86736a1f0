package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// serverEnv isolates a test's servers: their registry and the sockets
// whose workspace path is too long live in a runtime directory of its own.
func serverEnv(t *testing.T) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hmrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return []string{"XDG_RUNTIME_DIR=" + dir}
}

// hmIn runs the built binary in project with env and returns its output
// and exit code.
func hmIn(t *testing.T, project string, env []string, d time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = project, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee) && ctx.Err() == nil:
		return string(out), ee.ExitCode()
	}
	t.Fatalf("hivemind %v: %v\n%s", args, err, out)
	return "", -1
}

// servers is hivemind ls --json.
func servers(t *testing.T, project string, env []string) []proto.Info {
	t.Helper()
	out, code := hmIn(t, project, env, tuiWait, "ls", "--json")
	if code != 0 {
		t.Fatalf("hivemind ls --json: exit %d\n%s", code, out)
	}
	var infos []proto.Info
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var in proto.Info
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("hivemind ls --json: %v\n%s", err, out)
		}
		infos = append(infos, in)
	}
	return infos
}

// Closing the terminal of the client (the tmux session goes: SIGHUP)
// detaches: the team keeps working with no client, hivemind wait blocks
// until the task ends and exits 0 as headless would, and the server is
// gone once the task is over (no socket, pid file or process left).
func TestServerOutlivesTerminal(t *testing.T) {
	parallel(t)
	env := serverEnv(t)
	r := startTUI(t, tuiOptions{simArgs: "--pace 30ms", env: env,
		args: []string{"--server", "--agent", "sim", "--workers", "2", "build a tiny calculator"}})
	r.waitScreen(tuiWait, "the lead busy", func(s tuiScreen) bool {
		return strings.Contains(s.panes()["lead"].title, "busy")
	})
	r.mustTmux("kill-session", "-t", r.session)
	var infos []proto.Info
	if !pollUntil(tuiWait, func() bool {
		infos = servers(t, r.project, env)
		return len(infos) == 1 && infos[0].Clients == 0
	}) {
		t.Fatalf("hivemind ls after the terminal closed: %+v, want the server with no client", infos)
	}
	if p := vocab.Phase(infos[0].Phase); p.Terminal() {
		t.Logf("the task was over (%s) before the terminal closed: the test proves less", p)
	}
	out, code := hmIn(t, r.project, env, 3*tuiWait, "wait")
	if code != 0 || !strings.Contains(out, "complete") {
		t.Fatalf("hivemind wait: exit %d, want 0 (complete):\n%s", code, out)
	}
	checkComplete(t, r.taskDir())
	if !pollUntil(tuiWait, func() bool { return len(servers(t, r.project, env)) == 0 }) {
		t.Fatal("the server still runs after its task was over with no client")
	}
	for _, f := range []string{"server.sock", "server.pid"} {
		if _, err := os.Stat(r.project + "/.hivemind/" + f); err == nil {
			t.Errorf(".hivemind/%s left behind", f)
		}
	}
	noLeftovers(t, r.project)
	// Without a server, wait answers from the workspace.
	if out, code := hmIn(t, r.project, env, tuiWait, "wait"); code != 0 {
		t.Errorf("hivemind wait after the server ended: exit %d\n%s", code, out)
	}
}

// A second client attached mid-run shows the same panes as the first; a
// read-only client cannot act; a client of another protocol version is
// refused with the server's version named; D detaches one client (the
// others and the team stay); q then s in the last one stops the team,
// which stays resumable.
func TestServerClients(t *testing.T) {
	parallel(t)
	env := serverEnv(t)
	a := startTUI(t, tuiOptions{simArgs: "--pace 5ms", env: env,
		args: []string{"--server", "--agent", "sim", "--workers", "2", "--plan-approval", "human", "build a tiny calculator"}})
	atGate := func(r *tuiRun) {
		t.Helper()
		r.waitScreen(3*tuiWait, "the plan at the gate", func(s tuiScreen) bool {
			return s.phase() == string(vocab.PhasePlanApproval) && s.contains("a approve and build")
		})
		r.keys("Escape") // the panes instead of the plan
		r.waitScreen(tuiWait, "the panes", func(s tuiScreen) bool { return len(s.panes()) == 4 })
	}
	atGate(a)
	attached := time.Now()
	b := startTUI(t, tuiOptions{project: a.project, env: env, args: []string{"attach"}})
	b.waitText(tuiWait, "a approve and build")
	t.Logf("attach (process start included) to the full screen: %v", time.Since(attached).Round(time.Millisecond))
	atGate(b)
	// The team waits on the user: the screens are still, and both clients
	// show the server's emulators.
	for _, id := range []string{"lead", "reviewer", "worker_1", "worker_2"} {
		var ta, tb string
		if !pollUntil(tuiWait, func() bool {
			ta, _ = a.capture().paneText(id)
			tb, _ = b.capture().paneText(id)
			return ta == tb && strings.TrimSpace(ta) != ""
		}) {
			t.Errorf("pane %s differs between the two clients:\nfirst:\n%s\nsecond:\n%s", id, ta, tb)
		}
	}

	// A read-only watcher cannot approve the plan.
	c := startTUI(t, tuiOptions{project: a.project, env: env, args: []string{"attach", "--read-only"}})
	c.waitScreen(3*tuiWait, "the plan at the gate", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhasePlanApproval) && s.contains("a approve and build")
	})
	c.keys("a")
	c.waitText(tuiWait, "read-only client")
	if st := readState(t, a.taskDir()); st.Phase != vocab.PhasePlanApproval {
		t.Fatalf("phase %s after a read-only client pressed a: it acted", st.Phase)
	}
	var infos []proto.Info
	if !pollUntil(tuiWait, func() bool {
		infos = servers(t, a.project, env)
		return len(infos) == 1 && infos[0].Clients == 3
	}) {
		t.Fatalf("hivemind ls: %+v, want one server with 3 clients", infos)
	}

	// A client of another protocol version is refused, the server's named.
	conn, err := net.Dial("unix", infos[0].Socket)
	if err != nil {
		t.Fatal(err)
	}
	pc := proto.NewConn(conn)
	if err := pc.Send(proto.Msg{T: proto.THello, Version: proto.Version + 1, Binary: "v99", Kind: proto.KindUI}); err != nil {
		t.Fatal(err)
	}
	m, err := pc.Recv()
	_ = pc.Close()
	if err != nil || m.T != proto.TError || !strings.Contains(m.Err, infos[0].Binary) || !strings.Contains(m.Err, "protocol 1") {
		t.Fatalf("a hello of protocol %d got %+v (%v), want an error naming the server's version %q", proto.Version+1, m, err, infos[0].Binary)
	}

	// D detaches the first client; the team stays.
	a.keys("D")
	if code := a.waitExit(tuiWait); code != 0 {
		t.Errorf("exit status %d after D, want 0", code)
	}
	// kill -9 of a client detaches it too.
	if err := syscall.Kill(hivemindPID(t, c), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(tuiWait, func() bool {
		infos = servers(t, a.project, env)
		return len(infos) == 1 && infos[0].Clients == 1
	}) {
		t.Fatalf("hivemind ls after a detach and a kill -9: %+v, want one server with 1 client", infos)
	}
	// q asks; s stops the team.
	b.keys("q")
	b.waitScreen(tuiWait, "the leave question", func(s tuiScreen) bool { return strings.Contains(s.footer(), "Leave: detach") })
	b.keys("s")
	if code := b.waitExit(tuiWait); code != 0 {
		t.Errorf("exit status %d after stopping the team, want 0", code)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, a.project, env)) == 0 }) {
		t.Fatal("the server still runs after a client stopped the team")
	}
	if st := readState(t, a.taskDir()); st.Over() {
		t.Errorf("state %s after stopping the team, want a resumable one", st.Phase)
	}
	noLeftovers(t, a.project)
}

// A task that needs a human keeps its server (and team) up with no client:
// hivemind wait exits 3 as headless would, ls says so, SIGTERM stops the
// server leaving the task resumable; resumed in a server with
// server_idle_seconds = 0, the server stops by itself once nobody is
// attached.
func TestServerNeedsHuman(t *testing.T) {
	parallel(t)
	env := append(serverEnv(t), "HIVEMIND_SIM_ARGS=--pace 2ms --reject-plans 99")
	project := t.TempDir()
	notify := "notify_command = 'echo \"$HIVEMIND_PHASE|$HIVEMIND_TASK|$HIVEMIND_CLIENTS|$HIVEMIND_REASON\" >> notified'\n"
	if err := os.MkdirAll(project+"/.hivemind", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project+"/.hivemind/config.toml", []byte(notify), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := hmIn(t, project, env, 3*tuiWait, "--server", "--headless", "--agent", "sim", "build a tiny calculator")
	if code != 3 || !strings.Contains(out, "needs_human") {
		t.Fatalf("hivemind --server --headless: exit %d, want 3 (needs_human):\n%s", code, out)
	}
	infos := servers(t, project, env)
	if len(infos) != 1 || infos[0].Phase != string(vocab.PhaseNeedsHuman) || infos[0].Why == "" {
		t.Fatalf("hivemind ls: %+v, want the server waiting on a human, with the reason", infos)
	}
	if out, code := hmIn(t, project, env, tuiWait, "wait"); code != 3 {
		t.Fatalf("hivemind wait at needs_human: exit %d, want 3\n%s", code, out)
	}
	// notify_command ran, told why, with no client attached.
	var said []byte
	if !pollUntil(tuiWait, func() bool {
		said, _ = os.ReadFile(project + "/notified")
		return strings.HasPrefix(string(said), "needs_human|"+infos[0].TaskID+"|0|") && len(strings.TrimSpace(string(said))) > len("needs_human|"+infos[0].TaskID+"|0|")
	}) {
		t.Fatalf("notify_command wrote %q, want needs_human|%s|0|<reason>", said, infos[0].TaskID)
	}
	if err := syscall.Kill(infos[0].PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, project, env)) == 0 }) {
		t.Fatal("the server still runs after SIGTERM")
	}
	noLeftovers(t, project)
	if st := readState(t, taskDir(t, project)); st.Phase != vocab.PhaseNeedsHuman {
		t.Fatalf("state %s after SIGTERM, want needs_human (resumable)", st.Phase)
	}

	if err := os.WriteFile(project+"/.hivemind/config.toml", []byte(notify+"server_idle_seconds = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := hmIn(t, project, env, 3*tuiWait, "--server", "--headless", "--resume"); code != 3 {
		t.Fatalf("hivemind --server --headless --resume: exit %d, want 3\n%s", code, out)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, project, env)) == 0 }) {
		t.Fatal("with server_idle_seconds = 0 the server of a task waiting on a human still runs with no client")
	}
	noLeftovers(t, project)
}

// hivemindPID is the pid of the hivemind a tmux run started (the child of
// the pane's shell).
func hivemindPID(t *testing.T, r *tuiRun) int {
	t.Helper()
	shell, err := strconv.Atoi(strings.TrimSpace(r.mustTmux("display-message", "-p", "-t", r.session, "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b)[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(shell) && strings.Contains(string(b), "(hivemind)") {
			pid, _ := strconv.Atoi(strings.Fields(string(b))[0])
			return pid
		}
	}
	t.Fatalf("no hivemind process under the pane's shell %d", shell)
	return 0
}

// SIGTERM to an attached client detaches it, every time (one owner of
// signals in the client: with bubbletea's handler as well, it hung in 6
// of 20 tries here).
func TestServerClientSigterm(t *testing.T) {
	parallel(t)
	env := append(serverEnv(t), "HIVEMIND_SIM_ARGS=--pace 5ms")
	project := t.TempDir()
	out, code := hmIn(t, project, env, 3*tuiWait, "--server", "--agent", "sim", "--plan-approval", "human", "build a tiny calculator")
	if code != 0 {
		t.Fatalf("hivemind --server: exit %d\n%s", code, out)
	}
	for i := range 20 {
		r := startTUI(t, tuiOptions{project: project, env: env, args: []string{"attach"}})
		r.waitText(tuiWait, "HIVEMIND")
		if err := syscall.Kill(hivemindPID(t, r), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := r.waitExit(tuiWait); code != 0 {
			t.Fatalf("try %d: exit status %d after SIGTERM, want 0 (detached)", i, code)
		}
		r.mustTmux("kill-server")
	}
	infos := servers(t, project, env)
	if len(infos) != 1 {
		t.Fatalf("hivemind ls after 20 SIGTERMed clients: %+v, want the server still up", infos)
	}
	if err := syscall.Kill(infos[0].PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, project, env)) == 0 }) {
		t.Fatal("the server still runs after SIGTERM")
	}
	noLeftovers(t, project)
}
