package e2e_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// startTeamRow waits for the start screen, types a task and moves to the
// Team row.
func startTeamRow(t *testing.T, r *tuiRun) {
	t.Helper()
	r.waitScreen(tuiWait, "the start screen", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseProjectSelected)
	})
	r.typeText("add a greeting service")
	r.keys("Tab", "Tab", "Tab")
	r.waitText(tuiWait, "▸ Team  lead ◂ sim ▸  reviewer sim  workers sim  × 1", "←/→ role • ↑/↓ change")
}

// A mixed team picked on the start screen runs the real CLIs it names
// (offline: each points at the fake API): a sim Lead (offered because the
// command line configured it), a Codex Reviewer and Gemini Workers. The
// task starts with exactly that team — task.json, the pane titles, the
// processes — and is cancelled: no API turn has to finish.
func TestTUIStartTeamPick(t *testing.T) {
	parallel(t)
	c := SetupTeamOffline(t, fakeapi.DefaultScript(), "codex", "gemini")
	o := c.TUIOptions("--agent", "sim", "--workers", "1")
	o.simArgs, o.project = "--pace 20ms", c.Project
	r := startTUI(t, o)
	startTeamRow(t, r)
	// The offer is claude, codex, gemini, then sim (configured): from sim
	// ↓ wraps to claude.
	r.keys("Right", "Down", "Down", "Right", "Down", "Down", "Down")
	s := r.waitText(tuiWait, "lead sim  reviewer codex  workers ◂ gemini ▸  × 1")
	if s.contains("✖") {
		t.Errorf("an installed CLI marked missing:\n%s", s)
	}
	r.keys("C-s")

	s = r.waitScreen(tuiWait, "three panes naming their CLIs", func(s tuiScreen) bool {
		p := s.panes()
		return len(p) == 3 && strings.Contains(p["reviewer"].title, "codex") && strings.Contains(p["worker_1"].title, "gemini")
	})
	if lead := s.panes()["lead"].title; !strings.Contains(lead, "sim") {
		t.Errorf("lead pane title %q does not name sim", lead)
	}
	dir := r.taskDir()
	want := map[vocab.Role]string{"lead": "sim", "reviewer": "codex", "worker": "gemini"}
	if tj := readTask(t, dir); !maps.Equal(tj.Agents, want) || tj.SubmittedBy != "tui" {
		t.Errorf("task.json agents %v submitted by %q, want %v by tui", tj.Agents, tj.SubmittedBy, want)
	}
	// The processes are the CLIs picked.
	for id, cli := range map[string]string{"reviewer": "codex", "worker_1": "gemini"} {
		var cmdline string
		waitFor(t, tuiWait, id+"'s process", func() bool {
			pid := readState(t, dir).Agents[vocab.AgentID(id)].PID
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			cmdline = strings.ReplaceAll(string(b), "\x00", " ")
			return pid > 0 && err == nil
		})
		if !strings.Contains(cmdline, cli) {
			t.Errorf("%s runs %q, want %s", id, cmdline, cli)
		}
	}

	r.keys("c")
	r.waitText(tuiWait, "Cancel the task?")
	r.keys("y")
	r.waitText(2*tuiWait, "CANCELLED")
	r.quit()
	noLeftovers(t, c.Project)
}

// An agent whose program is not on PATH is marked on the Team row with
// why (a profile here, so the test holds on any machine; the built-in
// CLIs are marked exactly when this PATH lacks them); starting with it is
// refused with the preflight's fix and writes no task; picked back to
// sim, the task starts.
func TestTUIStartTeamMissing(t *testing.T) {
	parallel(t)
	project := t.TempDir()
	cfg := "[profiles.ghost]\ncommand = [\"hivemind-e2e-no-such-agent\", \"--yes\"]\n"
	if err := os.MkdirAll(filepath.Join(project, vocab.DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, vocab.DirName, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startTUI(t, tuiOptions{simArgs: "--pace 20ms", project: project, args: []string{"--agent", "sim", "--workers", "1"}})
	startTeamRow(t, r)
	// The reviewer through the offer: the registered CLIs (claude, codex,
	// gemini, …), then ghost.
	r.keys("Right")
	for _, cli := range profiles.Offered() {
		r.keys("Down")
		s := r.waitText(tuiWait, "reviewer ◂ "+cli+" ▸")
		_, err := exec.LookPath(cli)
		if marked := s.contains("reviewer ◂ " + cli + " ▸ ✖"); marked != (err != nil) {
			t.Errorf("%s marked missing: %v; on PATH: %v\n%s", cli, marked, err == nil, s)
		}
		if err != nil && !s.contains("✖ "+cli+" is not on PATH (npm install -g ") {
			t.Errorf("no install hint for %s:\n%s", cli, s)
		}
	}
	r.keys("Down")
	r.waitText(tuiWait, "reviewer ◂ ghost ▸ ✖", "✖ hivemind-e2e-no-such-agent is not on PATH")
	r.keys("C-s")
	s := r.waitText(tuiWait, "the agents cannot start", "hivemind-e2e-no-such-agent (the agent of reviewer) is not installed")
	if s.phase() != string(vocab.PhaseProjectSelected) || taskDirOf(project) != "" {
		t.Errorf("a task started with a missing agent:\n%s", s)
	}

	// Back to sim: the task starts, one CLI for every role.
	r.keys("Down")
	r.waitText(tuiWait, "reviewer ◂ sim ▸")
	r.keys("C-s")
	r.waitScreen(tuiWait, "three panes", func(s tuiScreen) bool { return len(s.panes()) == 3 })
	if tj := readTask(t, r.taskDir()); tj.Agent != "sim" || tj.Agents != nil {
		t.Errorf("task.json agent %q agents %v, want sim for every role", tj.Agent, tj.Agents)
	}
	r.quit()
	noLeftovers(t, project)
}
