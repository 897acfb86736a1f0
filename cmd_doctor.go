package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/roles"
	"github.com/hivemind-dev/hivemind/workspace"
)

// checkEnv is the world the preflight looks at (tests swap it).
var checkEnv = preflight.System

// agentsOf describes the agents a run with cfg starts, for the preflight:
// one profile runs every role.
func agentsOf(cfg config.Config) []preflight.Agent {
	who := fmt.Sprintf("lead, reviewer, %d worker", cfg.Workers)
	if cfg.Workers != 1 {
		who += "s"
	}
	a := preflight.Agent{Name: cfg.Agent, Roles: who}
	switch cfg.Agent {
	case "sim":
		a.Kind = preflight.Sim
	case "claude":
		a.Kind = preflight.Claude
		for _, r := range roles.Names() {
			rc := cfg.Role(r)
			if rc.PermissionMode == "bypassPermissions" || slices.Contains(rc.ExtraArgs, "--dangerously-skip-permissions") {
				a.Bypass = true
			}
		}
	default:
		a.Kind = preflight.Command
		if p, ok := cfg.Profile(cfg.Agent); ok {
			if len(p.Command) > 0 {
				a.Argv0 = p.Command[0]
			}
		} else {
			a.Argv0, a.Shell = preflight.FirstWord(cfg.Agent), true
		}
	}
	return []preflight.Agent{a}
}

// preflightCheck runs the preflight for the agents of cfg. It returns the
// results and, when a check failed, a *preflight.Error.
func preflightCheck(cfg config.Config) ([]preflight.Result, error) {
	rs := preflight.Run(context.Background(), checkEnv(), agentsOf(cfg))
	if preflight.Failed(rs) {
		return rs, &preflight.Error{Results: rs}
	}
	return rs, nil
}

// preflightNotes are the warnings of a passed preflight, for the event log.
func preflightNotes(rs []preflight.Result) []workspace.EventRecord {
	var notes []workspace.EventRecord
	for _, r := range rs {
		if r.Status == preflight.Warn {
			notes = append(notes, workspace.EventRecord{Type: "preflight_warning",
				Details: map[string]any{"check": r.Check, "message": r.Msg, "fix": r.Fix}})
		}
	}
	return notes
}

// printPreflightFailure explains a failed preflight on the terminal: each
// check that did not pass, on its own line, then what to do.
func printPreflightFailure(w io.Writer, err error) bool {
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		return false
	}
	fmt.Fprintln(w, "hivemind: the agents cannot start; nothing was started or created:")
	for _, r := range pe.Results {
		if r.Status != preflight.OK {
			fmt.Fprintln(w, "  "+r.String())
		}
	}
	fmt.Fprintln(w, "Run hivemind doctor to see every check; --no-preflight starts the agents anyway.")
	return true
}

// onlyRootFailed reports whether the preflight failed only because Claude
// Code may not bypass permissions as root.
func onlyRootFailed(err error) bool {
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		return false
	}
	for _, r := range pe.Results {
		if r.Status == preflight.Fail && r.Check != preflight.CheckRoot {
			return false
		}
	}
	return true
}

// confirmSandbox asks, on a terminal, whether this root session is a
// sandbox (a container or VM the user can throw away); yes sets
// IS_SANDBOX=1 for this process and its agents.
func confirmSandbox(in io.Reader, out io.Writer) bool {
	fmt.Fprint(out, "hivemind: running as root. Claude Code bypasses permissions as root only in a sandbox.\n"+
		"Is this a container or VM you can throw away? Run the agents with IS_SANDBOX=1 [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(out, "hivemind: not started (IS_SANDBOX=1 hivemind … skips this question)")
		return false
	}
	return os.Setenv("IS_SANDBOX", "1") == nil
}

// cmdDoctor runs the preflight alone: one line per check, exit 1 when one
// failed. It checks the agents a run here would start (flags and config).
func cmdDoctor(o options, stdout, stderr io.Writer) int {
	cfg, src, err := loadConfig(o)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind: config:", err)
		return exitError
	}
	from := src.Of("agent")
	origin := from.Kind
	switch {
	case from.Flag != "":
		origin = from.Flag
	case from.File != "":
		origin = fmt.Sprintf("%s:%d", from.File, from.Line)
	}
	fmt.Fprintf(stdout, "agent %q (from %s), %d workers\n", cfg.Agent, origin, cfg.Workers)
	failed := doctorCheck(stdout, cfg)
	// --resume runs the unfinished task's own agents: check those too.
	if t, ok := unfinishedTask(o); ok {
		if rc, _ := resumeAgents(o, cfg, t); rc.Agent != cfg.Agent {
			fmt.Fprintf(stdout, "unfinished task %s (hivemind --resume): agent %q, %d workers\n", t.ID, rc.Agent, rc.Workers)
			failed = doctorCheck(stdout, rc) || failed
		}
	}
	if failed {
		fmt.Fprintln(stderr, "hivemind doctor: a check failed: the agents would not start")
		return exitError
	}
	return exitOK
}

// doctorCheck prints the preflight of cfg's agents and reports a failure.
func doctorCheck(w io.Writer, cfg config.Config) bool {
	rs, err := preflightCheck(cfg)
	for _, r := range rs {
		fmt.Fprintln(w, r)
	}
	return err != nil
}

// unfinishedTask is the task --resume would take up, if any (read only).
func unfinishedTask(o options) (workspace.Task, bool) {
	root, err := o.workspaceRoot()
	if err != nil {
		return workspace.Task{}, false
	}
	ws, infos, err := readTasks(root)
	if err != nil || ws == nil {
		return workspace.Task{}, false
	}
	id, ok, err := ws.Unfinished()
	if err != nil || !ok {
		return workspace.Task{}, false
	}
	for _, in := range infos {
		if in.ID == id {
			return in.Task, true
		}
	}
	return workspace.Task{}, false
}
