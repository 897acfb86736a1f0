package script

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// The shared knowledge, as the scripted agents use it (Scenario.
// RecordDecisions): the Lead records one plan-level decision with its first
// plan, worker_1 records one choice the other workers must follow with its
// first subtask, and every worker's output lists the recorded decisions it
// read, so a test can see a decision reach a later worker. The knowledge
// files are found where a real agent finds them: in the assignment's reads.

// knowledgeDir is the shared knowledge directory named by the assignment's
// reads (the directory of decisions.json), or "".
func (c *ctx) knowledgeDir() string {
	for _, r := range c.a.Reads {
		if filepath.Base(r) == vocab.DecisionsFile && filepath.Base(filepath.Dir(r)) == vocab.KnowledgeDir {
			return filepath.Dir(r)
		}
	}
	return ""
}

// notesDir is this agent's notes directory, in its outbox.
func (c *ctx) notesDir() string {
	return c.taskFile(triggers.Outbox(c.a.Agent) + "/" + triggers.Knowledge.Dir())
}

// recordedBefore reports whether this agent already has a note of this
// task in its outbox or the archive.
func (c *ctx) recordedBefore(dir string) bool {
	task := filepath.Base(c.taskDir)
	if entries, err := os.ReadDir(c.notesDir()); err == nil && len(entries) > 0 {
		return true
	}
	prefix := "_" + string(c.a.Agent) + "-"
	if entries, err := os.ReadDir(filepath.Join(dir, vocab.KnowledgeArchiveDir)); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), task+"_") && strings.Contains(e.Name(), prefix) {
				return true
			}
		}
	}
	return false
}

// recordDecision writes one decision as a note <n>.md in this agent's
// outbox, n the first number free there and in the archive.
func (c *ctx) recordDecision(dir, title, rationale string) {
	notes := c.notesDir()
	archived, _ := os.ReadDir(filepath.Join(dir, vocab.KnowledgeArchiveDir))
	n := 1
	for ; ; n++ {
		name := strconv.Itoa(n) + ".md"
		if _, err := os.Stat(filepath.Join(notes, name)); err == nil {
			continue
		}
		taken := false
		for _, e := range archived {
			if strings.HasSuffix(e.Name(), "_"+string(c.a.Agent)+"-"+name) {
				taken = true
				break
			}
		}
		if !taken {
			break
		}
	}
	c.think("Recording a decision for the team: " + title)
	c.emit(filepath.Join(notes, strconv.Itoa(n)+".md"),
		"---\nkind: decision\ntitle: "+title+"\n---\n"+rationale+"\n")
}

// leadDecision records the plan-level decision with the first plan.
func (c *ctx) leadDecision() {
	dir := c.knowledgeDir()
	if !c.sc.RecordDecisions || dir == "" || c.recordedBefore(dir) {
		return
	}
	c.recordDecision(dir, "One owner per file while subtasks run in parallel",
		"Parallel subtasks never touch the same file. Shared helpers go into their own file, created by one subtask "+
			"that the others depend on; nobody edits a file another running subtask lists.")
}

// workerDecision: worker_1 records a convention the other workers must
// follow, with its first subtask.
func (c *ctx) workerDecision() {
	dir := c.knowledgeDir()
	if !c.sc.RecordDecisions || c.a.Agent != "worker_1" || dir == "" || c.recordedBefore(dir) {
		return
	}
	c.recordDecision(dir, "Errors are wrapped with the operation that failed",
		"Every returned error is wrapped as fmt.Errorf(\"<package>: <operation>: %w\", err), so callers can use "+
			"errors.Is/As and a log line says where it failed. New code in every subtask follows this.")
}

// followedDecisions is the output section listing the recorded decisions
// this worker read (empty when there are none).
func (c *ctx) followedDecisions() string {
	dir := c.knowledgeDir()
	if !c.sc.RecordDecisions || dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, vocab.DecisionsFile))
	if err != nil {
		return ""
	}
	var ds []workspace.Decision
	if json.Unmarshal(b, &ds) != nil || len(ds) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("\n## Shared decisions followed\n\n")
	for _, d := range ds {
		sb.WriteString("- " + d.ID + " " + d.Title + " (" + d.DecidedBy + ")\n")
	}
	return sb.String()
}
