package flow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// sent lists the injections of eff as "agent:first words of the line".
func sent(eff []Effect) []string {
	var out []string
	for _, in := range effectsOf[Inject](eff) {
		what := strings.TrimPrefix(in.Text, InjectPrefix)
		what, _, _ = strings.Cut(what, " — ") // an assignment's file, a notice's text
		out = append(out, string(in.Agent)+":"+what)
	}
	return out
}

func heldList(s State) []string {
	var out []string
	for _, a := range s.Held {
		out = append(out, string(a.Agent)+":"+firstLine(a.Instruction))
	}
	return out
}

// limit rate-limits agent (its turn failed on a 429: a hold on its account).
func (sc *scenario) limit(agent vocab.AgentID) {
	sc.t.Helper()
	if eff := sc.do(AgentHealth{Agent: agent, Health: vocab.HealthRateLimited, Detail: "429 rate_limit_error"}); !hasEvent(eff, "dispatch_held") {
		sc.t.Fatalf("%s limited: no hold (%s)", agent, describe(eff))
	}
}

// Every kind of dispatch waits while its agent's account is held — plan
// review, plan revision, checkpoint review with the workers' notices,
// fixes, friction notices and resolution, the next checkpoint's subtask —
// and is sent when the hold ends, in the order it was made, whether the
// limit clears (signal) or the bounded hold runs out (bound).
func TestGovernorHoldsEveryDispatch(t *testing.T) {
	cases := []struct {
		name    string
		limited vocab.AgentID
		to      func(sc *scenario) // the state before the dispatch
		then    func(sc *scenario) // what makes it
		want    []string           // sent after the hold, in order
	}{
		{"plan review", "lead", func(sc *scenario) { sc.submit(2) },
			func(sc *scenario) { sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"}) },
			[]string{"reviewer:Review the plan: write plan-approved.md or plan-feedback.md"}},
		{"plan revision", "reviewer", (*scenario).toPlanReview,
			func(sc *scenario) { sc.trig("plan-feedback.md", "- high: missing tests") },
			[]string{"lead:Revise the plan: write plan.md"}},
		{"checkpoint review", "lead", (*scenario).toExecuting,
			func(sc *scenario) {
				sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
				sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
			},
			[]string{"reviewer:Review checkpoint 1: write checkpoint-approved.md or checkpoint-issues.md"}},
		{"fixes", "reviewer", (*scenario).toCheckpointReview,
			func(sc *scenario) { sc.trig("checkpoint-issues.md", "## Issues\n- high: a.go:3 nil check missing") },
			[]string{"lead:Fix the checkpoint 1 issues", "worker_1:Fix the checkpoint 1 issues"}},
		{"friction notices and resolution", "worker_1", func(sc *scenario) {
			sc.toExecuting()
			sc.trig("friction/slow-tests.md", "tests are slow")
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
			sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
		}, func(sc *scenario) { sc.trig("checkpoint-approved.md", "ok") },
			[]string{"reviewer:Friction was logged (1 file(s)); the Lead will propose fixes", "worker_1:Friction was logged (1 file(s)); the Lead will propose fixes",
				"worker_2:Friction was logged (1 file(s)); the Lead will propose fixes", "lead:Resolve the logged friction: write friction-resolution.md"}},
		{"next checkpoint's subtask", "reviewer", (*scenario).toCheckpointReview,
			func(sc *scenario) { sc.trig("checkpoint-approved.md", "ok") },
			[]string{"worker_1:Do subtask st_3: polish a"}},
	}
	for _, c := range cases {
		for _, end := range []string{"signal", "bound"} {
			t.Run(c.name+"/"+end, func(t *testing.T) {
				sc := newScenario(t)
				c.to(sc)
				sc.limit(c.limited)
				c.then(sc)
				if got := sent(sc.eff); len(got) != 0 {
					t.Fatalf("sent while held: %v", got)
				}
				for _, a := range sc.s.Held {
					if _, armed := sc.s.Timers[timeoutTimer(a.Agent)]; armed && !a.ReadOnly {
						t.Errorf("%s's timeout runs while its work is held", a.Agent)
					}
				}
				var eff []Effect
				switch end {
				case "signal":
					eff = sc.do(AgentHealth{Agent: c.limited, Health: vocab.HealthIdle, Detail: "rate-limit cooldown over"})
				case "bound": // still limited at every check: the policy's three checks, then it ends
					for range 3 {
						eff = sc.do(TimerFired{ID: holdTimer(defaultAccount)})
					}
				}
				if !hasEvent(eff, "dispatch_resumed") || len(sc.s.Holds) != 0 || len(sc.s.Held) != 0 {
					t.Fatalf("not released: holds %v, held %v (%s)", sc.s.Holds, heldList(sc.s), describe(eff))
				}
				var got []string
				for _, s := range sent(eff) {
					if !strings.HasPrefix(s, string(c.limited)+":(re-sent)") { // the limited agent's own lost turn
						got = append(got, s)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("sent after the hold:\n got %q\nwant %q", got, c.want)
				}
				for _, w := range c.want {
					name, _, _ := strings.Cut(w, ":")
					agent := vocab.AgentID(name)
					a := sc.s.Assignments[agent]
					if _, armed := sc.s.Timers[timeoutTimer(agent)]; sc.s.Agents[agent].Pending && (!armed || a.Seq != sc.s.Agents[agent].LastSeq) {
						t.Errorf("%s: sent work without its timeout or seq (%d, last %d)", agent, a.Seq, sc.s.Agents[agent].LastSeq)
					}
				}
			})
		}
	}
}

// A limited account holds only its own agents: the Reviewer on another
// account gets its plan review at once while the Lead's account waits.
func TestGovernorHeldDispatchOtherAccountFlows(t *testing.T) {
	cfg := defaultConfig()
	cfg.Accounts = map[vocab.AgentID]string{"lead": "claude", "worker_1": "claude", "worker_2": "claude", "reviewer": "codex"}
	sc := newScenario(t)
	sc.m = Machine{Cfg: cfg}
	sc.submit(2)
	sc.limit("worker_1")
	eff := sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	if got := sent(eff); len(got) != 1 || !strings.HasPrefix(got[0], "reviewer:Review the plan") || len(sc.s.Held) != 0 {
		t.Fatalf("codex reviewer: sent %v, held %v", got, heldList(sc.s))
	}
	eff = sc.trig("plan-feedback.md", "- high: missing tests")
	if len(sent(eff)) != 0 || fmt.Sprint(heldList(sc.s)) != "[lead:Revise the plan: write plan.md]" {
		t.Fatalf("claude lead: sent %v, held %v", sent(eff), heldList(sc.s))
	}
}

// The queue's transitions and limits, one case each: what is held, what
// an event does to it, and what is sent once the limit clears.
func TestGovernorHeldQueue(t *testing.T) {
	cases := []struct {
		name       string
		run        func(sc *scenario) // from plan review with the lead limited and the review request held
		wantEvents []string
		wantHeld   []string // after run
		wantSent   []string // after the lead's limit clears
	}{
		{"answered while held: taken, the request dropped unsent",
			func(sc *scenario) { sc.trig("plan-approved.md", "LGTM") },
			[]string{"plan_approved", "held_dispatch_dropped"}, []string{"reviewer:Review the plan: write plan-approved.md or plan-feedback.md"},
			[]string{"worker_1:Do subtask st_1: write a", "worker_2:Do subtask st_2: write b"}},
		{"re-sent while held (a restart): one request, the newest",
			func(sc *scenario) { sc.do(Resumed{}) },
			[]string{"dispatch_queued"}, []string{"reviewer:Review the plan: write plan-approved.md or plan-feedback.md"},
			[]string{"reviewer:Review the plan: write plan-approved.md or plan-feedback.md"}},
		{"cancelled: nothing is sent",
			func(sc *scenario) { sc.do(KeyPressed{Action: KeyCancel}) },
			[]string{"cancelled"}, nil, nil},
		{"paused: the release waits for the resume",
			func(sc *scenario) {
				sc.do(KeyPressed{Action: KeyPause})
				sc.do(AgentHealth{Agent: "lead", Health: vocab.HealthIdle})
				if len(sent(sc.eff)) != 0 || len(sc.s.Held) != 1 {
					sc.t.Fatalf("sent while paused: %s", describe(sc.eff))
				}
				sc.do(KeyPressed{Action: KeyResume})
			},
			[]string{"resumed_from_pause"}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			sc.submit(2)
			sc.limit("lead")
			sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
			c.run(sc)
			events := sc.eff
			if c.name == "paused: the release waits for the resume" {
				if got := sent(sc.eff); !hasEvent(events, "resumed_from_pause") || len(got) != 1 || sc.s.Timers[timeoutTimer("reviewer")].Deadline != sc.now.Add(sc.m.Cfg.AgentTimeout) {
					t.Fatalf("resume: sent %v, timeout %+v", got, sc.s.Timers[timeoutTimer("reviewer")])
				}
				return
			}
			if fmt.Sprint(heldList(sc.s)) != fmt.Sprint(c.wantHeld) {
				t.Fatalf("held %q, want %q", heldList(sc.s), c.wantHeld)
			}
			eff := sc.do(AgentHealth{Agent: "lead", Health: vocab.HealthIdle})
			if len(sc.s.Holds) > 0 { // a restart reset the lead's status: only the bound ends the hold
				eff = sc.do(TimerFired{ID: holdTimer(defaultAccount)})
			}
			for _, ev := range c.wantEvents {
				if !hasEvent(events, ev) && !hasEvent(eff, ev) {
					t.Errorf("no %s in %s / %s", ev, describe(events), describe(eff))
				}
			}
			var got []string
			for _, s := range sent(eff) {
				got = append(got, strings.Replace(s, "(re-sent) ", "", 1))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.wantSent) || len(sc.s.Held) != 0 {
				t.Fatalf("after the limit: sent %q, want %q; held %v", got, c.wantSent, heldList(sc.s))
			}
		})
	}
}

// A run stopped while held (the budget) drops its timers; the retry arms
// the hold's check again, and the held work is sent when it ends.
func TestGovernorHeldThroughNeedsHuman(t *testing.T) {
	cfg := defaultConfig()
	cfg.BudgetUSD = 1
	sc := newScenario(t)
	sc.m = Machine{Cfg: cfg}
	sc.submit(2)
	sc.limit("lead")
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	sc.do(AgentUsage{Agent: "lead", Usage: usage("fake-claude", 1000, 1.5, true)})
	sc.expect(vocab.PhaseNeedsHuman)
	if _, ok := sc.s.Timers[holdTimer(defaultAccount)]; ok || len(sc.s.Held) != 1 {
		t.Fatalf("needs_human: timers %v, held %v", sc.s.Timers, heldList(sc.s))
	}
	cfg.BudgetUSD = 5
	sc.m = Machine{Cfg: cfg}
	eff := sc.do(KeyPressed{Action: KeyRetry})
	sc.expect(vocab.PhasePlanReview)
	if _, ok := sc.s.Timers[holdTimer(defaultAccount)]; !ok || len(sent(eff)) != 0 {
		t.Fatalf("retry: hold not bounded again or work sent while held: %s", describe(eff))
	}
	for range 3 { // the lead still limited at every check
		eff = sc.do(TimerFired{ID: holdTimer(defaultAccount)})
	}
	// (The retry sent the Reviewer's work again: it stays marked so.)
	if got := sent(eff); len(got) != 1 || !strings.HasPrefix(got[0], "reviewer:(re-sent) Review the plan") || len(sc.s.Held) != 0 {
		t.Fatalf("after the bound: sent %v %s", got, describe(eff))
	}
}

// At most maxHeldNotices notices wait per agent; the oldest go first. Its
// writing work is never dropped for a notice.
func TestGovernorHeldNoticesBounded(t *testing.T) {
	sc := newScenario(t)
	sc.submit(2)
	sc.limit("lead")
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	st := &stepper{cfg: sc.m.Cfg, s: &sc.s, at: sc.now}
	for i := range maxHeldNotices + 2 {
		st.notice("worker_1", fmt.Sprintf("notice %d", i), "", nil)
	}
	var notices []string
	for _, a := range sc.s.Held {
		if a.Agent == "worker_1" {
			notices = append(notices, firstLine(a.Instruction))
		}
	}
	if len(notices) != maxHeldNotices || notices[0] != "notice 2" || notices[len(notices)-1] != fmt.Sprintf("notice %d", maxHeldNotices+1) {
		t.Fatalf("held notices %q", notices)
	}
	if len(heldList(sc.s)) != maxHeldNotices+1 { // and the reviewer's plan review
		t.Fatalf("held %q", heldList(sc.s))
	}
}

// The limited agent's own work is sent once when its limit clears: work
// made while it was limited is not a turn lost to the limit (no re-send,
// no failure counted), and a lost turn re-sent during the hold (a
// rejected done marker) is sent once, not again as lost — nor after a
// pause.
func TestGovernorLimitedAgentsWorkSentOnce(t *testing.T) {
	cases := []struct {
		name  string
		setup func(sc *scenario)
		pause bool
		want  string
	}{
		{"new work while limited", func(sc *scenario) {
			sc.toCheckpointReview()
			sc.limit("worker_1")
			sc.trig("checkpoint-issues.md", "## Issues\n- high: a.go:3 nil check missing")
		}, false, "worker_1:Fix the checkpoint 1 issues"},
		{"lost turn re-sent while held", func(sc *scenario) {
			sc.toExecuting()
			sc.limit("worker_1")
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", Problem: "done marker is not JSON"})
		}, false, "worker_1:(re-sent) Do subtask st_1: write a"},
		{"lost turn re-sent while held, cleared while paused", func(sc *scenario) {
			sc.toExecuting()
			sc.limit("worker_1")
			sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", Problem: "done marker is not JSON"})
		}, true, "worker_1:(re-sent) Do subtask st_1: write a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			c.setup(sc)
			if !sc.s.Agents["worker_1"].Pending || len(sc.s.Held) == 0 {
				t.Fatalf("worker_1's work not held: %v", heldList(sc.s))
			}
			if c.pause {
				sc.do(KeyPressed{Action: KeyPause})
			}
			eff := sc.do(AgentHealth{Agent: "worker_1", Health: vocab.HealthIdle, Detail: "rate-limit cooldown over"})
			if c.pause {
				if len(sc.s.Resend) != 0 || len(sent(eff)) != 0 {
					t.Fatalf("paused: resend %v, sent %v", sc.s.Resend, sent(eff))
				}
				eff = sc.do(KeyPressed{Action: KeyResume})
			}
			var mine []string
			for _, s := range sent(eff) {
				if strings.HasPrefix(s, "worker_1:") {
					mine = append(mine, s)
				}
			}
			if len(mine) != 1 || mine[0] != c.want || sc.s.Agents["worker_1"].Failures != 0 {
				t.Fatalf("sent to worker_1 %q, want [%s]; failures %d (%s)", mine, c.want, sc.s.Agents["worker_1"].Failures, describe(eff))
			}
		})
	}
}

// A restart while paused lists the unfinished work to re-send on resume;
// work that waited in the queue is then sent once, not again.
func TestGovernorHeldRestartedWhilePausedSentOnce(t *testing.T) {
	sc := newScenario(t)
	sc.submit(2)
	sc.limit("lead")
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	sc.do(KeyPressed{Action: KeyPause})
	sc.do(Resumed{})
	if !contains(sc.s.Resend, "reviewer") || len(sc.s.Held) != 1 {
		t.Fatalf("resend %v, held %v", sc.s.Resend, heldList(sc.s))
	}
	// The restarted lead reports its limit again, then it clears.
	sc.do(AgentHealth{Agent: "lead", Health: vocab.HealthRateLimited})
	sc.do(AgentHealth{Agent: "lead", Health: vocab.HealthIdle})
	eff := sc.do(KeyPressed{Action: KeyResume})
	if got := sent(eff); len(got) != 1 || !strings.HasPrefix(got[0], "reviewer:Review the plan") || len(sc.s.Held) != 0 || len(sc.s.Resend) != 0 {
		t.Fatalf("resume: sent %v, held %v, resend %v", got, heldList(sc.s), sc.s.Resend)
	}
}
