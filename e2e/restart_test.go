package e2e_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

// jsonRecords parses the records of a --json run's output (other lines
// are skipped).
func jsonRecords(out string) []workspace.EventRecord {
	var recs []workspace.EventRecord
	for _, line := range strings.Split(out, "\n") {
		var r workspace.EventRecord
		if json.Unmarshal([]byte(line), &r) == nil && r.Type != "" {
			recs = append(recs, r)
		}
	}
	return recs
}

// SIGKILL right after a subtask is recorded done, then --resume: the
// step that took the done marker was on disk before it was printed, so
// the resumed run neither takes the marker again nor sends the subtask
// again; every subtask is done exactly once over both runs, and the run
// completes.
func TestKillRightAfterSubtaskDone(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemindPaced(t, ctx, home, 30*time.Millisecond, "--headless", "--json", "--agent", "sim", "--workers", "2",
		"--project", project, "build a tiny calculator")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var first string
	waitFor(t, runDeadline, "a subtask_done record", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("hivemind exited before any subtask was done: %v\n%s", err, out.String())
		default:
		}
		for _, r := range jsonRecords(out.String()) {
			if r.Type == "subtask_done" {
				first, _ = r.Details["subtask"].(string)
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	dir := taskDir(t, project)
	if st := readState(t, dir); st.Subtasks[first].Status != workspace.SubtaskDone {
		t.Errorf("state.json after the kill: %s is %s, want done (printed before it was saved)", first, st.Subtasks[first].Status)
	}
	noLeftovers(t, project)
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(m) > 0 {
		t.Logf("temp files left by the kill: %v", m)
	}

	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--json", "--resume", "--agent", "sim", "--workers", "2",
		"--project", project)
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume exit %d, want 0; output:\n%s", code, out2.String())
	}
	st := checkComplete(t, dir)
	done := map[string]int{}
	for _, r := range append(jsonRecords(out.String()), jsonRecords(out2.String())...) {
		if r.Type == "subtask_done" {
			s, _ := r.Details["subtask"].(string)
			done[s]++
		}
	}
	for id := range st.Subtasks {
		if done[id] != 1 {
			t.Errorf("%s done %d times over both runs, want 1", id, done[id])
		}
	}
	for _, r := range jsonRecords(out2.String()) {
		if r.Type == "assignment_sent" && r.Agent != "" {
			if a, ok := r.Details["what"].(string); ok && strings.Contains(a, first+":") {
				t.Errorf("%s sent again after the resume: %q", first, a)
			}
		}
		if r.Type == "temp_files_removed" {
			t.Logf("resume removed %v temp file(s)", r.Details["count"])
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(m) > 0 {
		t.Errorf("temp files of atomic writes left after the resume: %v", m)
	}
	noLeftovers(t, project)
}
