package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cliPackages are the npm packages of the real agent CLIs.
var cliPackages = map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli", "opencode": "opencode-ai"}

// SetupTeamOffline is SetupClaudeOffline for a team of any of the real
// CLIs (claude, codex, gemini): it skips, naming the missing ones, unless
// each is on PATH, and prepares one home whose configuration points all
// three at the same scripted fake API (Messages, Responses and Gemini
// wires) with dummy keys.
func SetupTeamOffline(t *testing.T, sc fakeapi.Script, clis ...string) *ClaudeOffline {
	t.Helper()
	var missing []string
	for _, c := range clis {
		if _, ok := agenttest.Binary(c); !ok {
			missing = append(missing, c+" (npm "+cliPackages[c]+")")
		}
	}
	if len(missing) > 0 {
		t.Skipf("real agent CLIs not on PATH: %s; install them to run this test (.ci/run does; docs/agents/)", strings.Join(missing, ", "))
	}
	if testing.Short() {
		t.Skip("real agent CLI end-to-end test skipped in -short mode")
	}
	c := newOffline(t, sc)
	codexHome := filepath.Join(c.Home, "codex")
	if err := agenttest.WriteCodexHome(codexHome, c.API.URL(), []string{c.Project}, nil); err != nil {
		t.Fatal(err)
	}
	if err := agenttest.WriteGeminiHome(c.Home, []string{c.Project}, nil); err != nil {
		t.Fatal(err)
	}
	c.Env = append(c.Env, "CODEX_HOME="+codexHome, agenttest.CodexKeyEnv+"="+agenttest.APIKey,
		"GEMINI_API_KEY="+agenttest.APIKey, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(c.API.URL(), "/"),
		// Gemini CLI ignores a settings file below a directory others may
		// write (t.TempDir is below /tmp): Hivemind then keeps it in the
		// cache directory, which must be private.
		"XDG_CACHE_HOME="+privateCache(t))
	if slices.Contains(clis, "opencode") {
		writeOpencodeHome(t, c)
	}
	return c
}

// privateCache is a directory below the user's home that only its owner
// may write, removed after the test.
func privateCache(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory for a private cache")
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(filepath.Join(home, ".cache"), "hivemind-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// runTeam runs a whole task headless with --agent agent to complete, and
// checks what every run must hold.
func runTeam(t *testing.T, agent string, clis ...string) (*ClaudeOffline, string) {
	sc := fakeapi.DefaultScript()
	c := SetupTeamOffline(t, sc, clis...)
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", agent, "--workers", "2", "add a greeting service")
	code := p.wait(t)
	took := time.Since(p.start)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, p.out.String())
	}
	dir := taskDirOf(c.Project)
	st := checkComplete(t, dir)
	if st.RevisionCount != 1 {
		t.Errorf("revision_count %d, want 1 (the first plan is rejected)", st.RevisionCount)
	}
	recs := readEventLog(dir)
	stops := checkHealth(t, recs, claudeAgents)
	triggersConsumedOnce(t, dir, recs)
	noLeftovers(t, c.Project)
	kinds := map[string]int{}
	for _, r := range c.API.Requests() {
		kinds[r.Agent+"/"+r.Kind]++
	}
	t.Logf("--agent %s: complete in %v; %d turns ended by hooks; requests by agent/wire: %v", agent, took.Round(time.Millisecond), stops, kinds)
	return c, dir
}

// onlyAs is an --agent value for a property of some agents alone: cli
// runs the agents named (roles or agent ids), the built-in sim every
// other, so the run pays for no real CLI the property does not need
// (three to four Node processes each, the package's critical path:
// parallel_test.go). simLike makes those sims follow the same script.
func onlyAs(cli string, agents ...string) string {
	var v []string
	for _, role := range []string{"lead", "reviewer", "worker"} {
		if !slices.Contains(agents, role) {
			v = append(v, role+"=sim")
		}
	}
	for _, a := range agents {
		v = append(v, a+"="+cli)
	}
	return strings.Join(v, ",")
}

// simLike makes the run's sim agents follow sc as the fake API does
// (plan rejections, checkpoint issues), briskly paced.
func (c *ClaudeOffline) simLike(sc fakeapi.Script) {
	c.Env = append(c.Env, fmt.Sprintf("HIVEMIND_SIM_ARGS=--pace 5ms --reject-plans %d --checkpoint-issues %d",
		sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues))
}

// wireOf is the fake API wire each CLI speaks.
var wireOf = map[string]string{"claude": "messages", "codex": "responses", "gemini": "gemini", "opencode": "messages"}

// checkWires asserts that each agent's model requests came on its CLI's
// wire, with its role prompt: the team really ran the CLIs it was given,
// each told its role its own way.
func checkWires(t *testing.T, c *ClaudeOffline, team map[vocab.Role]string) {
	t.Helper()
	checkAgentWires(t, c, func(id vocab.AgentID) string { return team[vocab.RoleOf(id)] })
}

// checkAgentWires is checkWires with each agent's CLI given by cliOf.
func checkAgentWires(t *testing.T, c *ClaudeOffline, cliOf func(vocab.AgentID) string) {
	t.Helper()
	for _, r := range c.API.Requests() {
		if r.Agent == "" || !r.HasTools {
			continue
		}
		role := vocab.RoleOf(vocab.AgentID(r.Agent))
		cli := cliOf(vocab.AgentID(r.Agent))
		if r.Kind != wireOf[cli] {
			t.Errorf("%s (%s) sent a %s request", r.Agent, cli, r.Kind)
		}
		prompt, _, err := roles.Prompt(role, "", "")
		if err != nil {
			t.Fatal(err)
		}
		line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
		quoted, _ := json.Marshal(line)
		if !bytes.Contains(r.Body, quoted[1:len(quoted)-1]) {
			t.Errorf("%s (%s): a request without its role prompt (%q)", r.Agent, cli, line)
		}
	}
}

// A mixed team (Claude Lead, Codex Reviewer, Gemini Workers) runs a whole
// task to complete offline: plan rejected once, checkpoint fixed once.
func TestMixedTeamComplete(t *testing.T) {
	parallel(t)
	c, _ := runTeam(t, "lead=claude,reviewer=codex,worker=gemini", "claude", "codex", "gemini")
	checkWires(t, c, map[vocab.Role]string{"lead": "claude", "reviewer": "codex", "worker": "gemini"})
}

// Mixed workers (worker_1 Codex, worker_2 Gemini; the Lead and Reviewer
// sims, TestMixedTeamComplete's real ones) run a whole task to complete
// offline: each worker's requests come on its own CLI's wire, and each
// did work.
func TestMixedWorkersComplete(t *testing.T) {
	parallel(t)
	c, dir := runTeam(t, "lead=sim,reviewer=sim,worker_1=codex,worker_2=gemini", "codex", "gemini")
	team := map[vocab.AgentID]string{"lead": "sim", "reviewer": "sim", "worker_1": "codex", "worker_2": "gemini"}
	checkAgentWires(t, c, func(id vocab.AgentID) string { return team[id] })
	seen := map[string]bool{}
	for _, r := range c.API.Requests() {
		if r.HasTools {
			seen[r.Agent+"/"+r.Kind] = true
		}
	}
	for _, want := range []string{"worker_1/responses", "worker_2/gemini"} {
		if !seen[want] {
			t.Errorf("no %s request: %v", want, seen)
		}
	}
	task, err := workspace.ReadTask(dir)
	if err != nil {
		t.Fatal(err)
	}
	for id, cli := range team {
		if task.AgentOf(id) != cli {
			t.Errorf("task.json: %s ran %q, want %q", id, task.AgentOf(id), cli)
		}
	}
}

// --agent codex alone runs a whole task to complete. Its CLI's Lead
// revising a plan, Reviewer rejecting one and worker fixing a checkpoint
// are TestUsageExact*'s in the short suite: make test-long runs this.
func TestCodexTeamComplete(t *testing.T) {
	if !testkit.Long() {
		t.Skip("every role on Codex is covered by TestUsageExact* and TestMixedTeamComplete: make test-long or make real-agents (HIVEMIND_TEST_LONG=1)")
	}
	parallel(t)
	c, _ := runTeam(t, "codex", "codex")
	checkWires(t, c, map[vocab.Role]string{"lead": "codex", "reviewer": "codex", "worker": "codex"})
}

// --agent gemini alone runs a whole task to complete. Its CLI's Lead
// revising a plan, Reviewer rejecting one and worker fixing a checkpoint
// are TestUsageExact*'s in the short suite: make test-long runs this.
func TestGeminiTeamComplete(t *testing.T) {
	if !testkit.Long() {
		t.Skip("every role on Gemini is covered by TestUsageExact* and TestMixedTeamComplete: make test-long or make real-agents (HIVEMIND_TEST_LONG=1)")
	}
	parallel(t)
	c, _ := runTeam(t, "gemini", "gemini")
	checkWires(t, c, map[vocab.Role]string{"lead": "gemini", "reviewer": "gemini", "worker": "gemini"})
}

// A Reviewer run by cli tries to write a project source file during its
// plan review (the script's forbidden write): Hivemind's hook denies it in
// the CLI's own format, the file never appears, the denial is logged, and
// the review is still written. The run is then cancelled. (The Lead and
// the Worker are sims: the property is the Reviewer's.)
func reviewerCannotEditSource(t *testing.T, cli string) {
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues, sc.Scenario.ForbiddenWrite = 0, 0, true
	c := SetupTeamOffline(t, sc, cli)
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", onlyAs(cli, "reviewer"), "--workers", "1", "add a greeting service")
	denied := waitEvent(t, c, p, 3*time.Minute, "a tool_denied event for the reviewer", func(r vocab.EventRecord) bool {
		return r.Type == "tool_denied" && r.Agent == "reviewer"
	})
	waitEvent(t, c, p, 2*time.Minute, "plan_approved", func(r vocab.EventRecord) bool { return r.Type == "plan_approved" })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 1 {
		t.Errorf("exit %d after SIGINT, want 1 (cancelled)", code)
	}
	dir := taskDirOf(c.Project)
	var forbidden []fakeapi.Request
	for _, r := range c.API.Requests() {
		if r.Agent == "reviewer" && r.ToolPath != "" && !strings.HasPrefix(r.ToolPath, dir+"/") {
			forbidden = append(forbidden, r)
		}
	}
	if len(forbidden) != 1 {
		t.Fatalf("reviewer writes outside the task dir: %d, want the one scripted attempt", len(forbidden))
	}
	path := forbidden[0].ToolPath
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists after a denied write (err %v)", path, err)
	}
	// The model was told why (the tool result of the next request).
	told := ""
	for _, r := range c.API.Requests() {
		for _, res := range r.Results {
			if r.Agent == "reviewer" && strings.Contains(res.Text, "may not write") {
				told = res.Text
			}
		}
	}
	if told == "" {
		t.Errorf("the reviewer's model was not told the write was denied")
	}
	if _, err := os.Stat(filepath.Join(dir, "reviews", "plan_v1-approved.md")); err != nil {
		t.Errorf("the review was not written and archived: %v", err)
	}
	noLeftovers(t, c.Project)
	t.Logf("%s reviewer: denied %s (%s); the model was told %q", cli, path, recDetail(denied, "reason"), clip(told, 200))
}

// TestCodexReviewerCannotEditSource: the apply_patch heredoc Codex runs
// is judged as a Write of each file in the patch.
func TestCodexReviewerCannotEditSource(t *testing.T) {
	parallel(t)
	reviewerCannotEditSource(t, "codex")
}

// TestGeminiReviewerCannotEditSource: Gemini's write_file reaches the
// BeforeTool hook, which answers {"decision":"deny"}.
func TestGeminiReviewerCannotEditSource(t *testing.T) {
	parallel(t)
	reviewerCannotEditSource(t, "gemini")
}

// SIGKILL hivemind once the Codex Reviewer and a Gemini Worker have each
// finished a turn, then --resume without --agent: the task's own mixed
// team (the Lead a sim) runs again (task.json), Codex and Gemini each continue the
// conversation saved before the kill (their first request after the
// resume carries their first [HIVEMIND] message), and the task completes.
func TestMixedTeamKillAndResume(t *testing.T) {
	parallel(t)
	team := map[vocab.Role]string{"lead": "sim", "reviewer": "codex", "worker": "gemini"}
	sc := fakeapi.DefaultScript()
	c := SetupTeamOffline(t, sc, "codex", "gemini")
	c.simLike(sc)
	p1 := c.Start(t, "--headless", "--agent", "lead=sim,reviewer=codex,worker=gemini", "--workers", "1", "add a greeting service")
	resumable := []string{"reviewer", "worker_1"}
	waitFor(t, 3*time.Minute, "the reviewer and worker_1 to finish a turn", func() bool {
		if p1.exited() {
			t.Fatalf("hivemind exited early:\n%s", p1.out.String())
		}
		dir := taskDirOf(c.Project)
		for _, a := range resumable {
			if _, err := os.Stat(filepath.Join(dir, "settings", a+".session")); dir == "" || err != nil {
				return false
			}
		}
		// Each has ended a turn (busy, then idle, in the log: polling
		// state.json for "idle" can miss a short idle window): the kill
		// takes the agents down with Hivemind at once (its guard), and a
		// CLI killed in the middle of its first turn may not have saved
		// it; a later turn cut short leaves the first one saved.
		recs := readEventLog(dir)
		for _, a := range resumable {
			busy, ended := false, false
			for _, r := range recs {
				if string(r.Agent) != a || r.Type != vocab.InputPrefix+"agent_health" {
					continue
				}
				switch recDetail(r, "health") {
				case "busy":
					busy = true
				case "idle":
					ended = ended || busy
				}
			}
			if !ended {
				return false
			}
		}
		return true
	})
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p1.done
	killedAt := time.Now()
	noLeftovers(t, c.Project)
	first := map[string]string{}
	for _, r := range c.API.Requests() {
		if r.HasTools && first[r.Agent] == "" {
			first[r.Agent] = r.Prompt
			// The check below counts the message in a request body: a
			// fresh conversation holds it once.
			quoted, _ := json.Marshal(r.Prompt)
			if n := bytes.Count(r.Body, quoted[1:len(quoted)-1]); n != 1 && slices.Contains(resumable, r.Agent) {
				t.Errorf("%s: its first request holds its message %d times", r.Agent, n)
			}
		}
	}

	p2 := c.Start(t, "--headless", "--resume")
	if code := p2.wait(t); code != 0 {
		t.Fatalf("resume exit %d, want 0\n%s", code, p2.out.String())
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	checkWires(t, c, team)
	// The resumed Gemini was typed to once it had loaded its conversation
	// (it draws its prompt before: ptyagent.GeminiResumeLoaded).
	ready := ""
	for _, r := range readEventLog(dir) {
		if string(r.Agent) == "worker_1" && r.Type == vocab.InputPrefix+"agent_health" && recDetail(r, "health") == "ready" {
			ready = recDetail(r, "detail")
		}
	}
	if !strings.Contains(ready, "conversation loaded") {
		t.Errorf("worker_1 (gemini) ready after the resume as %q, want its conversation loaded", ready)
	}
	for _, a := range resumable {
		quoted, _ := json.Marshal(first[a])
		var resumed *fakeapi.Request
		for _, r := range c.API.Requests() {
			if r.Agent == a && r.HasTools && r.At.After(killedAt) {
				resumed = &r
				break
			}
		}
		switch {
		case first[a] == "":
			t.Errorf("%s: no request before the kill", a)
		case resumed == nil:
			t.Errorf("%s: no request after the resume", a)
		case bytes.Count(resumed.Body, quoted[1:len(quoted)-1]) < 1+btoi(resumed.Prompt == first[a]):
			// (The engine may send the same message again after the
			// resume: then the conversation holds it twice.)
			t.Errorf("%s (%s): the first request after the resume does not carry the conversation before the kill (%q)", a, team[vocab.RoleOf(vocab.AgentID(a))], first[a])
			for _, r := range c.API.Requests() {
				if r.Agent == a {
					t.Logf("  %s %+.2fs tools=%v holds the first message %d times, %d bytes, prompt %q",
						a, r.At.Sub(killedAt).Seconds(), r.HasTools, bytes.Count(r.Body, quoted[1:len(quoted)-1]), len(r.Body), clip(r.Prompt, 120))
				}
			}
		}
	}
	noLeftovers(t, c.Project)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A Gemini agent killed during its first turn (no turn has ended, so no
// session was reported) is restarted and works. Gemini saved its session
// at start: with the message in it the restart resumes it, without it is
// moved aside (--session-id refuses an existing id, --resume one without
// messages; either way every restart failed — seen when CI=true made
// Gemini exit at start). The Lead and Reviewer are sims.
func TestGeminiKilledInFirstTurn(t *testing.T) {
	parallel(t)
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	c := SetupTeamOffline(t, sc, "gemini")
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", onlyAs("gemini", "worker"), "--workers", "1", "add a greeting service")
	busy := waitEvent(t, c, p, 3*time.Minute, "worker_1 busy with its first assignment", func(r vocab.EventRecord) bool {
		return r.Agent == "worker_1" && r.Type == vocab.InputPrefix+"agent_health" && recDetail(r, "health") == "busy"
	})
	pid, err := strconv.Atoi(recDetail(busy, "pid"))
	if err != nil {
		t.Fatalf("busy record without a pid: %v", busy.Details)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, p.out.String())
	}
	checkComplete(t, taskDirOf(c.Project))
	if n := countRecords(readEventLog(taskDirOf(c.Project)), "agent_restarted", func(r vocab.EventRecord) bool { return r.Agent == "worker_1" }); n != 1 {
		t.Errorf("worker_1 restarted %d times, want 1", n)
	}
}
