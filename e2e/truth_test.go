package e2e_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// statusFigures is what `hivemind status --json` says of the clock and
// the tokens.
type statusFigures struct {
	Elapsed float64 `json:"elapsed_seconds"`
	Live    bool    `json:"live"`
	vocab.State
}

func (f statusFigures) elapsed() time.Duration {
	return time.Duration(f.Elapsed * float64(time.Second))
}

func statusOf(t *testing.T, project string) statusFigures {
	t.Helper()
	b, err := exec.Command(bin, "status", "--json", "--project", project).CombinedOutput()
	if err != nil {
		t.Fatalf("status --json: %v\n%s", err, b)
	}
	var f statusFigures
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("status --json: %v\n%s", err, b)
	}
	return f
}

// usageOf is each agent's usage in a state.
func usageOf(st vocab.State) map[vocab.AgentID]vocab.Usage {
	u := map[vocab.AgentID]vocab.Usage{}
	for id, a := range st.Agents {
		u[id] = a.Usage
	}
	return u
}

// Truth survives a crash: SIGKILL mid-run, a pause with no Hivemind
// running, --resume. status shows the same elapsed time and the same
// tokens after the kill as the killed run left; the clock stands while
// nothing runs it (the gap is not counted), and the finished task's
// elapsed time is at most the time the two runs ran. The headless final
// line says what status says.
func TestElapsedAndTokensSurviveKill(t *testing.T) {
	parallel(t)
	project, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	sim := "HIVEMIND_SIM_ARGS=--pace 30ms --usage 1000" // each turn records 1000 tokens
	cmd, out := hivemind(t, ctx, home, "--headless", "--agent", "sim", "--workers", "2", "--project", project, "build a tiny calculator")
	cmd.Env = append(cmd.Env, sim)
	start1 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	dir, _ := waitRunState(t, project, exited, out, "executing, with tokens recorded", func(st vocab.State) bool {
		return st.Phase == vocab.PhaseExecuting && st.Tokens() > 0
	})
	live := statusOf(t, project)
	if !live.Live || live.elapsed() <= 0 || live.Tokens() == 0 {
		t.Fatalf("status of the live run: live %v, elapsed %v, tokens %d", live.Live, live.elapsed(), live.Tokens())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	ran1 := time.Since(start1) // an upper bound of what the first run counted
	noLeftovers(t, project)

	// No Hivemind runs the task: the clock stands at the killed run's last
	// state write, and the tokens are those it left.
	dead := statusOf(t, project)
	left := readState(t, dir)
	// Counted up to the last write: state.json is at most a heartbeat and
	// a half old while the clock runs (5 s in internal/app).
	if dead.Live || dead.elapsed() < live.elapsed()-7500*time.Millisecond || dead.elapsed() > ran1 {
		t.Fatalf("after the kill: live %v, elapsed %v (the run lasted %v; status said %v before the kill)", dead.Live, dead.elapsed(), ran1, live.elapsed())
	}
	if dead.Tokens() < live.Tokens() || dead.Tokens() != left.Tokens() {
		t.Fatalf("after the kill: status says %d tokens, state.json %d, the live run said %d", dead.Tokens(), left.Tokens(), live.Tokens())
	}
	const gap = 4 * time.Second // the time nothing runs the task: the thing measured
	time.Sleep(gap)
	later := statusOf(t, project)
	if later.Elapsed != dead.Elapsed || later.Tokens() != dead.Tokens() {
		t.Fatalf("nothing runs the task, yet its figures moved: elapsed %v → %v, tokens %d → %d",
			dead.elapsed(), later.elapsed(), dead.Tokens(), later.Tokens())
	}

	cmd2, out2 := hivemind(t, ctx, home, "--headless", "--resume", "--agent", "sim", "--workers", "2", "--project", project)
	cmd2.Env = append(cmd2.Env, sim)
	start2 := time.Now()
	if code := exitCode(t, cmd2); code != 0 {
		t.Fatalf("resume exit %d, want 0; output:\n%s", code, out2.String())
	}
	ran2 := time.Since(start2)
	st := checkComplete(t, dir)
	final := statusOf(t, project)
	if final.Live {
		t.Error("status says live after the run ended")
	}
	// The gap is left out: the task ran at most as long as its two runs.
	if final.elapsed() < dead.elapsed() || final.elapsed() > ran1+ran2 {
		t.Errorf("elapsed %v at the end: want between %v (before the kill) and %v (the two runs; %v without a Hivemind left out)",
			final.elapsed(), dead.elapsed(), ran1+ran2, gap)
	}
	if span := st.FinishedAt.Sub(st.StartedAt); span-final.elapsed() < gap {
		t.Errorf("elapsed %v, finished−started %v: the %v without a Hivemind was counted", final.elapsed(), span, gap)
	}
	// Tokens never go back: every agent's are at least what the killed run left.
	after := usageOf(final.State)
	for id, u := range usageOf(left) {
		if after[id].Tokens() < u.Tokens() {
			t.Errorf("%s: %d tokens after the resume, %d before it", id, after[id].Tokens(), u.Tokens())
		}
	}
	// The resumed record says what was not counted.
	if !strings.Contains(readEvents(t, dir), `"not_counted"`) {
		t.Error("the resumed record does not say what time was not counted")
	}
	// The final line says what status says.
	text, err := exec.Command(bin, "status", "--project", project).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	el := regexp.MustCompile(`elapsed   (\d\d:\d\d:\d\d)`).FindStringSubmatch(string(text))
	if el == nil || vocab.FormatElapsed(final.elapsed()) != el[1] {
		t.Fatalf("status says %q, --json %v:\n%s", el, final.elapsed(), text)
	}
	if !strings.Contains(out2.String(), ": complete (elapsed "+el[1]+", "+vocab.FormatTokens(final.Tokens())+" tokens") {
		t.Errorf("the final line does not say elapsed %s and %s tokens:\n%s", el[1], vocab.FormatTokens(final.Tokens()), lastLines(out2.String(), 5))
	}
	t.Logf("first run %v, gap %v, second run %v; elapsed %v before the kill, %v at the end; tokens %d → %d",
		ran1.Round(time.Millisecond), gap, ran2.Round(time.Millisecond), dead.elapsed(), final.elapsed(), dead.Tokens(), final.Tokens())
}

// readEvents is a task's events.jsonl.
func readEvents(t *testing.T, dir string) string {
	t.Helper()
	recs, _, err := workspace.ReadEvents(filepath.Join(dir, vocab.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(recs)
	return string(b)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(len(l)-n, 0):], "\n")
}
