// Package triggers is the one table of the files agents (and the user)
// write for the engine: their names, who writes each, the phases in which
// each means something, and the milestone recorded when one is taken.
//
// Every agent writes only under its own outbox, agents/<agent id>/ in the
// task directory (vocab.OutboxesDir): its trigger files at the outbox
// root, its friction files in friction/, its outputs and done markers in
// outputs/, its shared-knowledge notes in knowledge/. The engine knows who
// wrote a file from where it is (authorship by path) and takes a trigger
// only from the outbox of an agent whose role writes it. The plan-gate
// decision is the user's and lies at the task root.
//
// The engine's classification and dispatch (engine/flow), the trigger
// watcher's filter (engine), the role write policies (roles), the
// assignments' write lists and the sim agent all derive from Table. The
// package does no I/O.
package triggers

import (
	"path"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Kind names a trigger: its path inside the writer's outbox, with "*"
// standing for the item of a family (friction/*.md: any name).
type Kind string

// The trigger kinds.
const (
	Plan               Kind = "plan.md"
	PlanApproved       Kind = "plan-approved.md"
	PlanFeedback       Kind = "plan-feedback.md"
	Checkpoint         Kind = "checkpoint.md"
	CheckpointApproved Kind = "checkpoint-approved.md"
	CheckpointIssues   Kind = "checkpoint-issues.md"
	FrictionResolution Kind = "friction-resolution.md"
	Friction           Kind = "friction/*.md"
	// Done is a subtask's (or fix's) done marker; its item is the id.
	Done Kind = "outputs/*.done"
	// Output is a subtask's output, named by its done marker (not watched).
	Output Kind = "outputs/*.md"
	// Knowledge is a shared-knowledge note (vocab.ParseInboxEntry);
	// the knowledge watcher takes it, not the trigger watcher.
	Knowledge Kind = "knowledge/*.md"
	// PlanDecision is the user's answer at the plan gate, at the task root.
	PlanDecision Kind = "plan-decision.md"
)

// Spec is one row of the table.
type Spec struct {
	Kind Kind
	// Writers are the roles whose agents may write it (in their own
	// outbox). None: the user writes it, at the task root.
	Writers []vocab.Role
	// Phases are where it means something; nil: any phase of a live task.
	Phases []vocab.Phase
	// Milestone is the events.jsonl record of the trigger taken ("" when
	// the handler records several outcomes).
	Milestone vocab.RecordType
	// Watched: the trigger watcher reports it to the engine (false for
	// outputs, which a done marker names).
	Watched bool
}

var (
	lead     = []vocab.Role{vocab.RoleLead}
	reviewer = []vocab.Role{vocab.RoleReviewer}
	worker   = []vocab.Role{vocab.RoleWorker}
	// Outputs and done markers: workers for subtasks, the Lead for its
	// checkpoint-fix assignments.
	doers = []vocab.Role{vocab.RoleLead, vocab.RoleWorker}
	every = []vocab.Role{vocab.RoleLead, vocab.RoleReviewer, vocab.RoleWorker}
)

// table is the one list of trigger files.
var table = []Spec{
	{Kind: Plan, Writers: lead, Phases: []vocab.Phase{vocab.PhasePlanning, vocab.PhasePlanRevision}, Milestone: vocab.RecordPlanSubmitted, Watched: true},
	{Kind: PlanApproved, Writers: reviewer, Phases: []vocab.Phase{vocab.PhasePlanReview}, Milestone: vocab.RecordPlanApproved, Watched: true},
	{Kind: PlanFeedback, Writers: reviewer, Phases: []vocab.Phase{vocab.PhasePlanReview}, Milestone: vocab.RecordPlanFeedback, Watched: true},
	{Kind: Checkpoint, Writers: worker, Phases: []vocab.Phase{vocab.PhaseExecuting, vocab.PhaseCheckpointFix}, Milestone: vocab.RecordCheckpointReached, Watched: true},
	{Kind: CheckpointApproved, Writers: reviewer, Phases: []vocab.Phase{vocab.PhaseCheckpointReview}, Milestone: vocab.RecordCheckpointApproved, Watched: true},
	{Kind: CheckpointIssues, Writers: reviewer, Phases: []vocab.Phase{vocab.PhaseCheckpointReview}, Milestone: vocab.RecordCheckpointIssues, Watched: true},
	{Kind: FrictionResolution, Writers: lead, Phases: []vocab.Phase{vocab.PhaseFrictionResolution}, Milestone: vocab.RecordTriggerConsumed, Watched: true},
	{Kind: Friction, Writers: every, Milestone: vocab.RecordFrictionRecorded, Watched: true},
	{Kind: Done, Writers: doers, Milestone: vocab.RecordSubtaskDone, Watched: true},
	{Kind: Output, Writers: doers},
	{Kind: Knowledge, Writers: every},
	{Kind: PlanDecision, Phases: []vocab.Phase{vocab.PhasePlanApproval}, Milestone: vocab.RecordPlanDecision, Watched: true},
}

// Table returns the trigger table (a copy).
func Table() []Spec { return slices.Clone(table) }

// Lookup returns the row of k.
func Lookup(k Kind) (Spec, bool) {
	i := slices.IndexFunc(table, func(s Spec) bool { return s.Kind == k })
	if i < 0 {
		return Spec{}, false
	}
	return table[i], true
}

// ByUser reports a trigger the user writes (at the task root), not an agent.
func (s Spec) ByUser() bool { return len(s.Writers) == 0 }

// WrittenBy reports whether agents of role may write it.
func (s Spec) WrittenBy(role vocab.Role) bool { return slices.Contains(s.Writers, role) }

// Means reports whether the trigger means something in phase ph.
func (s Spec) Means(ph vocab.Phase) bool {
	if s.Phases == nil {
		return ph != vocab.PhaseIdle && ph != vocab.PhaseComplete && ph != vocab.PhaseCancelled
	}
	return slices.Contains(s.Phases, ph)
}

// Family reports a kind with an item (friction/*.md, outputs/*.done).
func (k Kind) Family() bool { return strings.Contains(string(k), "*") }

// Dir is the subdirectory of a family inside the outbox ("" otherwise).
func (k Kind) Dir() string {
	if !k.Family() {
		return ""
	}
	return path.Dir(string(k))
}

// Name is the file name of item in the family (the kind itself otherwise).
func (k Kind) Name(item string) string {
	if !k.Family() {
		return string(k)
	}
	return strings.Replace(string(k), "*", item, 1)
}

// Outbox is agent's outbox relative to the task directory (slash path).
func Outbox(agent vocab.AgentID) string { return vocab.OutboxesDir + "/" + string(agent) }

// Path is where the trigger k (with item, for a family) of agent lies,
// relative to the task directory (slash path). The user's triggers lie at
// the task root whatever agent is.
func Path(agent vocab.AgentID, k Kind, item string) string {
	if s, ok := Lookup(k); ok && s.ByUser() {
		return k.Name(item)
	}
	return Outbox(agent) + "/" + k.Name(item)
}

// Ref is a path of the table, taken apart.
type Ref struct {
	// Owner is the agent whose outbox holds it ("" for the user's).
	Owner vocab.AgentID
	Kind  Kind
	// Item is the "*" of a family (the friction name without .md, the
	// subtask id of a done marker).
	Item string
}

// Parse takes apart rel, a slash path relative to the task directory: a
// file of the table in an agent's outbox (agents/<id>/<kind>) or the
// user's at the root. ok is false for anything else, including names
// editors and atomic writers use for files not yet in place.
func Parse(rel string) (Ref, bool) {
	if TempName(path.Base(rel)) {
		return Ref{}, false
	}
	if !strings.Contains(rel, "/") {
		if s, ok := Lookup(Kind(rel)); ok && s.ByUser() {
			return Ref{Kind: s.Kind}, true
		}
		return Ref{}, false
	}
	top, rest, _ := strings.Cut(rel, "/")
	owner, inner, ok := strings.Cut(rest, "/")
	if top != vocab.OutboxesDir || !ok || !vocab.ValidID(owner) {
		return Ref{}, false
	}
	for _, s := range table {
		if s.ByUser() {
			continue
		}
		if !s.Kind.Family() {
			if inner == string(s.Kind) {
				return Ref{Owner: vocab.AgentID(owner), Kind: s.Kind}, true
			}
			continue
		}
		pre, suf, _ := strings.Cut(string(s.Kind), "*")
		if item, ok := strings.CutPrefix(inner, pre); ok {
			if item, ok = strings.CutSuffix(item, suf); ok && item != "" && !strings.Contains(item, "/") {
				return Ref{Owner: vocab.AgentID(owner), Kind: s.Kind, Item: item}, true
			}
		}
	}
	return Ref{}, false
}

// WatchedDir reports whether the trigger watcher watches the directory
// rel (slash, relative to the task dir): agents/, each outbox, and the
// outbox subdirectories of watched families.
func WatchedDir(rel string) bool {
	parts := strings.Split(rel, "/")
	if parts[0] != vocab.OutboxesDir || len(parts) > 3 {
		return false
	}
	if len(parts) >= 2 && (!vocab.ValidID(parts[1]) || TempName(parts[1])) {
		return false
	}
	if len(parts) < 3 {
		return true
	}
	for _, s := range table {
		if s.Watched && s.Kind.Dir() == parts[2] {
			return true
		}
	}
	return false
}

// TempName reports names editors and atomic writers use for files not yet
// in place.
func TempName(base string) bool {
	return strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".tmp") ||
		strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp")
}

// OwnedBy lists the kinds agents of role write, in table order.
func OwnedBy(role vocab.Role) []Kind {
	var out []Kind
	for _, s := range table {
		if s.WrittenBy(role) {
			out = append(out, s.Kind)
		}
	}
	return out
}
