package cli

import (
	"fmt"
	"io"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdDoctor runs the preflight alone: one line per check, exit 1 when one
// failed. It checks the agents a run here would start (flags and config).
func cmdDoctor(o options, stdout, stderr io.Writer) int {
	cfg, src, err := o.LoadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "hivemind: config:", err)
		return app.ExitError
	}
	from := src.Of("agent")
	origin := from.Kind
	switch {
	case from.Flag != "":
		origin = from.Flag
	case from.File != "":
		origin = fmt.Sprintf("%s:%d", from.File, from.Line)
	}
	fmt.Fprintf(stdout, "agent %q (from %s), %d workers\n", cfg.TeamString(), origin, cfg.Workers)
	o.CheckEnv = probing(o.CheckEnv)
	printWriteScopes(stdout)
	failed := doctorCheck(stdout, o, cfg)
	doctorPricing(stdout, cfg)
	// --resume runs the unfinished task's own agents: check those too.
	if root, err := o.WorkspaceRoot(); err == nil {
		if in, ok := workspace.UnfinishedTask(root); ok {
			if rc, _ := app.ResumeAgents(o.Options, cfg, in.Task); rc.TeamString() != cfg.TeamString() {
				fmt.Fprintf(stdout, "unfinished task %s (hivemind --resume): agent %q, %d workers\n", in.Task.ID, rc.TeamString(), rc.Workers)
				failed = doctorCheck(stdout, o, rc) || failed
			}
		}
	}
	if failed {
		fmt.Fprintln(stderr, "hivemind doctor: a check failed: the agents would not start")
		return app.ExitError
	}
	return app.ExitOK
}

// doctorCheck prints the preflight of cfg's agents and reports a failure.
func doctorCheck(w io.Writer, o options, cfg config.Config) bool {
	rs, err := o.Preflight(cfg)
	for _, r := range rs {
		fmt.Fprintln(w, r)
	}
	return err != nil
}

// doctorPricing names each configured model that has no price (nothing
// when every one has).
func doctorPricing(w io.Writer, cfg config.Config) {
	for _, u := range cfg.UnpricedModels() {
		fmt.Fprintln(w, preflight.Result{Status: preflight.Warn, Check: "pricing", Msg: u.Warning()})
	}
}

// probing makes env run each custom agent command to its first prompt
// (bounded): doctor's check of a custom agent goes that far, a run's
// preflight does not (no side effects, no delay before the run).
func probing(env func() preflight.Env) func() preflight.Env {
	return func() preflight.Env {
		e := preflight.System()
		if env != nil {
			e = env()
		}
		if e.Probe == nil {
			e.Probe = preflight.ProbeCommand
		}
		return e
	}
}
