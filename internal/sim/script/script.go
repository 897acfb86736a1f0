// Package script is the "model" shared by the built-in sim agent and the
// fake Messages API: given an assignment, it decides which files to write and
// what they contain. It has no dependency on the agent layer, so test helpers
// anywhere in the module can import it without import cycles.
package script

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// FileWrite is one file the agent writes, in order. Path is absolute.
type FileWrite struct {
	Path    string
	Content string
	// Forbidden marks a write the role must not make (the ForbiddenWrite
	// scenario): a real agent's attempt is expected to be denied by the
	// PreToolUse hook; the sim agent shows the attempt and skips it.
	Forbidden bool
	// Command, when set, is a shell command the agent runs instead of
	// writing a file (Path then only names the step; the HostileShell
	// scenario). The sim agent skips it.
	Command string
}

// Narration is what the agent "says" while it works.
type Narration struct {
	// Thoughts are short lines shown before the tool calls.
	Thoughts []string
	// Summary is the final message of the turn.
	Summary string
}

// Scenario configures the script. Start from DefaultScenario: the zero value
// means "never reject, never report issues".
type Scenario struct {
	// RejectPlans is how many plan reviews end in plan-feedback.md before
	// the Reviewer approves (default 1).
	RejectPlans int
	// CheckpointIssues is how many checkpoint reviews (counted over the
	// whole task) end in checkpoint-issues.md before approvals (default 1).
	CheckpointIssues int
	// WriteFriction makes worker_1 log one friction file during execution.
	WriteFriction bool
	// ForbiddenWrite makes the Reviewer try to write a project source file
	// in its first plan review.
	ForbiddenWrite bool
	// SharedNotes makes every worker subtask also append a line to
	// NOTES.md in the project, so workers in separate git worktrees
	// change the same file and their merge conflicts (the worktree tests).
	SharedNotes bool
	// RecordDecisions makes the Lead record one decision in the shared
	// knowledge with its first plan and worker_1 one with its first subtask;
	// workers' outputs list the recorded decisions they read (knowledge.go).
	RecordDecisions bool
	// HostileShell makes worker_1 start its first subtask with a shell
	// command (hostile.go) that tries to write state.json, worker_2's done
	// marker and the Reviewer's checkpoint-approved.md, printing for each
	// whether the write succeeded.
	HostileShell bool
	// Pace is the delay per output line (sim agent) or per streamed chunk
	// (fake API).
	Pace time.Duration
	// Now returns the time for done markers (default time.Now).
	Now func() time.Time
}

// DefaultScenario rejects the first plan and reports checkpoint issues once.
func DefaultScenario() Scenario {
	return Scenario{RejectPlans: 1, CheckpointIssues: 1}
}

// Respond runs the default scenario.
func Respond(a vocab.Assignment, taskDir, project string, rnd *rand.Rand) ([]FileWrite, Narration) {
	return DefaultScenario().Respond(a, taskDir, project, rnd)
}

// Respond decides what an agent writes for assignment a. taskDir is the task
// directory (.hivemind/tasks/<id>), project the project root. Writes are
// limited to the assignment's writes, the subtask's files, the done marker
// (and, with WriteFriction, one file in friction/). The done marker, when
// there is one, is always last. Read-only assignments write nothing.
func (s Scenario) Respond(a vocab.Assignment, taskDir, project string, rnd *rand.Rand) ([]FileWrite, Narration) {
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(1, 2))
	}
	c := &ctx{sc: s, a: a, taskDir: taskDir, project: project, rnd: rnd}
	c.normalize()
	if a.ReadOnly || a.State.Terminal() {
		return nil, Narration{
			Thoughts: []string{"Read the assignment: " + oneLine(a.Instruction)},
			Summary:  "Noted. Nothing for me to write in this phase; I'll wait for the next assignment.",
		}
	}
	switch a.Role {
	case vocab.RoleLead:
		c.lead()
	case vocab.RoleReviewer:
		c.reviewer()
	case vocab.RoleWorker:
		c.worker()
	default:
		c.generic()
	}
	if c.summary == "" {
		c.summary = "Done."
	}
	return c.out, Narration{Thoughts: c.thoughts, Summary: c.summary}
}

type ctx struct {
	sc       Scenario
	a        vocab.Assignment
	taskDir  string
	project  string
	rnd      *rand.Rand
	writes   []string // absolute, cleaned
	out      []FileWrite
	thoughts []string
	summary  string
}

func (c *ctx) normalize() {
	c.taskDir = filepath.Clean(c.taskDir)
	if c.project == "" {
		c.project = projectFromTaskDir(c.taskDir)
	}
	c.project = filepath.Clean(c.project)
	for _, w := range c.a.Writes {
		if w == "" {
			continue
		}
		if !filepath.IsAbs(w) {
			w = filepath.Join(c.taskDir, w)
		}
		c.writes = append(c.writes, filepath.Clean(w))
	}
	if c.a.DoneMarker != "" && !filepath.IsAbs(c.a.DoneMarker) {
		c.a.DoneMarker = filepath.Join(c.taskDir, c.a.DoneMarker)
	}
}

// projectFromTaskDir guesses the project from <project>/.hivemind/tasks/<id>.
func projectFromTaskDir(taskDir string) string {
	p := filepath.Dir(filepath.Dir(filepath.Dir(taskDir)))
	if filepath.Base(filepath.Dir(taskDir)) == "tasks" {
		return p
	}
	wd, _ := os.Getwd()
	return wd
}

func (c *ctx) think(format string) { c.thoughts = append(c.thoughts, format) }

func (c *ctx) emit(path, content string) {
	c.out = append(c.out, FileWrite{Path: path, Content: content})
}

// pick returns the listed write whose name (relative to the task dir, or
// base name) is name, or "".
func (c *ctx) pick(name string) string {
	for _, w := range c.writes {
		if rel, err := filepath.Rel(c.taskDir, w); err == nil && filepath.ToSlash(rel) == name {
			return w
		}
	}
	for _, w := range c.writes {
		if filepath.Base(w) == filepath.Base(name) {
			return w
		}
	}
	return ""
}

// inProject reports whether p lies inside the project and outside the task
// directory's workspace.
func (c *ctx) inProject(p string) bool {
	rel, err := filepath.Rel(c.project, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	first := strings.Split(filepath.ToSlash(rel), "/")[0]
	if first == ".hivemind" || first == ".git" {
		return false
	}
	if r2, err := filepath.Rel(c.taskDir, p); err == nil && !strings.HasPrefix(r2, "..") {
		return false
	}
	return true
}

// projectPath resolves a plan path ("src/a.go") inside the project, or "".
func (c *ctx) projectPath(rel string) string {
	rel = strings.TrimSpace(rel)
	if rel == "" || filepath.IsAbs(rel) {
		return ""
	}
	p := filepath.Join(c.project, filepath.FromSlash(rel))
	if !c.inProject(p) {
		return ""
	}
	return p
}

func (c *ctx) rel(p string) string {
	if r, err := filepath.Rel(c.project, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// ---- reading the task directory ----

func (c *ctx) taskText() string {
	// task.json holds the user's words; task.md wraps them in headings.
	var t vocab.Task
	if b, err := os.ReadFile(filepath.Join(c.taskDir, "task.json")); err == nil && json.Unmarshal(b, &t) == nil && strings.TrimSpace(t.Description) != "" {
		return strings.TrimSpace(t.Description)
	}
	if b, err := os.ReadFile(filepath.Join(c.taskDir, "task.md")); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "Improve the project"
}

// taskTitle is the first meaningful line of the task text, without markdown.
func (c *ctx) taskTitle() string {
	for _, l := range strings.Split(c.taskText(), "\n") {
		l = strings.TrimSpace(strings.TrimLeft(l, "#>*- "))
		if l == "" || strings.EqualFold(l, "task") || strings.HasPrefix(strings.ToLower(l), "task ") && !strings.Contains(l[5:], " ") {
			continue
		}
		if len(l) > 100 {
			l = l[:100]
		}
		return l
	}
	return "Improve the project"
}

// AssignmentRE finds the assignment file named in an injected
// `[HIVEMIND]` line (the team contract's regex).
var AssignmentRE = regexp.MustCompile(`\S*assignments/[^\s]+\.json`)

var (
	planFeedbackRE = regexp.MustCompile(`(?i)^plan.*feedback.*\.md$`)
	planApprovedRE = regexp.MustCompile(`(?i)^plan.*approved.*\.md$`)
	cpIssuesRE     = regexp.MustCompile(`(?i)^checkpoint.*issues.*\.md$`)
	planArchiveRE  = regexp.MustCompile(`(?i)^plan[-_]?v?(\d+)\.md$`)
	versionRE      = regexp.MustCompile(`v(\d+)`)
	checkpointNRE  = regexp.MustCompile(`(?i)checkpoint[\s_#-]*(\d+)`)
)

// reviewFiles lists the files under reviews/ (recursively) whose base name
// matches re, sorted by version number then name.
func (c *ctx) reviewFiles(re *regexp.Regexp) []string {
	var found []string
	root := filepath.Join(c.taskDir, "reviews")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && re.MatchString(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	sort.SliceStable(found, func(i, j int) bool {
		vi, vj := version(found[i]), version(found[j])
		if vi != vj {
			return vi < vj
		}
		return found[i] < found[j]
	})
	return found
}

func version(p string) int {
	m := versionRE.FindAllStringSubmatch(filepath.Base(p), -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

func (c *ctx) state() vocab.State {
	s, _ := workspace.ReadStateFile(c.taskDir)
	return s
}

// currentCheckpoint is the checkpoint under review or being fixed.
func (c *ctx) currentCheckpoint() int {
	if m := checkpointNRE.FindStringSubmatch(c.a.Instruction); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
	}
	if n := c.state().CurrentCheckpoint; n > 0 {
		return n
	}
	return 1
}

// plan finds the current plan: plan.md in the task dir, else the newest
// archived plan, else state.json's plan.
func (c *ctx) plan() *vocab.Plan {
	cands := []string{c.taskFile(triggers.Path(vocab.AgentLead, triggers.Plan, ""))}
	arch := c.reviewFiles(planArchiveRE)
	for i := len(arch) - 1; i >= 0; i-- {
		cands = append(cands, arch[i])
	}
	for _, p := range cands {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if pl, err := ParsePlan(string(b)); err == nil {
			return pl
		}
	}
	return c.state().Plan
}

var jsonBlockRE = regexp.MustCompile("(?s)```json\\s*\n(.*?)\n\\s*```")

// ParsePlan extracts and decodes the fenced json block of a plan.md.
func ParsePlan(md string) (*vocab.Plan, error) {
	m := jsonBlockRE.FindStringSubmatch(md)
	if m == nil {
		return nil, errNoJSON
	}
	var p vocab.Plan
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

type planError string

func (e planError) Error() string { return string(e) }

const errNoJSON = planError("plan: no ```json block")

// readFirst returns the content of the first existing file.
func readFirst(paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func choose(rnd *rand.Rand, opts ...string) string { return opts[rnd.IntN(len(opts))] }

// ---- lead ----

func (c *ctx) lead() {
	switch {
	case c.a.State == vocab.PhaseFrictionResolution || (c.pick("friction-resolution.md") != "" && c.pick("plan.md") == ""):
		c.frictionResolution()
	case c.a.State == vocab.PhaseCheckpointFix:
		c.leadCheckpointFix()
	case c.pick("plan.md") != "":
		c.writePlan()
	default:
		c.generic()
	}
}

func (c *ctx) writePlan() {
	path := c.pick("plan.md")
	rounds := len(c.reviewFiles(planFeedbackRE))
	if rounds == 0 && (c.a.State == vocab.PhasePlanRevision || fileExists(c.taskFile(triggers.Path(vocab.AgentReviewer, triggers.PlanFeedback, "")))) {
		rounds = 1
	}
	var feedback string
	if rounds > 0 {
		fb := c.reviewFiles(planFeedbackRE)
		var last string
		if len(fb) > 0 {
			last = fb[len(fb)-1]
		}
		feedback = readFirst(c.taskFile(triggers.Path(vocab.AgentReviewer, triggers.PlanFeedback, "")), last)
	}
	title := c.taskTitle()
	c.think("Reading task.md: " + oneLine(title))
	c.think(choose(c.rnd, "Surveying the project layout", "Looking at the existing code to see where this fits", "Scanning the repository structure"))
	if rounds > 0 {
		c.think("Reviewer feedback received — addressing every point in revision " + strconv.Itoa(rounds+1))
	}
	c.think("Splitting the work into 2 checkpoints and 4 subtasks, keeping parallel subtasks on distinct files")
	if rounds == 0 {
		c.leadDecision()
	}
	c.emit(path, c.planMarkdown(title, rounds, feedback))
	if rounds > 0 {
		c.summary = "Revised plan written to plan.md (revision " + strconv.Itoa(rounds+1) + "), addressing the reviewer's feedback."
	} else {
		c.summary = "Plan written to plan.md: 2 checkpoints, 4 subtasks."
	}
}

func (c *ctx) frictionResolution() {
	path := c.pick("friction-resolution.md")
	if path == "" {
		c.generic()
		return
	}
	var names []string
	outboxes, _ := os.ReadDir(filepath.Join(c.taskDir, vocab.OutboxesDir))
	for _, ob := range outboxes {
		entries, _ := os.ReadDir(c.taskFile(triggers.Outbox(vocab.AgentID(ob.Name())) + "/" + triggers.Friction.Dir()))
		for _, e := range entries {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	for _, p := range c.reviewFiles(regexp.MustCompile(`(?i)friction.*\.md$`)) {
		if !strings.Contains(filepath.Base(p), "resolution") {
			names = append(names, filepath.Base(p))
		}
	}
	c.think("Reading the friction log")
	c.think("Deciding whether the plan needs to change")
	c.emit(path, frictionResolutionMD(names, c.rnd))
	c.summary = "Friction resolved; resolution written to friction-resolution.md."
}

func (c *ctx) leadCheckpointFix() { c.checkpointFix() }

// ---- reviewer ----

func (c *ctx) reviewer() {
	switch {
	case c.a.State == vocab.PhasePlanReview || c.pick("plan-approved.md") != "" || c.pick("plan-feedback.md") != "":
		c.reviewPlan()
	case c.a.State == vocab.PhaseCheckpointReview || c.pick("checkpoint-approved.md") != "" || c.pick("checkpoint-issues.md") != "":
		c.reviewCheckpoint()
	default:
		c.generic()
	}
}

func (c *ctx) reviewPlan() {
	rejected := len(c.reviewFiles(planFeedbackRE))
	approvedBefore := len(c.reviewFiles(planApprovedRE))
	fb, ok := c.pick("plan-feedback.md"), c.pick("plan-approved.md")
	pl := c.plan()
	c.think("Reading plan.md")
	if pl != nil {
		c.think("Checking " + strconv.Itoa(len(pl.Subtasks)) + " subtasks: dependencies, file ownership, checkpoints")
	}
	if c.sc.ForbiddenWrite && rejected == 0 && approvedBefore == 0 {
		if target := c.forbiddenTarget(pl); target != "" {
			c.think("The plan's entry point could use a doc comment; fixing it directly")
			c.out = append(c.out, FileWrite{Path: target, Content: "// Reviewer edit: this write must be denied.\n", Forbidden: true})
		}
	}
	if (rejected < c.sc.RejectPlans && fb != "") || (ok == "" && fb != "") {
		c.emit(fb, planFeedbackMD(pl, rejected+1, c.rnd))
		c.summary = "Plan needs revision: feedback written to plan-feedback.md."
		return
	}
	if ok != "" {
		c.emit(ok, planApprovedMD(pl, rejected+1))
		c.summary = "Plan approved (plan-approved.md)."
		return
	}
	c.summary = "Nothing to write: the assignment lists no verdict file."
}

func (c *ctx) forbiddenTarget(pl *vocab.Plan) string {
	if pl != nil {
		for _, st := range pl.Subtasks {
			for _, f := range st.Files {
				_, p := splitFile(f)
				if pp := c.projectPath(p); pp != "" {
					return pp
				}
			}
		}
	}
	return c.projectPath("main.go")
}

func (c *ctx) reviewCheckpoint() {
	n := c.currentCheckpoint()
	issued := len(c.reviewFiles(cpIssuesRE))
	bad, ok := c.pick("checkpoint-issues.md"), c.pick("checkpoint-approved.md")
	pl := c.plan()
	c.think("Reviewing checkpoint " + strconv.Itoa(n) + ": reading the subtask outputs and the changed files")
	var files []string
	if pl != nil {
		for _, st := range pl.Subtasks {
			if st.Checkpoint != n {
				continue
			}
			for _, f := range st.Files {
				_, p := splitFile(f)
				files = append(files, p)
			}
		}
	}
	if (issued < c.sc.CheckpointIssues && bad != "" && len(files) > 0) || (ok == "" && bad != "") {
		var file string
		if len(files) > 0 {
			file = files[c.rnd.IntN(len(files))]
		}
		c.think("Found a problem in " + file)
		c.emit(bad, checkpointIssuesMD(n, file, c.rnd))
		c.summary = "Checkpoint " + strconv.Itoa(n) + " has issues: see checkpoint-issues.md."
		return
	}
	if ok != "" {
		c.emit(ok, checkpointApprovedMD(n, files))
		c.summary = "Checkpoint " + strconv.Itoa(n) + " approved."
		return
	}
	c.summary = "Nothing to write: the assignment lists no verdict file."
}

// ---- worker ----

func (c *ctx) worker() {
	switch {
	case c.a.State == vocab.PhaseCheckpointFix:
		c.workerFix()
	case c.subtask() != nil:
		c.doSubtask()
	default:
		c.generic()
	}
}

func (c *ctx) subtask() *vocab.Subtask {
	if c.a.Subtask != nil {
		return c.a.Subtask
	}
	s := c.state()
	if ag, ok := s.Agents[c.a.Agent]; ok && ag.Subtask != "" && s.Plan != nil {
		for i := range s.Plan.Subtasks {
			if s.Plan.Subtasks[i].ID == ag.Subtask {
				return &s.Plan.Subtasks[i]
			}
		}
	}
	return nil
}

func splitFile(f string) (verb, path string) {
	f = strings.TrimSpace(f)
	if v, p, ok := strings.Cut(f, " "); ok {
		switch strings.ToUpper(v) {
		case "CREATE", "MODIFY", "DELETE":
			return strings.ToUpper(v), strings.TrimSpace(p)
		}
	}
	return "MODIFY", f
}

func (c *ctx) doSubtask() {
	st := c.subtask()
	c.think("Subtask " + st.ID + ": " + oneLine(st.Description))
	c.hostileShell()
	if c.sc.WriteFriction && c.a.Agent == "worker_1" && !c.frictionLogged() {
		c.think("The build setup is slowing me down — logging friction")
		c.emit(c.taskFile(triggers.Path(c.a.Agent, triggers.Friction, string(c.a.Agent)+"-"+st.ID)), frictionMD(string(c.a.Agent), st, c.rnd))
	}
	var changed []string
	for _, f := range st.Files {
		verb, rel := splitFile(f)
		p := c.projectPath(rel)
		if p == "" || verb == "DELETE" {
			continue
		}
		old, err := os.ReadFile(p)
		var content string
		if err == nil && len(old) > 0 {
			content = modifyFile(rel, string(old), st, c.rnd)
			c.think(choose(c.rnd, "Updating ", "Extending ", "Editing ") + rel)
		} else {
			content = createFile(rel, st, c.pkgName(rel), c.rnd)
			c.think(choose(c.rnd, "Creating ", "Writing ", "Adding ") + rel)
		}
		c.emit(p, content)
		changed = append(changed, verb+" "+rel)
	}
	if c.sc.SharedNotes {
		if p := c.projectPath(sharedNotesFile); p != "" {
			c.think("Noting the change in " + sharedNotesFile)
			c.emit(p, appendNote(p, string(c.a.Agent), st))
			changed = append(changed, "MODIFY "+sharedNotesFile)
		}
	}
	done := c.a.DoneMarker
	if done == "" {
		done = c.pick(st.ID + ".done")
	}
	outPath := c.pick(st.ID + ".md")
	if outPath == "" && done != "" {
		outPath = strings.TrimSuffix(done, ".done") + ".md"
	}
	if outPath != "" {
		c.workerDecision()
		c.emit(outPath, outputMD(st, changed, c.rnd)+c.followedDecisions())
	}
	if done != "" && outPath != "" {
		m := vocab.DoneMarker{AgentID: c.a.Agent, OutputFile: outPath, CompletedAt: c.now()}
		b, _ := json.MarshalIndent(m, "", "  ")
		c.emit(done, string(b)+"\n")
	}
	c.summary = "Subtask " + st.ID + " complete: " + strconv.Itoa(len(changed)) + " file(s) changed, output in outputs/" + st.ID + ".md."
}

func (c *ctx) now() time.Time {
	if c.sc.Now != nil {
		return c.sc.Now().UTC()
	}
	return time.Now().UTC()
}

// taskFile is the absolute path of rel, a slash path in the task dir.
func (c *ctx) taskFile(rel string) string { return filepath.Join(c.taskDir, filepath.FromSlash(rel)) }

func (c *ctx) frictionLogged() bool {
	if entries, _ := os.ReadDir(c.taskFile(triggers.Outbox(c.a.Agent) + "/" + triggers.Friction.Dir())); len(entries) > 0 {
		return true
	}
	return len(c.reviewFiles(regexp.MustCompile(`(?i)friction`))) > 0
}

func (c *ctx) pkgName(rel string) string {
	dir := filepath.Base(filepath.Dir(filepath.FromSlash(rel)))
	if dir == "." || dir == "" {
		return "main"
	}
	return goIdent(dir)
}

// issuesText is the latest checkpoint issues report.
func (c *ctx) issuesText() string {
	arch := c.reviewFiles(cpIssuesRE)
	var last string
	if len(arch) > 0 {
		last = arch[len(arch)-1]
	}
	return readFirst(filepath.Join(c.taskDir, "checkpoint-issues.md"), last)
}

// fixProjectFiles fixes the project files this agent may write (listed
// writes inside the project, plus extra), preferring those the issues name.
func (c *ctx) fixProjectFiles(extra []string) []string {
	var cands []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] && c.inProject(p) {
			seen[p] = true
			cands = append(cands, p)
		}
	}
	for _, w := range c.writes {
		add(w)
	}
	for _, p := range extra {
		add(p)
	}
	issues := c.issuesText()
	var named []string
	for _, p := range cands {
		if strings.Contains(issues, c.rel(p)) {
			named = append(named, p)
		}
	}
	if len(named) > 0 {
		cands = named
	}
	round := len(c.reviewFiles(cpIssuesRE))
	var fixed []string
	for _, p := range cands {
		old, _ := os.ReadFile(p)
		if resolved, ok := ResolveConflicts(string(old)); ok {
			c.think("Resolving the merge conflict in " + c.rel(p) + ": keeping both sides")
			c.emit(p, resolved)
			fixed = append(fixed, c.rel(p))
			continue
		}
		c.think("Fixing " + c.rel(p) + " as the reviewer asked")
		c.emit(p, fixFile(c.rel(p), string(old), round))
		fixed = append(fixed, c.rel(p))
	}
	return fixed
}

func (c *ctx) workerFix() { c.checkpointFix() }

// checkpointFix handles a fix assignment (Lead or worker): fix the listed
// project files the issues name, write the fix note (the output next to
// the done marker, or a listed note), then checkpoint.md if listed, then
// the done marker last.
func (c *ctx) checkpointFix() {
	var extra []string
	if st := c.subtask(); st != nil && c.a.Role == vocab.RoleWorker {
		for _, f := range st.Files {
			_, rel := splitFile(f)
			extra = append(extra, c.projectPath(rel))
		}
	}
	c.think("Reading the reviewer's checkpoint issues")
	fixed := c.fixProjectFiles(extra)
	done := c.a.DoneMarker
	note := ""
	if done != "" {
		note = c.pick(strings.TrimSuffix(filepath.Base(done), ".done") + ".md")
		if note == "" {
			note = strings.TrimSuffix(done, ".done") + ".md"
		}
	} else {
		for _, w := range c.writes {
			if !c.inProject(w) && filepath.Base(w) != "checkpoint.md" && strings.HasSuffix(w, ".md") {
				note = w
				break
			}
		}
	}
	if note != "" {
		c.emit(note, c.fixNote(string(c.a.Agent), fixed))
	}
	if cp := c.pick("checkpoint.md"); cp != "" && (len(fixed) > 0 || c.a.Role == vocab.RoleWorker) {
		c.emit(cp, c.checkpointMD(string(c.a.Agent), fixed))
	}
	if done != "" && note != "" {
		m := vocab.DoneMarker{AgentID: c.a.Agent, OutputFile: note, CompletedAt: c.now()}
		b, _ := json.MarshalIndent(m, "", "  ")
		c.emit(done, string(b)+"\n")
	}
	switch {
	case len(fixed) > 0:
		c.summary = "Fixed " + strconv.Itoa(len(fixed)) + " file(s) named in the checkpoint issues."
	case len(c.out) > 0:
		c.summary = "Read the checkpoint issues; none concern my files. Notes written."
	default:
		c.summary = "Read the checkpoint issues; the workers named in them will fix their files."
	}
}

// generic handles an assignment the script has no special case for: it
// writes a short note to the first listed markdown path.
func (c *ctx) generic() {
	c.think("Reading the assignment: " + oneLine(c.a.Instruction))
	for _, w := range c.writes {
		if strings.HasSuffix(w, ".md") {
			c.emit(w, "# "+strings.TrimSuffix(filepath.Base(w), ".md")+"\n\n"+
				"Written by "+string(c.a.Agent)+" for assignment "+strconv.Itoa(c.a.Seq)+" ("+string(c.a.State)+").\n\n"+
				oneLine(c.a.Instruction)+"\n")
			c.summary = "Wrote " + filepath.Base(w) + "."
			return
		}
	}
	c.summary = "Nothing to write for this assignment."
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
