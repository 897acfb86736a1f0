package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// status names a task the way tasks and the UI do: an abandoned task (idle
// after it ran) reads "abandoned", not "idle".
func TestRenderStatusStates(t *testing.T) {
	for _, tc := range []struct {
		phase vocab.Phase
		want  string
	}{
		{vocab.PhaseIdle, "state     abandoned"},
		{vocab.PhaseExecuting, "state     executing"},
		{vocab.PhaseComplete, "state     complete"},
	} {
		got := renderStatus(workspace.TaskInfo{ID: "t1", State: &vocab.State{Phase: tc.phase}}, elapsed{})
		if !strings.Contains(got, tc.want+"\n") {
			t.Errorf("%s: status reads\n%s\nwant a line %q", tc.phase, got, tc.want)
		}
	}
}

// status shows each agent's tokens and cost, the task's estimated spend
// (naming agents without a price) and the accounts held by a rate limit.
func TestRenderStatusUsage(t *testing.T) {
	st := &vocab.State{Phase: vocab.PhaseExecuting, Agents: map[vocab.AgentID]vocab.AgentState{
		"lead":     {Role: "lead", Usage: vocab.Usage{Model: "fake-claude", Input: 12_000, Output: 345, CostUSD: 0.041, CostKnown: true}},
		"worker_1": {Role: "worker", Usage: vocab.Usage{Model: "llama", Input: 900}},
		"reviewer": {Role: "reviewer"},
	}, Holds: map[string]vocab.Hold{"default": {Account: "default", Agent: "worker_1", Reason: "rate_limit"}}}
	got := renderStatus(workspace.TaskInfo{ID: "t1", State: st}, elapsed{})
	for _, want := range []string{"12.3k tok $0.0410\n", "900 tok $?\n", "spend     $0.0410 estimated + not known for worker_1 (no price)\n",
		"held      new work for account default since", "worker_1 rate limited (rate_limit)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "  reviewer") && strings.Contains(line, "tok") {
			t.Errorf("an agent without usage shows tokens: %q", line)
		}
	}
}

// A mixed team's status says which agent each worker ran.
func TestRenderStatusMixedWorkers(t *testing.T) {
	st := &vocab.State{Phase: vocab.PhaseExecuting, Agents: map[vocab.AgentID]vocab.AgentState{
		"lead": {Role: "lead"}, "reviewer": {Role: "reviewer"}, "worker_1": {Role: "worker"}, "worker_2": {Role: "worker"},
	}}
	task := vocab.Task{Agent: "claude", Agents: map[vocab.Role]string{"lead": "claude", "reviewer": "claude", "worker": "codex"},
		WorkerAgents: map[vocab.AgentID]string{"worker_2": "gemini"}}
	got := renderStatus(workspace.TaskInfo{ID: "t1", State: st, Task: task}, elapsed{})
	for id, agent := range map[string]string{"lead": "claude", "worker_1": "codex", "worker_2": "gemini"} {
		if !strings.Contains(got, "  "+id+" ") || !strings.Contains(lineOf(got, "  "+id+" "), "restarts 0  "+agent) {
			t.Errorf("status of %s lacks its agent %s:\n%s", id, agent, got)
		}
	}
	// One agent for all: no column.
	got = renderStatus(workspace.TaskInfo{ID: "t1", State: st, Task: vocab.Task{Agent: "claude"}}, elapsed{})
	if strings.Contains(got, "restarts 0  claude") {
		t.Errorf("a one-agent team names its agent per line:\n%s", got)
	}
}

// lineOf is the first line of s that starts with prefix.
func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// A task cancelled or abandoned while it waited in needs_human says the
// user ended it; the stall is what it had waited on, not the cause. A
// reason the engine gave once as both reason and error is printed once.
func TestRenderStatusEndedByUser(t *testing.T) {
	stall := "worker_1 went idle for 5m0s without writing its done marker outputs/st_1.done"
	for _, tc := range []struct {
		name  string
		st    vocab.State
		want  []string
		never []string
	}{
		{"cancelled after a stall", vocab.State{Phase: vocab.PhaseCancelled, PreviousPhase: vocab.PhaseNeedsHuman, Reason: stall},
			[]string{"state     cancelled (from needs_human)\n", "ended     on request, while it waited for you in needs_human; it had stopped because: " + stall + "\n"},
			[]string{"reason    " + stall}},
		{"abandoned after an error", vocab.State{Phase: vocab.PhaseIdle, PreviousPhase: vocab.PhaseError, Reason: "boom", Error: "boom"},
			[]string{"state     abandoned (from error)\n", "ended     on request, while it waited for you in error; it had stopped because: boom\n"},
			[]string{"reason    boom", "error     boom"}},
		{"needs_human as is", vocab.State{Phase: vocab.PhaseNeedsHuman, PreviousPhase: vocab.PhaseExecuting, Reason: stall},
			[]string{"reason    " + stall + "\n"}, []string{"ended"}},
		{"error once", vocab.State{Phase: vocab.PhaseError, Reason: "boom", Error: "boom"},
			[]string{"reason    boom\n"}, []string{"error     boom"}},
	} {
		got := renderStatus(workspace.TaskInfo{ID: "t1", State: &tc.st}, elapsed{})
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: status lacks %q:\n%s", tc.name, w, got)
			}
		}
		for _, n := range tc.never {
			if strings.Contains(got, n) {
				t.Errorf("%s: status has %q:\n%s", tc.name, n, got)
			}
		}
	}
}

// status lists everything waiting for the human, as the UI's banner does,
// in text and in --json.
func TestStatusNeedsYou(t *testing.T) {
	st := &vocab.State{Phase: vocab.PhaseNeedsHuman, Reason: "plan review cycles exhausted (3 of 3)",
		Agents: map[vocab.AgentID]vocab.AgentState{
			"lead":     {Role: "lead", Status: vocab.HealthIdle},
			"reviewer": {Role: "reviewer", Status: vocab.HealthWaitingPermission},
			"worker_1": {Role: "worker", Status: vocab.HealthRateLimited},
		}}
	got := renderStatus(workspace.TaskInfo{ID: "t1", State: st}, elapsed{})
	for _, want := range []string{
		"needs you team needs you: plan review cycles exhausted (3 of 3) (R retry · A abandon)\n",
		"          reviewer permission prompt (2 enter)\n",
		"          worker_1 rate limited: new work held (3 enter)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if got := renderStatus(workspace.TaskInfo{ID: "t1", State: &vocab.State{Phase: vocab.PhaseExecuting}}, elapsed{}); !strings.Contains(got, "needs you nothing\n") {
		t.Errorf("status with nothing waiting:\n%s", got)
	}
	b, err := json.Marshal(withNeeds(st, elapsed{}))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Phase    vocab.Phase  `json:"state"`
		NeedsYou []vocab.Need `json:"needs_you"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Phase != vocab.PhaseNeedsHuman || len(back.NeedsYou) != 3 || back.NeedsYou[1].Kind != vocab.NeedPermission || back.NeedsYou[1].Agent != "reviewer" {
		t.Errorf("--json: %s", b)
	}
}

// status says the elapsed clock as the UI shows it: counting while a run
// is live, up to the last state write when none is, in words and in
// --json.
func TestStatusElapsed(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	st := &vocab.State{TaskID: "t1", Phase: vocab.PhaseExecuting, StartedAt: t0, Timestamp: t0.Add(90 * time.Second),
		Clock: vocab.RunClock{Ran: time.Minute, Since: t0.Add(30 * time.Second)}}
	now := t0.Add(time.Hour)
	live := renderStatus(workspace.TaskInfo{ID: "t1", State: st}, elapsedOf(*st, now, true))
	if !strings.Contains(live, "elapsed   01:00:30\n") {
		t.Errorf("live run: status lacks elapsed 01:00:30:\n%s", live)
	}
	dead := elapsedOf(*st, now, false)
	if got := renderStatus(workspace.TaskInfo{ID: "t1", State: st}, dead); !strings.Contains(got, "elapsed   00:02:00 (no Hivemind runs it") {
		t.Errorf("killed run: status lacks elapsed 00:02:00 up to its last write:\n%s", got)
	}
	b, err := json.Marshal(withNeeds(st, dead))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Elapsed float64 `json:"elapsed_seconds"`
		Live    bool    `json:"live"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Elapsed != 120 || back.Live {
		t.Errorf("--json: elapsed_seconds %v live %v (%v): %s", back.Elapsed, back.Live, err, b)
	}
}
