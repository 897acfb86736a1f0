package e2e_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/internal/sshtest"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Real Claude Code as remote workers (issue 18): the sshtest server is
// the host "box", where the workers' Claude runs as another Unix user,
// from that user's PATH, in its own home; the lead and the reviewer run
// here. Every agent talks to the fake API on loopback (reachable from the
// host: it is this machine).

// remoteClaude is a ClaudeOffline whose workers run on s.
type remoteClaude struct {
	*ClaudeOffline
	s *sshtest.Server
}

// setupRemoteClaude skips without root, sshd, or a `claude` the host's
// user can run; else it prepares the host's home for Claude Code (its
// dialogs done, the work dir trusted, the test key approved) and names
// the host in the project's config.
func setupRemoteClaude(t *testing.T, sc fakeapi.Script) *remoteClaude {
	t.Helper()
	c := SetupClaudeOffline(t, sc)
	s := sshtest.Start(t, sshtest.Options{})
	if err := claudetest.WriteConfig(s.Home, s.Home+"/hm"); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(s.Home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, s.UID, s.GID)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := s.SSH(ctx, s.Alias, "claude --version").CombinedOutput(); err != nil {
		t.Skipf("real Claude Code does not run as %s on the test host (%v: %s): install it where that user's PATH finds it (/usr/bin/claude)",
			s.User, err, strings.TrimSpace(string(out)))
	}
	configureBox(t, s, c.Project)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.Log())
		}
	})
	return &remoteClaude{ClaudeOffline: c, s: s}
}

// remoteTaskDir is the task dir mirror on the host (remote_host_ready).
func remoteTaskDir(t *testing.T, recs []vocab.EventRecord, task string) string {
	t.Helper()
	for _, r := range recs {
		if r.Type == "remote_host_ready" {
			return recDetail(r, "root") + "/tasks/" + task
		}
	}
	t.Fatal("no remote_host_ready record")
	return ""
}

// checkRemoteWorkers asserts what makes the workers remote Claude
// sessions: every model request of a worker ran in its worktree on the
// host, and every Write it made there succeeded. A Write answered before
// cutUntil may have no result: a killed connection's agent lives on the
// host until the helper's hang-up grace ends, and may be answered a Write
// it never reports. It returns the number of worker writes.
func checkRemoteWorkers(t *testing.T, rc *remoteClaude, cutUntil time.Time) int {
	t.Helper()
	hostWork := rc.s.Home + "/hm/"
	for _, r := range rc.API.Requests() {
		if strings.HasPrefix(r.Agent, "worker_") && r.Kind == "messages" && r.HasTools && r.Cwd != "" &&
			!strings.HasPrefix(r.Cwd, hostWork) {
			t.Errorf("%s's Claude ran in %s, not in its worktree on the host (%s…)", r.Agent, r.Cwd, hostWork)
		}
	}
	ws := apiWrites(rc.API)
	last := map[string]*apiWrite{}
	for _, w := range ws {
		last[w.agent] = w
	}
	n := 0
	for _, w := range ws {
		if !strings.HasPrefix(w.agent, "worker_") {
			continue
		}
		n++
		if !strings.HasPrefix(w.path, hostWork) {
			t.Errorf("%s wrote %s, not a path on the host", w.agent, w.path)
		}
		cut := w.result == "" && (last[w.agent] == w || w.at.Before(cutUntil))
		if !w.ok && !cut {
			t.Errorf("%s: Write %s did not succeed: %q", w.agent, w.path, w.result)
		}
	}
	if n == 0 {
		t.Error("the workers made no Write")
	}
	return n
}

// checkRemoteEnd asserts that the workers' commits reached the task
// branch and that nothing is left running on either side, nor of the
// task on the host.
func checkRemoteEnd(t *testing.T, rc *remoteClaude, task string) {
	t.Helper()
	log := wtGit(t, rc.Project, "log", "--format=%s", "hivemind/"+task)
	for _, w := range []string{"worker_1", "worker_2"} {
		if !strings.Contains(log, "["+w+"] ") {
			t.Errorf("no commit of %s on the task branch:\n%s", w, log)
		}
	}
	noLeftovers(t, rc.Project)
	if left := rc.s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v\n%s", left, rc.s.Run("ps -u "+rc.s.User+" -o pid,args"))
	}
	if left := rc.s.Run("cd ~/hm/*/ && ls -A worktrees tasks"); strings.TrimSpace(left) != "tasks:\n\nworktrees:" {
		t.Errorf("left of the task on the host:\n%s", left)
	}
}

// Two workers running real Claude Code on the host take a whole task to
// complete: their sessions start in the host's worktrees with the settings
// file written there, their hooks (run on the host by the installed
// helper) reach the local relay, so every turn ends by the Stop hook and
// every [HIVEMIND] line (naming the host's paths) is confirmed by the
// UserPromptSubmit hook; their commits come back; nothing is left.
func TestRemoteClaudeWorkersComplete(t *testing.T) {
	parallel(t)
	rc := setupRemoteClaude(t, fakeapi.DefaultScript())
	p := rc.Start(t, "--headless", "--agent", "claude", "--workers", "2@box", "add a greeting service")
	code := p.wait(t)
	took := time.Since(p.start)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(rc.Project)
	st := checkComplete(t, dir)
	recs := readEventLog(dir)
	remoteTask := remoteTaskDir(t, recs, st.TaskID)
	injected, byHook := checkInjectionsSeen(t, dir, recs, rc.API, func(agent, line string) string {
		if strings.HasPrefix(agent, "worker_") {
			return strings.ReplaceAll(line, dir, remoteTask)
		}
		return line
	})
	stops := checkHealth(t, recs, claudeAgents)
	writes := checkRemoteWorkers(t, rc, time.Time{})
	// Their usage is read from local copies of their transcripts on the
	// host.
	for _, w := range []string{"worker_1", "worker_2"} {
		n := countRecords(recs, "agent_usage", func(r vocab.EventRecord) bool { return string(r.Agent) == w })
		copied, err := os.ReadFile(filepath.Join(dir, "logs", "agents", w+".host-transcript.jsonl"))
		if n == 0 || err != nil || !strings.Contains(string(copied), `"usage"`) {
			t.Errorf("%s: %d usage records, transcript copy (%v) of %d bytes", w, n, err, len(copied))
		}
	}
	checkRemoteEnd(t, rc, st.TaskID)
	t.Logf("complete in %v: %d injections confirmed (%d by the UserPromptSubmit hook), %d turns ended by the Stop hook, %d Write calls of the remote workers",
		took.Round(time.Millisecond), injected, byHook, stops, writes)
}

// The ssh connection of a remote Claude worker is killed while it works
// on a subtask, after a finished turn (a conversation saved on the host):
// the engine restarts it, the helper on the host finds the transcript and
// starts Claude with --resume under the same session id, the model sees
// the earlier conversation, the subtask is done once and the task
// completes; nothing is left on either side. (The Lead and Reviewer are
// sims: the property is the remote workers'.)
func TestRemoteClaudeConnectionKilled(t *testing.T) {
	parallel(t)
	// No plan rejection nor checkpoint fix: the kill is the point (and
	// the e2e package runs within go test's default 10 minutes).
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	rc := setupRemoteClaude(t, sc)
	cfg := filepath.Join(rc.Project, ".hivemind", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Top-level keys go before the [hosts.box] table.
	if err := os.WriteFile(cfg, append([]byte("backoff_seconds = [1]\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	// The Claude processes on the host (this machine: /proc shows them).
	watch := watchAgents(rc.s.Home + "/hm")
	rc.simLike(sc)
	p := rc.Start(t, "--headless", "--agent", onlyAs("claude", "worker"), "--workers", "2@box", "add a greeting service")
	var dir, subtask string
	var pid int
	waitFor(t, 3*time.Minute, "worker_1 busy on a subtask after a finished turn", func() bool {
		if p.exited() {
			t.Fatalf("hivemind exited before:\n%s", p.out.String())
		}
		if dir = taskDirOf(rc.Project); dir == "" {
			return false
		}
		idle, open := false, map[string]bool{}
		pid, subtask = 0, ""
		for _, r := range readEventLog(dir) {
			switch {
			case r.Agent != "worker_1":
			case r.Type == "subtask_assigned":
				subtask = recDetail(r, "subtask")
				open[subtask] = true
			case r.Type == "subtask_done":
				delete(open, recDetail(r, "subtask"))
			case r.Type == "input.agent_health" && recDetail(r, "health") == "idle":
				idle, pid = true, 0
			case r.Type == "input.agent_health" && recDetail(r, "health") == "busy" && idle:
				pid, _ = strconv.Atoi(recDetail(r, "pid"))
			}
		}
		return pid > 0 && open[subtask]
	})
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) != "ssh" {
		t.Fatalf("worker_1's process %d is %q, want ssh", pid, strings.TrimSpace(string(comm)))
	}
	sid := ptyagent.ClaudeSessionID(filepath.Base(dir), "worker_1")
	// The conversation the model had seen at the end of worker_1's last
	// finished turn.
	var before []string
	for _, r := range rc.API.Requests() {
		if r.Agent == "worker_1" && r.Kind == "messages" && r.HasTools && r.Status == 200 && r.StopReason == "end_turn" {
			before = r.HivemindLines()
		}
	}
	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t)
	started := watch.result()
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if got, want := strings.Join(started["worker_1"], ", "), "--session-id "+sid+", --resume "+sid; got != want {
		t.Errorf("worker_1's Claude on the host was started with %s, want %s", got, want)
	}
	st := checkComplete(t, dir)
	recs := readEventLog(dir)
	restarted := countRecords(recs, "agent_restarted", func(r vocab.EventRecord) bool { return r.Agent == "worker_1" })
	if restarted < 1 {
		t.Errorf("worker_1 restarted %d times, want at least 1", restarted)
	}
	done := countRecords(recs, "subtask_done", func(r vocab.EventRecord) bool {
		return r.Agent == "worker_1" && recDetail(r, "subtask") == subtask
	})
	if done != 1 {
		t.Errorf("worker_1's subtask %s at the kill done %d times, want 1", subtask, done)
	}
	// Resumed: the first turn of the restarted agent is of the same
	// session and carries the conversation saved before the kill. (The
	// old agent may still ask the model something after the kill: the
	// helper on the host ends it on the hang-up, with a grace period.)
	var restartedAt time.Time
	for _, r := range recs {
		if r.Type == "input.agent_health" && r.Agent == "worker_1" && recDetail(r, "health") == "ready" && r.Time.After(killedAt) {
			restartedAt = r.Time
			break
		}
	}
	if restartedAt.IsZero() {
		t.Fatal("worker_1 was not ready again after the kill")
	}
	var first *fakeapi.Request
	for _, r := range rc.API.Requests() {
		if r.At.After(restartedAt) && r.Agent == "worker_1" && r.Kind == "messages" && r.HasTools && r.Status == 200 {
			if r.SessionID != sid {
				t.Errorf("worker_1: session %s after the kill, want %s", r.SessionID, sid)
			}
			if first == nil {
				first = &r
			}
		}
	}
	switch {
	case len(before) == 0:
		t.Error("worker_1 had no finished turn before the kill")
	case first == nil:
		t.Error("worker_1 made no request after the kill")
	case len(first.HivemindLines()) <= len(before) || strings.Join(first.HivemindLines()[:len(before)], "\n") != strings.Join(before, "\n"):
		t.Errorf("worker_1's first turn after the kill does not carry its earlier conversation:\n  %s\nbefore the kill:\n  %s",
			strings.Join(first.HivemindLines(), "\n  "), strings.Join(before, "\n  "))
	}
	checkHealth(t, recs, []string{"worker_1", "worker_2"})
	writes := checkRemoteWorkers(t, rc, restartedAt)
	checkRemoteEnd(t, rc, st.TaskID)
	if first != nil {
		t.Logf("worker_1's connection killed on %s after %d lines of conversation; restarted %d time(s), resumed with %d lines; %d Write calls of the remote workers",
			subtask, len(before), restarted, len(first.HivemindLines()), writes)
	}
}
