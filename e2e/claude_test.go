package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// claudeAgents are the agents of a --workers 2 run.
var claudeAgents = []string{"lead", "reviewer", "worker_1", "worker_2"}

// The whole workflow with four real Claude Code sessions against the fake
// API: one plan rejection, one checkpoint fix, complete. Every injected
// message reaches the model exactly once, every turn ends through the Stop
// hook, every file comes from Claude's own Write tool, nothing is left
// running.
func TestClaudeHeadlessComplete(t *testing.T) {
	parallel(t)
	c := SetupClaudeOffline(t, fakeapi.DefaultScript())
	p := c.Start(t, "--headless", "--agent", "claude", "--workers", "2", "add a greeting service")
	code := p.wait(t)
	took := time.Since(p.start)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	st := checkComplete(t, dir)
	if st.RevisionCount != 1 {
		t.Errorf("revision_count %d, want 1 (the first plan is rejected)", st.RevisionCount)
	}
	recs := readEventLog(dir)
	fixes := 0
	for _, r := range recs {
		if r.Type == "checkpoint_issues" {
			fixes++
		}
	}
	if fixes != 1 {
		t.Errorf("%d checkpoint_issues events, want 1", fixes)
	}
	injected, byHook := checkInjections(t, dir, recs, c.API)
	stops := checkHealth(t, recs, claudeAgents)
	nw := checkWrites(t, c, dir, time.Time{})
	consumed := triggersConsumedOnce(t, dir, recs)
	noLeftovers(t, c.Project)
	inWorktrees := 0
	for _, w := range apiWrites(c.API) {
		if _, ok := worktreeRel(c.Project, w.path); ok {
			inWorktrees++
		}
	}
	t.Logf("complete in %v: %d injections confirmed (%d by the UserPromptSubmit hook), %d turns ended by the Stop hook, %d Write calls (%d in worker worktrees), %d triggers consumed, %d API requests",
		took.Round(time.Millisecond), injected, byHook, stops, nw, inWorktrees, consumed, len(c.API.Requests()))
}

// The fake API answers every request of the Lead with 429 for a while, so
// Claude Code gives up (CLAUDE_CODE_MAX_RETRIES=1) and its StopFailure hook
// makes the Lead rate_limited; once that clears the Lead gets its work
// again and the run completes.
func TestClaudeRateLimited(t *testing.T) {
	parallel(t)
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	sc.Errors = []fakeapi.ErrorRule{{Agent: "lead", Status: 429, For: 5 * time.Second, RetryAfter: time.Second}}
	c := SetupClaudeOffline(t, sc)
	c.Env = append(c.Env, "CLAUDE_CODE_MAX_RETRIES=1")
	// A 10 s cooldown (the default is 60 s): it starts after the first
	// 429, so it ends past the fake's 5 s of 429s however slow the
	// machine.
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("rate_limit_cooldown_seconds = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Start(t, "--headless", "--config", cfg, "--agent", "claude", "--workers", "1", "add a greeting service")
	limited := waitEvent(t, c, p, 90*time.Second, "the lead to be rate_limited", func(r vocab.EventRecord) bool {
		return r.Type == "agent_rate_limited" && r.Agent == "lead"
	})
	// The limit clears after the cooldown; the Lead's work is sent again
	// then.
	cleared := waitEvent(t, c, p, 100*time.Second, "the lead's rate limit to clear", func(r vocab.EventRecord) bool {
		return r.Type == "agent_rate_limit_cleared" && r.Agent == "lead"
	}).Time
	code := p.wait(t)
	took := time.Since(p.start)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	dir := taskDirOf(c.Project)
	checkComplete(t, dir)
	recs := readEventLog(dir)
	lead := strings.Join(healthLog(recs)["lead"], " → ")
	if !strings.Contains(lead, "busy (UserPromptSubmit hook) → rate_limited") {
		t.Errorf("lead health does not go busy → rate_limited: %s", lead)
	}
	var errs, okAfter int
	for _, r := range c.API.Requests() {
		if r.Agent != "lead" || r.Kind != "messages" {
			continue
		}
		switch {
		case r.Status == 429:
			errs++
		case r.Status == 200 && r.HasTools && r.At.After(cleared):
			okAfter++
		}
	}
	if errs < 2 || okAfter == 0 {
		t.Errorf("lead: %d requests answered 429, %d turns after the limit cleared", errs, okAfter)
	}
	injected, _ := checkInjections(t, dir, recs, c.API)
	checkHealth(t, recs, []string{"lead", "reviewer", "worker_1"})
	checkWrites(t, c, dir, time.Time{})
	hc := checkHoldCycle(t, recs, "lead", anyAgent)
	held := hc.to.Sub(hc.from)
	noLeftovers(t, c.Project)
	t.Logf("complete in %v: rate_limited at +%v (%s), cleared at +%v (dispatch held %v); %d requests answered 429; %d injections confirmed",
		took.Round(time.Millisecond), limited.Time.Sub(p.start).Round(time.Millisecond), recDetail(limited, "detail"),
		cleared.Sub(p.start).Round(time.Millisecond), held.Round(time.Millisecond), errs, injected)
}

// The Reviewer's scripted attempt to edit a project source file during its
// plan review is denied by the PreToolUse hook: the file does not appear,
// the denial is logged, the model is told, and its review is written. The
// run is then cancelled (SIGINT), which stops the real session. (The Lead
// and the Worker are sims: the property is the Reviewer's.)
func TestClaudeReviewerCannotEditSource(t *testing.T) {
	parallel(t)
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues, sc.Scenario.ForbiddenWrite = 0, 0, true
	c := SetupClaudeOffline(t, sc)
	c.simLike(sc)
	p := c.Start(t, "--headless", "--agent", onlyAs("claude", "reviewer"), "--workers", "1", "add a greeting service")
	denied := waitEvent(t, c, p, 90*time.Second, "a tool_denied event for the reviewer", func(r vocab.EventRecord) bool {
		return r.Type == "tool_denied" && r.Agent == "reviewer"
	})
	waitEvent(t, c, p, 60*time.Second, "plan_approved", func(r vocab.EventRecord) bool {
		return r.Type == "plan_approved"
	})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cancelAt := time.Now()
	code := p.wait(t)
	stopped := time.Since(cancelAt)
	if code != 1 {
		t.Errorf("exit %d after SIGINT, want 1 (cancelled)", code)
	}
	dir := taskDirOf(c.Project)
	if st := readState(t, dir); st.Phase != vocab.PhaseCancelled {
		t.Errorf("state %s after SIGINT, want cancelled", st.Phase)
	}
	var forbidden, review []*apiWrite
	for _, w := range apiWrites(c.API) {
		if w.agent != "reviewer" {
			continue
		}
		if strings.HasPrefix(w.path, dir+"/") {
			review = append(review, w)
		} else {
			forbidden = append(forbidden, w)
		}
	}
	if len(forbidden) != 1 {
		t.Fatalf("reviewer writes outside the task dir: %d, want the one scripted attempt", len(forbidden))
	}
	f := forbidden[0]
	if !f.denied || !strings.Contains(f.result, "may not write") {
		t.Errorf("the forbidden Write of %s was not denied: ok=%v result %q", f.path, f.ok, f.result)
	}
	if _, err := os.Stat(f.path); !os.IsNotExist(err) {
		t.Errorf("%s exists after a denied write (err %v)", f.path, err)
	}
	if r := recDetail(denied, "reason"); !strings.Contains(r, "Write") {
		t.Errorf("tool_denied reason %q does not name the tool", r)
	}
	if len(review) != 1 || !review[0].ok || filepath.Base(review[0].path) != "plan-approved.md" {
		t.Fatalf("reviewer's review writes: %+v", review)
	}
	got, err := os.ReadFile(filepath.Join(dir, "reviews", "plan_v1-approved.md"))
	if err != nil || string(got) != review[0].content {
		t.Errorf("archived review differs from the reviewer's Write (err %v)", err)
	}
	noLeftovers(t, c.Project)
	t.Logf("denied %q (%s); the model was told %q; cancelled and stopped in %v; run took %v",
		f.path, recDetail(denied, "reason"), f.result, stopped.Round(time.Millisecond), time.Since(p.start).Round(time.Millisecond))
}

// SIGKILL hivemind during the first checkpoint review, then --resume: each Claude session that had a conversation is restarted with
// --resume and the same session id, the fake API sees the earlier
// conversation in the resumed session's requests, the run completes, and
// no trigger or subtask is handled twice.
func TestClaudeKillAndResume(t *testing.T) {
	parallel(t)
	c := SetupClaudeOffline(t, fakeapi.DefaultScript())
	watch1 := watchAgents(c.Project)
	p1 := c.Start(t, "--headless", "--agent", "claude", "--workers", "2", "add a greeting service")
	// Kill while the Reviewer's model reviews checkpoint 1: every agent
	// has finished turns (saved conversations). Not right after a
	// subtask_done: the runner
	// saves the state of a step without outside effects lazily, so a kill
	// there makes the resumed run take the done marker (and re-send the
	// subtask) a second time — a known gap, reported with issue 7.
	waitFor(t, 2*time.Minute, "the reviewer reviewing checkpoint 1", func() bool {
		if p1.exited() {
			t.Fatalf("hivemind exited before the checkpoint:\n%s", p1.out.String())
		}
		for _, r := range c.API.Requests() {
			if lines := r.HivemindLines(); r.Kind == "messages" && r.HasTools && r.Agent == "reviewer" &&
				len(lines) > 0 && strings.Contains(lines[len(lines)-1], "Review checkpoint 1") {
				return true
			}
		}
		return false
	})
	dir := taskDirOf(c.Project)
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p1.done
	killedAt := time.Now()
	firstRun := watch1.result()
	noLeftovers(t, c.Project) // the agents die with hivemind
	atKill := readState(t, dir)

	// Each agent's session, and the conversation its model had seen at the
	// end of its last finished turn (Claude saves a turn's messages
	// lazily: one under way at the kill may be lost).
	idleAt := map[string][]time.Time{}
	for _, r := range readEventLog(dir) {
		if r.Type == vocab.InputPrefix+"agent_health" && recDetail(r, "health") == "idle" {
			idleAt[string(r.Agent)] = append(idleAt[string(r.Agent)], r.Time)
		}
	}
	before, sessions := map[string][]string{}, map[string]string{}
	for _, r := range c.API.Requests() {
		if r.Kind != "messages" || !r.HasTools || r.Status != 200 || r.Agent == "" {
			continue
		}
		sessions[r.Agent] = r.SessionID
		if r.StopReason != "end_turn" {
			continue
		}
		for _, at := range idleAt[r.Agent] {
			if at.After(r.At) {
				before[r.Agent] = r.HivemindLines()
				break
			}
		}
	}
	for agent, sid := range sessions {
		if want := []string{"--session-id " + sid}; strings.Join(firstRun[agent], ",") != want[0] {
			t.Errorf("%s: first run started with %q, want %q", agent, firstRun[agent], want)
		}
	}
	// An agent whose turn ended (Stop hook) before the kill has a saved
	// conversation and must be resumed. One killed in its first turn may
	// have none (Claude writes messages lazily): it starts afresh under
	// the same session id.
	mustResume := map[string]bool{}
	for agent := range before {
		mustResume[agent] = true
	}
	if len(mustResume) < 2 {
		t.Fatalf("only %d agents finished a turn before the kill", len(mustResume))
	}

	watch2 := watchAgents(c.Project)
	p2 := c.Start(t, "--headless", "--resume", "--agent", "claude", "--workers", "2")
	code := p2.wait(t)
	secondRun := watch2.result()
	if code != 0 {
		t.Fatalf("resume exit %d, want 0", code)
	}
	st := checkComplete(t, dir)
	if st.RevisionCount != atKill.RevisionCount {
		t.Errorf("revision_count %d after resume, %d before the kill", st.RevisionCount, atKill.RevisionCount)
	}

	// Resumed by session id, with the earlier conversation.
	resumedSessions := 0
	for agent, sid := range sessions {
		switch flags := strings.Join(secondRun[agent], ","); {
		case flags == "--resume "+sid:
			resumedSessions++
		case flags == "--session-id "+sid && !mustResume[agent]:
			before[agent] = nil // a fresh conversation
		default:
			t.Errorf("%s: the resumed run started it with %q, want [--resume %s]", agent, secondRun[agent], sid)
		}
		// The first turn after the resume (a request with a new line)
		// carries the conversation saved before the kill, under the same
		// session id.
		var first *fakeapi.Request
		for _, r := range c.API.Requests() {
			if r.At.After(killedAt) && r.Agent == agent && r.Kind == "messages" && r.HasTools && r.Status == 200 {
				if r.SessionID != sid {
					t.Errorf("%s: session %s after the resume, %s before", agent, r.SessionID, sid)
				}
				if first == nil && len(r.HivemindLines()) > len(before[agent]) {
					first = &r
				}
			}
		}
		if first == nil || before[agent] == nil {
			continue // no work after the resume, or a fresh conversation
		}
		if got := first.HivemindLines(); strings.Join(got[:len(before[agent])], "\n") != strings.Join(before[agent], "\n") {
			t.Errorf("%s: the first turn after the resume does not carry the earlier conversation:\n  %s\nbefore the kill:\n  %s",
				agent, strings.Join(got, "\n  "), strings.Join(before[agent], "\n  "))
		}
	}

	recs := readEventLog(dir)
	resumed := -1
	for i, r := range recs {
		if r.Type == vocab.InputPrefix+"resumed" {
			resumed = i
			break
		}
	}
	if resumed < 0 {
		t.Fatal("no resumed record in events.jsonl")
	}
	injected := checkResumedInjections(t, dir, recs, resumed, c.API, before)
	consumed := triggersConsumedOnce(t, dir, recs)
	// A trigger already on disk at the kill is consumed after the resume,
	// but the engine has re-sent the work by then: the second answer
	// arrives in a state where it means nothing and is only logged as
	// ignored (a known gap, reported with issue 7; harmless).
	ignored := 0
	done := map[string]int{}
	for _, r := range recs {
		if r.Type == "trigger_ignored" {
			ignored++
		}
		if r.Type == "subtask_done" || r.Type == "fix_done" {
			done[recDetail(r, "subtask")+recDetail(r, "fix")]++
		}
	}
	for id, n := range done {
		if n != 1 {
			t.Errorf("%s done %d times", id, n)
		}
	}
	checkWrites(t, c, dir, killedAt)
	noLeftovers(t, c.Project)
	t.Logf("killed at %s after %v; %d of %d sessions resumed with their conversation (others started afresh: nothing saved); resume run took %v; %d injections confirmed after the resume, %d triggers consumed once, %d ignored",
		atKill.Phase, killedAt.Sub(p1.start).Round(time.Millisecond), resumedSessions, len(sessions), time.Since(p2.start).Round(time.Millisecond),
		injected, consumed, ignored)
}
