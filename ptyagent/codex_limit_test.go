package ptyagent

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Real Codex CLI against the fake API answering 429: Codex fires no hook
// on the failed turn, so its session file's task_complete (HTTP 429) is
// the signal: the session goes busy → rate_limited, then idle once the
// cooldown is over.
func TestRealCodexRateLimited(t *testing.T) {
	t.Parallel() // with the other real CLI tests (runRealCLI)
	bin, ok := agenttest.Binary("codex")
	if !ok {
		t.Skip("codex not on PATH: npm install --prefix DIR @openai/codex (docs/agents/codex.md)")
	}
	if testing.Short() {
		t.Skip("real codex test skipped in -short mode")
	}
	sc := fakeapi.DefaultScript()
	sc.Errors = []fakeapi.ErrorRule{{Status: 429, For: time.Minute}}
	api := fakeapi.New(sc)
	t.Cleanup(api.Close)
	project := t.TempDir()
	hookCmd := hookWrapper(t)
	home := filepath.Join(t.TempDir(), "codex")
	if err := agenttest.WriteCodexHome(home, api.URL(), []string{project}, nil); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	m := realManager(t, bin, "worker_1", api, &rec, func(id vocab.AgentID, _ bool) Spec {
		base := Spec{Dir: project, BaseEnv: agenttest.CodexEnv(home), Cols: 120, Rows: 40,
			LogPath: filepath.Join(project, "logs", string(id)+".log"), RateLimitCooldown: 3 * time.Second}
		return CodexSpec(base, CodexOptions{Sandbox: "workspace-write", HookCommand: hookCmd, DeveloperInstructions: "You are a test agent."})
	})
	if err := m.Start("worker_1", "worker", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("worker_1")
	waitFor(t, 90*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
	if err := m.Inject("worker_1", 1, "write hello.txt"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "rate_limited", func() bool { return s.Health() == vocab.HealthRateLimited })
	limitedAt := time.Now()
	var detail string
	for _, e := range rec.all() {
		if e.Kind == EventHealth && e.Health == vocab.HealthRateLimited {
			detail = e.Detail
		}
	}
	if !strings.Contains(detail, "Codex task_complete") || !strings.Contains(detail, "429") {
		t.Errorf("detail %q", detail)
	}
	waitFor(t, 60*time.Second, "idle after the cooldown", func() bool { return s.Health() == vocab.HealthIdle })
	t.Logf("rate_limited → idle after %v", time.Since(limitedAt).Round(time.Millisecond))
	var errs int
	for _, r := range api.Requests() {
		if r.Status == 429 {
			errs++
		}
	}
	if errs == 0 {
		t.Error("the fake answered no 429")
	}
}
