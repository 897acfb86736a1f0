package flow

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestRetryPolicy(t *testing.T) {
	b := []time.Duration{time.Second, 3 * time.Second}
	cases := []struct {
		name  string
		p     RetryPolicy
		n     int
		after time.Duration
		ok    bool
	}{
		{"first retry", RetryPolicy{Attempts: 3, Backoff: b}, 1, time.Second, true},
		{"second retry", RetryPolicy{Attempts: 3, Backoff: b}, 2, 3 * time.Second, true},
		{"last delay repeats", RetryPolicy{Attempts: 3, Backoff: b}, 3, 3 * time.Second, true},
		{"past attempts escalates", RetryPolicy{Attempts: 3, Backoff: b}, 4, 0, false},
		{"zero attempts escalates at once", RetryPolicy{Attempts: 0, Backoff: b}, 1, 0, false},
		{"no backoff is at once", RetryPolicy{Attempts: 2}, 2, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after, ok := c.p.Retry(c.n)
			if after != c.after || ok != c.ok {
				t.Fatalf("Retry(%d) = %v, %v; want %v, %v", c.n, after, ok, c.after, c.ok)
			}
		})
	}
}

// retryPath drives one retry path: fail performs failure n and returns
// its effects; resent tells whether the effects (or a timer they armed)
// sent the work again.
type retryPath struct {
	name   string
	setup  func(sc *scenario)
	fail   func(sc *scenario, n int) []Effect
	esc    string        // escalation kind once the policy is spent
	reason string        // in the reason
	agent  vocab.AgentID // whose work is retried (default worker_1)
}

func retryPaths() []retryPath {
	return []retryPath{
		{
			name:  "invalid subtask marker",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", Problem: "output_file missing"})
			},
			esc: "subtask:st_1", reason: "output_file missing",
		},
		{
			name:  "invalid fix marker",
			setup: func(sc *scenario) { sc.toCheckpointFix() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", Problem: "not a JSON object"})
			},
			esc: "fix:fix-cp1-r1-worker_1", reason: "not a JSON object",
		},
		{
			name:  "agent crash",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				sc.do(AgentHealth{Agent: "worker_1", Health: "ready"}) // it ran, then crashed
				return sc.do(AgentHealth{Agent: "worker_1", Health: "exited", ExitCode: 1})
			},
			esc: "agent:worker_1", reason: "exited (code 1)",
		},
		{
			name:  "unreadable verdict file",
			setup: func(sc *scenario) { sc.toPlanReview() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(TriggerCompleted{Path: "plan-approved.md", Problem: "plan-approved.md is a directory", Inode: uint64(n), ModTime: t0})
			},
			esc: "agent:reviewer", reason: "is a directory", agent: "reviewer",
		},
		{
			name:  "hung agent",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(AgentHealth{Agent: "worker_1", Health: "hung"})
			},
			esc: "agent:worker_1", reason: "hung",
		},
		{
			name:  "assignment timeout",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(TimerFired{ID: timeoutTimer("worker_1")})
			},
			esc: "agent:worker_1", reason: "timed out",
		},
		{
			name:  "undelivered message",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				return sc.do(InjectionResult{Agent: "worker_1", Seq: sc.s.Agents["worker_1"].LastSeq, Detail: "not ready"})
			},
			esc: "agent:worker_1", reason: "message not delivered",
		},
		{
			name:  "rate limit",
			setup: func(sc *scenario) { sc.toExecuting() },
			fail: func(sc *scenario, n int) []Effect {
				// The turn of its work hit the limit.
				sc.do(InjectionResult{Agent: "worker_1", Seq: sc.s.Agents["worker_1"].LastSeq, Delivered: true})
				sc.do(AgentHealth{Agent: "worker_1", Health: "rate_limited"})
				return sc.do(AgentHealth{Agent: "worker_1", Health: "idle"})
			},
			esc: "agent:worker_1", reason: "rate limit",
		},
	}
}

// settle fires the timers the effects armed for agent (restart, resend),
// as the runner would after the backoff, and returns all effects.
func settle(sc *scenario, eff []Effect, agent vocab.AgentID) []Effect {
	all := eff
	for _, s := range effectsOf[ScheduleTimer](eff) {
		if s.ID == restartTimer(agent) || s.ID == resendTimer(agent) {
			more := sc.do(TimerFired{ID: s.ID})
			all = append(all, more...)
			if s.ID == restartTimer(agent) {
				sc.do(AgentHealth{Agent: agent, Health: "ready"})
			}
		}
	}
	return all
}

// TestEveryRetryPathIsBounded: each path re-sends the work at most
// max_retries times, backed off, then needs_human with the reason; with
// max_retries = 0 the first failure escalates.
func TestEveryRetryPathIsBounded(t *testing.T) {
	for _, maxRetries := range []int{0, 1, 3} {
		for _, p := range retryPaths() {
			t.Run(p.name+"/max_retries="+strconv.Itoa(maxRetries), func(t *testing.T) {
				sc := newScenario(t)
				cfg := defaultConfig()
				cfg.MaxRetries = maxRetries
				sc.m = Machine{Cfg: cfg}
				p.setup(sc)
				agent := p.agent
				if agent == "" {
					agent = "worker_1"
				}
				phase := sc.s.Phase
				resent := 0
				for n := 1; n <= maxRetries; n++ {
					eff := settle(sc, p.fail(sc, n), agent)
					sc.expect(phase)
					if len(injectedTo(eff)) == 0 {
						t.Fatalf("failure %d: work not sent again: %s", n, describe(eff))
					}
					resent++
				}
				eff := p.fail(sc, maxRetries+1)
				sc.expect(vocab.PhaseNeedsHuman)
				if sc.s.Escalation != p.esc || !strings.Contains(sc.s.Reason, p.reason) {
					t.Fatalf("escalation %q, reason %q; want %q with %q", sc.s.Escalation, sc.s.Reason, p.esc, p.reason)
				}
				if len(injectedTo(eff)) != 0 || len(sc.s.Timers) != 0 {
					t.Fatalf("work sent or timers left after escalation: %s, timers %v", describe(eff), sc.s.Timers)
				}
				if resent != maxRetries {
					t.Fatalf("re-sent %d times, want %d", resent, maxRetries)
				}
				// Retry from needs_human gives the path another go.
				sc.do(KeyPressed{Action: KeyRetry})
				sc.expect(phase)
			})
		}
	}
}

// TestRejectionBackoff: re-sends of a rejected fix are backed off, not
// sent at once forever (281 re-sends in 150 s before).
func TestRejectionBackoff(t *testing.T) {
	sc := newScenario(t)
	sc.toCheckpointFix()
	want := []time.Duration{0, 5 * time.Second, 15 * time.Second}
	for i, d := range want {
		eff := sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", Problem: "bad"})
		sch := effectsOf[ScheduleTimer](eff)
		switch {
		case d == 0 && (len(injectedTo(eff)) != 1 || len(sch) != 1 || sch[0].ID != timeoutTimer("worker_1")):
			t.Fatalf("rejection %d: want an immediate re-send: %s", i+1, describe(eff))
		case d > 0 && (len(injectedTo(eff)) != 0 || len(sch) != 1 || sch[0] != (ScheduleTimer{ID: resendTimer("worker_1"), After: d})):
			t.Fatalf("rejection %d: want a re-send after %v: %s", i+1, d, describe(eff))
		}
		if d > 0 {
			eff = sc.do(TimerFired{ID: resendTimer("worker_1")})
			a := assignmentFor(t, eff, "worker_1")
			if a.Rejected != "bad" {
				t.Fatalf("re-sent fix lacks the problem: %+v", a)
			}
		}
	}
	// Work finished meanwhile: a pending re-send is dropped.
	sc.do(SubtaskDone{Subtask: "fix-cp1-r1-worker_1", Agent: "worker_1", Problem: "bad"})
	if sc.s.Phase != vocab.PhaseNeedsHuman {
		t.Fatalf("state %s after max_retries+1 rejections", sc.s.Phase)
	}
}

func TestResendDroppedWhenWorkFinishes(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", Problem: "bad"})
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", Problem: "bad"})
	if _, ok := sc.s.Timers[resendTimer("worker_1")]; !ok {
		t.Fatalf("no resend timer: %v", sc.s.Timers)
	}
	eff := sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	if _, ok := sc.s.Timers[resendTimer("worker_1")]; ok || len(effectsOf[CancelTimer](eff)) == 0 {
		t.Fatalf("resend timer kept after the work was done: %s", describe(eff))
	}
}

// TestStalledAgent: idle with delivered, unfinished work for stall
// timeout → one reminder naming what is missing → needs_human.
func TestStalledAgent(t *testing.T) {
	cases := []struct {
		name   string
		events func(sc *scenario, seq int) []Event
		armed  bool
	}{
		{"idle after delivery arms", func(sc *scenario, seq int) []Event {
			return []Event{InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true}, AgentHealth{Agent: "worker_1", Health: "busy"}, AgentHealth{Agent: "worker_1", Health: "idle"}}
		}, true},
		{"delivered to an idle agent that never gets busy arms", func(sc *scenario, seq int) []Event {
			return []Event{AgentHealth{Agent: "worker_1", Health: "idle"}, InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true}}
		}, true},
		{"idle before delivery does not arm", func(sc *scenario, seq int) []Event {
			return []Event{AgentHealth{Agent: "worker_1", Health: "idle"}}
		}, false},
		{"busy disarms", func(sc *scenario, seq int) []Event {
			return []Event{InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true}, AgentHealth{Agent: "worker_1", Health: "idle"}, AgentHealth{Agent: "worker_1", Health: "busy"}}
		}, false},
		{"finished work disarms", func(sc *scenario, seq int) []Event {
			return []Event{InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true}, AgentHealth{Agent: "worker_1", Health: "idle"}, SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true}}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			sc.toExecuting()
			for _, e := range c.events(sc, sc.s.Agents["worker_1"].LastSeq) {
				sc.do(e)
			}
			if _, armed := sc.s.Timers[stallTimer("worker_1")]; armed != c.armed {
				t.Fatalf("stall timer armed %v, want %v (timers %v)", armed, c.armed, sc.s.Timers)
			}
		})
	}

	sc := newScenario(t)
	sc.toExecuting()
	seq := sc.s.Agents["worker_1"].LastSeq
	sc.do(InjectionResult{Agent: "worker_1", Seq: seq, Delivered: true})
	// worker_2 got its work too (a retry re-sends only what did not arrive).
	sc.do(InjectionResult{Agent: "worker_2", Seq: sc.s.Agents["worker_2"].LastSeq, Delivered: true})
	eff := sc.do(AgentHealth{Agent: "worker_1", Health: "idle"})
	if sch := effectsOf[ScheduleTimer](eff); len(sch) != 1 || sch[0] != (ScheduleTimer{ID: stallTimer("worker_1"), After: defaultConfig().StallTimeout}) {
		t.Fatalf("stall timer: %s", describe(eff))
	}
	// Stalled once: one reminder that says what is missing.
	eff = sc.do(TimerFired{ID: stallTimer("worker_1")})
	sc.expect(vocab.PhaseExecuting)
	a := assignmentFor(t, eff, "worker_1")
	if !hasEvent(eff, "agent_stalled") || !strings.Contains(a.Rejected, "agents/worker_1/outputs/st_1.done") {
		t.Fatalf("reminder: %+v; %s", a, describe(eff))
	}
	// Stalled again after the reminder: needs_human with the reason.
	sc.do(InjectionResult{Agent: "worker_1", Seq: a.Seq, Delivered: true})
	sc.do(AgentHealth{Agent: "worker_1", Health: "busy"})
	sc.do(AgentHealth{Agent: "worker_1", Health: "idle"})
	sc.do(TimerFired{ID: stallTimer("worker_1")})
	sc.expect(vocab.PhaseNeedsHuman)
	if sc.s.Escalation != "stall:worker_1" || !strings.Contains(sc.s.Reason, "went idle") || !strings.Contains(sc.s.Reason, "st_1.done") {
		t.Fatalf("escalation %q reason %q", sc.s.Escalation, sc.s.Reason)
	}
	// The numbers are the stall rule's, not max_retries' (3 here).
	if !strings.HasSuffix(sc.s.Reason, "gave up after 1 retry (a stalled agent gets one reminder, whatever max_retries says)") {
		t.Errorf("reason %q", sc.s.Reason)
	}
	// Retry sends the work again.
	eff = sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhaseExecuting)
	if len(injectedTo(eff)) != 1 || sc.s.Agents["worker_1"].Stalls != 0 {
		t.Fatalf("retry: %s", describe(eff))
	}
}

// TestDoneMarkerOnlyForOutstandingWork: a valid marker for a subtask not
// assigned yet (a later checkpoint's) does not mark it done; it is
// assigned later and done then.
func TestDoneMarkerOnlyForOutstandingWork(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	eff := sc.do(SubtaskDone{Subtask: "st_3", Agent: "worker_1", OK: true})
	if sc.s.Subtasks["st_3"].Status != vocab.SubtaskPending || !hasEvent(eff, "subtask_done_ignored") {
		t.Fatalf("st_3 %+v: %s", sc.s.Subtasks["st_3"], describe(eff))
	}
	// Moved aside, so it cannot count once st_3 is assigned either.
	if a := effectsOf[ArchiveTrigger](eff); len(a) != 1 || a[0] != (ArchiveTrigger{From: "agents/worker_1/outputs/st_3.done", To: "reviews/ignored_v1-agents_worker_1_outputs_st_3.done"}) {
		t.Fatalf("archive %v", a)
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	sc.trig("checkpoint-approved.md", "ok")
	sc.expect(vocab.PhaseExecuting)
	if st := sc.s.Subtasks["st_3"]; st.Status != vocab.SubtaskInProgress {
		t.Fatalf("st_3 not assigned at checkpoint 2: %+v", st)
	}
}
