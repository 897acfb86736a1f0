package app

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The UI is run by this package alone: no other package of the module
// imports tui (the command line, the engine, the agents and the workspace
// stay usable without it). Tests may (e2e reads the screen with it).
func TestOnlyAppImportsTUI(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	const mod = "github.com/hivemind-dev/hivemind"
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && slices.Contains(f[1:], mod+"/tui") {
			importers = append(importers, f[0])
		}
	}
	if !slices.Equal(importers, []string{mod + "/internal/app"}) {
		t.Errorf("packages importing tui: %q, want only internal/app", importers)
	}
}
