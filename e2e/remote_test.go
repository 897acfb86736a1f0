package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sshtest"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Remote workers (issue 18), end to end: the sshtest server (a real sshd
// on loopback, another Unix user) is the host "box"; the sim workers run
// there through the built binary's helper.

// remoteProject is a git project whose config names the server as "box".
func remoteProject(t *testing.T, s *sshtest.Server) string {
	t.Helper()
	project := wtRepo(t, false)
	configureBox(t, s, project)
	return project
}

// configureBox writes project's config naming the server as "box".
func configureBox(t *testing.T, s *sshtest.Server, project string) {
	t.Helper()
	// No connection sharing: every ssh of the run ends with it, so no
	// master outlives the run.
	alias := s.AddAlias("hm-box", sshtest.AliasOptions{NoControlMaster: true})
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[hosts.box]\nssh = " + strconv.Quote(alias) + "\nssh_options = [\"-F\", " + strconv.Quote(s.Config) + "]\ndir = \"~/hm\"\n"
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// remoteRun runs a headless sim task with both workers on box.
func remoteRun(t *testing.T, project string, pace time.Duration, during func(dir string)) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, t.TempDir(), pace, "--headless", "--agent", "sim", "--workers", "2@box",
		"--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if during != nil {
		var dir string
		waitFor(t, time.Minute, "the task dir", func() bool {
			m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*"))
			if len(m) == 1 {
				dir = m[0]
			}
			return dir != ""
		})
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("hivemind's output:\n%s", out.String())
			}
		})
		during(dir)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return code, out.String()
}

// A whole task with both workers on the host: complete, the workers'
// commits on the task branch, their raw logs full of the remote agents'
// output, and nothing left running on either side.
func TestRemoteWorkersComplete(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	code, out := remoteRun(t, project, 2*time.Millisecond, nil)
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s\nsshd log:\n%s", code, out, s.Log())
	}
	dir := taskDir(t, project)
	st := checkComplete(t, dir)
	recs := readRecords(t, dir)
	if countType(recs, "remote_host_ready") != 1 || countType(recs, "remote_sync_connected") < 1 {
		t.Errorf("remote records: ready %d, sync connected %d", countType(recs, "remote_host_ready"), countType(recs, "remote_sync_connected"))
	}
	logRunnerWait(t, recs)
	log := wtGit(t, project, "log", "--format=%s", "hivemind/"+st.TaskID)
	for _, w := range []string{"worker_1", "worker_2"} {
		if !strings.Contains(log, "["+w+"] ") {
			t.Errorf("no commit of %s on the task branch:\n%s", w, log)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "logs", "agents", w+".log"))
		if err != nil || !strings.Contains(string(raw), "Read") || !strings.Contains(string(raw), "/hm/") {
			t.Errorf("%s's raw log lacks the remote agent's output (%v):\n%s", w, err, clip(string(raw), 2000))
		}
	}
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v\n%s", left, s.Run("ps -u "+s.User+" -o pid,args"))
	}
	// The complete task's worktrees and task dir are gone from the host;
	// its repository stays (the next task sends only new objects).
	if left := s.Run("cd ~/hm/*/ && ls -A worktrees tasks; ls -d repo.git"); strings.TrimSpace(left) != "tasks:\n\nworktrees:\nrepo.git" {
		t.Errorf("left on the host:\n%s", left)
	}
}

// logRunnerWait logs how long the runner held each done subtask of a
// remote worker before stepping it (its commit: from the watcher's event
// to the commit's record), the time the engine waited on a host.
func logRunnerWait(t *testing.T, recs []vocab.EventRecord) {
	t.Helper()
	var committed []vocab.EventRecord
	var waits []string
	for _, r := range recs {
		switch r.Type {
		case "subtask_committed": // recorded before the event it commits
			committed = append(committed, r)
		case "input.subtask_done": // its time is the watcher's
			for _, c := range committed {
				if recDetail(c, "subtask") == recDetail(r, "subtask") {
					waits = append(waits, recDetail(r, "subtask")+" "+c.Time.Sub(r.Time).Round(time.Millisecond).String())
				}
			}
		}
	}
	t.Logf("done marker seen → committed, on the runner: %s", strings.Join(waits, ", "))
}

// A worker's ssh connection killed mid-subtask: the agent's exit is
// noticed at once, the engine restarts it (backoff 1 s) on the host, the
// subtask is resumed and the task completes; nothing is left on either
// side.
func TestRemoteWorkerConnectionKilled(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	cfg := filepath.Join(project, ".hivemind", "config.toml")
	// Top-level keys go before the [hosts.box] table.
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append([]byte("backoff_seconds = [1]\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	var killed time.Time
	var pid int
	var subtask string // worker_1's subtask when its connection died
	code, out := remoteRun(t, project, 10*time.Millisecond, func(dir string) {
		// worker_1 busy on its first subtask: kill its ssh (the agent's
		// local process: the launcher execs ssh).
		waitFor(t, runDeadline, "worker_1 busy on a subtask", func() bool {
			for _, r := range readEventLog(dir) {
				if r.Type == "input.agent_health" && r.Agent == "worker_1" && recDetail(r, "health") == "busy" {
					pid, _ = strconv.Atoi(recDetail(r, "pid"))
					return pid > 0
				}
			}
			return false
		})
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) != "ssh" {
			t.Errorf("worker_1's process %d is %q, want ssh", pid, strings.TrimSpace(string(comm)))
		}
		for _, r := range readEventLog(dir) {
			if r.Type == "subtask_assigned" && r.Agent == "worker_1" {
				subtask = recDetail(r, "subtask")
			}
		}
		killed = time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Minute, "worker_1's exit noticed", func() bool {
			for _, r := range readEventLog(dir) {
				if r.Type == "input.agent_health" && r.Agent == "worker_1" && recDetail(r, "pid") == strconv.Itoa(pid) &&
					(recDetail(r, "health") == "exited" || recDetail(r, "health") == "crashed") {
					t.Logf("worker_1's dropped connection noticed after %v", r.Time.Sub(killed).Round(time.Millisecond))
					if r.Time.Sub(killed) > 5*time.Second {
						t.Errorf("noticed after %v, want within seconds", r.Time.Sub(killed))
					}
					return true
				}
			}
			return false
		})
	})
	if code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out)
	}
	dir := taskDir(t, project)
	checkComplete(t, dir)
	recs := readRecords(t, dir)
	restarted := countRecords(recs, "agent_restarted", func(r vocab.EventRecord) bool { return r.Agent == "worker_1" })
	if restarted < 1 {
		t.Errorf("worker_1 restarted %d times, want at least 1", restarted)
	}
	// The subtask it was on was resumed by it and done after the restart.
	resumed := countRecords(recs, "subtask_done", func(r vocab.EventRecord) bool {
		return r.Agent == "worker_1" && recDetail(r, "subtask") == subtask && r.Time.After(killed)
	})
	if subtask == "" || resumed != 1 {
		t.Errorf("worker_1's subtask %q at the kill: done %d times after it, want 1", subtask, resumed)
	}
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v\n%s", left, s.Run("ps -u "+s.User+" -o pid,args"))
	}
}

// A host that does not answer stops the run before anything starts,
// with the one-line reason.
func TestRemoteHostUnreachable(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	alias := s.AddAlias("hm-down", sshtest.AliasOptions{Port: sshtest.ClosedPort(t), NoControlMaster: true})
	project := wtRepo(t, false)
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[hosts.box]\nssh = " + strconv.Quote(alias) + "\nssh_options = [\"-F\", " + strconv.Quote(s.Config) + "]\n"
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, t.TempDir(), "--headless", "--agent", "sim", "--workers", "2@box", "--project", project, "build a tiny calculator")
	if code := exitCode(t, cmd); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "fail  host box") || !strings.Contains(out.String(), "Connection refused — is sshd running there, on that port?") {
		t.Errorf("output lacks the host's one-line reason:\n%s", out.String())
	}
	if m, _ := filepath.Glob(filepath.Join(ws, "tasks", "*")); len(m) != 0 {
		t.Errorf("a task was created: %v", m)
	}
}

// Hivemind killed with SIGKILL while remote workers work: their ssh
// connections die with it, so nothing is left on the host; --resume
// places the workers on the host again and completes the task there.
func TestRemoteKillAndResume(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	dir, recs := remoteKillAndResume(t, s, project, func() {
		noLeftovers(t, project)
		if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
			t.Errorf("processes left on the host after the kill: %v\n%s", left, s.Run("ps -u "+s.User+" -o pid,args"))
		}
	})
	if n := countType(recs, "remote_host_ready"); n != 2 {
		t.Errorf("the host was prepared %d times, want 2 (the resumed run's workers ran there too)", n)
	}
	checkReaped(t, recs, "reaped 0 processes of 0 sessions")
	_ = dir
}

// Hivemind killed with SIGKILL while the host does not see the drop (a
// network partition: the sshd processes serving the agents' connections
// are frozen, so they never hang up the sessions, which run on): --resume
// reaps the previous run's sessions on the host by their marks before its
// workers start there, and nothing is left.
func TestRemotePartitionedKillAndResume(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	var helpers []int
	freeze := func() {
		for _, pid := range s.Procs() {
			args, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if !strings.Contains(string(args), "remote-run") {
				continue
			}
			helpers = append(helpers, pid)
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			ppid, _ := strconv.Atoi(f[1]) // sshd's process of this connection
			if err := syscall.Kill(ppid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(ppid, syscall.SIGKILL) })
		}
		if len(helpers) == 0 {
			t.Fatalf("no remote session:\n%s", s.Run("ps -u "+s.User+" -o pid,args"))
		}
	}
	_, recs := remoteKillAndResume(t, s, project, func() {
		noLeftovers(t, project)
		// The host did not see the drop: the sessions run on.
		time.Sleep(time.Second)
		for _, pid := range helpers {
			if syscall.Kill(pid, 0) != nil {
				t.Fatalf("the session of helper %d ended with the connection: no partition to reap", pid)
			}
		}
	}, freeze)
	checkReaped(t, recs, "")
	for _, r := range recs {
		if r.Type == "remote_reaped" && (!strings.HasPrefix(recDetail(r, "said"), "reaped ") || strings.HasPrefix(recDetail(r, "said"), "reaped 0 ")) {
			t.Errorf("the resume reaped nothing on the host: %v", r.Details)
		}
	}
}

// checkReaped asserts one remote_reaped record for box (the resumed run),
// saying want when not "".
func checkReaped(t *testing.T, recs []vocab.EventRecord, want string) {
	t.Helper()
	n := 0
	for _, r := range recs {
		if r.Type == "remote_reaped" {
			n++
			if recDetail(r, "host") != "box" || recDetail(r, "error") != "" || (want != "" && recDetail(r, "said") != want) {
				t.Errorf("remote_reaped %v, want host box saying %q", r.Details, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d remote_reaped records, want 1", n)
	}
}

// remoteKillAndResume runs a task with both workers on box, kills
// Hivemind with SIGKILL once a worker is busy (after before, if given),
// calls killed, resumes (no --workers: the task keeps its placement) and
// checks the task completes with nothing left on either side. It returns
// the task dir and its records.
func remoteKillAndResume(t *testing.T, s *sshtest.Server, project string, killed func(), before ...func()) (string, []vocab.EventRecord) {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, home, 20*time.Millisecond, "--headless", "--agent", "sim", "--workers", "2@box",
		"--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var dir string
	waitFor(t, runDeadline, "a remote worker busy", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("hivemind exited before the workers worked: %v\n%s", err, out.String())
		default:
		}
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*"))
		if len(m) != 1 {
			return false
		}
		dir = m[0]
		for _, r := range readEventLog(dir) {
			if r.Type == "input.agent_health" && strings.HasPrefix(string(r.Agent), "worker_") && recDetail(r, "health") == "busy" {
				return true
			}
		}
		return false
	})
	for _, f := range before {
		f()
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed()
	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--agent", "sim", "--project", project)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume exit %d, want 0; output:\n%s", code, out2.String())
	}
	checkComplete(t, dir)
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v\n%s", left, s.Run("ps -u "+s.User+" -o pid,args"))
	}
	return dir, readRecords(t, dir)
}

// The host goes down mid-subtask (sshd and its connections gone, the port
// refusing): the workers' exits say which host and why, in the one line of
// its Check, and the task needs a human with that reason at once (a
// restart cannot fix a host that is down). With the host back, --resume
// --retry completes the task there.
func TestRemoteHostDownMidRun(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	cfg := filepath.Join(project, ".hivemind", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Top-level keys go before the [hosts.box] table.
	if err := os.WriteFile(cfg, append([]byte("backoff_seconds = [1]\nmax_retries = 2\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, home, 10*time.Millisecond, "--headless", "--agent", "sim", "--workers", "2@box",
		"--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	waitFor(t, runDeadline, "worker_1 busy on a subtask", func() bool {
		m, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*"))
		if len(m) != 1 {
			return false
		}
		dir = m[0]
		for _, r := range readEventLog(dir) {
			if r.Type == "input.agent_health" && r.Agent == "worker_1" && recDetail(r, "health") == "busy" {
				return true
			}
		}
		return false
	})
	down := time.Now()
	s.Down()
	code := 0
	if err := cmd.Wait(); err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	if code != 3 {
		t.Fatalf("exit %d, want 3 (needs_human); output:\n%s", code, out.String())
	}
	t.Logf("needs_human %v after the host went down", time.Since(down).Round(time.Millisecond))
	cause := "box: ssh: connect to host 127.0.0.1 port " + strconv.Itoa(s.Port) + ": Connection refused — is sshd running there, on that port?"
	st := readState(t, dir)
	if st.Phase != vocab.PhaseNeedsHuman || !strings.Contains(st.Reason, cause) {
		t.Errorf("state %s, reason %q; want needs_human naming %q", st.Phase, st.Reason, cause)
	}
	// Every worker exit that is a connection failure (ssh's 255, or a
	// start that could not reach the host) names the cause, and a host
	// diagnosed down is not retried: a restart cannot fix it. (A restart
	// for a message the exit left undelivered may be scheduled before the
	// diagnosis comes back; its exit record names the cause.)
	recs := readRecords(t, dir)
	exits := countRecords(recs, "agent_exited", func(r vocab.EventRecord) bool {
		code := recDetail(r, "exit_code")
		return strings.HasPrefix(string(r.Agent), "worker_") && (code == "255" || code == "-1") && !strings.Contains(recDetail(r, "detail"), cause)
	})
	restarts, named := 0, 0
	for _, r := range recs {
		if r.Type == "agent_restart_scheduled" && strings.HasPrefix(string(r.Agent), "worker_") && r.Time.After(down) &&
			!strings.HasPrefix(recDetail(r, "reason"), "message not delivered") {
			restarts++
			if strings.Contains(recDetail(r, "reason"), cause) {
				named++
			}
		}
	}
	if exits != 0 || restarts != 0 || !strings.Contains(st.Reason, "A restart cannot fix this") {
		t.Errorf("%d worker connection failures do not name the cause; %d restart(s) scheduled after the host was found down (want none, needs_human at once; %d name it):\n%s",
			exits, restarts, named, out.String())
	}
	s.Up()
	up := time.Now()
	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--retry", "--agent", "sim", "--project", project)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume exit %d, want 0; output:\n%s", code, out2.String())
	}
	t.Logf("the resumed run completed in %v", time.Since(up).Round(time.Millisecond))
	checkComplete(t, dir)
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v\n%s", left, s.Run("ps -u "+s.User+" -o pid,args"))
	}
}

// The TUI shows a remote worker's pane live, as a local one: the agent's
// output on the host (the paths it reads are the host's) while it works,
// and the task completes.
func TestRemoteWorkersTUI(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	r := startTUI(t, tuiOptions{simArgs: "--pace 10ms", project: project,
		args: []string{"--agent", "sim", "--workers", "2@box", "build a tiny calculator"}})
	remoteTask := s.Home + "/hm/"
	r.waitScreen(2*tuiWait, "worker_1's pane showing what it reads on the host", func(sc tuiScreen) bool {
		text, ok := sc.paneText("worker_1")
		return ok && strings.Contains(text, "Read(") && strings.Contains(strings.Join(strings.Fields(text), ""), remoteTask)
	})
	r.waitText(2*tuiWait, "COMPLETE")
	checkComplete(t, r.taskDir())
	if code := r.quit(); code != 0 {
		t.Errorf("exit status %d after a complete task, want 0", code)
	}
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v", left)
	}
}

// Workers of an agent not wired for hosts (Codex here) are refused
// before anything starts, saying what runs there and what to do; the
// host is not even contacted.
func TestRemoteAgentRefused(t *testing.T) {
	parallel(t)
	project := wtRepo(t, false)
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte("[hosts.box]\nssh = \"box.invalid\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, t.TempDir(), "--headless", "--agent", "worker=codex", "--workers", "2@box", "--project", project, "build a tiny calculator")
	if code := exitCode(t, cmd); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if want := `workers placed on box run only claude or sim for now (worker_1's agent "codex" is not wired for hosts yet)`; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "box.invalid") {
		t.Errorf("the host was contacted:\n%s", out.String())
	}
	if m, _ := filepath.Glob(filepath.Join(ws, "tasks", "*")); len(m) != 0 {
		t.Errorf("a task was created: %v", m)
	}
}
