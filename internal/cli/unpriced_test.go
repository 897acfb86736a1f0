package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
)

// doctor names a configured model without a price, once, with the fix;
// with a budget_usd and no token budget the config is refused with both
// fixes.
func TestDoctorNamesUnpricedModels(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("[roles.worker]\nmodel = \"claude-x\"\n[roles.reviewer]\nmodel = \"claude-x\"\n")
	var out, errOut strings.Builder
	code := Run([]string{"doctor", "--project", t.TempDir(), "--agent", "sim", "--config", cfg}, strings.NewReader(""), &out, &errOut)
	want := `warn  pricing          model "claude-x" (reviewer, worker) has no price`
	if code != app.ExitOK || strings.Count(out.String(), want) != 1 || !strings.Contains(out.String(), `add [pricing."claude-x"]`) {
		t.Errorf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	write("budget_usd = 3\n[roles.worker]\nmodel = \"claude-x\"\n")
	out.Reset()
	errOut.Reset()
	code = Run([]string{"doctor", "--project", t.TempDir(), "--agent", "sim", "--config", cfg}, strings.NewReader(""), &out, &errOut)
	if code != app.ExitError || !strings.Contains(errOut.String(), `[pricing."claude-x"]`) || !strings.Contains(errOut.String(), "budget_tokens") {
		t.Errorf("budget with an unpriced model: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
