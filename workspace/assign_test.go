package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestAssignments(t *testing.T) {
	_, td := newTask(t)
	a := vocab.Assignment{Seq: 1, State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
		Instruction: "Build st_1.",
		Subtask:     &vocab.Subtask{ID: "st_1", Description: "do it", Checkpoint: 1, Files: []string{"CREATE a.go"}},
		Reads:       []string{"/p/plan.md"}, Writes: []string{"/p/outputs/st_1.md"}, DoneMarker: "/p/outputs/st_1.done"}
	if _, err := td.ReadAssignment("worker_1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing assignment err = %v", err)
	}
	if err := td.WriteAssignment(a); err != nil {
		t.Fatal(err)
	}
	got, err := td.ReadAssignment("worker_1")
	if err != nil || got.Seq != 1 || got.Subtask.ID != "st_1" || got.DoneMarker != a.DoneMarker {
		t.Fatalf("read back %+v, %v", got, err)
	}
	md, _ := os.ReadFile(filepath.Join(td.Dir(), vocab.AssignmentsDir, "worker_1.md"))
	for _, want := range []string{"Assignment 1 for worker_1", "Build st_1.", "CREATE a.go", "/p/outputs/st_1.done", "/p/plan.md"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if md := RenderAssignment(vocab.Assignment{Seq: 2, Agent: "worker_1", Resent: true}); !strings.Contains(md, "earlier work sent again") {
		t.Errorf("a re-sent assignment does not say so:\n%s", md)
	}
	if td.AssignmentPath("worker_1") != filepath.Join(td.Dir(), "assignments", "worker_1.json") {
		t.Errorf("AssignmentPath = %s", td.AssignmentPath("worker_1"))
	}
	tests := []struct {
		name string
		a    vocab.Assignment
		want error
	}{
		{"same seq", vocab.Assignment{Seq: 1, Agent: "worker_1"}, ErrStaleSeq},
		{"lower seq", vocab.Assignment{Seq: 0, Agent: "worker_1"}, ErrStaleSeq},
		{"negative seq", vocab.Assignment{Seq: -1, Agent: "lead"}, ErrStaleSeq},
		{"higher seq", vocab.Assignment{Seq: 5, Agent: "worker_1"}, nil},
		{"other agent, own sequence", vocab.Assignment{Seq: 2, Agent: "lead"}, nil},
		{"bad agent id", vocab.Assignment{Seq: 9, Agent: "../lead"}, ErrBadID},
		{"empty agent id", vocab.Assignment{Seq: 9}, ErrBadID},
	}
	for _, tc := range tests {
		err := td.WriteAssignment(tc.a)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got, _ := td.ReadAssignment("worker_1"); got.Seq != 5 {
		t.Errorf("seq now %d", got.Seq)
	}
	// Each assignment stays at its versioned path as it was sent, whatever
	// came after it.
	for seq, instr := range map[int]string{1: "Build st_1.", 5: ""} {
		var v vocab.Assignment
		b, err := os.ReadFile(filepath.Join(td.Dir(), vocab.AssignmentRel("worker_1", seq)))
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil || v.Seq != seq || v.Instruction != instr {
			t.Errorf("%s: %+v, %v; want seq %d %q", vocab.AssignmentRel("worker_1", seq), v, err, seq, instr)
		}
		if md, err := os.ReadFile(filepath.Join(td.Dir(), vocab.AssignmentsDir, "worker_1-"+strconv.Itoa(seq)+".md")); err != nil || !strings.Contains(string(md), fmt.Sprintf("Assignment %d for worker_1", seq)) {
			t.Errorf("worker_1-%d.md: %q, %v", seq, md, err)
		}
	}
	// A corrupt previous file is kept aside, not a dead end.
	p := td.AssignmentPath("lead")
	if err := os.WriteFile(p, []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := td.WriteAssignment(vocab.Assignment{Seq: 3, Agent: "lead"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(p + ".corrupt-*"); len(m) != 1 {
		t.Errorf("corrupt assignment not kept: %v", m)
	}
}

func TestAssignmentSymlinks(t *testing.T) {
	_, td := newTask(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.json")
	if err := os.WriteFile(victim, []byte(`{"seq":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, victim, td.AssignmentPath("worker_1"))
	if err := td.WriteAssignment(vocab.Assignment{Seq: 1, Agent: "worker_1"}); !errors.Is(err, ErrOutside) && !errors.Is(err, ErrSymlink) {
		t.Fatalf("err = %v, want ErrOutside/ErrSymlink", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != `{"seq":0}` {
		t.Errorf("victim changed: %s", got)
	}
	// The whole assignments directory replaced by a link outside.
	dir := filepath.Join(td.Dir(), vocab.AssignmentsDir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, dir)
	if err := td.WriteAssignment(vocab.Assignment{Seq: 1, Agent: "lead"}); !errors.Is(err, ErrOutside) {
		t.Fatalf("err = %v, want ErrOutside", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "lead.json")); err == nil {
		t.Error("wrote through a symlinked directory")
	}
}

func TestReadDone(t *testing.T) {
	_, td := newTask(t)
	task, _ := td.Task()
	project := task.Project
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(td.Dir(), vocab.OutputsDir, "st_1.md")
	write(out, "result")
	write(filepath.Join(td.Dir(), vocab.OutputsDir, "empty.md"), "")
	write(filepath.Join(project, "src", "a.go"), "package a")
	secret := filepath.Join(t.TempDir(), "secret")
	write(secret, "secret")
	mustSymlink(t, secret, filepath.Join(td.Dir(), vocab.OutputsDir, "link.md"))
	tests := []struct {
		name    string
		marker  string
		want    error  // nil = ok
		wantOut string // expected OutputFile when ok
		wantAt  time.Time
	}{
		{"absolute in task dir", `{"agent_id":"worker_1","output_file":"` + out + `","completed_at":"2026-01-02T03:04:05Z"}`, nil, out, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"relative to task dir", `{"agent_id":"worker_1","output_file":"outputs/st_1.md"}`, nil, out, time.Time{}},
		{"relative to project", `{"agent_id":"worker_1","output_file":"src/a.go","completed_at":"2026-01-02T03:04:05.123456"}`, nil, filepath.Join(project, "src", "a.go"), time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)},
		{"unix time", `{"agent_id":"worker_1","output_file":"` + out + `","completed_at":1767323045}`, nil, out, time.Unix(1767323045, 0).UTC()},
		{"outside", `{"agent_id":"worker_1","output_file":"` + secret + `"}`, ErrOutside, "", time.Time{}},
		{"dotdot", `{"agent_id":"worker_1","output_file":"../../x"}`, ErrOutside, "", time.Time{}},
		{"symlink out", `{"agent_id":"worker_1","output_file":"outputs/link.md"}`, ErrOutside, "", time.Time{}},
		{"missing output", `{"agent_id":"worker_1","output_file":"outputs/none.md"}`, ErrBadMarker, "", time.Time{}},
		{"empty output", `{"agent_id":"worker_1","output_file":"outputs/empty.md"}`, ErrBadMarker, "", time.Time{}},
		{"directory output", `{"agent_id":"worker_1","output_file":"outputs"}`, ErrBadMarker, "", time.Time{}},
		{"bad agent", `{"agent_id":"../x","output_file":"outputs/st_1.md"}`, ErrBadMarker, "", time.Time{}},
		{"no agent", `{"output_file":"outputs/st_1.md"}`, ErrBadMarker, "", time.Time{}},
		{"another agent", `{"agent_id":"worker_2","output_file":"outputs/st_1.md"}`, ErrBadMarker, "", time.Time{}},
		{"no output", `{"agent_id":"worker_1"}`, ErrBadMarker, "", time.Time{}},
		{"bad time", `{"agent_id":"worker_1","output_file":"outputs/st_1.md","completed_at":"yesterday"}`, ErrBadMarker, "", time.Time{}},
		{"empty file", ``, ErrBadMarker, "", time.Time{}},
		{"not json", `done!`, ErrBadMarker, "", time.Time{}},
		{"trailing garbage", `{"agent_id":"worker_1","output_file":"outputs/st_1.md"} x`, ErrBadMarker, "", time.Time{}},
	}
	if err := td.MakeOutbox("worker_1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write(td.DonePath("worker_1", "st_x"), tc.marker)
			m, err := td.ReadDone("worker_1", "st_x")
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.AgentID != "worker_1" || m.OutputFile != tc.wantOut || !m.CompletedAt.Equal(tc.wantAt) {
				t.Errorf("marker %+v; want out %s at %v", m, tc.wantOut, tc.wantAt)
			}
		})
	}
	if _, err := td.ReadDone("worker_1", "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing marker err = %v", err)
	}
	if _, err := td.ReadDone("worker_1", "../x"); !errors.Is(err, ErrBadID) {
		t.Errorf("bad subtask err = %v", err)
	}
	mustSymlink(t, secret, td.DonePath("worker_1", "st_link"))
	if _, err := td.ReadDone("worker_1", "st_link"); !errors.Is(err, ErrOutside) && !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked marker err = %v", err)
	}
}

func TestArchive(t *testing.T) {
	_, td := newTask(t)
	write := func(rel, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(td.Dir(), rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plan-feedback.md", "v1 feedback")
	if err := td.Archive("plan-feedback.md", "reviews/plan_v1-feedback.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(td.Dir(), "plan-feedback.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	if got := mustRead(t, filepath.Join(td.Dir(), "reviews/plan_v1-feedback.md")); string(got) != "v1 feedback" {
		t.Errorf("archived %q", got)
	}
	write("plan-feedback.md", "v2 feedback")
	if err := td.Archive("plan-feedback.md", "reviews/plan_v1-feedback.md"); !errors.Is(err, ErrExists) {
		t.Fatalf("overwrite err = %v, want ErrExists", err)
	}
	if got := mustRead(t, filepath.Join(td.Dir(), "reviews/plan_v1-feedback.md")); string(got) != "v1 feedback" {
		t.Errorf("archive overwritten: %q", got)
	}
	if got := mustRead(t, filepath.Join(td.Dir(), "plan-feedback.md")); string(got) != "v2 feedback" {
		t.Errorf("source lost: %q", got)
	}
	// New directories are made; bad paths refused; missing source reported.
	write("checkpoint.md", "cp")
	if err := td.Archive("checkpoint.md", "reviews/cp/checkpoint_1_v1.md"); err != nil {
		t.Fatal(err)
	}
	if err := td.Archive("missing.md", "reviews/missing_v1.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing source err = %v", err)
	}
	for _, tc := range [][2]string{{"../x", "reviews/x"}, {"plan-feedback.md", "/tmp/x"}, {"plan-feedback.md", "../../x"}} {
		if err := td.Archive(tc[0], tc[1]); !errors.Is(err, ErrOutside) {
			t.Errorf("Archive(%q, %q) err = %v", tc[0], tc[1], err)
		}
	}
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(td.Dir(), "out"))
	if err := td.Archive("plan-feedback.md", "out/x.md"); !errors.Is(err, ErrOutside) {
		t.Errorf("archive through symlinked dir err = %v", err)
	}
}

func TestHeartbeats(t *testing.T) {
	_, td := newTask(t)
	if _, err := td.Heartbeat("lead"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing heartbeat err = %v", err)
	}
	at := time.Date(2026, 11, 22, 1, 2, 3, 999, time.UTC)
	if err := td.WriteHeartbeat("lead", at); err != nil {
		t.Fatal(err)
	}
	got, err := td.Heartbeat("lead")
	if err != nil || !got.Equal(at.Truncate(time.Second)) {
		t.Fatalf("Heartbeat = %v, %v", got, err)
	}
	// Written by someone else, e.g. `date +%s.%N > heartbeats/worker_1`.
	if err := os.WriteFile(filepath.Join(td.Dir(), vocab.HeartbeatsDir, "worker_1"), []byte("1767323045.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := td.Heartbeat("worker_1"); err != nil || got.Unix() != 1767323045 || got.Nanosecond() != 5e8 {
		t.Errorf("fractional heartbeat = %v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(td.Dir(), vocab.HeartbeatsDir, "worker_2"), []byte("soon"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := td.Heartbeat("worker_2"); err == nil {
		t.Error("garbage heartbeat accepted")
	}
	if err := td.WriteHeartbeat("../x", at); !errors.Is(err, ErrBadID) {
		t.Errorf("bad agent err = %v", err)
	}
	if _, err := td.Heartbeat("a/b"); !errors.Is(err, ErrBadID) {
		t.Errorf("bad agent err = %v", err)
	}
}

func TestAgentLogPath(t *testing.T) {
	_, td := newTask(t)
	logs := filepath.Join(td.Dir(), "logs", "agents")
	for agent, want := range map[vocab.AgentID]string{
		"worker_1": "worker_1.log",
		"lead":     "lead.log",
		"../../x":  "______x.log",
		"":         "_.log",
	} {
		if got := td.AgentLogPath(agent); got != filepath.Join(logs, want) {
			t.Errorf("AgentLogPath(%q) = %s, want %s", agent, got, want)
		}
	}
}

// TestPlantedSymlinks plants a symlink to a file outside the workspace at
// each place the workspace writes; none may be followed.
func TestPlantedSymlinks(t *testing.T) {
	w, td := newTask(t)
	victim := filepath.Join(t.TempDir(), "victim")
	plant := func(p string) {
		t.Helper()
		if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(p)
		mustSymlink(t, victim, p)
	}
	tests := []struct {
		name  string
		path  string
		write func() error
	}{
		{"heartbeat", filepath.Join(td.Dir(), vocab.HeartbeatsDir, "lead"), func() error { return td.WriteHeartbeat("lead", time.Now()) }},
		{"assignment markdown", filepath.Join(td.Dir(), vocab.AssignmentsDir, "lead.md"), func() error { return td.WriteAssignment(vocab.Assignment{Seq: 1, Agent: "lead"}) }},
		{"friction.json", filepath.Join(w.Root(), vocab.FrictionFile), func() error {
			_, err := w.AddFriction(vocab.FrictionEntry{Type: vocab.FrictionTimeout, Description: "x"})
			return err
		}},
		{"archive destination", filepath.Join(td.Dir(), vocab.ReviewsDir, "plan_v1.md"), func() error {
			if err := os.WriteFile(filepath.Join(td.Dir(), "plan.md"), []byte("plan"), 0o644); err != nil {
				return nil
			}
			return td.Archive("plan.md", "reviews/plan_v1.md")
		}},
		{"task.md", filepath.Join(w.Root(), vocab.TasksDir, "t_sym", vocab.TaskMarkdown), func() error {
			_, err := w.CreateTask(vocab.Task{ID: "t_sym"})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(tc.path), 0o755); err != nil {
				t.Fatal(err)
			}
			plant(tc.path)
			if err := tc.write(); err == nil {
				t.Error("write through a planted symlink succeeded")
			}
			if got, _ := os.ReadFile(victim); string(got) != "keep" {
				t.Errorf("victim changed: %q", got)
			}
		})
	}
}

func TestAssignmentOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent vocab.AgentID
		seq   int
		ok    bool
	}{
		{"worker_1-7.json", "worker_1", 7, true},
		{"worker_1.json", "worker_1", 0, true},
		{"lead-12.json", "lead", 12, true},
		{"lead-07.json", "lead-07", 0, true}, // not a seq: part of the id
		{"lead-0.json", "lead-0", 0, true},
		{"lead-+7.json", "lead-+7", 0, false},
		{"worker_1-7.md", "", 0, false},
		{"-7.json", "-7", 0, false},
	} {
		agent, seq, ok := vocab.AssignmentOf(tc.name)
		if ok != tc.ok || (ok && (agent != tc.agent || seq != tc.seq)) {
			t.Errorf("AssignmentOf(%q) = %q, %d, %v; want %q, %d, %v", tc.name, agent, seq, ok, tc.agent, tc.seq, tc.ok)
		}
		if ok && filepath.Base(vocab.AssignmentRel(agent, seq)) != tc.name {
			t.Errorf("AssignmentRel(%q, %d) = %s, want …/%s", agent, seq, vocab.AssignmentRel(agent, seq), tc.name)
		}
	}
}
