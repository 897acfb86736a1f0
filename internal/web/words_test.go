package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// namesKey matches the full-screen UI's key hints ("(a)", "R in the
// TUI", "press q") and the headless user's advice to write the decision
// file.
var namesKey = regexp.MustCompile(` \([A-Za-z]\)|\b[A-Za-z] in the TUI|(?i)press [a-z]\b|write \S*` + regexp.QuoteMeta(flow.PlanDecisionFile) + `:`)

// The engine's own words at needs_human (an agent that cannot run) and
// at the plan gate (its first notice, its reminder after a pause, a
// decision file it could not take) reach the page naming its buttons, not
// the TUI's keys nor the headless user's file: the texts come from the
// engine, so a change of its wording that names a key fails here.
func TestPageWordsOfTheEngine(t *testing.T) {
	m := flow.Machine{Cfg: engine.NewConfig(config.Default())}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	texts := map[string]string{}
	step := func(s vocab.State, e flow.Event) vocab.State {
		t.Helper()
		s, eff := m.Step(s, e)
		for _, e := range eff {
			if n, ok := e.(flow.NotifyUser); ok {
				texts["the notice "+n.Message] = n.Message
			}
		}
		texts["the reason in "+string(s.Phase)] = s.Reason
		return s
	}
	when := func() flow.When { at = at.Add(time.Second); return flow.When{At: at} }
	trig := func(agent vocab.AgentID, name, content string) flow.TriggerCompleted {
		return flow.TriggerCompleted{Path: triggers.Path(agent, triggers.Kind(name), ""), Content: []byte(content), Agent: agent, ModTime: at, When: when()}
	}
	submit := func(gate string) vocab.State {
		return step(vocab.State{Phase: vocab.PhaseIdle}, flow.TaskSubmitted{Task: vocab.Task{ID: "t1", Project: "/proj", Workers: 1,
			Description: "do it", PlanApproval: gate}, TaskDir: "/ws/tasks/t1", When: when()})
	}

	s := step(submit(""), flow.AgentHealth{Agent: vocab.AgentLead, Health: vocab.HealthExited, ExitCode: 127, When: when()})
	if s.Phase != vocab.PhaseNeedsHuman || !namesKey.MatchString(s.Reason) {
		t.Fatalf("phase %s, reason %q: want needs_human and a reason that names the TUI's key (what this test checks)", s.Phase, s.Reason)
	}
	needs := s

	s = step(submit("human"), trig(vocab.AgentLead, "plan.md", "# Plan\n\n```json\n"+`{"summary": "build it",
 "checkpoints": [{"id": 1, "name": "core"}],
 "subtasks": [{"id": "st_1", "description": "write a", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]}]}`+"\n```\n"))
	s = step(s, trig(vocab.AgentReviewer, "plan-approved.md", "LGTM"))
	if s.Phase != vocab.PhasePlanApproval {
		t.Fatalf("phase %s, want plan_approval", s.Phase)
	}
	s = step(s, flow.KeyPressed{Action: flow.KeyPause, When: when()})
	s = step(s, flow.KeyPressed{Action: flow.KeyResume, When: when()})
	s = step(s, flow.TriggerCompleted{Path: flow.PlanDecisionFile, Content: []byte("maybe\n"), ModTime: at, When: when()})
	if s.Phase != vocab.PhasePlanApproval {
		t.Fatalf("phase %s, want plan_approval", s.Phase)
	}

	keyed := 0
	for what, text := range texts {
		if !namesKey.MatchString(text) {
			continue // the page says it as the TUI does
		}
		keyed++
		got := pageWords(text)
		if namesKey.MatchString(got) {
			t.Errorf("%s names a key or file on the page: %q", what, got)
		}
		if !strings.Contains(got, "Retry button") && !strings.Contains(got, "Approve and build") {
			t.Errorf("%s does not name the page's button: %q", what, got)
		}
	}
	if keyed < 4 {
		t.Errorf("%d of the engine's texts name a key, want 4 or more (the reason, the gate, its reminder, the refused file): %q", keyed, texts)
	}

	// The bridge applies it to notices and a snapshot's reason.
	n := proto.Msg{T: proto.TNotice, Text: "The Reviewer approved plan_v1: approve it (a) or send feedback (f); headless: " + flow.PlanDecisionHelp(s.TaskDir)}
	forPage(&n)
	snap := proto.Msg{T: proto.TSnapshot, Snapshot: &proto.Snapshot{State: needs}}
	forPage(&snap)
	if n.Text != "The Reviewer approved plan_v1: approve it (Approve and build) or send feedback (Send feedback)" {
		t.Errorf("the gate's notice on the page: %q", n.Text)
	}
	if r := snap.Snapshot.State.Reason; namesKey.MatchString(r) || !strings.Contains(r, "then retry (the Retry button)") {
		t.Errorf("the reason on the page: %q", r)
	}
}
