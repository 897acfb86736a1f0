package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// A tiny budget_tokens stops a sim team at needs_human, with no price for
// its model ("sim"): the reason names the budget, the headless output names
// the unpriced model once; a raised budget_tokens and --resume --retry
// continue the same task to complete.
func TestSimTokenBudgetStopsAndRetryContinues(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	cfgFile := filepath.Join(project, ".hivemind", "config.toml")
	writeCfg := func(s string) {
		if err := os.MkdirAll(filepath.Dir(cfgFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgFile, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg("budget_tokens = 3000\n")
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	const usage = "HIVEMIND_SIM_ARGS=--pace 2ms --usage 1000" // each turn: 1000 tokens of model "sim"
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--workers", "1", "--project", project, "build a tiny calculator")
	cmd.Env = append(cmd.Env, usage)
	if code := exitCode(t, cmd); code != 3 {
		t.Fatalf("exit %d, want 3 (needs_human)\n%s", code, out.String())
	}
	dir := taskDir(t, project)
	st := readState(t, dir)
	tokens := int64(0)
	for _, a := range st.Agents {
		tokens += a.Usage.Tokens()
	}
	if st.Phase != vocab.PhaseNeedsHuman || st.Escalation != "budget" || tokens < 3000 ||
		!strings.Contains(st.Reason, "tokens reached the budget of 3000 tokens (budget_tokens)") ||
		!strings.Contains(st.Reason, "budget_tokens in config.toml") {
		t.Fatalf("state %s (%s), %d tokens: %s", st.Phase, st.Escalation, tokens, st.Reason)
	}
	if n := strings.Count(out.String(), `model "sim" has no price`); n != 1 || !strings.Contains(out.String(), "reached the budget of 3000 tokens") {
		t.Errorf("headless output names the unpriced model %d times (want 1) or not the budget:\n%s", n, out.String())
	}

	writeCfg("budget_tokens = 100000000\n")
	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--retry", "--agent", "sim", "--workers", "1", "--project", project)
	cmd2.Env = append(cmd2.Env, usage)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("retry with a raised budget: exit %d\n%s", code, out2.String())
	}
	checkComplete(t, dir)
	noLeftovers(t, project)
}
