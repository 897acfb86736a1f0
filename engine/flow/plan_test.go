package flow

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/vocab"
)

// subtaskJSON is one valid subtask line for building plans.
const okSubtask = `{"id": "st_1", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]}`

// plan builds a plan.md whose json block starts at line 6 (summary and
// checkpoints on line 6, each subtask on its own line from line 7).
func plan(subtasks ...string) []byte {
	return planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}], "subtasks": [
` + strings.Join(subtasks, ",\n") + `
]}`)
}

func TestParsePlanValid(t *testing.T) {
	p, probs := ParsePlan(validPlan, "/proj")
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if p.Summary != "build it" || len(p.Checkpoints) != 2 || len(p.Subtasks) != 3 || p.Subtasks[2].Dependencies[0] != "st_1" {
		t.Fatalf("plan %+v", p)
	}
	// Tilde fences, "./" paths and an unrelated code block are fine.
	md := "# P\n```go\nfunc main() {}\n```\n~~~json\n" + `{"summary": "s", "checkpoints": [{"id": 7, "name": "x"}],
 "subtasks": [{"id": "a", "description": "d", "checkpoint": 7, "dependencies": [], "files": ["MODIFY ./src/x.go"]}]}` + "\n~~~\n"
	if _, probs := ParsePlan([]byte(md), "/proj"); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
}

func TestParsePlanProblems(t *testing.T) {
	tests := []struct {
		name string
		md   []byte
		want []string // each must appear, in order, as one problem's String()
	}{
		{"no json block", []byte("# Plan\nno json"), []string{"no fenced ```json block found"}},
		{"two json blocks", append(plan(okSubtask), "\n```json\n{}\n```\n"...), []string{"line 11: more than one ```json block (at lines 5, 11)"}},
		{"unclosed fence", []byte("```json\n{\"summary\": \"s\"}\n"), []string{"line 1: the ```json block opened here is never closed"}},
		{"empty block", []byte("```json\n\n```\n"), []string{"line 1: the ```json block is empty"}},
		{"not an object", []byte("```json\n[1]\n```\n"), []string{"line 2: the json block must hold one JSON object"}},
		{"syntax error", []byte("```json\n{\"summary\": \"s\",\n \"checkpoints\": [}\n```\n"), []string{"line 3: invalid JSON: invalid character '}'"}},
		{"truncated", []byte("```json\n{\"summary\": \"s\",\n \"checkpoints\": [\n```\n"), []string{"invalid JSON: the object is not closed"}},
		{"trailing data", []byte("```json\n{\"summary\": \"s\"}\n{}\n```\n"), []string{"line 3: unexpected text after the JSON object"}},
		{"unknown field", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["CREATE a.go"], "owner": "me"}`),
			[]string{`line 7: unknown field "owner" in a subtask (allowed: checkpoint, dependencies, description, files, id)`}},
		{"unknown top field", planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}], "subtasks": [` + okSubtask + `], "risks": []}`),
			[]string{`line 6: unknown field "risks" in the plan`}},
		{"duplicate key", plan(`{"id": "st_1", "id": "st_2", "description": "d", "checkpoint": 1, "files": ["CREATE a.go"]}`),
			[]string{`line 7: field "id" appears twice`}},
		{"wrong type", plan(`{"id": "st_1", "description": "d", "checkpoint": "one", "files": ["CREATE a.go"]}`),
			[]string{"line 7: subtasks[0].checkpoint must be an integer, not a JSON string"}},
		{"missing summary", planMD(`{"checkpoints": [{"id": 1, "name": "one"}], "subtasks": [` + okSubtask + `]}`),
			[]string{`line 6: "summary" is missing or empty`}},
		{"no checkpoints", planMD(`{"summary": "s", "checkpoints": [], "subtasks": [` + okSubtask + `]}`),
			[]string{"line 6: no checkpoints", "line 6: subtask st_1: checkpoint 1 does not exist (checkpoints: none)"}},
		{"bad checkpoint id", planMD(`{"summary": "s", "checkpoints": [{"id": 0, "name": "x"}, {"id": 1, "name": "one"}], "subtasks": [` + okSubtask + `]}`),
			[]string{"line 6: checkpoint #1: id must be a positive integer, got 0"}},
		{"duplicate checkpoint", planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"},
 {"id": 1, "name": "again"}], "subtasks": [` + okSubtask + `]}`),
			[]string{"line 7: checkpoint id 1 is used twice (also at line 6)"}},
		{"unnamed checkpoint", planMD(`{"summary": "s", "checkpoints": [{"id": 1}], "subtasks": [` + okSubtask + `]}`),
			[]string{"line 6: checkpoint 1 has no name"}},
		{"empty checkpoint", planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}], "subtasks": [` + okSubtask + `]}`),
			[]string{`line 6: checkpoint 2 ("two") has no subtasks`}},
		{"no subtasks", plan(), []string{"line 6: no subtasks", `checkpoint 1 ("one")`}[:1]},
		{"missing id", plan(`{"description": "d", "checkpoint": 1, "files": ["CREATE a.go"]}`), []string{"line 7: subtask #1 has no id"}},
		{"bad id", plan(`{"id": "a/b", "description": "d", "checkpoint": 1, "files": ["CREATE a.go"]}`),
			[]string{`line 7: subtask id "a/b" is not usable as a file name`}},
		{"reserved id", plan(`{"id": "fix-cp1-r1-x", "description": "d", "checkpoint": 1, "files": ["CREATE a.go"]}`),
			[]string{`line 7: subtask id "fix-cp1-r1-x" is reserved`}},
		{"duplicate id", plan(okSubtask, okSubtask), []string{`line 8: subtask id "st_1" is used twice (also at line 7)`}},
		{"no description", plan(`{"id": "st_1", "checkpoint": 1, "files": ["CREATE a.go"]}`), []string{"line 7: subtask st_1 has no description"}},
		{"no checkpoint", plan(`{"id": "st_1", "description": "d", "files": ["CREATE a.go"]}`),
			[]string{`line 7: subtask st_1 has no checkpoint: set "checkpoint" to one of the checkpoint ids (1)`}},
		{"unknown checkpoint", plan(`{"id": "st_1", "description": "d", "checkpoint": 9, "files": ["CREATE a.go"]}`),
			[]string{"line 7: subtask st_1: checkpoint 9 does not exist (checkpoints: 1)"}},
		{"no files", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": []}`), []string{"line 7: subtask st_1 lists no files"}},
		{"bad verb", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["create a.go", "DELETE b.go", "CREATE: c.go"]}`),
			[]string{`file entry "create a.go" must be "CREATE path" or "MODIFY path"`, `file entry "DELETE b.go" must be`, `file entry "CREATE: c.go" must be`}},
		{"no path", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["CREATE  "]}`), []string{`file entry "CREATE  " must be`}},
		{"absolute path", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["CREATE /etc/passwd", "MODIFY C:/x.go"]}`),
			[]string{`"CREATE /etc/passwd" is an absolute path`, `"MODIFY C:/x.go" is an absolute path`}},
		{"dot dot", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["MODIFY src/../../x.go"]}`),
			[]string{`line 7: subtask st_1: file entry "MODIFY src/../../x.go" contains ".."`}},
		{"backslash", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["MODIFY src\\x.go"]}`), []string{"uses a backslash"}},
		{"home", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["MODIFY ~/x.go"]}`), []string{"starts with ~"}},
		{"workspace file", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["MODIFY .hivemind/tasks/x/state.json", "MODIFY .git/config"]}`),
			[]string{"is inside .hivemind/", "is inside .git/"}},
		{"project root", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "files": ["MODIFY ."]}`), []string{"names the project directory itself"}},
		{"unknown dependency", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "dependencies": ["st_9"], "files": ["CREATE a.go"]}`),
			[]string{`line 7: subtask st_1 depends on unknown subtask "st_9"`}},
		{"self dependency", plan(`{"id": "st_1", "description": "d", "checkpoint": 1, "dependencies": ["st_1"], "files": ["CREATE a.go"]}`),
			[]string{"line 7: subtask st_1 depends on itself"}},
		{"later checkpoint dependency", planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}], "subtasks": [
{"id": "a", "description": "d", "checkpoint": 1, "dependencies": ["b"], "files": ["CREATE a.go"]},
{"id": "b", "description": "d", "checkpoint": 2, "dependencies": [], "files": ["CREATE b.go"]}]}`),
			[]string{"line 7: subtask a (checkpoint 1) depends on b, which is in the later checkpoint 2"}},
		{"cycle", plan(
			`{"id": "a", "description": "d", "checkpoint": 1, "dependencies": ["c"], "files": ["CREATE a.go"]}`,
			`{"id": "b", "description": "d", "checkpoint": 1, "dependencies": ["a"], "files": ["CREATE b.go"]}`,
			`{"id": "c", "description": "d", "checkpoint": 1, "dependencies": ["b"], "files": ["CREATE c.go"]}`,
			`{"id": "d", "description": "d", "checkpoint": 1, "dependencies": ["d2"], "files": ["CREATE d.go"]}`,
			`{"id": "d2", "description": "d", "checkpoint": 1, "dependencies": ["d"], "files": ["CREATE e.go"]}`),
			[]string{"line 7: dependency cycle: a → c → b → a", "line 10: dependency cycle: d → d2 → d"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := ParsePlan(tc.md, "/proj")
			if len(probs) == 0 {
				t.Fatalf("no problems")
			}
			var got []string
			for _, p := range probs {
				if p.Msg == "" {
					t.Fatalf("empty message: %+v", p)
				}
				got = append(got, p.String())
			}
			i := 0
			for _, g := range got {
				if i < len(tc.want) && strings.Contains(g, tc.want[i]) {
					i++
				}
			}
			if i != len(tc.want) {
				t.Fatalf("want %q (in order) among:\n%s", tc.want, strings.Join(got, "\n"))
			}
		})
	}
}

func TestParsePlanReportsEveryProblem(t *testing.T) {
	_, probs := ParsePlan(plan(
		`{"id": "a", "description": "", "checkpoint": 5, "dependencies": ["zz"], "files": ["CREATE ../x", "WRITE y"]}`,
		`{"id": "a", "description": "d", "checkpoint": 1, "dependencies": [], "files": ["CREATE /abs"]}`), "/proj")
	if len(probs) < 7 {
		t.Fatalf("want every problem, got %d: %v", len(probs), probs)
	}
	for i := 1; i < len(probs); i++ {
		if probs[i].Line < probs[i-1].Line {
			t.Fatalf("not sorted by line: %v", probs)
		}
	}
}

func FuzzParsePlan(f *testing.F) {
	f.Add(validPlan)
	f.Add(plan(okSubtask))
	f.Add([]byte("```json\n{\"summary\": \"s\",\n \"checkpoints\": [\n```\n"))
	f.Add([]byte("~~~json\n{}\n~~~\n```json\n[]\n```"))
	f.Add(plan(`{"id": "a", "description": "d", "checkpoint": 1, "dependencies": ["a", "b"], "files": ["MODIFY ../../x"]}`,
		`{"id": "b", "description": "d", "checkpoint": 1, "dependencies": ["a"], "files": ["CREATE b"]}`))
	f.Fuzz(func(t *testing.T, md []byte) {
		p, probs := ParsePlan(md, "/proj")
		lines := strings.Count(string(md), "\n") + 2
		for _, pr := range probs {
			if strings.TrimSpace(pr.Msg) == "" {
				t.Fatalf("empty problem message: %+v", pr)
			}
			if pr.Line < 0 || pr.Line > lines {
				t.Fatalf("line %d out of range (%d lines): %+v", pr.Line, lines, pr)
			}
			if !utf8.ValidString(pr.String()) && utf8.Valid(md) {
				t.Fatalf("invalid utf-8 in message: %q", pr.String())
			}
		}
		if len(probs) > 0 {
			return
		}
		// A plan without problems holds every invariant the engine relies on.
		ids := map[string]bool{}
		cps := map[int]bool{}
		for _, c := range p.Checkpoints {
			cps[c.ID] = true
		}
		for _, s := range p.Subtasks {
			if s.ID == "" || ids[s.ID] || !cps[s.Checkpoint] || len(s.Files) == 0 {
				t.Fatalf("accepted an invalid subtask: %+v", s)
			}
			ids[s.ID] = true
			for _, f := range s.Files {
				if checkFileEntry(f, "/proj") != "" {
					t.Fatalf("accepted bad file %q", f)
				}
			}
		}
		for _, s := range p.Subtasks {
			for _, d := range s.Dependencies {
				if !ids[d] || d == s.ID {
					t.Fatalf("accepted bad dependency %q of %s", d, s.ID)
				}
			}
		}
		if len(findCycles(p.Subtasks, indexOf(p.Subtasks))) != 0 {
			t.Fatalf("accepted a cycle")
		}
	})
}

func indexOf(subs []vocab.Subtask) map[string]int {
	m := map[string]int{}
	for i, s := range subs {
		if _, ok := m[s.ID]; !ok {
			m[s.ID] = i
		}
	}
	return m
}

// Subtasks that may run at the same time (one checkpoint, no dependency
// path between them) and touch one file are refused, the conflict named;
// a dependency path (direct or not) or different checkpoints make it fine.
func TestPlanParallelFileConflicts(t *testing.T) {
	sub := func(id string, deps string, files ...string) string {
		return `{"id": "` + id + `", "description": "d", "checkpoint": 1, "dependencies": [` + deps + `], "files": ["` + strings.Join(files, `", "`) + `"]}`
	}
	twoCps := func(subtasks ...string) []byte {
		return planMD(`{"summary": "s", "checkpoints": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}], "subtasks": [
` + strings.Join(subtasks, ",\n") + `
]}`)
	}
	tests := []struct {
		name string
		md   []byte
		want string // "" = valid
	}{
		{"create and modify", plan(sub("st_1", "", "CREATE a.go"), sub("st_2", "", "MODIFY a.go")),
			"line 8: subtasks st_1 and st_2 (both in checkpoint 1, neither depending on the other) both touch a.go"},
		{"two modifies, spelled differently", plan(sub("st_1", "", "MODIFY pkg/a.go", "CREATE b.go"), sub("st_2", "", "MODIFY ./pkg/a.go")),
			"subtasks st_1 and st_2 (both in checkpoint 1, neither depending on the other) both touch pkg/a.go"},
		{"third of three", plan(sub("st_1", "", "CREATE a.go"), sub("st_2", `"st_1"`, "MODIFY a.go"), sub("st_3", "", "MODIFY a.go")),
			"subtasks st_1 and st_3"},
		{"direct dependency", plan(sub("st_1", "", "CREATE a.go"), sub("st_2", `"st_1"`, "MODIFY a.go")), ""},
		{"dependency path", plan(sub("st_1", "", "CREATE a.go"), sub("st_2", `"st_1"`, "CREATE b.go"), sub("st_3", `"st_2"`, "MODIFY a.go")), ""},
		{"later checkpoint", twoCps(sub("st_1", "", "CREATE a.go"), strings.Replace(sub("st_2", "", "MODIFY a.go"), `"checkpoint": 1`, `"checkpoint": 2`, 1)), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := ParsePlan(tc.md, "")
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("problems %q", got)
				}
				return
			}
			if !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Fatalf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
	// The Lead is told the conflict.
	sc := newScenario(t)
	sc.submit(2)
	eff := sc.do(TriggerCompleted{Path: "plan.md", Content: plan(sub("st_1", "", "CREATE a.go"), sub("st_2", "", "MODIFY a.go"))})
	sc.expect(vocab.PhasePlanning)
	if a := assignmentFor(t, eff, vocab.AgentLead); !strings.Contains(a.Instruction, "subtasks st_1 and st_2") || !strings.Contains(a.Instruction, "touch a.go") {
		t.Fatalf("lead not told the conflict: %s", a.Instruction)
	}
}
