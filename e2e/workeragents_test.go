package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sshtest"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Per-worker agents: worker_1 runs the built-in sim, worker_2 a custom
// command (a shell line that records who ran it, then runs the sim agent
// as a plain program). The task completes, each worker did its part with
// its own agent, task.json records the team and status names each
// worker's agent.
func TestWorkerAgentsSimAndCustom(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	// The agent may write its own outbox (its write scope): the mark goes
	// there, named by the agent it ran as.
	custom := `touch "$HIVEMIND_TASK_DIR/agents/$HIVEMIND_AGENT_ID/custom-ran" && exec ` + bin + ` sim-agent --pace 2ms`
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "lead=sim,reviewer=sim,worker=sim,worker_2="+custom, "--workers", "2",
		"--project", project, "build a tiny calculator")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s", code, out.String())
	}
	dir := taskDir(t, project)
	st := checkComplete(t, dir)
	noLeftovers(t, project)

	ran, _ := filepath.Glob(filepath.Join(dir, vocab.OutboxesDir, "*", "custom-ran"))
	if len(ran) != 1 || filepath.Base(filepath.Dir(ran[0])) != "worker_2" {
		t.Errorf("the custom command ran as %v; want worker_2 alone", ran)
	}
	done := map[vocab.AgentID]int{}
	for _, s := range st.Subtasks {
		done[s.Worker]++
	}
	if done["worker_1"] == 0 || done["worker_2"] == 0 {
		t.Errorf("subtasks done by worker: %v; want both workers to have worked", done)
	}

	task, err := workspace.ReadTask(dir)
	if err != nil {
		t.Fatal(err)
	}
	if task.AgentOf("worker_1") != "sim" || task.AgentOf("worker_2") != custom || task.AgentOf("lead") != "sim" {
		t.Errorf("task.json team: agent %q agents %v worker_agents %v", task.Agent, task.Agents, task.WorkerAgents)
	}
	status, sout := hivemind(t, ctx, home, "status", "--project", project)
	if c := exitCode(t, status); c != 0 {
		t.Fatalf("status exit %d: %s", c, sout.String())
	}
	for _, l := range strings.Split(sout.String(), "\n") {
		if strings.HasPrefix(l, "  worker_2 ") && !strings.Contains(l, custom) ||
			strings.HasPrefix(l, "  worker_1 ") && !strings.HasSuffix(strings.Fields(l)[5], "sim") {
			t.Errorf("status line without its agent: %q", l)
		}
	}
}

// A worker placed on a host runs its own agent there: worker_2 runs the
// sim agent on box while the worker role (and worker_1, here) runs a
// custom command that is not wired for hosts — the placement is checked
// per worker, not by the role's agent, and the task completes.
func TestWorkerAgentsRemoteMixed(t *testing.T) {
	parallel(t)
	s := sshtest.Start(t, sshtest.Options{})
	project := remoteProject(t, s)
	custom := `touch "$HIVEMIND_TASK_DIR/agents/$HIVEMIND_AGENT_ID/custom-ran" && exec ` + bin + ` sim-agent --pace 2ms`
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, t.TempDir(), "--headless", "--agent", "lead=sim,reviewer=sim,worker="+custom+",worker_2=sim",
		"--workers", "1,1@box", "--project", project, "build a tiny calculator")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, want 0; output:\n%s\nsshd log:\n%s", code, out.String(), s.Log())
	}
	dir := taskDir(t, project)
	checkComplete(t, dir)
	ran, _ := filepath.Glob(filepath.Join(dir, vocab.OutboxesDir, "*", "custom-ran"))
	if len(ran) != 1 || filepath.Base(filepath.Dir(ran[0])) != "worker_1" {
		t.Errorf("the custom command ran as %v; want worker_1 alone (here)", ran)
	}
	recs := readRecords(t, dir)
	if countType(recs, "remote_host_ready") != 1 {
		t.Errorf("remote_host_ready records: %d, want 1", countType(recs, "remote_host_ready"))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "logs", "agents", "worker_2.log"))
	if err != nil || !strings.Contains(string(raw), "/hm/") {
		t.Errorf("worker_2 did not run on box (%v):\n%s", err, clip(string(raw), 2000))
	}
	noLeftovers(t, project)
	if left := s.WaitNoProcs(20 * time.Second); len(left) > 0 {
		t.Errorf("processes left on the host: %v", left)
	}
}
