package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdStatus prints the current task's state.json (as is with --json, with
// needs_you beside its fields; as a summary otherwise); while the
// project's server runs, the state its clients see. It only reads: it
// works while a run is going on.
func cmdStatus(o options, stdout io.Writer) error {
	info, live, err := currentTask(o)
	if err != nil {
		return err
	}
	if info.State == nil {
		return fmt.Errorf("task %s has no state yet (%s)", info.ID, info.Problem)
	}
	root, err := o.WorkspaceRoot()
	if err != nil {
		return err
	}
	el := elapsedOf(*info.State, time.Now(), live != nil || workspace.RunLive(root))
	if o.JSON {
		b, err := json.MarshalIndent(withNeeds(info.State, el), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = io.WriteString(stdout, renderStatus(info, el))
	return err
}

// currentTask is the task status and events show: the one the project's
// running server runs, with the state its clients see (live), or the
// workspace's current task when no server runs it (live is nil).
func currentTask(o options) (info workspace.TaskInfo, live *app.Live, err error) {
	if live, err = app.ReadLive(o.Options, binaryVersion()); err != nil {
		return info, nil, err
	}
	if info, err = o.CurrentTask(); err != nil || live == nil {
		return info, nil, err
	}
	if live.Info.TaskID != info.ID || live.Snapshot.State.Phase == "" {
		return info, nil, nil // not the task shown, or not stepped yet
	}
	st := live.Snapshot.State
	info.State, info.Problem = &st, ""
	return info, live, nil
}

// elapsed is a task's elapsed clock as status reports it.
type elapsed struct {
	d time.Duration
	// live: a Hivemind process runs (the clock counts to now when the task
	// is under way); dead: none does and its last run left the task under
	// way (it was stopped or killed: counted up to its last state write).
	live, dead bool
}

// elapsedOf reads st's clock at now (vocab.State.Elapsed: the UI and
// the summary read the same).
func elapsedOf(st vocab.State, now time.Time, live bool) elapsed {
	return elapsed{d: st.Elapsed(now, live), live: live, dead: !live && st.Counting()}
}

func (e elapsed) String() string {
	s := vocab.FormatElapsed(e.d)
	if e.dead {
		s += " (no Hivemind runs it: counted up to its last state write; --resume goes on)"
	}
	return s
}

// renderStatus renders a task's state for people.
func renderStatus(info workspace.TaskInfo, el elapsed) string {
	st := info.State
	var b strings.Builder
	fmt.Fprintf(&b, "task      %s\n", info.ID)
	if info.Task.Description != "" {
		fmt.Fprintf(&b, "          %s\n", vocab.Headline(info.Task.Description))
	}
	if st.Abandoned() {
		// Idle after it ran: the user gave it up (A), as tasks and the UI say.
		fmt.Fprintf(&b, "state     abandoned")
	} else {
		fmt.Fprintf(&b, "state     %s", st.Phase)
	}
	if st.PreviousPhase != "" {
		fmt.Fprintf(&b, " (from %s)", st.PreviousPhase)
	}
	b.WriteString("\n")
	switch why := st.EndReason(); {
	case why != st.Reason && why != st.Error:
		// Ended by the user while it waited: say so, not the old reason alone.
		fmt.Fprintf(&b, "ended     %s\n", why)
	default:
		if st.Reason != "" {
			fmt.Fprintf(&b, "reason    %s\n", st.Reason)
		}
		if st.Error != "" && st.Error != st.Reason {
			fmt.Fprintf(&b, "error     %s\n", st.Error)
		}
	}
	fmt.Fprintf(&b, "project   %s\n", st.Project)
	fmt.Fprintf(&b, "checkpoint %d/%d   revisions %d   friction %d\n",
		st.CurrentCheckpoint, st.TotalCheckpoints, st.RevisionCount, st.FrictionCount)
	if !st.StartedAt.IsZero() {
		fmt.Fprintf(&b, "elapsed   %s\n", el)
	}
	if !st.Timestamp.IsZero() {
		fmt.Fprintf(&b, "updated   %s\n", st.Timestamp.Local().Format(time.DateTime))
	}
	if len(st.Subtasks) > 0 {
		b.WriteString("subtasks\n")
		for _, id := range slices.Sorted(maps.Keys(st.Subtasks)) {
			s := st.Subtasks[id]
			fmt.Fprintf(&b, "  %-12s %-12s %s\n", id, s.Status, s.Worker)
		}
	}
	if len(st.Agents) > 0 {
		b.WriteString("agents\n")
		for _, id := range slices.Sorted(maps.Keys(st.Agents)) {
			a := st.Agents[id]
			line := fmt.Sprintf("  %-12s %-9s %-18s restarts %d", id, a.Role, a.Status, a.Restarts)
			if ag := info.Task.AgentOf(id); ag != "" && info.Task.Agents != nil {
				line += "  " + ag // a mixed team: which CLI this agent is
			}
			if a.Subtask != "" {
				line += "  on " + a.Subtask
			}
			if u := a.Usage.Short(); u != "" {
				line += "  " + u
			}
			if a.Paused {
				line += "  paused"
			}
			b.WriteString(line + "\n")
		}
	}
	if usd, unknown := st.Spend(); usd > 0 || len(unknown) > 0 {
		fmt.Fprintf(&b, "spend     %s estimated", vocab.FormatUSD(usd))
		if len(unknown) > 0 {
			fmt.Fprintf(&b, " + not known for %s (no price)", vocab.JoinAgents(unknown))
		}
		b.WriteString("\n")
	}
	for _, acc := range slices.Sorted(maps.Keys(st.Holds)) {
		h := st.Holds[acc]
		fmt.Fprintf(&b, "held      new work for account %s since %s: %s rate limited (%s)\n",
			acc, h.Since.Local().Format(time.TimeOnly), h.Agent, h.Reason)
	}
	if n := st.Waiting(); n > 0 {
		fmt.Fprintf(&b, "waiting   %d message(s) not typed yet (a pause or a rate-limit hold); they are sent, in order, when it ends\n", n)
	}
	b.WriteString(needsYouText(*st))
	if info.Problem != "" {
		fmt.Fprintf(&b, "note      %s\n", info.Problem)
	}
	return b.String()
}

// statusJSON is state.json with what waits for the human and the elapsed
// clock beside it.
type statusJSON struct {
	*vocab.State
	NeedsYou []vocab.Need `json:"needs_you"`
	// ElapsedSeconds is the elapsed clock now (vocab.State.Elapsed);
	// Live says whether a Hivemind process runs the workspace.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Live           bool    `json:"live"`
}

func withNeeds(st *vocab.State, el elapsed) statusJSON {
	n := vocab.NeedsYou(*st, nil)
	if n == nil {
		n = []vocab.Need{}
	}
	return statusJSON{State: st, NeedsYou: n, ElapsedSeconds: el.d.Round(time.Millisecond).Seconds(), Live: el.live}
}

// needsYouText is status's "needs you" lines: everything waiting for the
// human, one a line, with the keys of the full-screen UI that go there.
// The run's own process knows more (text typed into an agent's prompt):
// the full-screen UI shows that too.
func needsYouText(st vocab.State) string {
	needs := vocab.NeedsYou(st, nil)
	if len(needs) == 0 {
		return "needs you nothing\n"
	}
	var b strings.Builder
	for i, n := range needs {
		label := "          "
		if i == 0 {
			label = "needs you "
		}
		b.WriteString(label + n.String() + "\n")
	}
	return b.String()
}
