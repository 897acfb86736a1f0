package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// The TUI with four real Claude Code sessions (tmux 160×48, fake Messages
// API): the same run as TestClaudeHeadlessComplete, full screen. Two
// scenarios run side by side:
//
//   - complete: every pane shows Claude Code's own screen (its prompt box
//     and the text the fake model streamed), the header walks through the
//     workflow, pause holds every injection while the Lead's turn ends
//     and its plan.md waits, resume goes back to planning and the run
//     completes (one plan rejection, one checkpoint fix); q quits with 0.
//   - cancel: c, y while a worker's real session is mid-turn stops every
//     Claude session while the TUI still shows the cancelled task; q, y
//     then exits with 1.
//
// Agents are made busy for as long as the test needs by a gate in front of
// the fake API that holds one chosen model request until released (no
// sleeps, no timing luck).

// claudeTUIWait bounds one wait for a step of a run with real sessions
// (generous: several Claude Code processes share two cores).
const claudeTUIWait = 90 * time.Second

func TestClaudeTUI(t *testing.T) {
	parallel(t)
	requireTmux(t)
	t.Run("complete", func(t *testing.T) {
		parallel(t)
		claudeTUIComplete(t)
	})
	t.Run("cancel", func(t *testing.T) {
		parallel(t)
		claudeTUICancel(t)
	})
}

// modelSaidRE matches, in a pane, the final text of a turn the fake model
// (internal/sim/script) streamed, as Claude Code prints it (● bullet;
// ⏺ in other versions).
var modelSaidRE = regexp.MustCompile(`[●⏺] (Plan written to plan\.md|Revised plan written to plan\.md|Plan needs revision|` +
	`Plan approved|Checkpoint \d+ approved|Checkpoint \d+ has issues|Subtask \S+ complete|Fixed \d+ file|` +
	`Read the checkpoint issues|Noted\. Nothing for me to write)`)

// claudeScreens records what the screen showed over a run.
type claudeScreens struct {
	phases []string        // header states, consecutive duplicates dropped
	prompt map[string]bool // the pane showed Claude's prompt box
	said   map[string]string
	last   tuiScreen
}

func newClaudeScreens() *claudeScreens {
	return &claudeScreens{prompt: map[string]bool{}, said: map[string]string{}}
}

// see records one captured screen.
func (c *claudeScreens) see(s tuiScreen) {
	if len(s) == 0 {
		return
	}
	c.last = s
	if ph := taskState(s); ph != "" && (len(c.phases) == 0 || c.phases[len(c.phases)-1] != ph) {
		c.phases = append(c.phases, ph)
	}
	panes := s.panes() // parsed once per capture: this runs every poll
	for _, id := range claudeAgents {
		p, ok := panes[id]
		if !ok {
			continue
		}
		txt := paneInside(s, p)
		if claudePromptBox(txt) {
			c.prompt[id] = true
		}
		if m := modelSaidRE.FindString(txt); m != "" && c.said[id] == "" {
			c.said[id] = m
		}
	}
}

// paneInside is the inside of a pane found by tuiScreen.panes, one string
// per row (as tuiScreen.paneText, without parsing the screen again).
func paneInside(s tuiScreen, p paneRect) string {
	var b strings.Builder
	for y := p.y + 1; y < p.y+p.h-1 && y < len(s); y++ {
		row := cells(s[y])
		for x := p.x + 1; x < p.x+p.w-1; x++ {
			b.WriteString(cellAt(row, x))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// taskState is the workflow state the header shows: in the run view
// "HIVEMIND <state> …", in the summary a finished task switches to
// "HIVEMIND summary │ <state> │ …".
func taskState(s tuiScreen) string {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(s.header()), "HIVEMIND  summary │"); ok {
		return phaseNamed(rest)
	}
	return s.phase()
}

// claudePromptBox reports whether a pane shows Claude Code's input box: a
// horizontal rule, a row starting with ❯, and another rule below it after
// the input's rows (a pasted message may take several).
func claudePromptBox(pane string) bool {
	rows := strings.Split(pane, "\n")
	rule := func(i int) bool { return strings.HasPrefix(strings.TrimSpace(rows[i]), "────") }
	for i := 1; i < len(rows); i++ {
		if !strings.HasPrefix(strings.TrimSpace(rows[i]), "❯") || !rule(i-1) {
			continue
		}
		for j := i + 1; j < len(rows) && j <= i+10; j++ {
			if rule(j) {
				return true
			}
		}
	}
	return false
}

// waitPromptBoxes waits until every agent's pane has shown Claude Code's
// prompt box, and returns that screen.
func (c *claudeScreens) waitPromptBoxes(r *tuiRun) tuiScreen {
	r.t.Helper()
	return c.watch(r, claudeTUIWait, "four panes with Claude Code's prompt box", func(tuiScreen) bool {
		for _, id := range claudeAgents {
			if !c.prompt[id] {
				return false
			}
		}
		return true
	})
}

// watch polls the screen, recording it, until ok holds (ok may look at
// the workspace too); it fails at the deadline or if hivemind exited.
func (c *claudeScreens) watch(r *tuiRun, d time.Duration, what string, ok func(tuiScreen) bool) tuiScreen {
	r.t.Helper()
	return r.waitScreen(d, what, func(s tuiScreen) bool {
		c.see(s)
		return ok(s)
	})
}

// isSubsequence reports whether want appears in got in order.
func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// apiGate sits in front of the fake API and holds the first model request
// that matches until released, so an agent stays busy (mid-turn) exactly
// as long as the test needs.
type apiGate struct {
	srv     *httptest.Server
	match   func(body []byte) bool
	armed   atomic.Bool
	held    chan struct{} // closed when the request is held
	release chan struct{}
	once    sync.Once
}

// newAPIGate proxies to target; it holds the first agent turn (a request
// offering tools) of agent whose body contains marker.
func newAPIGate(t *testing.T, target, agent, marker string) *apiGate {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &apiGate{held: make(chan struct{}), release: make(chan struct{})}
	g.match = func(body []byte) bool {
		if !bytes.Contains(body, []byte("assignments/"+agent+"-")) || !bytes.Contains(body, []byte(marker)) {
			return false
		}
		var req struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &req)
		for _, tl := range req.Tools {
			if tl.Name == "Write" {
				return true
			}
		}
		return false
	}
	g.armed.Store(true)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // stream SSE events as they come
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages") && g.match(body) &&
			g.armed.CompareAndSwap(true, false) {
			close(g.held)
			select {
			case <-g.release:
			case <-r.Context().Done():
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		g.open()
		g.srv.Close()
	})
	return g
}

// open lets the held request (and every later one) through.
func (g *apiGate) open() { g.once.Do(func() { close(g.release) }) }

// waitHeld waits until the gate holds its request.
func (g *apiGate) waitHeld(t *testing.T, r *tuiRun, d time.Duration, what string) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s; screen:\n%s", d, what, r.capture())
	}
}

// startClaudeTUI sets up the offline Claude environment with the fake API
// behind a gate for agent's first turn containing marker, and starts the
// TUI in tmux on its project.
func startClaudeTUI(t *testing.T, sc fakeapi.Script, agent, marker string) (*ClaudeOffline, *apiGate, *tuiRun) {
	t.Helper()
	c := SetupClaudeOffline(t, sc)
	gate := newAPIGate(t, c.API.URL(), agent, marker)
	for i, kv := range c.Env {
		if strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=") {
			c.Env[i] = "ANTHROPIC_BASE_URL=" + gate.srv.URL
		}
	}
	o := c.TUIOptions("--agent", "claude", "--workers", "2", "add a greeting service")
	o.project = c.Project // the tmux pane's cwd, and where the helpers look
	r := startTUI(t, o)
	return c, gate, r
}

// findRecord returns the index of the first record at or after from
// that matches ok (-1 if none).
func findRecord(recs []vocab.EventRecord, from int, ok func(vocab.EventRecord) bool) int {
	for i := max(from, 0); i < len(recs); i++ {
		if ok(recs[i]) {
			return i
		}
	}
	return -1
}

func claudeTUIComplete(t *testing.T) {
	start := time.Now()
	c, gate, r := startClaudeTUI(t, fakeapi.DefaultScript(), "lead", "[HIVEMIND] Plan the task")
	seen := newClaudeScreens()

	// Four panes, each with a real Claude Code session drawing its input
	// box, in the 2×2 grid.
	s := seen.waitPromptBoxes(r)
	checkGrid(t, s)
	if n := len(agentProcesses(c.Project)); n != len(claudeAgents) {
		t.Errorf("%d claude processes of this project, want %d", n, len(claudeAgents))
	}

	// The Lead's planning turn reaches the model and is held there: the
	// Lead is busy, its injection confirmed.
	gate.waitHeld(t, r, claudeTUIWait, "the lead's planning request")
	dir := r.taskDir()
	seen.watch(r, claudeTUIWait, "the lead busy, planning, its injection confirmed", func(s tuiScreen) bool {
		recs := readEventLog(dir)
		confirmed := findRecord(recs, 0, func(e vocab.EventRecord) bool {
			d, _ := e.Details["delivered"].(bool)
			return e.Type == vocab.InputPrefix+"injection_result" && e.Agent == "lead" && d
		}) >= 0
		return confirmed && s.phase() == string(vocab.PhasePlanning) &&
			strings.Contains(s.panes()["lead"].title, "busy")
	})

	// Pause while the Lead is mid-turn.
	r.keys("p")
	s = seen.watch(r, claudeTUIWait, "the paused header and banner", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhasePaused) && s.contains("PAUSED")
	})
	if !strings.Contains(s.header(), "was "+tui.PhaseLabel(vocab.PhasePlanning)) {
		t.Errorf("paused header %q does not show the previous state planning", s.header())
	}
	recs := readEventLog(dir)
	paused := recordIndex(recs, 0, "paused")
	if paused < 0 {
		t.Fatal("no paused event recorded")
	}
	if prev := recDetail(recs[paused], "previous_state"); prev != string(vocab.PhasePlanning) {
		t.Errorf("paused in %s, want planning", prev)
	}

	// Let the Lead's turn finish: Claude writes plan.md for real and its
	// turn ends (Stop hook), but the finished trigger only waits.
	gate.open()
	planMD := filepath.Join(dir, "agents", "lead", "plan.md")
	seen.watch(r, claudeTUIWait, "the lead's turn to end and plan.md to be deferred", func(tuiScreen) bool {
		recs = readEventLog(dir)
		idle := findRecord(recs, paused, func(e vocab.EventRecord) bool {
			return e.Type == vocab.InputPrefix+"agent_health" && e.Agent == "lead" && recDetail(e, "health") == "idle"
		}) >= 0
		return idle && findRecord(recs, paused, func(e vocab.EventRecord) bool {
			return e.Type == "event_deferred" && recDetail(e, "event") == "trigger_completed"
		}) >= 0
	})
	if _, err := os.Stat(planMD); err != nil {
		t.Errorf("plan.md while paused: %v (want it left in place, unconsumed)", err)
	}
	s = seen.watch(r, claudeTUIWait, "the lead's pane to show the model's text while paused", func(s tuiScreen) bool {
		txt, _ := s.paneText("lead")
		return strings.Contains(txt, "Plan written to plan.md")
	})
	if s.phase() != string(vocab.PhasePaused) {
		t.Errorf("header state %q after the deferred trigger, want paused", s.phase())
	}
	recs = readEventLog(dir)
	for _, e := range recs[paused:] {
		switch e.Type {
		case "assignment_sent", vocab.InputPrefix + "injection_result", "trigger_consumed", "state_changed":
			t.Errorf("%s (%s) while paused", e.Type, e.Agent)
		}
	}
	if st := readState(t, dir); st.Phase != vocab.PhasePaused || len(st.Deferred) == 0 {
		t.Errorf("state.json: %s with %d deferred events, want paused with the finished plan deferred", st.Phase, len(st.Deferred))
	}

	// Resume: back to planning, the deferred plan goes to the Reviewer.
	r.keys("r")
	var resumed int
	seen.watch(r, claudeTUIWait, "resumed_from_pause and the plan sent for review", func(s tuiScreen) bool {
		recs = readEventLog(dir)
		resumed = recordIndex(recs, paused, "resumed_from_pause")
		return resumed >= 0 && findRecord(recs, resumed, func(e vocab.EventRecord) bool {
			return e.Type == "assignment_sent" && e.Agent == "reviewer"
		}) >= 0 && s.phase() != string(vocab.PhasePaused)
	})
	if got := recDetail(recs[resumed], "state"); got != string(vocab.PhasePlanning) {
		t.Errorf("resumed to %s, want planning", got)
	}

	// The run goes on to the end; the agents' memory is noted until then.
	rss, live := 0, 0
	seen.watch(r, 2*claudeTUIWait, "the COMPLETE banner", func(s tuiScreen) bool {
		if mb, n := agentsRSS(c.Project); n == len(claudeAgents) {
			rss, live = mb, n
		}
		return s.contains("✔ COMPLETE") && taskState(s) == string(vocab.PhaseComplete)
	})
	took := time.Since(start)
	// The task's end stops its agents at once, the UI still open.
	if !pollUntil(claudeTUIWait, func() bool { return len(agentProcesses(c.Project)) == 0 }) {
		t.Errorf("claude agents still running after complete, the UI open: %v", agentProcesses(c.Project))
	}
	t.Logf("the %d claude agents held %d MB RSS (last sample before complete); all gone %v after the COMPLETE banner, the UI open",
		live, rss, (time.Since(start) - took).Round(time.Millisecond))
	st := checkComplete(t, dir)
	if st.RevisionCount != 1 {
		t.Errorf("revision_count %d, want 1 (the first plan is rejected)", st.RevisionCount)
	}
	recs = readEventLog(dir)
	fixes := 0
	for _, e := range recs {
		if e.Type == "checkpoint_issues" {
			fixes++
		}
	}
	if fixes != 1 {
		t.Errorf("%d checkpoint_issues events, want 1", fixes)
	}

	// What the screen showed along the way.
	// (Resuming re-enters planning and at once hands the deferred plan
	// to the Reviewer: the screen goes from paused to plan_review.)
	wantPhases := []string{"planning", "paused", "plan_review", "plan_revision", "plan_review",
		"executing", "checkpoint_review", "checkpoint_fix", "checkpoint_review", "complete"}
	if !isSubsequence(wantPhases, seen.phases) {
		t.Errorf("header states seen %v, want %v in this order", seen.phases, wantPhases)
	}
	for _, id := range claudeAgents {
		if seen.said[id] == "" {
			t.Errorf("%s's pane never showed a text the fake model streamed", id)
		}
	}
	injected, byHook := checkInjections(t, dir, recs, c.API)
	stops := checkHealth(t, recs, claudeAgents)
	nw := checkWrites(t, c, dir, time.Time{})

	if code := r.quit(); code != 0 {
		t.Errorf("exit status %d after a complete task, want 0", code)
	}
	noLeftovers(t, c.Project)
	t.Logf("complete in %v (wall %v): header %s; model text seen %v; %d injections confirmed (%d by UserPromptSubmit), %d turns ended by Stop, %d Writes",
		took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), strings.Join(seen.phases, " → "),
		seen.said, injected, byHook, stops, nw)
}

func claudeTUICancel(t *testing.T) {
	start := time.Now()
	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = 0, 0
	c, gate, r := startClaudeTUI(t, sc, "worker_1", "[HIVEMIND] Do subtask")
	seen := newClaudeScreens()

	seen.waitPromptBoxes(r)
	// worker_1's first subtask turn is held at the model: it is busy.
	gate.waitHeld(t, r, claudeTUIWait, "worker_1's first subtask request")
	dir := r.taskDir()
	seen.watch(r, claudeTUIWait, "executing with worker_1 busy", func(s tuiScreen) bool {
		return s.phase() == string(vocab.PhaseExecuting) && strings.Contains(s.panes()["worker_1"].title, "busy")
	})
	if n := len(agentProcesses(c.Project)); n != len(claudeAgents) {
		t.Errorf("%d claude processes of this project before the cancel, want %d", n, len(claudeAgents))
	}

	r.keys("c")
	seen.watch(r, claudeTUIWait, "the cancel question", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "Cancel the task?")
	})
	cancelAt := time.Now()
	r.keys("y")
	seen.watch(r, claudeTUIWait, "the CANCELLED banner", func(s tuiScreen) bool {
		return s.contains("■ CANCELLED") && taskState(s) == string(vocab.PhaseCancelled)
	})
	if st := readState(t, dir); st.Phase != vocab.PhaseCancelled {
		t.Errorf("state.json says %s after the cancel, want cancelled", st.Phase)
	}
	// Every real Claude session (and anything it started) stops while
	// the TUI still shows the task.
	var left []string
	waitFor(t, claudeTUIWait, "every agent process to stop", func() bool {
		left = agentProcs(c.Project)
		return len(left) == 0
	})
	stopped := time.Since(cancelAt)
	if dead, _ := r.exited(); dead {
		t.Error("hivemind exited on cancel; the TUI should stay until q")
	}
	// And each is reported exited.
	waitFor(t, claudeTUIWait, "every agent's health to be exited", func() bool {
		hl := healthLog(readEventLog(dir))
		for _, id := range claudeAgents {
			if h := hl[id]; len(h) == 0 || !strings.HasPrefix(h[len(h)-1], "exited") {
				return false
			}
		}
		return true
	})
	exitedIn := time.Since(cancelAt)

	if code := r.quit(); code != exitCancelled {
		t.Errorf("exit status %d after cancel, want %d", code, exitCancelled)
	}
	noLeftovers(t, c.Project)
	t.Logf("cancelled at +%v, every Claude session stopped %v later (reported exited after %v); wall %v; header %s",
		cancelAt.Sub(start).Round(time.Millisecond), stopped.Round(time.Millisecond), exitedIn.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), strings.Join(seen.phases, " → "))
}

// agentProcs lists the live processes started for a project's task: every
// one whose environment names a task dir inside the project (Claude Code,
// its hooks and tools), whatever its name (Claude rewrites its title).
func agentProcs(project string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		base := filepath.Join("/proc", e.Name())
		env, err := os.ReadFile(filepath.Join(base, "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00HIVEMIND_TASK_DIR="+project+"/")) &&
			!bytes.HasPrefix(env, []byte("HIVEMIND_TASK_DIR="+project+"/")) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(base, "stat")); err == nil && isZombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		out = append(out, fmt.Sprintf("pid %s %q", e.Name(), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}
