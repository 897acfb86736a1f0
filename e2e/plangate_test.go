package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// chaosTUI runs the real binary in tmux with the chaos agent (the test
// binary) in mode, on a project whose config has fast timings and config.
func chaosTUI(t *testing.T, mode, config, task string, o tuiOptions) *tuiRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.project, _ = chaosProject(t, config)
	o.args = append([]string{"--agent", self}, append(o.args, task)...)
	o.env = append(o.env, chaosModeEnv+"="+mode)
	return startTUI(t, o)
}

// lineWhole reports whether the pane of agent id shows reflowLine whole:
// its rows, joined, hold it (a soft-wrapped line fills its rows).
func (s tuiScreen) lineWhole(id string) bool {
	text, ok := s.paneText(id)
	return ok && strings.Contains(strings.ReplaceAll(text, "\n", ""), reflowLine)
}

// Zoom, unzoom and terminal resizes re-wrap a long line in a pane, as tmux
// does: at every size the line reads whole, never cut (before: "● Revised
// plan wri / ision 2), addressi / edback." stayed broken at any size). The
// lead here goes quiet after its first answer, which ends with the line,
// so nothing repaints it: what shows is the emulator's reflow.
func TestTUIReflowZoomResize(t *testing.T) {
	parallel(t)
	r := chaosTUI(t, "stall+longline", "stall_seconds = 600\n", "chaos: show a long line", tuiOptions{})
	r.waitScreen(tuiWait, "the lead's answer and the long line", func(s tuiScreen) bool {
		text, _ := s.paneText("lead")
		return strings.Contains(text, "done") && s.lineWhole("lead")
	})
	r.keys("1") // focus the lead
	whole := func(what string) {
		t.Helper()
		r.waitScreen(tuiWait, "the long line whole "+what, func(s tuiScreen) bool { return s.lineWhole("lead") })
	}
	r.keys("z")
	r.waitScreen(tuiWait, "the lead zoomed", func(s tuiScreen) bool { return len(s.panes()) == 1 })
	whole("zoomed")
	r.keys("z")
	r.waitScreen(tuiWait, "the panes again", func(s tuiScreen) bool { return len(s.panes()) == 3 }) // one worker
	whole("after unzoom")
	for _, sz := range [][2]string{{"100", "30"}, {"80", "24"}, {"200", "50"}, {"160", "48"}} {
		r.mustTmux("resize-window", "-t", r.session, "-x", sz[0], "-y", sz[1])
		r.waitScreen(tuiWait, "the window at "+sz[0]+"×"+sz[1], func(s tuiScreen) bool {
			return strconv.Itoa(len(s)) == sz[1] && len(s.panes()) > 0
		})
		whole("at " + sz[0] + "×" + sz[1])
		r.keys("z")
		r.waitScreen(tuiWait, "zoomed at "+sz[0]+"×"+sz[1], func(s tuiScreen) bool { return len(s.panes()) == 1 })
		whole("zoomed at " + sz[0] + "×" + sz[1])
		r.keys("z")
		r.waitScreen(tuiWait, "unzoomed at "+sz[0]+"×"+sz[1], func(s tuiScreen) bool { return len(s.panes()) > 1 })
		whole("unzoomed at " + sz[0] + "×" + sz[1])
	}
	r.quit()
	noLeftovers(t, r.project)
}

// An agent that goes idle without doing its assignment gets one reminder,
// then the run needs a human, and the banner says why.
func TestTUIStalledAgent(t *testing.T) {
	parallel(t)
	r := chaosTUI(t, "stall", "stall_seconds = 10\n", "chaos: stall in planning", tuiOptions{})
	s := r.waitScreen(3*tuiWait, "needs you, with the reason in the banner", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseNeedsHuman) && s.contains("lead went idle for 10s without writing")
	})
	if !strings.Contains(s.header(), "needs you") {
		t.Errorf("header %q", s.header())
	}
	// The records may follow the screen (a loaded machine): wait for the
	// escalation's.
	var recs []vocab.EventRecord
	waitFor(t, tuiWait, "the needs_human record", func() bool {
		recs = readEventLog(r.taskDir())
		return countRecords(recs, "needs_human", nil) > 0
	})
	if n := countRecords(recs, "agent_stalled", nil); n != 2 {
		t.Errorf("%d agent_stalled records, want 2 (one reminder, then needs_human)", n)
	}
	if countRecords(recs, "needs_human", func(rec vocab.EventRecord) bool {
		return strings.HasPrefix(rec.Details["escalation"].(string), "stall:lead")
	}) != 1 {
		t.Errorf("no needs_human for the stalled lead")
	}
	if code := r.quit(); code != 3 {
		t.Errorf("exit status %d, want 3 (needs a human)", code)
	}
	noLeftovers(t, r.project)
}

// The human plan gate in the TUI, with the sim team: after the Reviewer
// approves, the plan shows rendered and the run waits; f sends feedback,
// which the Lead gets as a revision; the revised plan comes back to the
// gate after the Reviewer; a approves it and the build starts.
func TestTUIPlanGate(t *testing.T) {
	parallel(t)
	r := startTUI(t, tuiOptions{simArgs: "--pace 5ms", args: []string{"--agent", "sim", "--plan-approval", "human", "build a tiny calculator"}})
	gate := func(subject string) tuiScreen {
		t.Helper()
		return r.waitScreen(3*tuiWait, subject+" at the gate, rendered", func(s tuiScreen) bool {
			return s.phase() == string(vocab.PhasePlanApproval) && s.contains(subject+", approved by the Reviewer") &&
				s.contains("Checkpoint 1 · ") && s.contains("files: ") && s.contains("a approve and build")
		})
	}
	gate("plan_v2") // the sim Reviewer sends the first plan back once
	// Nothing is built while the plan waits.
	if st := readState(t, r.taskDir()); len(st.ActiveAgents) != 0 || st.Subtasks["st_1"].Status != "" && st.Subtasks["st_1"].Status != vocab.SubtaskPending {
		t.Errorf("work under way at the gate: active %v subtasks %v", st.ActiveAgents, st.Subtasks)
	}

	r.keys("f")
	r.waitText(tuiWait, "what should the Lead change?")
	r.typeText("add a README subtask")
	r.keys("Enter")
	gate("plan_v3")
	dir := r.taskDir()
	fb, err := os.ReadFile(filepath.Join(dir, vocab.ReviewsDir, "plan_v2-human-feedback.md"))
	if err != nil || !strings.Contains(string(fb), "add a README subtask") {
		t.Errorf("the feedback archive: %q %v", fb, err)
	}
	lead, err := os.ReadFile(filepath.Join(dir, "assignments", "lead.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lead), "The user (the human who approves plans) asked for changes in reviews/plan_v2-human-feedback.md") {
		t.Errorf("the Lead was not given the user's feedback:\n%s", lead)
	}

	r.keys("a")
	r.waitScreen(3*tuiWait, "building", func(s tuiScreen) bool {
		p := s.phase()
		return p != string(vocab.PhasePlanApproval) && p != string(vocab.PhasePlanReview) && p != "" && !s.contains("approved by the Reviewer: your")
	})
	recs := readEventLog(dir)
	if countRecords(recs, "plan_decision", nil) != 2 || countRecords(recs, "plan_awaiting_human", nil) != 2 {
		t.Errorf("plan_decision %d, plan_awaiting_human %d; want 2 each", countRecords(recs, "plan_decision", nil),
			countRecords(recs, "plan_awaiting_human", nil))
	}
	r.waitText(3*tuiWait, "COMPLETE")
	st := readState(t, dir)
	if st.RevisionCount < 2 {
		t.Errorf("revisions %d: the user's feedback counts as one", st.RevisionCount)
	}
	if code := r.quit(); code != 0 {
		t.Errorf("exit status %d", code)
	}
	noLeftovers(t, r.project)
}

// Headless, the gate waits and says where to write the decision; a bad
// file is refused with the reason; the run killed at the gate keeps the
// decision written while it was down and builds after --resume (which
// prints again where to write, had it not been written).
func TestPlanGateHeadlessKillResume(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--plan-approval", "human", "--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	until := func(what, text string) {
		t.Helper()
		waitFor(t, runDeadline, what, func() bool {
			select {
			case err := <-exited:
				t.Fatalf("hivemind exited while waiting for %s: %v\n%s", what, err, out.String())
			default:
			}
			return strings.Contains(out.String(), text)
		})
	}
	until("the gate", "plan-decision.md: first line \"approve\"")
	dir := taskDir(t, project)
	decision := filepath.Join(dir, "plan-decision.md")
	if !strings.Contains(out.String(), "write "+decision) {
		t.Fatalf("the run does not say where to write the decision:\n%s", out.String())
	}
	if err := os.WriteFile(decision, []byte("lgtm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	until("the refusal", `got "lgtm"`)
	// Records are written behind the notices (in order, fsync'd, on their
	// own goroutine): the kill comes once the refusal is on disk.
	if !pollUntil(tuiWait, func() bool { return countRecords(readEventLog(dir), "plan_decision_rejected", nil) == 1 }) {
		t.Fatalf("no plan_decision_rejected record after the refusal:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	noLeftovers(t, project)
	if st := readState(t, dir); st.Phase != vocab.PhasePlanApproval {
		t.Fatalf("state after the kill: %s", st.Phase)
	}
	if err := os.WriteFile(decision, []byte("approve\n\nfine by me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--project", project)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out2.String())
	}
	checkComplete(t, dir)
	recs := readEventLog(dir)
	if countRecords(recs, "plan_decision", func(r vocab.EventRecord) bool { return r.Details["decision"] == "approve" }) != 1 ||
		countRecords(recs, "plan_decision_rejected", nil) != 1 {
		t.Errorf("want one rejected and one approve decision in the log: %d approve, %d rejected",
			countRecords(recs, "plan_decision", func(r vocab.EventRecord) bool { return r.Details["decision"] == "approve" }),
			countRecords(recs, "plan_decision_rejected", nil))
	}
	if b, err := os.ReadFile(filepath.Join(dir, vocab.ReviewsDir, "plan_v2-human-approved.md")); err != nil || !strings.Contains(string(b), "fine by me") {
		t.Errorf("the approval archive: %q %v", b, err)
	}
}
