package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// chaosDieFile in the project makes chaosGate exit before its prompt
// appears.
const chaosDieFile = ".chaos-die"

// chaosGate writes a worker command that, while chaosDieFile is in the
// project, says it cannot start and exits at once, and else runs the
// chaos agent. A shell, not the chaos agent itself: the race-built test
// binary can take longer to start on a busy machine than the quiet output
// that makes a silent program ready, and a program that is silent at
// first is one Hivemind must take for ready.
func chaosGate(t *testing.T) string {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate.sh")
	script := "#!/bin/sh\nif [ -e \"$HIVEMIND_PROJECT/" + chaosDieFile + "\" ]; then\n" +
		"  echo \"chaos agent $HIVEMIND_AGENT_ID: cannot start (" + chaosDieFile + " is there)\"; exit 1\nfi\nexec '" + chaosSelf(t) + "'\n"
	if err := os.WriteFile(gate, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return gate
}

// A worker that exits before its prompt ever appears, twice in a row,
// stops the run in needs_human within seconds, with its exit code and last
// output (not after minutes of backoff). Fixed, `--resume --retry` starts
// it exactly once (before: the resume started it and the retry restarted
// it, SIGTERM, exit 143, counted as a crash) and the task completes.
func TestResumeRetryStartsWorkerOnce(t *testing.T) {
	parallel(t)
	project, home := chaosProject(t, "max_retries = 2\n")
	die := filepath.Join(project, chaosDieFile)
	if err := os.WriteFile(die, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	self := chaosSelf(t)
	code, dir, out, recs := chaosExecAs(t, project, home, "behave", "lead="+self+",reviewer="+self+",worker="+chaosGate(t), "chaos: write two files")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (needs_human):\n%s", code, out)
	}
	st := readState(t, dir)
	for _, want := range []string{"worker_1 exited before its prompt appeared", "code 1", "cannot start", "Fix:"} {
		if !strings.Contains(st.Reason, want) {
			t.Errorf("reason %q lacks %q; the run printed:\n%s", st.Reason, want, out)
			break
		}
	}
	exited := func(r vocab.EventRecord) bool {
		return r.Type == vocab.InputPrefix+"agent_health" && r.Agent == "worker_1" && recDetail(r, "health") == string(vocab.HealthExited)
	}
	first, nh := findRecord(recs, 0, exited), recordIndex(recs, 0, "needs_human")
	if first < 0 || nh < 0 {
		t.Fatalf("no exit (%d) or needs_human (%d) recorded", first, nh)
	}
	if d := recs[nh].Time.Sub(recs[first].Time); d > 5*time.Second {
		t.Errorf("needs_human %s after the first exit, want < 5 s (no backoff for a program that cannot start)", d)
	}

	if err := os.Remove(die); err != nil {
		t.Fatal(err)
	}
	code, dir, out, recs = chaosExec(t, project, home, "behave", "--retry")
	chaosComplete(t, code, dir, out)
	resumed := -1
	for i, r := range recs {
		if r.Type == "resumed" {
			resumed = i
		}
	}
	if resumed < 0 {
		t.Fatal("no resumed record")
	}
	end := recordIndex(recs, resumed, "task_complete") // the agents are stopped after it
	if end < 0 {
		t.Fatal("no task_complete record")
	}
	starts, exits := 0, 0
	for _, r := range recs[resumed:end] {
		if r.Type == vocab.InputPrefix+"agent_health" && r.Agent == "worker_1" {
			switch recDetail(r, "health") {
			case string(vocab.HealthStarting):
				starts++
			case string(vocab.HealthExited):
				exits++
			}
		}
	}
	if restarts := countRecords(recs[resumed:end], "agent_restarted", nil); starts != 1 || exits != 0 || restarts != 0 {
		t.Errorf("after --resume --retry worker_1 started %d time(s), exited %d time(s), %d restart(s); want 1, 0, 0:\n%s",
			starts, exits, restarts, out)
	}
}
