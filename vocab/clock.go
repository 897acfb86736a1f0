package vocab

import (
	"fmt"
	"time"
)

// RunClock is the task's elapsed clock, kept in state.json so that every
// reader (the full-screen UI, `hivemind status`, the summary, the final
// report, a client of another process) computes the same figure from the
// state alone, after a detach, a crash or a resume.
//
// The clock counts while a run of Hivemind has the task under way (a
// Running phase) and stands otherwise: paused, waiting on the user
// (needs_human, error), over, or no Hivemind running it. The engine moves
// it with its events' times (engine/flow: no clock is read there): an
// interval opens when the task enters a running phase or a run resumes
// it, and closes when it leaves one. A run killed without a word (kill -9,
// a power cut) leaves its interval open; it is closed at that run's last
// state write (State.Timestamp), the last moment it is known to have run,
// when the next run resumes the task, and Elapsed ends it there meanwhile.
// The time between that write and the kill is not counted: it is not
// known, and kept short: while the clock runs the runner writes the state
// again when no step did for a few seconds (engine.RunnerConfig.Heartbeat).
// A graceful stop writes the agents' exits as it stops them, so its
// last write is its end.
type RunClock struct {
	// Ran is the time counted in the intervals that closed.
	Ran time.Duration `json:"ran_ns,omitempty"`
	// Since is when the open interval began; zero while the clock stands.
	Since time.Time `json:"since,omitzero"`
}

// FormatElapsed renders an elapsed time as the header shows it: 01:02:03.
func FormatElapsed(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// Start opens an interval at at, unless one is open (or at is unknown).
func (c *RunClock) Start(at time.Time) {
	if c.Since.IsZero() {
		c.Since = at
	}
}

// Stop closes the open interval at at; an end before its start counts
// nothing.
func (c *RunClock) Stop(at time.Time) {
	if c.Since.IsZero() {
		return
	}
	c.Ran += max(at.Sub(c.Since), 0)
	c.Since = time.Time{}
}

// Elapsed is how long the task has run, by its clock (RunClock): the
// intervals that closed, and the open one up to now when a run is live
// (its Hivemind process runs), or up to the last state that run wrote when
// none is (it was killed; see RunClock). now is the reader's clock: this
// function reads none, so the UI, status and tests give it theirs.
//
// A state written before the clock was kept (no interval ever opened)
// counts from its start to its end, or to its last write.
func (s State) Elapsed(now time.Time, live bool) time.Duration {
	c := s.Clock
	if c.Ran == 0 && c.Since.IsZero() {
		if s.StartedAt.IsZero() {
			return 0
		}
		end := s.EndedAt()
		if end.IsZero() {
			end = s.Timestamp
		}
		return max(end.Sub(s.StartedAt), 0)
	}
	d := c.Ran
	if !c.Since.IsZero() {
		end := s.Timestamp
		if live {
			end = now
		}
		d += max(end.Sub(c.Since), 0)
	}
	return d
}

// Counting reports whether the clock runs in s (an interval is open): a
// display of a live run ticks only then.
func (s State) Counting() bool { return !s.Clock.Since.IsZero() }
