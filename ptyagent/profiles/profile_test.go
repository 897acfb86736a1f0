package profiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// Every kind with PTY rules belongs to a profile (or is the custom kind
// of [profiles.<name>] and command lines), and every profile's kind has
// rules: a kind added on one side only fails here.
func TestEveryKindHasAProfile(t *testing.T) {
	var kinds []ptyagent.ProfileKind
	for _, p := range Registered() {
		if _, ok := ptyagent.KindBehavior(p.Kind); !ok {
			t.Errorf("%s: kind %q has no ptyagent.Behavior", p.Name, p.Kind)
		}
		kinds = append(kinds, p.Kind)
	}
	for _, k := range ptyagent.Kinds() {
		if k != ptyagent.ProfileCustom && !slices.Contains(kinds, k) {
			t.Errorf("ptyagent kind %q has no profile in ptyagent/profiles", k)
		}
	}
}

// Each profile reaches every place that lists agents: config accepts its
// name, `hivemind roles` says how it is enforced, the preflight knows its
// program and tested version, and its Launch builds a Spec of its kind
// running its program.
func TestEveryProfileIsWired(t *testing.T) {
	if len(Registered()) < 4 {
		t.Fatalf("registered: %v", Names())
	}
	cfg := config.Default()
	table := roles.Table(cfg)
	for _, p := range Registered() {
		t.Run(p.Name, func(t *testing.T) {
			dir := t.TempDir()
			// A typo of its name is caught: config knows the name.
			typo := p.Name + "x"
			if _, _, err := config.Load("", "", config.Overrides{Agent: &typo}); err == nil || !strings.Contains(err.Error(), "did you mean \""+p.Name+"\"") {
				t.Errorf("config does not know agent %q: --agent %s gives %v", p.Name, typo, err)
			}
			if !strings.Contains(table, " "+p.Name+" ") {
				t.Errorf("hivemind roles does not list %s", p.Name)
			}
			c := p.CLI()
			if c.Bin != p.Binary || c.Tested != p.Version || (p.Binary != "" && !strings.Contains(c.Install, p.NPM)) {
				t.Errorf("preflight CLI %+v", c)
			}
			if p.Binary == "" && c.About == "" {
				t.Errorf("a CLI without a program needs About")
			}
			taskID := "profiles-test-" + p.Name
			t.Cleanup(func() {
				if c, err := os.UserCacheDir(); err == nil {
					os.RemoveAll(filepath.Join(c, "hivemind", "gemini", taskID))
				}
			})
			spec, err := p.Launch(Launch{
				Base: ptyagent.Spec{Dir: dir}, ID: "worker_1", Role: "worker",
				Prompt:  func() (string, error) { return "You are a worker.", nil },
				TaskDir: filepath.Join(dir, "task"), TaskID: taskID, Self: "/bin/true",
			})
			if err != nil {
				t.Fatal(err)
			}
			if spec.Kind != p.Kind {
				t.Errorf("Launch gives kind %q, want %q", spec.Kind, p.Kind)
			}
			if p.Binary != "" && (len(spec.Argv) == 0 || spec.Argv[0] != p.Binary) {
				t.Errorf("Launch runs %q, want %s", spec.Argv, p.Binary)
			}
		})
	}
}
