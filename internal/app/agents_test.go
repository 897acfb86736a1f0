package app

import (
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/workspace"
)

// rate_limit_cooldown_seconds and scrollback_lines (0 included: no
// scrollback) reach every agent's ptyagent.Spec as given, for the
// built-in sim agent, a [profiles.<name>] agent and a custom command line.
func TestAgentSpecRateLimitCooldown(t *testing.T) {
	project := t.TempDir()
	ws, err := workspace.Open(workspace.DefaultRoot(project))
	if err != nil {
		t.Fatal(err)
	}
	td, err := ws.CreateTask(workspace.Task{Description: "x", Project: project, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.RateLimitCooldownSeconds = 7
	cfg.ScrollbackLines = 0
	cfg.Profiles["echoer"] = config.Profile{Command: []string{"cat"}, Submit: config.SubmitLine}
	for _, profile := range []string{"sim", "echoer", "cat -u"} {
		f := &agentFactory{cfg: cfg, profile: profile, project: project, td: td, self: "/bin/true"}
		spec, err := f.spec("worker_1", workspace.RoleWorker, false)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if spec.RateLimitCooldown != 7*time.Second {
			t.Errorf("%s: RateLimitCooldown %v, want 7s", profile, spec.RateLimitCooldown)
		}
		if spec.Scrollback != 0 {
			t.Errorf("%s: Scrollback %d, want 0", profile, spec.Scrollback)
		}
	}
}
