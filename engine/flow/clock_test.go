package flow

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// usageStep is an event that always changes the state (an agent's usage
// grew), so the step is a state write: what a run leaves on disk.
func (sc *scenario) usageStep() {
	sc.t.Helper()
	u := sc.s.Agents[vocab.AgentLead].Usage
	u.Input += 10
	sc.do(AgentUsage{Agent: vocab.AgentLead, Usage: u})
}

// wait lets d pass on the scenario's clock without a step.
func (sc *scenario) wait(d time.Duration) { sc.now = sc.now.Add(d) }

// The elapsed clock, step by step: it counts while the task is under way
// and stands while paused, waiting on the user or over; a run killed
// without a word is counted up to its last state write; a state from
// before the clock was kept resumes from the time it showed.
func TestRunClock(t *testing.T) {
	type check struct {
		live, dead time.Duration // Elapsed at sc.now with a live run, and with none
	}
	cases := []struct {
		name string
		run  func(sc *scenario) check
	}{
		{"running", func(sc *scenario) check {
			sc.submit(2) // t0+1s
			sc.wait(time.Minute)
			sc.usageStep() // t0+62s
			sc.wait(30 * time.Second)
			return check{live: 91 * time.Second, dead: 61 * time.Second}
		}},
		{"paused", func(sc *scenario) check {
			sc.submit(2)                         // t0+1s
			sc.do(KeyPressed{Action: KeyPause})  // t0+2s: 1s ran
			sc.wait(time.Hour)                   // paused: not counted
			sc.do(KeyPressed{Action: KeyResume}) // +1s
			sc.wait(10 * time.Second)
			return check{live: 11 * time.Second, dead: time.Second}
		}},
		{"paused, still", func(sc *scenario) check {
			sc.submit(2)
			sc.do(KeyPressed{Action: KeyPause})
			sc.wait(time.Hour)
			return check{live: time.Second, dead: time.Second}
		}},
		{"needs_human stands, retry goes on", func(sc *scenario) check {
			sc.toNeedsHuman()
			ran := sc.s.Clock.Ran
			if ran <= 0 || sc.s.Counting() {
				sc.t.Fatalf("needs_human: clock %+v, want stopped with the time before", sc.s.Clock)
			}
			sc.wait(time.Hour)
			sc.do(KeyPressed{Action: KeyRetry})
			sc.wait(5 * time.Second)
			return check{live: ran + 5*time.Second, dead: ran}
		}},
		{"complete", func(sc *scenario) check {
			sc.toComplete()
			want := sc.s.FinishedAt.Sub(sc.s.StartedAt)
			sc.wait(time.Hour)
			return check{live: want, dead: want}
		}},
		{"killed, resumed", func(sc *scenario) check {
			sc.toExecuting()
			before := sc.s.Elapsed(sc.now, true)
			sc.wait(20 * time.Minute) // killed right after its last write; down 20 minutes
			eff := sc.do(Resumed{})
			if sc.s.Clock.Ran != before {
				sc.t.Fatalf("resume closed the killed run's interval at %v, want %v (its last write)", sc.s.Clock.Ran, before)
			}
			if d := eventDetails(eff, "resumed"); d["not_counted"] != "20m1s" {
				sc.t.Fatalf("resumed record %v: want not_counted 20m1s", d)
			}
			sc.wait(3 * time.Second)
			return check{live: before + 3*time.Second, dead: before}
		}},
		{"killed while paused", func(sc *scenario) check {
			sc.toExecuting()
			sc.do(KeyPressed{Action: KeyPause})
			before := sc.s.Clock.Ran
			sc.wait(time.Hour)
			sc.do(Resumed{})
			sc.expect(vocab.PhasePaused)
			sc.wait(time.Minute)
			sc.do(KeyPressed{Action: KeyResume})
			return check{live: before, dead: before}
		}},
		{"state from before the clock", func(sc *scenario) check {
			sc.toExecuting()
			sc.s.Clock = vocab.RunClock{}
			shown := sc.s.Timestamp.Sub(sc.s.StartedAt)
			sc.wait(time.Hour)
			sc.do(Resumed{})
			sc.wait(2 * time.Second)
			return check{live: shown + 2*time.Second, dead: shown}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := newScenario(t)
			want := c.run(sc)
			if got := sc.s.Elapsed(sc.now, true); got != want.live {
				t.Errorf("live: elapsed %v, want %v (clock %+v)", got, want.live, sc.s.Clock)
			}
			if got := sc.s.Elapsed(sc.now, false); got != want.dead {
				t.Errorf("no run live: elapsed %v, want %v (clock %+v)", got, want.dead, sc.s.Clock)
			}
		})
	}
}

// eventDetails are the details of the first record of type typ in eff.
func eventDetails(eff []Effect, typ vocab.RecordType) map[string]any {
	for _, e := range eff {
		if a, ok := e.(AppendEvent); ok && a.Type == typ {
			return a.Details
		}
	}
	return nil
}

// The clock counts exactly the time a live run had the task under way:
// random pauses, resumes, waits and kills (a kill loses the time after
// the run's last write, and the time it was down), against a model that
// sums those intervals step by step.
func TestRunClockRandom(t *testing.T) {
	for seed := range uint64(60) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		sc := newScenario(t)
		sc.toExecuting()
		want := sc.s.Clock.Ran + sc.now.Sub(sc.s.Clock.Since)
		prev, written := sc.now, sc.now // the last step, the last state write
		for range 40 {
			sc.wait(time.Duration(1+rnd.IntN(600)) * time.Second)
			running := sc.s.Phase.Running()
			var e Event
			switch rnd.IntN(4) {
			case 0: // time passed, then the run writes
				u := sc.s.Agents[vocab.AgentLead].Usage
				u.Input += 10
				e = AgentUsage{Agent: vocab.AgentLead, Usage: u}
			case 1:
				e = KeyPressed{Action: KeyPause}
			case 2:
				e = KeyPressed{Action: KeyResume}
			case 3: // killed after its last step; the next run resumes
				if running {
					want -= prev.Sub(written) // counted live up to the last step, kept up to the last write
				}
				running = false // down: not counted
				e = Resumed{}
			}
			eff := sc.do(e)
			if running {
				want += sc.now.Sub(prev)
			}
			prev = sc.now
			if len(effectsOf[WriteState](eff)) > 0 {
				written = sc.now
			}
			if got := sc.s.Elapsed(sc.now, true); got != want {
				t.Fatalf("seed %d: elapsed %v, want %v (phase %s, clock %+v)", seed, got, want, sc.s.Phase, sc.s.Clock)
			}
		}
	}
}

// The session files an agent's usage sums are kept with it (the next run
// reads them again); a usage that names none keeps them.
func TestUsageFilesKept(t *testing.T) {
	sc := newScenario(t)
	sc.submit(2)
	u := vocab.Usage{Model: "m", Input: 5}
	sc.do(AgentUsage{Agent: vocab.AgentLead, Usage: u, Files: []string{"/s/a.jsonl"}})
	sc.do(AgentUsage{Agent: vocab.AgentLead, Usage: u, Files: []string{"/s/a.jsonl", "/s/b.jsonl"}})
	if got := sc.s.Agents[vocab.AgentLead].UsageFiles; len(got) != 2 || len(effectsOf[WriteState](sc.eff)) != 1 {
		t.Fatalf("files %v (a new file with the same usage is a state write: %s)", got, describe(sc.eff))
	}
	u.Input++
	sc.do(AgentUsage{Agent: vocab.AgentLead, Usage: u})
	if got := sc.s.Agents[vocab.AgentLead]; len(got.UsageFiles) != 2 || got.Usage != u {
		t.Fatalf("usage without files: %+v", got)
	}
}
