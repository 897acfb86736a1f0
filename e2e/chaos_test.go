package e2e_test

// The fault-injection suite (make chaos): hostile scripted agents drive the
// built product headless, each case asserting a bounded, clear outcome and
// that nothing is lost. The agent is this test binary itself, run by
// hivemind as a custom agent command: TestMain hands over to chaosAgent
// when chaosModeEnv is set and the process is a Hivemind agent.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// chaosModeEnv selects the hostile behaviour of the chaos agent (not
// HIVEMIND_*: hivemind does not pass its own variables on to agents).
const chaosModeEnv = "CHAOS_AGENT_MODE"

// chaosPlan: checkpoint 1 has st_1, checkpoint 2 has st_2.
const chaosPlan = "# Plan\n\nTwo steps.\n\n```json\n" + `{"summary": "two files",
 "checkpoints": [{"id": 1, "name": "first"}, {"id": 2, "name": "second"}],
 "subtasks": [
  {"id": "st_1", "description": "write one.txt", "checkpoint": 1, "dependencies": [], "files": ["CREATE one.txt"]},
  {"id": "st_2", "description": "write two.txt", "checkpoint": 2, "dependencies": [], "files": ["CREATE two.txt"]}]}` + "\n```\n"

// chaosParallelPlan: st_1 and st_2 both in checkpoint 1, for two workers
// at once.
const chaosParallelPlan = "# Plan\n\nTwo files at once.\n\n```json\n" + `{"summary": "two files",
 "checkpoints": [{"id": 1, "name": "both"}],
 "subtasks": [
  {"id": "st_1", "description": "write one.txt", "checkpoint": 1, "dependencies": [], "files": ["CREATE one.txt"]},
  {"id": "st_2", "description": "write two.txt", "checkpoint": 1, "dependencies": [], "files": ["CREATE two.txt"]}]}` + "\n```\n"

// largeDescription is a subtask description at the size limit (16 KiB).
func largeDescription(id string) string {
	return id + ": " + strings.Repeat("write it carefully. ", (16<<10-len(id)-2)/20) + strings.Repeat("!", (16<<10-len(id)-2)%20)
}

// largePlan is chaosPlan with descriptions at the size limit.
var largePlan = strings.NewReplacer(`"write one.txt"`, strconv.Quote(largeDescription("st_1")),
	`"write two.txt"`, strconv.Quote(largeDescription("st_2"))).Replace(chaosPlan)

// chaosAgent follows [HIVEMIND] assignments typed on its terminal like a
// simple, correct agent, except for the misbehaviour mode names. It
// returns the process exit code.
func chaosAgent(mode string) int {
	taskDir := os.Getenv("HIVEMIND_TASK_DIR")
	project := os.Getenv("HIVEMIND_PROJECT")
	id := os.Getenv("HIVEMIND_AGENT_ID")
	role := vocab.Role(os.Getenv("HIVEMIND_ROLE"))
	outbox := filepath.Join(taskDir, vocab.OutboxesDir, id) // where this agent's Hivemind files go
	// Per-agent counters (and other scratch files) are kept on disk across
	// restarts: in the agent's private temp dir when write scopes give it
	// one (the task dir is then not its to write), else in the task dir.
	scratch := taskDir
	if d := os.Getenv("TMPDIR"); d != "" {
		scratch = d
	}
	count := func(name string) int {
		p := filepath.Join(scratch, "chaos-"+filepath.Base(taskDir)+"-"+id+"-"+name)
		b, _ := os.ReadFile(p)
		n := len(b) + 1
		_ = os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644)
		return n
	}
	write := func(p, content string) {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		tmp := p + ".tmp"
		_ = os.WriteFile(tmp, []byte(content), 0o644)
		_ = os.Rename(tmp, p)
	}
	marker := func(a vocab.Assignment, out string) string {
		b, _ := json.Marshal(map[string]string{"agent_id": id, "output_file": out, "completed_at": time.Now().UTC().Format(time.RFC3339)})
		return string(b)
	}
	modes := strings.Split(mode, "+") // misbehaviours combine: "large-plan+bad-fix-marker"
	is := func(m string) bool { return slices.Contains(modes, m) }
	// "longline": the agent also ends every answer with reflowLine, so a
	// test can watch one long line across pane sizes.
	tail := "> "
	if is("longline") {
		tail = reflowLine + "\n> "
	}
	if is("escape") {
		chaosEscape()
	}
	fmt.Printf("chaos agent %s (%s, %s) ready\n%s", id, role, mode, tail)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		_, file, ok := strings.Cut(line, " — read ")
		if !strings.Contains(line, "[HIVEMIND]") || !ok {
			continue
		}
		data, err := os.ReadFile(strings.TrimSpace(file))
		var a vocab.Assignment
		if err != nil || json.Unmarshal(data, &a) != nil {
			fmt.Printf("cannot read %s\n> ", file)
			continue
		}
		fmt.Printf("working on assignment %d (%s)\n", a.Seq, a.State)
		switch {
		case a.ReadOnly:
		case is("stall") && role == vocab.RoleLead:
			// Goes idle without writing plan.md.
		case role == vocab.RoleLead && (a.State == vocab.PhasePlanning || a.State == vocab.PhasePlanRevision):
			p := filepath.Join(outbox, "plan.md")
			if is("lead-approves") {
				// Approves its own plan, in its own outbox: refused.
				write(filepath.Join(outbox, "plan-approved.md"), "Approved by the Lead.\n")
			}
			switch n := count("plan"); {
			case is("symlink-plan") && n == 1:
				real := filepath.Join(scratch, "chaos-"+filepath.Base(taskDir)+"-real-plan.md")
				write(real, chaosPlan)
				_ = os.Symlink(real, p)
			case is("dir-plan") && n == 1:
				_ = os.Mkdir(p, 0o755)
			case is("deep-plan") && n == 1:
				write(p, "# Plan\n\n```json\n{\"summary\": "+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"}\n```\n")
			case is("large-plan"):
				write(p, largePlan)
			case is("parallel"):
				write(p, chaosParallelPlan)
			default:
				if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() != 0 {
					_ = os.RemoveAll(p) // told: a symlink or directory is not a plan
				}
				write(p, chaosPlan)
			}
		case role == vocab.RoleLead && a.State == vocab.PhaseFrictionResolution:
			write(filepath.Join(outbox, "friction-resolution.md"), "Nothing to change: the reports were a flood.\n")
		case role == vocab.RoleReviewer && a.State == vocab.PhasePlanReview:
			write(filepath.Join(outbox, "plan-approved.md"), "Approved.\n")
		case role == vocab.RoleReviewer && a.State == vocab.PhaseCheckpointReview:
			if is("bad-fix-marker") && count("issues") == 1 {
				write(filepath.Join(outbox, "checkpoint-issues.md"), "## Issues\n- high: one.txt:1 says the wrong thing\n")
			} else {
				write(filepath.Join(outbox, "checkpoint-approved.md"), "Approved.\n")
			}
		case a.DoneMarker != "":
			out := strings.TrimSuffix(a.DoneMarker, ".done") + ".md"
			if is("forge-neighbour") && a.Subtask != nil && a.Subtask.ID == "st_1" {
				// Completes worker_2's st_2 for it, claiming to be
				// worker_2: in its own outbox and where older versions
				// took markers from.
				for _, dir := range []string{filepath.Join(outbox, "outputs"), filepath.Join(taskDir, "outputs")} {
					write(filepath.Join(dir, "st_2.md"), "forged by "+id+"\n")
					b, _ := json.Marshal(map[string]string{"agent_id": "worker_2", "output_file": filepath.Join(dir, "st_2.md")})
					write(filepath.Join(dir, "st_2.done"), string(b))
				}
				write(filepath.Join(project, "two.txt"), "forged by "+id+"\n")
			}
			if is("forge-neighbour") && a.Subtask != nil && a.Subtask.ID == "st_2" {
				// Works on while the forgery arrives: finishes only once
				// it was refused (bounded wait).
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if m, _ := filepath.Glob(filepath.Join(taskDir, "reviews", "refused_v*-agents_worker_1_outputs_st_2.done")); len(m) > 0 {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			if is("flood") && a.Subtask != nil && a.Subtask.ID == "st_1" {
				// Thousands of friction reports and shared-knowledge
				// notes, then the work.
				notes := filepath.Join(outbox, "knowledge")
				_ = os.MkdirAll(notes, 0o755)
				_ = os.MkdirAll(filepath.Join(outbox, "friction"), 0o755)
				for i := range floodFiles {
					_ = os.WriteFile(filepath.Join(outbox, "friction", fmt.Sprintf("slow-%d.md", i)), []byte("slow\n"), 0o644)
					_ = os.WriteFile(filepath.Join(notes, fmt.Sprintf("%d.md", i+1)),
						[]byte(fmt.Sprintf("---\nkind: term\nterm: t%d\n---\nflood\n", i)), 0o644)
				}
			}
			if is("worker-approves") && role == vocab.RoleWorker {
				write(filepath.Join(outbox, "checkpoint-approved.md"), "Approved by "+id+".\n")
			}
			desc := ""
			if a.Subtask != nil { // what the worker was told, for the test to check
				desc = fmt.Sprintf("description %d bytes, sha256 %x\n", len(a.Subtask.Description), sha256.Sum256([]byte(a.Subtask.Description)))
			}
			write(out, fmt.Sprintf("%s did assignment %d\n%s", id, a.Seq, desc))
			if a.Subtask != nil {
				for _, f := range a.Subtask.Files {
					_, p, _ := strings.Cut(f, " ")
					write(filepath.Join(project, p), a.Subtask.ID+"\n")
				}
			}
			isFix := strings.Contains(filepath.Base(a.DoneMarker), "fix")
			switch {
			case is("bad-fix-marker") && isFix && role == vocab.RoleWorker:
				write(a.DoneMarker, "done!") // never valid
			case is("early-marker") && a.Subtask != nil && a.Subtask.ID == "st_1":
				// A valid marker for checkpoint 2's st_2, before it is assigned.
				write(filepath.Join(filepath.Dir(a.DoneMarker), "st_2.md"), "premature\n")
				write(filepath.Join(filepath.Dir(a.DoneMarker), "st_2.done"), marker(a, filepath.Join(filepath.Dir(a.DoneMarker), "st_2.md")))
				write(a.DoneMarker, marker(a, out))
			case is("split-marker") && a.Subtask != nil && a.Subtask.ID == "st_1":
				// Half the marker, a silence longer than the watcher's
				// MaxWait, then the rest.
				m := marker(a, out)
				_ = os.WriteFile(a.DoneMarker, []byte(m[:len(m)/2]), 0o644)
				time.Sleep(3 * time.Second)
				f, _ := os.OpenFile(a.DoneMarker, os.O_APPEND|os.O_WRONLY, 0)
				_, _ = f.WriteString(m[len(m)/2:])
				_ = f.Close()
			default:
				write(a.DoneMarker, marker(a, out))
			}
		}
		fmt.Print("done\n" + tail)
	}
	return 0
}

// reflowLine is a line longer than any pane (260 cells), one word per
// number so a cut shows where.
var reflowLine = func() string {
	words := []string{"reflow:"}
	for i := 1; i <= 50; i++ {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	return strings.Join(words, " ") + " :end"
}()

// chaosProject returns a fresh project whose config has fast timings (so
// every case ends in seconds) plus the lines given, and a HOME.
func chaosProject(t *testing.T, config string) (project, home string) {
	t.Helper()
	project, home = t.TempDir(), t.TempDir()
	ws := filepath.Join(project, ".hivemind")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "quiet_period_ms = 50\nbackoff_seconds = [1]\n" + config
	if !strings.Contains(config, "workers =") {
		cfg += "workers = 1\n"
	}
	if err := os.WriteFile(filepath.Join(ws, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return project, home
}

// chaosExec runs hivemind headless in project with the chaos agent in
// mode ("behave": no misbehaviour) and args; it returns the exit code, the task dir, the
// output and the event records.
func chaosExec(t *testing.T, project, home, mode string, args ...string) (int, string, string, []vocab.EventRecord) {
	t.Helper()
	return chaosExecAs(t, project, home, mode, chaosSelf(t), args...)
}

// chaosSelf is the chaos agent's command: this test binary.
func chaosSelf(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// chaosExecAs is chaosExec with agent as --agent.
func chaosExecAs(t *testing.T, project, home, mode, agent string, args ...string) (int, string, string, []vocab.EventRecord) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd, out := hivemind(t, ctx, home, append([]string{"--headless", "--agent", agent, "--project", project}, args...)...)
	cmd.Env = append(cmd.Env, chaosModeEnv+"="+mode)
	code := exitCode(t, cmd)
	dir := taskDir(t, project)
	recs, _, err := workspace.ReadEvents(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, project)
	return code, dir, out.String(), recs
}

// chaosRun runs one task on a fresh project with the chaos agent in mode.
func chaosRun(t *testing.T, mode string, config string) (int, string, string, []vocab.EventRecord) {
	t.Helper()
	project, home := chaosProject(t, config)
	return chaosExec(t, project, home, mode, "chaos: write two files")
}

func countRecords(recs []vocab.EventRecord, typ vocab.RecordType, match func(vocab.EventRecord) bool) int {
	n := 0
	for _, r := range recs {
		if r.Type == typ && (match == nil || match(r)) {
			n++
		}
	}
	return n
}

// chaosComplete asserts the run completed with both subtasks done and
// their files written.
func chaosComplete(t *testing.T, code int, dir, out string) vocab.State {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	st := checkComplete(t, dir)
	if len(st.Subtasks) != 2 {
		t.Fatalf("subtasks %v", st.Subtasks)
	}
	return st
}

// An agent that always writes an invalid fix marker is re-sent the fix a
// bounded number of times (max_retries), then the run needs a human with
// the reason (before: 281 re-sends in 150 s, forever).
func TestChaosBadFixMarker(t *testing.T) {
	parallel(t)
	code, dir, out, recs := chaosRun(t, "bad-fix-marker", "max_retries = 2\n")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (needs_human):\n%s", code, out)
	}
	st := readState(t, dir)
	if !strings.HasPrefix(st.Escalation, "fix:") || !strings.Contains(st.Reason, "done!") && !strings.Contains(st.Reason, "invalid") {
		t.Fatalf("escalation %q reason %q", st.Escalation, st.Reason)
	}
	// Counted up to the escalation: the agent may write its marker once
	// more before it is stopped, and that rejection is logged too.
	escalated := slices.IndexFunc(recs, func(r vocab.EventRecord) bool { return r.Type == "needs_human" })
	if escalated < 0 {
		t.Fatal("no needs_human record")
	}
	rejected := countRecords(recs[:escalated], "fix_rejected", func(r vocab.EventRecord) bool { return r.Agent == "worker_1" })
	if rejected != 3 {
		t.Fatalf("%d fix rejections before needs_human, want max_retries+1 = 3", rejected)
	}
	if n := countRecords(recs[escalated:], "assignment_sent", nil); n != 0 {
		t.Fatalf("%d assignments sent after needs_human", n)
	}
}

// A valid done marker for a later checkpoint's subtask, written before it
// is assigned, does not mark it done: it is assigned and done in its turn.
func TestChaosEarlyMarker(t *testing.T) {
	parallel(t)
	code, dir, out, recs := chaosRun(t, "early-marker", "")
	chaosComplete(t, code, dir, out)
	if n := countRecords(recs, "subtask_done_ignored", nil); n == 0 {
		t.Fatalf("the premature marker was not ignored")
	}
	assigned := countRecords(recs, "assignment_sent", func(r vocab.EventRecord) bool {
		w, _ := r.Details["what"].(string)
		return strings.Contains(w, "st_2")
	})
	if assigned == 0 {
		t.Fatalf("st_2 was never assigned")
	}
}

// A done marker written in two pieces with a long silence between them is
// read once, complete: no rejection, no second assignment.
func TestChaosSplitMarker(t *testing.T) {
	parallel(t)
	code, dir, out, recs := chaosRun(t, "split-marker", "")
	chaosComplete(t, code, dir, out)
	if n := countRecords(recs, "subtask_rejected", nil); n != 0 {
		t.Fatalf("%d rejections of a marker being written", n)
	}
	if n := countRecords(recs, "subtask_done", nil); n != 2 {
		t.Fatalf("%d subtask_done, want 2", n)
	}
}

// plan.md as a symlink, a directory or a deeply nested bomb gets feedback
// to the Lead at once (not a timeout), and the corrected plan completes.
func TestChaosBadPlanFiles(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		mode  string
		event vocab.RecordType
		want  string
	}{
		{"symlink-plan", "trigger_rejected", "symbolic link"},
		{"dir-plan", "trigger_rejected", "directory"},
		{"deep-plan", "plan_invalid", "nests deeper"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			start := time.Now()
			code, dir, out, recs := chaosRun(t, c.mode, "")
			chaosComplete(t, code, dir, out)
			n := countRecords(recs, c.event, func(r vocab.EventRecord) bool {
				b, _ := json.Marshal(r.Details)
				return strings.Contains(string(b), c.want)
			})
			if n != 1 {
				t.Fatalf("%d %s records saying %q (took %v)", n, c.event, c.want, time.Since(start))
			}
		})
	}
}

// An agent that goes idle without doing its assignment gets one reminder,
// then the run needs a human with the reason, within stall_seconds × 2.
func TestChaosStalledAgent(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("takes 2 × stall_seconds (10 s at least)")
	}
	code, dir, out, recs := chaosRun(t, "stall", "stall_seconds = 10\n")
	if code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out)
	}
	st := readState(t, dir)
	if !strings.HasPrefix(st.Escalation, "stall:") || !strings.Contains(st.Reason, "went idle") {
		t.Fatalf("escalation %q reason %q", st.Escalation, st.Reason)
	}
	if n := countRecords(recs, "agent_stalled", nil); n != 2 {
		t.Fatalf("%d agent_stalled records, want 2 (one reminder, then escalation)", n)
	}
}

// With state.json and every backup gone, --resume rebuilds the state from
// events.jsonl (nothing redone: the plan is not planned again), and
// --retry takes the run out of needs_human headless: with a worker that
// now behaves, the task completes.
func TestChaosResumeAfterStateLoss(t *testing.T) {
	parallel(t)
	project, home := chaosProject(t, "max_retries = 1\n")
	code, dir, out, _ := chaosExec(t, project, home, "bad-fix-marker", "chaos: write two files")
	if code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out)
	}
	before := readState(t, dir)
	if err := os.Remove(filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "backups")); err != nil {
		t.Fatal(err)
	}
	code, dir, out, recs := chaosExec(t, project, home, "behave", "--retry")
	st := chaosComplete(t, code, dir, out)
	if countRecords(recs, "state_rebuilt", nil) != 1 {
		t.Fatalf("no state_rebuilt record:\n%s", out)
	}
	if st.Versions["plan"] != before.Versions["plan"] || st.RevisionCount != before.RevisionCount {
		t.Fatalf("work redone: plan versions %d → %d, revisions %d → %d", before.Versions["plan"], st.Versions["plan"], before.RevisionCount, st.RevisionCount)
	}
	if n := countRecords(recs, "plan_submitted", nil); n != 1 {
		t.Fatalf("%d plans submitted, want 1 (planning redone?)", n)
	}
}

// Subtask descriptions at the size limit do not make state.json grow: it
// references them (blobs/), every backup too, and each worker is told its
// whole description.
func TestChaosLargeDescriptions(t *testing.T) {
	parallel(t)
	code, dir, out, _ := chaosRun(t, "large-plan", "")
	chaosComplete(t, code, dir, out)
	checkStateSmall(t, dir)
	checkToldWhole(t, dir, "st_1", "st_2")
}

// checkStateSmall asserts that state.json and its backups are far smaller
// than the plan's two 16 KiB descriptions.
func checkStateSmall(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "backups", "state_*.json"))
	for _, f := range append(files, filepath.Join(dir, "state.json")) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 16<<10 {
			t.Errorf("%s is %d bytes: it holds copies of the descriptions", filepath.Base(f), fi.Size())
		}
	}
	if blobs, _ := filepath.Glob(filepath.Join(dir, workspace.BlobsDir, "*")); len(blobs) == 0 {
		t.Error("no blobs")
	}
}

// checkToldWhole asserts each subtask's worker got its whole description.
func checkToldWhole(t *testing.T, dir string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		d := largeDescription(id)
		want := fmt.Sprintf("description %d bytes, sha256 %x\n", len(d), sha256.Sum256([]byte(d)))
		b, err := os.ReadFile(filepath.Join(dir, vocab.OutboxesDir, "worker_1", "outputs", id+".md"))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: worker was told %q (%v), want %q", id, b, err, want)
		}
	}
}

// A needs_human task whose blobs are then deleted resumes (--retry) from
// events.jsonl, not from an older backup: nothing is redone, the plan's
// descriptions are whole again and the task completes.
func TestChaosResumeAfterBlobLoss(t *testing.T) {
	parallel(t)
	project, home := chaosProject(t, "max_retries = 1\n")
	code, dir, out, _ := chaosExec(t, project, home, "large-plan+bad-fix-marker", "chaos: write two files")
	if code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out)
	}
	before := readState(t, dir)
	if err := os.RemoveAll(filepath.Join(dir, workspace.BlobsDir)); err != nil {
		t.Fatal(err)
	}
	code, dir, out, recs := chaosExec(t, project, home, "large-plan", "--retry")
	st := chaosComplete(t, code, dir, out)
	rebuilt := countRecords(recs, "state_rebuilt", func(r vocab.EventRecord) bool {
		reason, _ := r.Details["reason"].(string)
		return strings.Contains(reason, "blobs/") && strings.Contains(reason, "is missing")
	})
	if rebuilt != 1 {
		t.Fatalf("no state_rebuilt record naming the missing blob:\n%s", out)
	}
	if st.Versions["plan"] != before.Versions["plan"] || countRecords(recs, "plan_submitted", nil) != 1 {
		t.Fatalf("planning redone: plan versions %d → %d", before.Versions["plan"], st.Versions["plan"])
	}
	if st.Plan == nil || st.Plan.Subtasks[1].Description != largeDescription("st_2") {
		t.Fatal("the rebuilt plan lost its descriptions")
	}
	checkStateSmall(t, dir)
	checkToldWhole(t, dir, "st_2")
}

// Agents writing what is not theirs — a worker completing its neighbour's
// subtask claiming to be it, the Lead approving its own plan, a worker
// approving its checkpoint — are refused with an event naming the writer,
// that agent is told, and the task completes with every subtask done by
// its own worker.
func TestChaosForgedTriggers(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		mode, config string
		writer       vocab.AgentID
		path         string // the refused file
	}{
		{"parallel+forge-neighbour", "workers = 2\n", "worker_1", "agents/worker_1/outputs/st_2.done"},
		{"lead-approves", "", "lead", "agents/lead/plan-approved.md"},
		{"worker-approves", "", "worker_1", "agents/worker_1/checkpoint-approved.md"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			code, dir, out, recs := chaosRun(t, c.mode, c.config)
			st := chaosComplete(t, code, dir, out)
			refused := slices.IndexFunc(recs, func(r vocab.EventRecord) bool {
				return r.Type == "trigger_refused" && r.Agent == c.writer && r.Details["path"] == c.path
			})
			if refused < 0 {
				t.Fatalf("no trigger_refused of %s by %s:\n%s", c.path, c.writer, out)
			}
			if n := countRecords(recs[refused:], "assignment_sent", func(r vocab.EventRecord) bool { return r.Agent == c.writer }); n == 0 {
				t.Fatalf("%s was not told of the refusal", c.writer)
			}
			for id, sub := range st.Subtasks {
				done := slices.IndexFunc(recs, func(r vocab.EventRecord) bool { return r.Type == "subtask_done" && r.Details["subtask"] == id })
				if done < 0 || recs[done].Agent != sub.Worker {
					t.Fatalf("%s: done by %v, assigned to %s", id, recs[max(done, 0)].Agent, sub.Worker)
				}
				b, err := os.ReadFile(filepath.Join(dir, vocab.OutboxesDir, string(sub.Worker), "outputs", id+".md"))
				if err != nil || !strings.HasPrefix(string(b), string(sub.Worker)+" did") {
					t.Fatalf("%s output %q (%v)", id, b, err)
				}
			}
			if c.writer == "worker_1" && strings.Contains(c.mode, "forge") {
				if st.Subtasks["st_2"].Worker != "worker_2" {
					t.Fatalf("st_2 worker %s", st.Subtasks["st_2"].Worker)
				}
			}
			if n := countRecords(recs, "plan_approved", func(r vocab.EventRecord) bool { return r.Agent != "reviewer" }); n != 0 {
				t.Fatalf("%d approvals not by the reviewer", n)
			}
		})
	}
}

// A state.json an agent edited to "complete" is not trusted by --resume
// --retry: it does not match the engine's last write, so the state is
// rebuilt from events.jsonl (a state_rebuilt record says why) and the
// retried task completes for real.
func TestChaosTamperedStateNotTrusted(t *testing.T) {
	parallel(t)
	project, home := chaosProject(t, "max_retries = 1\n")
	code, dir, out, _ := chaosExec(t, project, home, "bad-fix-marker", "chaos: write two files")
	if code != 3 {
		t.Fatalf("exit %d, want 3:\n%s", code, out)
	}
	p := filepath.Join(dir, "state.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `"state": "needs_human"`, `"state": "complete"`, 1)
	if forged == string(data) {
		t.Fatalf("state.json has no needs_human phase:\n%s", data)
	}
	if err := os.WriteFile(p, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	code, dir, out, recs := chaosExec(t, project, home, "behave", "--resume", "--retry")
	chaosComplete(t, code, dir, out)
	i := slices.IndexFunc(recs, func(r vocab.EventRecord) bool { return r.Type == "state_rebuilt" })
	if i < 0 {
		t.Fatalf("no state_rebuilt record:\n%s", out)
	}
	if reason, _ := recs[i].Details["reason"].(string); !strings.Contains(reason, "changed outside Hivemind") {
		t.Fatalf("state_rebuilt reason %q", reason)
	}
	if n := countRecords(recs, "subtask_done", nil); n < 2 {
		t.Fatalf("%d subtask_done records: the work was not done", n)
	}
}

// floodFiles is how many friction files and knowledge notes the flood mode writes.
const floodFiles = 2000

// A worker that writes thousands of friction reports and shared-knowledge
// notes does not stall the task: its own and the next subtask complete
// (the flood is bounded in flight, excess friction refused with one
// message).
func TestChaosFlood(t *testing.T) {
	parallel(t)
	start := time.Now()
	code, dir, out, recs := chaosRun(t, "flood", "")
	chaosComplete(t, code, dir, out)
	took := time.Since(start)
	refused := countRecords(recs, "trigger_refused", func(r vocab.EventRecord) bool { return r.Agent == "worker_1" })
	recorded := countRecords(recs, "friction_recorded", nil)
	t.Logf("%d friction files and %d knowledge notes: task complete in %v; friction recorded %d, refused %d, context records %d",
		floodFiles, floodFiles, took.Round(time.Millisecond), recorded, refused,
		countRecords(recs, "context_submitted", nil)+countRecords(recs, "context_rejected", nil))
	if flows := countRecords(recs, "friction_flow_started", nil); recorded > 8*(flows+1) || refused == 0 {
		t.Fatalf("%d friction reports recorded over %d friction flows (at most 8 pending per agent between flows), %d refused", recorded, flows, refused)
	}
}
