package flow

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// The shared knowledge (decisions, constraints, glossary) lives at the
// workspace root, <root>/context/, and outlives tasks. Agents propose
// entries by writing notes into their own outbox, agents/<id>/knowledge/
// *.md in the task dir (triggers.Knowledge; authorship by path); the
// runner's notes watcher turns a complete note into KnowledgeSubmitted,
// Step validates it
// (a pure parse) and asks the runner to merge it (MergeKnowledge) and archive
// it, or, when invalid, only to archive it (ArchiveKnowledge).
//
// Acknowledgements never interrupt the author: they are recorded in the
// event log (context_submitted / context_rejected, and the runner's
// context_merged: the event names keep the directory's name) and kept in
// State.KnowledgeNotes until the author's next
// assignment, whose instruction carries them. Like trigger files, notes
// are held (deferred) while paused, and ignored (left in the outbox for
// the next run) when no task is loaded.

// MergeKnowledge asks the runner to merge a validated entry into the shared
// knowledge and then archive its note (From, relative to the task dir →
// To, relative to the knowledge dir, context/). Source identifies the file
// instance, so a merge repeated after a crash adds nothing. A failed merge
// leaves the note in the outbox.
type MergeKnowledge struct {
	Entry  vocab.InboxEntry
	Agent  vocab.AgentID
	TaskID string
	Source string
	At     time.Time
	From   string // "" for entries that have no note (task constraints)
	To     string
}

// ArchiveKnowledge asks the runner to move a rejected note (From, relative
// to the task dir) to the archive (To, relative to the knowledge dir).
type ArchiveKnowledge struct {
	From string
	To   string
}

func (MergeKnowledge) isEffect()   {}
func (ArchiveKnowledge) isEffect() {}

// MaxNotesPerTask bounds the shared-knowledge entries one agent records in
// a task: past it, entries are refused and the agent is told once.
const MaxNotesPerTask = 50

// maxKnowledgeNotes bounds the acknowledgements kept per agent.
const maxKnowledgeNotes = 10

// knowledgeRoot returns the workspace root of the state's task dir
// (<root>/tasks/<id>), or "" when the task dir does not have that shape.
func knowledgeRoot(taskDir string) string {
	if taskDir == "" || filepath.Base(filepath.Dir(taskDir)) != vocab.TasksDir {
		return ""
	}
	return filepath.Dir(filepath.Dir(taskDir))
}

// knowledgeFor returns, for an assignment, the shared knowledge files every
// agent reads and the note on how to add to them ("" when unknown).
func (st *stepper) knowledgeFor(agent vocab.AgentID) (reads []string, note string) {
	root := knowledgeRoot(st.s.TaskDir)
	if root == "" {
		return nil, ""
	}
	notes := filepath.Join(st.s.TaskDir, filepath.FromSlash(triggers.Outbox(agent)), triggers.Knowledge.Dir())
	note = fmt.Sprintf("Shared knowledge: the decisions, constraints and glossary in your reads (context/*.json) bind the whole team; follow them. "+
		"To record a choice others must follow, write a new note %s/<n>.md (n = 1, 2, …) with a front matter "+
		"(---, kind: decision|constraint|term, title|name|term: <one line>, ---) and the rationale, description or definition as the text.",
		notes)
	return vocab.KnowledgeFiles(root), note
}

// takeKnowledgeNotes returns and clears the acknowledgements kept for agent.
func (st *stepper) takeKnowledgeNotes(agent vocab.AgentID) []string {
	notes := st.s.KnowledgeNotes[agent]
	if len(notes) == 0 {
		return nil
	}
	delete(st.s.KnowledgeNotes, agent)
	if len(st.s.KnowledgeNotes) == 0 {
		st.s.KnowledgeNotes = nil
	}
	return notes
}

// knowledgeNote keeps an acknowledgement for the author's next assignment.
func (st *stepper) knowledgeNote(agent vocab.AgentID, note string) {
	if _, ok := st.s.Agents[agent]; !ok {
		return // not an agent of this task (the user, a stray file): nobody to tell
	}
	if st.s.KnowledgeNotes == nil {
		st.s.KnowledgeNotes = map[vocab.AgentID][]string{}
	}
	notes := append(st.s.KnowledgeNotes[agent], note)
	if len(notes) > maxKnowledgeNotes {
		notes = notes[len(notes)-maxKnowledgeNotes:]
	}
	st.s.KnowledgeNotes[agent] = notes
}

// knowledgeFile names the file an entry kind goes to.
func knowledgeFile(kind string) string {
	switch kind {
	case vocab.KindDecision:
		return vocab.DecisionsFile
	case vocab.KindConstraint:
		return vocab.ConstraintsFile
	}
	return vocab.GlossaryFile
}

// noteAuthor is the author of a note at p (relative to the task dir): the
// owner of the outbox it lies in; named is false when p is no note.
func noteAuthor(p string, fallback vocab.AgentID) (author vocab.AgentID, named bool) {
	if ref, ok := triggers.Parse(p); ok && ref.Kind == triggers.Knowledge {
		return ref.Owner, true
	}
	return fallback, false
}

// knowledgeSubmitted validates a note and asks for its merge (or, if
// invalid, its archive and a message to the author).
func (st *stepper) knowledgeSubmitted(e KnowledgeSubmitted) {
	s := st.s
	p := cleanPath(e.Path)
	author, named := noteAuthor(p, e.Agent)
	key := TriggerKey(p, e.Content, e.ModTime)
	entry, err := vocab.ParseInboxEntry(e.Content)
	if err == nil && !named {
		err = fmt.Errorf("a note must be %s in your outbox, got %s", triggers.Knowledge, p)
	}
	if s.Consumed[key] {
		// Seen before (a rescan after a restart): repeat the idempotent
		// merge and the archive, in case the crash came between them.
		to := s.Archives[key]
		st.emit(vocab.RecordContextDuplicate, author, map[string]any{"path": p, "archived": to})
		if to == "" {
			return
		}
		if err != nil {
			st.do(ArchiveKnowledge{From: p, To: to})
			return
		}
		st.do(MergeKnowledge{Entry: entry, Agent: author, TaskID: s.TaskID, Source: key, At: e.ModTime.UTC(), From: p, To: to})
		return
	}
	v := st.version("context")
	// Archived as <author>-<name>: notes of two outboxes may share a name.
	base := path.Base(p)
	if named {
		base = string(author) + "-" + base
	}
	if s.Consumed == nil {
		s.Consumed = map[string]bool{}
	}
	if s.Archives == nil {
		s.Archives = map[string]string{}
	}
	s.Consumed[key] = true
	ag, isAgent := s.Agents[author]
	if err == nil && isAgent && ag.Notes >= MaxNotesPerTask {
		// A flood: refused, the author told once.
		to := fmt.Sprintf("%s/%s_c%d-refused_%s", vocab.KnowledgeArchiveDir, s.TaskID, v, base)
		s.Archives[key] = to
		st.do(ArchiveKnowledge{From: p, To: to})
		st.emit(vocab.RecordContextRejected, author, map[string]any{"path": p, "problem": "too many entries", "archived": to})
		if !ag.NotesCapped {
			ag.NotesCapped = true
			s.Agents[author] = ag
			st.knowledgeNote(author, fmt.Sprintf("You wrote more than %d shared-knowledge entries in this task: the rest are NOT recorded. "+
				"Record only choices other agents must follow.", MaxNotesPerTask))
		}
		return
	}
	if err == nil && isAgent {
		ag.Notes++
		s.Agents[author] = ag
	}
	if err != nil {
		problem := strings.TrimPrefix(err.Error(), vocab.ErrBadInbox.Error()+": ")
		to := fmt.Sprintf("%s/%s_c%d-invalid_%s", vocab.KnowledgeArchiveDir, s.TaskID, v, base)
		s.Archives[key] = to
		st.do(ArchiveKnowledge{From: p, To: to})
		st.emit(vocab.RecordContextRejected, author, map[string]any{"path": p, "problem": problem, "archived": to})
		st.knowledgeNote(author, fmt.Sprintf("Your shared-knowledge entry %s was NOT recorded (moved to %s/%s): %s. "+
			"Write a corrected entry as a new note in %s/%s/.", p, vocab.KnowledgeDir, to, problem,
			triggers.Outbox(author), triggers.Knowledge.Dir()))
		return
	}
	to := fmt.Sprintf("%s/%s_c%d_%s", vocab.KnowledgeArchiveDir, s.TaskID, v, base)
	s.Archives[key] = to
	at := e.ModTime.UTC()
	if e.ModTime.IsZero() {
		at = st.at.UTC()
	}
	st.do(MergeKnowledge{Entry: entry, Agent: author, TaskID: s.TaskID, Source: key, At: at, From: p, To: to})
	st.emit(vocab.RecordContextSubmitted, author, map[string]any{"path": p, "kind": entry.Kind, "title": entry.Title, "archived": to})
	st.knowledgeNote(author, fmt.Sprintf("Your %s %q (%s) was recorded in %s/%s.", entry.Kind, entry.Title,
		p, vocab.KnowledgeDir, knowledgeFile(entry.Kind)))
}

// taskConstraints enters the task's own constraints into the shared
// constraints registry (idempotent per task and constraint).
func (st *stepper) taskConstraints(t vocab.Task) {
	by := t.SubmittedBy
	if by == "" || by == "cli" {
		by = "user"
	}
	for i, c := range t.Constraints {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		name := firstLine(c)
		if r := []rune(name); len(r) > 80 {
			name = string(r[:80]) + "…"
		}
		st.do(MergeKnowledge{Entry: vocab.InboxEntry{Kind: vocab.KindConstraint, Title: name, Text: c},
			Agent: vocab.AgentID(by), TaskID: t.ID, Source: fmt.Sprintf("task:%s:constraint:%d", t.ID, i+1), At: st.at.UTC()})
	}
}
