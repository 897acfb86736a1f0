package e2e_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// SIGTERM to the full-screen UI always ends it, whenever it comes: 20
// fresh runs in tmux, each signalled at a random moment of one of four
// stages (just launched, the start screen, the demo running, the summary
// of a complete task). Each must exit within the deadline, leave no
// process of its run and release the workspace lock. With two owners of
// SIGTERM (bubbletea's own handler and Hivemind's) the UI hung in about
// half the tries, agents and lock held until SIGKILL.
func TestTUISIGTERMAlwaysExits(t *testing.T) {
	parallel(t)
	requireTmux(t)
	stages := []string{"launch", "start screen", "running", "summary"}
	const trials = 20
	for i := range trials {
		stage := stages[i%len(stages)]
		t.Run(fmt.Sprintf("%02d-%s", i, strings.ReplaceAll(stage, " ", "-")), func(t *testing.T) {
			parallel(t)
			sigtermTrial(t, stage)
		})
	}
}

// sigtermTrial runs hivemind in tmux up to stage, waits a random moment,
// sends SIGTERM and checks the exit.
func sigtermTrial(t *testing.T, stage string) {
	tmp := t.TempDir()
	o := tuiOptions{simArgs: "--pace 30ms", env: []string{"TMPDIR=" + tmp}}
	switch stage {
	case "launch", "running":
		o.args = []string{"demo"}
	case "start screen":
		o.args = []string{"--agent", "sim", "--workers", "2"}
	case "summary":
		o.simArgs = "--pace 2ms"
		o.args = []string{"--agent", "sim", "--workers", "2", "build a tiny calculator"}
	}
	r := startTUI(t, o)
	pid := r.hivemindPID()
	var jitter time.Duration
	switch stage {
	case "launch":
		jitter = rand.N(3 * time.Second)
	case "start screen":
		r.waitScreen(tuiWait, "the start screen", func(s tuiScreen) bool {
			return s.phase() == string(vocab.PhaseProjectSelected)
		})
		jitter = rand.N(500 * time.Millisecond)
	case "running":
		r.waitScreen(tuiWait, "four agent panes", func(s tuiScreen) bool { return len(s.panes()) == 4 })
		jitter = rand.N(1500 * time.Millisecond)
	case "summary":
		r.waitText(2*tuiWait, "COMPLETE")
		jitter = rand.N(300 * time.Millisecond)
	}
	time.Sleep(jitter) // the random moment itself, not a wait for a condition
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to hivemind (pid %d): %v", pid, err)
	}
	const deadline = 30 * time.Second
	sent := time.Now()
	if !pollUntil(deadline, func() bool { dead, _ := r.exited(); return dead }) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("%s: hivemind still runs %v after SIGTERM (sent %v into the stage); screen:\n%s", stage, deadline, jitter, r.capture())
	}
	_, code := r.exited()
	t.Logf("%s: SIGTERM %v into the stage; exit status %d after %v", stage, jitter.Round(time.Millisecond), code, time.Since(sent).Round(time.Millisecond))

	// The run's project: the demo makes its own (none yet if the signal
	// came before it did).
	project := r.project
	if m, _ := filepath.Glob(filepath.Join(tmp, "hivemind-demo-*")); len(m) == 1 {
		project = m[0]
	}
	noLeftovers(t, project)
	l, _, err := workspace.AcquireWorkspaceLock(project)
	if errors.Is(err, workspace.ErrLocked) {
		t.Fatalf("%s: the workspace lock is still held after hivemind exited: %v", stage, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release()
}

// hivemindPID returns the pid of the hivemind process in the pane: the
// pane's shell runs it as its child (env execs it).
func (r *tuiRun) hivemindPID() int {
	r.t.Helper()
	out := r.mustTmux("display-message", "-p", "-t", r.session, "#{pane_pid}")
	shell, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		r.t.Fatalf("pane pid %q: %v", out, err)
	}
	pid := 0
	waitFor(r.t, tuiWait, "hivemind to start in the pane", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", shell, shell))
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); exe == bin {
				pid = p
				return true
			}
		}
		return false
	})
	return pid
}
