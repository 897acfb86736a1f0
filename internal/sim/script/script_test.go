package script

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

type fixture struct {
	project, taskDir string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	project := t.TempDir()
	taskDir := filepath.Join(project, ".hivemind", "tasks", "t1")
	for _, d := range []string{"assignments", "outputs", "reviews", "friction"} {
		mustMkdir(t, filepath.Join(taskDir, d))
	}
	mustWrite(t, filepath.Join(project, "go.mod"), "module example.com/x\n\ngo 1.26\n")
	mustWrite(t, filepath.Join(taskDir, "task.md"), "# Task\n\nAdd a rate limiter to the HTTP API\n")
	return fixture{project, taskDir}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) td(rel string) string { return filepath.Join(f.taskDir, filepath.FromSlash(rel)) }
func (f fixture) pj(rel string) string { return filepath.Join(f.project, filepath.FromSlash(rel)) }

// writePlan writes a plan made by the lead script into the task dir.
func (f fixture) writePlan(t *testing.T) *vocab.Plan {
	t.Helper()
	out, _ := DefaultScenario().Respond(vocab.Assignment{Seq: 1, State: vocab.PhasePlanning, Role: vocab.RoleLead,
		Agent: "lead", Writes: []string{f.td("agents/lead/plan.md")}}, f.taskDir, f.project, rand.New(rand.NewPCG(1, 1)))
	if len(out) != 1 {
		t.Fatalf("lead wrote %d files", len(out))
	}
	mustWrite(t, out[0].Path, out[0].Content)
	p, err := ParsePlan(out[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// validatePlan checks the DESIGN.md rules the engine enforces.
func validatePlan(t *testing.T, md string) *vocab.Plan {
	t.Helper()
	p, err := ParsePlan(md)
	if err != nil {
		t.Fatalf("plan json: %v\n%s", err, md)
	}
	if strings.Count(md, "```json") != 1 {
		t.Errorf("plan has %d json blocks, want 1", strings.Count(md, "```json"))
	}
	if p.Summary == "" || len(p.Checkpoints) != 2 || len(p.Subtasks) != 4 {
		t.Fatalf("plan shape: summary %q, %d checkpoints, %d subtasks", p.Summary, len(p.Checkpoints), len(p.Subtasks))
	}
	cps := map[int]bool{}
	for _, c := range p.Checkpoints {
		if c.Name == "" || cps[c.ID] {
			t.Errorf("bad checkpoint %+v", c)
		}
		cps[c.ID] = true
	}
	ids := map[string]vocab.Subtask{}
	for _, st := range p.Subtasks {
		if _, dup := ids[st.ID]; dup || st.ID == "" || st.Description == "" {
			t.Errorf("bad subtask %+v", st)
		}
		ids[st.ID] = st
		if !cps[st.Checkpoint] {
			t.Errorf("%s: unknown checkpoint %d", st.ID, st.Checkpoint)
		}
		if st.Dependencies == nil {
			t.Errorf("%s: dependencies must be a list", st.ID)
		}
		for _, f := range st.Files {
			verb, path, ok := strings.Cut(f, " ")
			if !ok || (verb != "CREATE" && verb != "MODIFY") || filepath.IsAbs(path) || strings.Contains(path, "..") {
				t.Errorf("%s: bad file entry %q", st.ID, f)
			}
		}
	}
	for _, st := range p.Subtasks {
		for _, d := range st.Dependencies {
			dep, ok := ids[d]
			if !ok {
				t.Errorf("%s: unknown dependency %s", st.ID, d)
			} else if dep.Checkpoint > st.Checkpoint {
				t.Errorf("%s depends on later %s", st.ID, d)
			}
		}
	}
	// Subtasks that may run in parallel (no dependency path) touch distinct files.
	dependsOn := func(a, b string) bool {
		seen := map[string]bool{}
		var walk func(string) bool
		walk = func(x string) bool {
			if x == b {
				return true
			}
			if seen[x] {
				return false
			}
			seen[x] = true
			for _, d := range ids[x].Dependencies {
				if walk(d) {
					return true
				}
			}
			return false
		}
		return walk(a)
	}
	for _, a := range p.Subtasks {
		for _, b := range p.Subtasks {
			if a.ID >= b.ID || dependsOn(a.ID, b.ID) || dependsOn(b.ID, a.ID) {
				continue
			}
			for _, fa := range a.Files {
				for _, fb := range b.Files {
					_, pa, _ := strings.Cut(fa, " ")
					_, pb, _ := strings.Cut(fb, " ")
					if pa == pb {
						t.Errorf("parallel %s and %s share %s", a.ID, b.ID, pa)
					}
				}
			}
		}
	}
	return p
}

func paths(ws []FileWrite) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Path)
	}
	return out
}

func TestRespond(t *testing.T) {
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type tc struct {
		name  string
		sc    func(*Scenario)
		setup func(t *testing.T, f fixture) vocab.Assignment
		check func(t *testing.T, f fixture, out []FileWrite, n Narration)
	}
	planDoc := func(t *testing.T, f fixture) { f.writePlan(t) }
	cases := []tc{
		{
			name: "lead/planning writes a valid plan",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhasePlanning, Role: vocab.RoleLead, Agent: "lead", Writes: []string{f.td("plan.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if !reflect.DeepEqual(paths(out), []string{f.td("plan.md")}) {
					t.Fatalf("paths %v", paths(out))
				}
				p := validatePlan(t, out[0].Content)
				if !strings.Contains(p.Summary, "rate limiter") || !strings.Contains(out[0].Content, "internal/ratelimiter/") {
					t.Errorf("plan not about the task: %s", out[0].Content)
				}
				if strings.Contains(out[0].Content, "Revision") {
					t.Errorf("first plan claims to be a revision")
				}
			},
		},
		{
			name: "lead/plan_revision after feedback revises",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.td("reviews/plan_v1.md"), "old")
				mustWrite(t, f.td("reviews/plan_v1-feedback.md"), "- **Problem:** error handling is vague.\n")
				return vocab.Assignment{State: vocab.PhasePlanRevision, Role: vocab.RoleLead, Agent: "lead",
					Reads: []string{f.td("reviews/plan_v1-feedback.md")}, Writes: []string{f.td("plan.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("plan.md") {
					t.Fatalf("paths %v", paths(out))
				}
				validatePlan(t, out[0].Content)
				for _, want := range []string{"Revision 2", "Changes after review", "error handling is vague"} {
					if !strings.Contains(out[0].Content, want) {
						t.Errorf("revised plan lacks %q", want)
					}
				}
			},
		},
		{
			name: "lead/friction_resolution",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.td("agents/worker_1/friction/worker_1-st_1.md"), "# Friction\n")
				return vocab.Assignment{State: vocab.PhaseFrictionResolution, Role: vocab.RoleLead, Agent: "lead",
					Writes: []string{f.td("friction-resolution.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("friction-resolution.md") || !strings.Contains(out[0].Content, "worker_1-st_1.md") {
					t.Fatalf("got %+v", out)
				}
			},
		},
		{
			name: "lead/checkpoint_fix with a note path writes a note only",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				mustWrite(t, f.td("checkpoint-issues.md"), "Files to fix: internal/ratelimiter/ratelimiter.go\n")
				return vocab.Assignment{State: vocab.PhaseCheckpointFix, Role: vocab.RoleLead, Agent: "lead",
					Writes: []string{f.td("checkpoint-fix-notes.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if !reflect.DeepEqual(paths(out), []string{f.td("checkpoint-fix-notes.md")}) {
					t.Fatalf("paths %v", paths(out))
				}
			},
		},
		{
			name: "lead/checkpoint_fix without writes is told only",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhaseCheckpointFix, Role: vocab.RoleLead, Agent: "lead"}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 0 || n.Summary == "" {
					t.Fatalf("got %v %q", paths(out), n.Summary)
				}
			},
		},
		{
			name: "reviewer/plan_review first round asks for changes",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				return vocab.Assignment{State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Reads: []string{f.td("plan.md")}, Writes: []string{f.td("plan-approved.md"), f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("plan-feedback.md") {
					t.Fatalf("paths %v", paths(out))
				}
				for _, want := range []string{"Severity:", "Location:", "Problem:", "Suggestion:", "st_1"} {
					if !strings.Contains(out[0].Content, want) {
						t.Errorf("feedback lacks %q:\n%s", want, out[0].Content)
					}
				}
			},
		},
		{
			name: "reviewer/plan_review second round approves",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				mustWrite(t, f.td("reviews/plan_v1-feedback.md"), "x")
				return vocab.Assignment{State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Writes: []string{f.td("plan-approved.md"), f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("plan-approved.md") {
					t.Fatalf("paths %v", paths(out))
				}
			},
		},
		{
			name: "reviewer/plan_review other archive naming still counts",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				mustWrite(t, f.td("reviews/plan-feedback_v1.md"), "x")
				return vocab.Assignment{State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Writes: []string{f.td("plan-approved.md"), f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("plan-approved.md") {
					t.Fatalf("paths %v", paths(out))
				}
			},
		},
		{
			name: "reviewer/plan_review RejectPlans=0 approves at once",
			sc:   func(s *Scenario) { s.RejectPlans = 0 },
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				return vocab.Assignment{State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Writes: []string{f.td("plan-approved.md"), f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("plan-approved.md") {
					t.Fatalf("paths %v", paths(out))
				}
			},
		},
		{
			name: "reviewer/plan_review forbidden write attempt first",
			sc:   func(s *Scenario) { s.ForbiddenWrite = true },
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				return vocab.Assignment{State: vocab.PhasePlanReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Writes: []string{f.td("plan-approved.md"), f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 2 || !out[0].Forbidden || !strings.HasPrefix(out[0].Path, f.pj("internal")) || out[1].Path != f.td("plan-feedback.md") {
					t.Fatalf("got %+v", out)
				}
			},
		},
		{
			name: "reviewer/checkpoint_review first names a file of checkpoint 1",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				// The engine archived plan.md; the script must find it there.
				if err := os.Rename(f.td("agents/lead/plan.md"), f.td("reviews/plan_v2.md")); err != nil {
					t.Fatal(err)
				}
				return vocab.Assignment{State: vocab.PhaseCheckpointReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Instruction: "Review checkpoint 1 (core).",
					Writes:      []string{f.td("checkpoint-approved.md"), f.td("checkpoint-issues.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("checkpoint-issues.md") {
					t.Fatalf("paths %v", paths(out))
				}
				c := out[0].Content
				if !strings.Contains(c, "internal/ratelimiter/ratelimiter.go") && !strings.Contains(c, "internal/ratelimiter/config.go") {
					t.Errorf("issues name no checkpoint-1 file:\n%s", c)
				}
				for _, want := range []string{"Severity:", "Location:", "Problem:", "Suggestion:"} {
					if !strings.Contains(c, want) {
						t.Errorf("issues lack %q", want)
					}
				}
			},
		},
		{
			name: "reviewer/checkpoint_review after issues approves",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				planDoc(t, f)
				mustWrite(t, f.td("reviews/checkpoint_1_v1-issues.md"), "x")
				return vocab.Assignment{State: vocab.PhaseCheckpointReview, Role: vocab.RoleReviewer, Agent: "reviewer",
					Writes: []string{f.td("checkpoint-approved.md"), f.td("checkpoint-issues.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 1 || out[0].Path != f.td("checkpoint-approved.md") {
					t.Fatalf("paths %v", paths(out))
				}
			},
		},
		{
			name: "reviewer/read-only in executing writes nothing",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhaseExecuting, Role: vocab.RoleReviewer, Agent: "reviewer", ReadOnly: true,
					Writes: []string{f.td("plan-feedback.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 0 {
					t.Fatalf("read-only wrote %v", paths(out))
				}
			},
		},
		{
			name: "worker/executing creates code, output, marker last",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_2",
					Subtask: &vocab.Subtask{ID: "st_2", Description: "Config.", Checkpoint: 1, Files: []string{"CREATE internal/rl/config.go"}},
					Writes:  []string{f.td("outputs/st_2.md"), f.pj("internal/rl/config.go")}, DoneMarker: f.td("outputs/st_2.done")}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.pj("internal/rl/config.go"), f.td("outputs/st_2.md"), f.td("outputs/st_2.done")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
				if !strings.HasPrefix(out[0].Content, "package rl\n") || !strings.Contains(out[0].Content, "func DefaultConfig() Config") {
					t.Errorf("code:\n%s", out[0].Content)
				}
				var m vocab.DoneMarker
				if err := json.Unmarshal([]byte(out[2].Content), &m); err != nil || m.AgentID != "worker_2" || m.OutputFile != f.td("outputs/st_2.md") || !m.CompletedAt.Equal(fixed) {
					t.Errorf("marker %q: %v", out[2].Content, err)
				}
			},
		},
		{
			name: "worker/executing modifies an existing file",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.pj("README.md"), "# Demo\n")
				return vocab.Assignment{State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
					Subtask: &vocab.Subtask{ID: "st_4", Description: "Docs.", Checkpoint: 2, Files: []string{"MODIFY README.md", "CREATE ../escape.go", "CREATE /etc/x.go"}},
					Writes:  []string{f.td("outputs/st_4.md")}, DoneMarker: f.td("outputs/st_4.done")}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.pj("README.md"), f.td("outputs/st_4.md"), f.td("outputs/st_4.done")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
				if !strings.HasPrefix(out[0].Content, "# Demo\n") || len(out[0].Content) <= len("# Demo\n") {
					t.Errorf("modify lost or kept content: %q", out[0].Content)
				}
			},
		},
		{
			name: "worker/executing with friction logs it first",
			sc:   func(s *Scenario) { s.WriteFriction = true },
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhaseExecuting, Role: vocab.RoleWorker, Agent: "worker_1",
					Subtask: &vocab.Subtask{ID: "st_1", Description: "Core.", Checkpoint: 1, Files: []string{"CREATE internal/rl/rl.go"}},
					Writes:  []string{f.td("outputs/st_1.md"), f.td("outputs/st_1.done")}, DoneMarker: f.td("outputs/st_1.done")}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.td("agents/worker_1/friction/worker_1-st_1.md"), f.pj("internal/rl/rl.go"), f.td("outputs/st_1.md"), f.td("outputs/st_1.done")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
			},
		},
		{
			name: "worker/checkpoint_fix fixes the named file then checkpoint.md",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.pj("internal/rl/rl.go"), "package rl\n")
				mustWrite(t, f.td("reviews/checkpoint_1_v1-issues.md"), "- **Location:** internal/rl/rl.go\n")
				return vocab.Assignment{State: vocab.PhaseCheckpointFix, Role: vocab.RoleWorker, Agent: "worker_1",
					Subtask: &vocab.Subtask{ID: "st_1", Checkpoint: 1, Files: []string{"CREATE internal/rl/rl.go"}},
					Writes:  []string{f.pj("internal/rl/rl.go"), f.td("checkpoint.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.pj("internal/rl/rl.go"), f.td("checkpoint.md")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
				if !strings.HasPrefix(out[0].Content, "package rl\n") || !strings.Contains(out[0].Content, "func validInput1(") {
					t.Errorf("fix:\n%s", out[0].Content)
				}
			},
		},
		{
			name: "worker/checkpoint_fix as the engine sends it (fix output + marker)",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.pj("internal/rl/rl.go"), "package rl\n")
				mustWrite(t, f.pj("internal/rl/config.go"), "package rl\n")
				mustWrite(t, f.td("reviews/checkpoint_1_v1-issues.md"), "- **Location:** internal/rl/config.go:3\n")
				return vocab.Assignment{State: vocab.PhaseCheckpointFix, Role: vocab.RoleWorker, Agent: "worker_2",
					Instruction: "Fix the checkpoint 1 issues",
					Reads:       []string{f.td("reviews/checkpoint_1_v1-issues.md")},
					Writes:      []string{f.td("outputs/fix-cp1-r1-worker_2.md"), f.pj("internal/rl/rl.go"), f.pj("internal/rl/config.go")},
					DoneMarker:  f.td("outputs/fix-cp1-r1-worker_2.done")}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.pj("internal/rl/config.go"), f.td("outputs/fix-cp1-r1-worker_2.md"), f.td("outputs/fix-cp1-r1-worker_2.done")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
				var m vocab.DoneMarker
				if err := json.Unmarshal([]byte(out[2].Content), &m); err != nil || m.OutputFile != want[1] || m.AgentID != "worker_2" {
					t.Errorf("marker %q", out[2].Content)
				}
			},
		},
		{
			name: "lead/checkpoint_fix as the engine sends it (note + marker)",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				mustWrite(t, f.td("reviews/checkpoint_1_v1-issues.md"), "- **Location:** internal/rl/config.go:3\n")
				return vocab.Assignment{State: vocab.PhaseCheckpointFix, Role: vocab.RoleLead, Agent: "lead",
					Writes: []string{f.td("outputs/fix-cp1-r1-lead.md")}, DoneMarker: f.td("outputs/fix-cp1-r1-lead.done")}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				want := []string{f.td("outputs/fix-cp1-r1-lead.md"), f.td("outputs/fix-cp1-r1-lead.done")}
				if !reflect.DeepEqual(paths(out), want) {
					t.Fatalf("paths %v, want %v", paths(out), want)
				}
			},
		},
		{
			name: "worker/complete writes nothing",
			setup: func(t *testing.T, f fixture) vocab.Assignment {
				return vocab.Assignment{State: vocab.PhaseComplete, Role: vocab.RoleWorker, Agent: "worker_1", Writes: []string{f.td("x.md")}}
			},
			check: func(t *testing.T, f fixture, out []FileWrite, n Narration) {
				if len(out) != 0 {
					t.Fatalf("wrote %v", paths(out))
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			a := c.setup(t, f)
			sc := DefaultScenario()
			sc.Now = func() time.Time { return fixed }
			if c.sc != nil {
				c.sc(&sc)
			}
			out, n := sc.Respond(a, f.taskDir, f.project, rand.New(rand.NewPCG(7, 7)))
			checkAllowed(t, f, sc, a, out)
			if n.Summary == "" {
				t.Errorf("empty summary")
			}
			c.check(t, f, out, n)
			again, n2 := sc.Respond(a, f.taskDir, f.project, rand.New(rand.NewPCG(7, 7)))
			if !reflect.DeepEqual(out, again) || !reflect.DeepEqual(n, n2) {
				t.Errorf("same seed, different answer")
			}
		})
	}
}

// checkAllowed asserts the script only writes what the assignment allows,
// and the done marker last.
func checkAllowed(t *testing.T, f fixture, sc Scenario, a vocab.Assignment, out []FileWrite) {
	t.Helper()
	allowed := map[string]bool{}
	for _, w := range a.Writes {
		allowed[w] = true
	}
	if a.DoneMarker != "" {
		allowed[a.DoneMarker] = true
		allowed[strings.TrimSuffix(a.DoneMarker, ".done")+".md"] = true
	}
	if a.Subtask != nil {
		for _, fl := range a.Subtask.Files {
			_, p, _ := strings.Cut(fl, " ")
			allowed[filepath.Join(f.project, p)] = true
		}
	}
	for i, w := range out {
		if !filepath.IsAbs(w.Path) {
			t.Errorf("relative path %s", w.Path)
		}
		if w.Forbidden {
			continue
		}
		if sc.WriteFriction && strings.HasSuffix(filepath.Dir(w.Path), "/friction") {
			continue
		}
		if !allowed[w.Path] || strings.Contains(w.Path, "..") {
			t.Errorf("writes unlisted path %s", w.Path)
		}
		if w.Path == a.DoneMarker && i != len(out)-1 {
			t.Errorf("done marker not last")
		}
	}
}

func TestWholeRunAgainstScript(t *testing.T) {
	// Drive the script through a full workflow the way the engine would,
	// archiving triggers, and check the rounds come out as the scenario says.
	f := newFixture(t)
	sc := DefaultScenario()
	rnd := rand.New(rand.NewPCG(3, 3))
	apply := func(ws []FileWrite) {
		for _, w := range ws {
			mustWrite(t, w.Path, w.Content)
		}
	}
	archive := func(name, to string) {
		if err := os.Rename(f.td(name), f.td("reviews/"+to)); err != nil {
			t.Fatal(err)
		}
	}
	lead := func(st vocab.Phase) []FileWrite {
		out, _ := sc.Respond(vocab.Assignment{State: st, Role: "lead", Agent: "lead", Writes: []string{f.td("plan.md")}}, f.taskDir, f.project, rnd)
		return out
	}
	review := func(st vocab.Phase, a, b string) string {
		out, _ := sc.Respond(vocab.Assignment{State: st, Role: "reviewer", Agent: "reviewer", Writes: []string{f.td(a), f.td(b)}}, f.taskDir, f.project, rnd)
		if len(out) != 1 {
			t.Fatalf("review wrote %d files", len(out))
		}
		apply(out)
		return filepath.Base(out[0].Path)
	}
	apply(lead(vocab.PhasePlanning))
	if v := review(vocab.PhasePlanReview, "plan-approved.md", "plan-feedback.md"); v != "plan-feedback.md" {
		t.Fatalf("round 1: %s", v)
	}
	archive("plan.md", "plan_v1.md")
	archive("plan-feedback.md", "plan_v1-feedback.md")
	apply(lead(vocab.PhasePlanRevision))
	if v := review(vocab.PhasePlanReview, "plan-approved.md", "plan-feedback.md"); v != "plan-approved.md" {
		t.Fatalf("round 2: %s", v)
	}
	archive("plan.md", "plan_v2.md")
	archive("plan-approved.md", "plan_v2-approved.md")
	pl := f.plan(t)
	for _, st := range pl.Subtasks {
		stc := st
		out, _ := sc.Respond(vocab.Assignment{State: vocab.PhaseExecuting, Role: "worker", Agent: "worker_1", Subtask: &stc,
			Writes: []string{f.td("outputs/" + st.ID + ".md")}, DoneMarker: f.td("outputs/" + st.ID + ".done")}, f.taskDir, f.project, rnd)
		apply(out)
	}
	for cp, want := range []string{"checkpoint-issues.md", "checkpoint-approved.md", "checkpoint-approved.md"} {
		n := 1
		if cp == 2 {
			n = 2
		}
		got := review(vocab.PhaseCheckpointReview, "checkpoint-approved.md", "checkpoint-issues.md")
		if got != want {
			t.Fatalf("checkpoint review %d: %s, want %s", cp+1, got, want)
		}
		archive(got, "checkpoint_"+string(rune('0'+n))+"_v"+string(rune('1'+cp))+"-"+strings.TrimPrefix(got, "checkpoint-"))
	}
	// The code the workers wrote builds and its tests pass.
	if testing.Short() {
		return
	}
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = f.project
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok ") {
		t.Errorf("generated project does not build/test: %v\n%s", err, out)
	}
	t.Logf("go test in the generated project: %s", out)
}

func (f fixture) plan(t *testing.T) *vocab.Plan {
	c := &ctx{taskDir: f.taskDir, project: f.project}
	p := c.plan()
	if p == nil {
		t.Fatal("no plan found")
	}
	return p
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Add a rate limiter to the HTTP API": "ratelimiter",
		"":                                   "feature",
		"!!!":                                "feature",
		"Build 3 JSON exporters":             "jsonexporters",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePlanErrors(t *testing.T) {
	if _, err := ParsePlan("no block"); err == nil {
		t.Error("no block: want error")
	}
	if _, err := ParsePlan("```json\n{bad\n```"); err == nil {
		t.Error("bad json: want error")
	}
}
