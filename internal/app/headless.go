package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// cancelGrace is how long a graceful cancel may take (agents get SIGTERM,
// then SIGKILL after their stop timeout) before Hivemind exits anyway.
const cancelGrace = 30 * time.Second

// Run runs the task to a final state and returns the exit code: in the
// full-screen UI when stdin and stdout are a terminal and headless is not
// set, else headless.
func (a *App) Run(headless bool) int {
	if !headless {
		if IsTerminal() {
			return runFrontDoor(a.opts, a)
		}
		a.out.notice("info", "no terminal (stdin or stdout is not a TTY): running headless, one line per event")
	}
	return a.runHeadless()
}

// runHeadless runs the workflow with one line per event on stdout until a
// final state, then stops the agents. SIGINT, SIGTERM and SIGHUP (the
// ssh session or terminal closed) cancel gracefully; a second signal stops
// waiting.
func (a *App) runHeadless() int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Once the terminal or ssh pipe is gone, a write to stdout raises
	// SIGPIPE, which would kill Hivemind before it stopped its agents;
	// asked for, it makes the write fail with EPIPE instead (the output is
	// lost, the shutdown is not). Not signal.Ignore: agents would inherit
	// an ignored SIGPIPE.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- a.runner.Run(ctx) }()
	if a.resumed {
		a.out.notice("info", fmt.Sprintf("resuming task %s (%s)", a.td.ID(), a.runner.Snapshot().State.Phase))
	} else {
		a.out.notice("info", fmt.Sprintf("task %s in %s", a.td.ID(), a.project))
	}
	a.warnUnpriced()
	a.runner.Send(a.first)

	var grace <-chan time.Time
	interrupted := false
	var firstSignal time.Time
wait:
	for {
		select {
		case <-a.outcome.terminal:
			break wait
		case err := <-runDone:
			a.out.notice("error", fmt.Sprintf("engine stopped: %v", err))
			runDone <- err
			break wait
		case sig := <-sigs:
			if interrupted && time.Since(firstSignal) < 300*time.Millisecond {
				// The same signal delivered twice (to the process and to
				// its group, as timeout(1) does): not a second request.
				continue
			}
			if interrupted {
				a.out.notice("warn", "second signal: stopping now")
				break wait
			}
			interrupted, firstSignal = true, time.Now()
			a.out.notice("warn", fmt.Sprintf("%s: cancelling (again to stop at once)", strings.ToUpper(sig.String())))
			a.runner.Cancel()
			grace = time.After(cancelGrace)
		case <-grace:
			a.out.notice("warn", "cancel took too long: stopping now")
			break wait
		}
	}
	final := a.outcome.finalPhase()
	a.shutdown(cancel, runDone)
	code := exitCode(final)
	st := a.runner.Snapshot().State
	switch final {
	case "":
		a.out.notice("error", "stopped before the task finished ("+runFigures(st)+")")
	default:
		msg := fmt.Sprintf("task %s: %s", a.td.ID(), final)
		if why := st.EndReason(); why != "" {
			msg += ": " + why
		}
		a.out.notice(map[bool]string{true: "info", false: "warn"}[code == ExitOK], msg+" ("+runFigures(st)+")")
	}
	return code
}

// runFigures is what the run spent, as status and the UI say it after it:
// the elapsed clock (the run has stopped: counted up to its last state
// write, vocab.State.Elapsed), the tokens and the estimated spend.
func runFigures(st vocab.State) string {
	s := "elapsed " + vocab.FormatElapsed(st.Elapsed(time.Time{}, false))
	if n := st.Tokens(); n > 0 {
		s += ", " + vocab.FormatTokens(n) + " tokens"
	}
	if usd, unknown := st.Spend(); usd > 0 || len(unknown) > 0 {
		s += ", " + vocab.FormatUSD(usd)
		if len(unknown) > 0 {
			s += " + not known for " + vocab.JoinAgents(unknown)
		}
		s += " estimated"
	}
	return s
}
