package flow

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

const (
	validDecision = "---\nkind: decision\ntitle: Use SQLite\n---\nOne file, no server; everyone uses database/sql.\n"
	validTerm     = "---\nkind: term\nterm: hive\ndefinition: the agent team\n---\n"
)

// submitContext steps a ContextSubmitted stamped with the scenario clock.
func (sc *scenario) submitContext(p, content string) []Effect {
	sc.t.Helper()
	at := sc.tick()
	agent, _ := noteAuthor(p, "")
	e := KnowledgeSubmitted{Path: p, Content: []byte(content), Agent: agent, ModTime: at, When: When{At: at}}
	sc.log = append(sc.log, e)
	sc.s, sc.eff = step(sc.t, sc.m, sc.s, e)
	return sc.eff
}

var contextReads = []string{"/ws/context/decisions.json", "/ws/context/constraints.json", "/ws/context/glossary.json"}

// TestContextSubmittedTable: what one inbox file does in a running task.
func TestContextSubmittedTable(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		content   string
		wantEvent string
		wantMerge *vocab.InboxEntry
		wantTo    string // archive name
		wantNote  string // substring of the author's note
	}{
		{name: "valid decision", path: "agents/worker_1/knowledge/1.md", content: validDecision, wantEvent: "context_submitted",
			wantMerge: &vocab.InboxEntry{Kind: "decision", Title: "Use SQLite", Text: "One file, no server; everyone uses database/sql."},
			wantTo:    "archive/t1_c1_worker_1-1.md", wantNote: `Your decision "Use SQLite" (agents/worker_1/knowledge/1.md) was recorded in context/decisions.json`},
		{name: "valid term", path: "agents/lead/knowledge/3.md", content: validTerm, wantEvent: "context_submitted",
			wantMerge: &vocab.InboxEntry{Kind: "term", Title: "hive", Text: "the agent team"},
			wantTo:    "archive/t1_c1_lead-3.md", wantNote: "recorded in context/glossary.json"},
		{name: "invalid kind", path: "agents/worker_2/knowledge/1.md", content: "---\nkind: rule\ntitle: x\n---\ny\n", wantEvent: "context_rejected",
			wantTo: "archive/t1_c1-invalid_worker_2-1.md", wantNote: `NOT recorded (moved to context/archive/t1_c1-invalid_worker_2-1.md): unknown kind "rule"`},
		{name: "no front matter", path: "agents/reviewer/knowledge/1.md", content: "we decided to use SQLite", wantEvent: "context_rejected",
			wantTo: "archive/t1_c1-invalid_reviewer-1.md", wantNote: "must start with a front matter"},
		{name: "named after another agent", path: "agents/worker_1/knowledge/lead-1.md", content: validDecision, wantEvent: "context_submitted",
			wantMerge: &vocab.InboxEntry{Kind: "decision", Title: "Use SQLite", Text: "One file, no server; everyone uses database/sql."},
			wantTo:    "archive/t1_c1_worker_1-lead-1.md", wantNote: `(agents/worker_1/knowledge/lead-1.md) was recorded`},
		{name: "not in an outbox", path: "context/inbox/lead-1.md", content: validDecision, wantEvent: "context_rejected",
			wantTo: "archive/t1_c1-invalid_lead-1.md"},
		{name: "not a note", path: "agents/lead/knowledge/sub/1.md", content: validDecision, wantEvent: "context_rejected",
			wantTo: "archive/t1_c1-invalid_1.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScenario(t)
			sc.toExecuting()
			eff := sc.submitContext(tt.path, tt.content)
			if !hasEvent(eff, tt.wantEvent) {
				t.Fatalf("no %s event: %s", tt.wantEvent, describe(eff))
			}
			merges := effectsOf[MergeKnowledge](eff)
			archives := effectsOf[ArchiveKnowledge](eff)
			if tt.wantMerge != nil {
				if len(merges) != 1 || len(archives) != 0 {
					t.Fatalf("want one MergeContext: %s", describe(eff))
				}
				m := merges[0]
				if m.Entry != *tt.wantMerge || m.From != tt.path || m.To != tt.wantTo || m.TaskID != "t1" || m.Source == "" {
					t.Errorf("merge %+v", m)
				}
			} else {
				if len(merges) != 0 || len(archives) != 1 || archives[0].From != tt.path || archives[0].To != tt.wantTo {
					t.Fatalf("want one ArchiveContext to %s: %s", tt.wantTo, describe(eff))
				}
			}
			// Nobody is interrupted: no injection for the entry.
			if n := len(effectsOf[Inject](eff)); n != 0 {
				t.Errorf("%d injections", n)
			}
			author, _ := noteAuthor(tt.path, "")
			notes := sc.s.KnowledgeNotes[author]
			if tt.wantNote != "" && (len(notes) != 1 || !strings.Contains(notes[0], tt.wantNote)) {
				t.Errorf("notes of %s: %q, want %q", author, notes, tt.wantNote)
			}
			if tt.wantNote == "" && len(sc.s.KnowledgeNotes) != 0 {
				t.Errorf("notes for an unknown author: %v", sc.s.KnowledgeNotes)
			}
			// The same file again (a rescan): the idempotent merge or the
			// archive is repeated, nothing else.
			e := sc.log[len(sc.log)-1]
			n2, eff2 := step(t, sc.m, sc.s, e)
			if !hasEvent(eff2, "context_duplicate") || len(effectsOf[MergeKnowledge](eff2))+len(effectsOf[ArchiveKnowledge](eff2)) != 1 ||
				len(effectsOf[WriteState](eff2)) != 0 || !reflect.DeepEqual(n2, sc.s) {
				t.Errorf("duplicate: %s", describe(eff2))
			}
		})
	}
}

// TestContextNoteInNextAssignment: the acknowledgement travels in the
// author's next assignment (and only once); every assignment reads the
// context files.
func TestContextNoteInNextAssignment(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	sc.submitContext("agents/worker_1/knowledge/1.md", validDecision)
	sc.submitContext("agents/worker_1/knowledge/2.md", "---\nkind: decision\n---\n")
	// worker_1 is busy with st_1: nothing is sent to it.
	if len(effectsOf[Inject](sc.eff)) != 0 {
		t.Fatalf("busy author interrupted: %s", describe(sc.eff))
	}
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	// st_2 done: checkpoint 1 is reached; the idle workers are not told
	// (nothing for them to do), so the notes wait for worker_1's next
	// assignment.
	eff := sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	if in := injectedTo(eff); slices.Contains(in, "worker_1") || slices.Contains(in, "worker_2") {
		t.Fatalf("idle workers sent a message at the checkpoint: %s", describe(eff))
	}
	sc.trig("checkpoint-approved.md", "ok")
	w := assignmentFor(t, sc.eff, "worker_1")
	if !strings.Contains(w.Instruction, `Your decision "Use SQLite"`) || !strings.Contains(w.Instruction, "agents/worker_1/knowledge/2.md was NOT recorded") {
		t.Errorf("next assignment lacks the notes:\n%s", w.Instruction)
	}
	for _, r := range contextReads {
		if !slices.Contains(w.Reads, r) {
			t.Errorf("assignment's reads lack %s: %v", r, w.Reads)
		}
	}
	if len(sc.s.KnowledgeNotes) != 0 {
		t.Errorf("notes kept after delivery: %v", sc.s.KnowledgeNotes)
	}
	// The writing assignment explains how to add an entry.
	if !strings.Contains(w.Instruction, "/ws/tasks/t1/agents/worker_1/knowledge/<n>.md") {
		t.Errorf("next work assignment:\n%s", w.Instruction)
	}
}

// TestEveryAssignmentReadsContext: along a whole run, every assignment
// (work or notice) lists the three context files.
func TestEveryAssignmentReadsContext(t *testing.T) {
	sc := newScenario(t)
	var all []vocab.Assignment
	collect := func() {
		for _, w := range effectsOf[WriteAssignment](sc.eff) {
			all = append(all, w.Assignment)
		}
	}
	sc.submit(2)
	collect()
	sc.do(TriggerCompleted{Path: "plan.md", Content: validPlan, Agent: "lead"})
	collect()
	sc.trig("plan-approved.md", "LGTM")
	collect()
	sc.do(SubtaskDone{Subtask: "st_1", Agent: "worker_1", OK: true})
	collect()
	sc.do(SubtaskDone{Subtask: "st_2", Agent: "worker_2", OK: true})
	collect()
	if len(all) < 5 {
		t.Fatalf("only %d assignments", len(all))
	}
	for _, a := range all {
		for _, r := range contextReads {
			if !slices.Contains(a.Reads, r) {
				t.Errorf("%s #%d (%s) reads lack %s", a.Agent, a.Seq, a.State, r)
			}
		}
	}
}

// TestContextSubmittedInEveryPhase: merged in every phase of a loaded task,
// held while paused (handled on resume), left alone without a task.
func TestContextSubmittedInEveryPhase(t *testing.T) {
	for _, p := range allPhases {
		t.Run(string(p), func(t *testing.T) {
			s := stateIn(t, p)
			e := KnowledgeSubmitted{Path: "agents/lead/knowledge/1.md", Content: []byte(validDecision), Agent: "lead", ModTime: t0, When: When{At: t0.Add(time.Hour)}}
			n, eff := step(t, testMachine, s, e)
			switch {
			case s.TaskID == "":
				if !hasEvent(eff, "context_ignored") || len(effectsOf[MergeKnowledge](eff)) != 0 || len(effectsOf[ArchiveKnowledge](eff)) != 0 {
					t.Fatalf("no task: %s", describe(eff))
				}
			case p == vocab.PhasePaused:
				if !hasEvent(eff, "event_deferred") || len(effectsOf[MergeKnowledge](eff)) != 0 || len(n.Deferred) != 1 {
					t.Fatalf("paused: %s", describe(eff))
				}
				n2, eff2 := step(t, testMachine, n, KeyPressed{Action: KeyResume, When: When{At: t0.Add(2 * time.Hour)}})
				if len(effectsOf[MergeKnowledge](eff2)) != 1 || len(n2.Deferred) != 0 {
					t.Fatalf("resume: %s", describe(eff2))
				}
			default:
				if len(effectsOf[MergeKnowledge](eff)) != 1 || n.Phase != s.Phase {
					t.Fatalf("%s: %s", p, describe(eff))
				}
			}
		})
	}
}

func TestTaskConstraintsEnterRegistry(t *testing.T) {
	sc := newScenario(t)
	long := "Keep the public API backwards compatible " + strings.Repeat("and documented ", 10)
	eff := sc.do(TaskSubmitted{Task: vocab.Task{ID: "t1", Project: testProject, Description: "do it",
		Constraints: []string{"No new dependencies", " ", long}}, TaskDir: testTaskDir})
	ms := effectsOf[MergeKnowledge](eff)
	if len(ms) != 2 {
		t.Fatalf("merges: %s", describe(eff))
	}
	if ms[0].Entry.Kind != vocab.KindConstraint || ms[0].Entry.Title != "No new dependencies" || ms[0].Agent != "user" ||
		ms[0].From != "" || ms[0].Source != "task:t1:constraint:1" {
		t.Errorf("first: %+v", ms[0])
	}
	if r := []rune(ms[1].Entry.Title); len(r) != 81 || ms[1].Entry.Text != strings.TrimSpace(long) || ms[1].Source != "task:t1:constraint:3" {
		t.Errorf("second: %+v", ms[1])
	}
}

func TestContextEventCodec(t *testing.T) {
	e := KnowledgeSubmitted{Path: "agents/lead/knowledge/1.md", Content: []byte(validDecision), Agent: "lead", ModTime: t0, When: When{At: t0.Add(time.Second)}}
	raw, err := MarshalEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalEvent(raw)
	if err != nil || !reflect.DeepEqual(back, e) {
		t.Fatalf("MarshalEvent round trip: %+v, %v", back, err)
	}
	rec := EncodeEvent(e, "t1")
	if rec.Type != "input.context_submitted" || rec.Agent != "lead" {
		t.Fatalf("record %+v", rec)
	}
	dec, ok, err := DecodeEvent(rec)
	if err != nil || !ok || !reflect.DeepEqual(dec, e) {
		t.Fatalf("DecodeEvent round trip: %+v, %v, %v", dec, ok, err)
	}
}

// An agent's shared-knowledge entries past MaxNotesPerTask are refused
// (archived, not merged), and the agent is told once.
func TestKnowledgeFloodCapped(t *testing.T) {
	sc := newScenario(t)
	sc.toExecuting()
	merged := 0
	for i := range MaxNotesPerTask + 30 {
		eff := sc.do(KnowledgeSubmitted{Path: fmt.Sprintf("agents/worker_1/knowledge/%d.md", i+1), Agent: "worker_1",
			Content: []byte(fmt.Sprintf("---\nkind: term\nterm: t%d\n---\nx\n", i))})
		merged += len(effectsOf[MergeKnowledge](eff))
	}
	if merged != MaxNotesPerTask {
		t.Fatalf("%d merged, want %d", merged, MaxNotesPerTask)
	}
	told := 0
	for _, n := range sc.s.KnowledgeNotes["worker_1"] {
		if strings.Contains(n, "NOT recorded") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("told %d times: %q", told, sc.s.KnowledgeNotes["worker_1"])
	}
}
