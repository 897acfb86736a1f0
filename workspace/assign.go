package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// LegacyLayout names the sign ("outputs/", "friction/") that the task was
// started by a Hivemind older than the outboxes, whose agents wrote
// trigger files, outputs and done markers at the task dir root; "" for a
// task of this layout. Such a task cannot be resumed: its agents were told
// paths this version never reads.
func (t *TaskDir) LegacyLayout() string {
	for _, d := range []string{vocab.OutputsDir, vocab.FrictionDir} {
		if fi, err := os.Lstat(filepath.Join(t.dir, d)); err == nil && fi.IsDir() {
			return d + "/"
		}
	}
	return ""
}

// OutboxDir returns the absolute outbox directory of agent.
func (t *TaskDir) OutboxDir(agent vocab.AgentID) string {
	return filepath.Join(t.dir, vocab.OutboxRel(agent))
}

// AssignmentPath returns the absolute path of assignments/<agent>.json,
// the agent's newest assignment.
func (t *TaskDir) AssignmentPath(agent vocab.AgentID) string {
	return filepath.Join(t.dir, vocab.AssignmentRel(agent, 0))
}

// WriteAssignment writes agent's assignment a.Seq,
// assignments/<agent>-<seq>.json (the file its message names), and its
// markdown rendering assignments/<agent>-<seq>.md, then the same as the
// agent's newest, assignments/<agent>.json and .md; each atomically (the
// .md first, so the .json is complete when it appears). a.Seq must be
// greater than the seq of the agent's previous assignment (ErrStaleSeq),
// so a versioned file is never rewritten. A previous newest file that
// cannot be parsed is kept as assignments/<agent>.json.corrupt-<time> and
// overwritten.
func (t *TaskDir) WriteAssignment(a vocab.Assignment) error {
	if err := checkID("agent", string(a.Agent)); err != nil {
		return fmt.Errorf("workspace: write assignment: %w", err)
	}
	if a.Seq <= 0 {
		return fmt.Errorf("workspace: write assignment for %s: seq %d: %w", a.Agent, a.Seq, ErrStaleSeq)
	}
	var paths [2][2]string // versioned, newest: .json, .md
	for i, seq := range []int{a.Seq, 0} {
		rel := vocab.AssignmentRel(a.Agent, seq)
		for j, ext := range []string{".json", ".md"} {
			p, err := t.Path(strings.TrimSuffix(rel, ".json") + ext)
			if err != nil {
				return fmt.Errorf("workspace: write assignment: %w", err)
			}
			paths[i][j] = p
		}
	}
	jsonPath := paths[1][0]
	if err := t.MakeOutbox(a.Agent); err != nil {
		return fmt.Errorf("workspace: write assignment: %w", err)
	}
	prev, err := t.ReadAssignment(a.Agent)
	switch {
	case err == nil:
		if a.Seq <= prev.Seq {
			return fmt.Errorf("workspace: write assignment for %s: seq %d after %d: %w", a.Agent, a.Seq, prev.Seq, ErrStaleSeq)
		}
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, ErrSymlink):
		return fmt.Errorf("workspace: write assignment: %w", err)
	default:
		aside := jsonPath + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(jsonPath, aside); rerr != nil {
			return fmt.Errorf("workspace: write assignment for %s: %w", a.Agent, err)
		}
	}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("workspace: write assignment for %s: %w", a.Agent, err)
	}
	for _, p := range paths {
		if err := WriteFileAtomic(p[1], []byte(RenderAssignment(a)), 0o644); err != nil {
			return fmt.Errorf("workspace: write assignment for %s: %w", a.Agent, err)
		}
		if err := WriteFileAtomic(p[0], append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("workspace: write assignment for %s: %w", a.Agent, err)
		}
	}
	return nil
}

// readNamed reads dir/<id><ext> in the task directory, id checked as a
// kind id, without following a link.
func (t *TaskDir) readNamed(kind, id, dir, ext string) ([]byte, error) {
	if err := checkID(kind, id); err != nil {
		return nil, err
	}
	p, err := t.Path(filepath.Join(dir, id+ext))
	if err != nil {
		return nil, err
	}
	return readNoFollow(p)
}

// ReadAssignment reads assignments/<agent>.json. A missing file wraps
// fs.ErrNotExist.
func (t *TaskDir) ReadAssignment(agent vocab.AgentID) (vocab.Assignment, error) {
	var a vocab.Assignment
	data, err := t.readNamed("agent", string(agent), vocab.AssignmentsDir, ".json")
	if err != nil {
		return a, fmt.Errorf("workspace: read assignment for %s: %w", agent, err)
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return vocab.Assignment{}, fmt.Errorf("workspace: read assignment for %s: %w", agent, err)
	}
	return a, nil
}

// RenderAssignment renders an assignment as markdown for people and agents.
func RenderAssignment(a vocab.Assignment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Assignment %d for %s", a.Seq, a.Agent)
	if a.Role != "" {
		fmt.Fprintf(&b, " (%s)", a.Role)
	}
	fmt.Fprintf(&b, "\n\nState: %s\n", a.State)
	if a.ReadOnly {
		b.WriteString("\nThis is information only: do not write any file.\n")
	}
	if a.Resent {
		b.WriteString("\nThis is your earlier work sent again: some of it may be done already; check before redoing it.\n")
	}
	if a.Rejected != "" {
		fmt.Fprintf(&b, "\n## Your previous attempt was rejected\n\n%s\n\nFix this first.\n", strings.TrimSpace(a.Rejected))
	}
	fmt.Fprintf(&b, "\n## Instruction\n\n%s\n", strings.TrimSpace(a.Instruction))
	if st := a.Subtask; st != nil {
		fmt.Fprintf(&b, "\n## Subtask %s\n\n%s\n", st.ID, strings.TrimSpace(st.Description))
		if st.Checkpoint != 0 {
			fmt.Fprintf(&b, "\nCheckpoint: %d\n", st.Checkpoint)
		}
		if len(st.Dependencies) > 0 {
			fmt.Fprintf(&b, "Depends on: %s\n", strings.Join(st.Dependencies, ", "))
		}
		if len(st.Files) > 0 {
			b.WriteString("\nFiles:\n")
			for _, f := range st.Files {
				fmt.Fprintf(&b, "- %s\n", f)
			}
		}
	}
	list := func(title string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		for _, p := range paths {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	list("Read", a.Reads)
	list("Write", a.Writes)
	if a.DoneMarker != "" {
		fmt.Fprintf(&b, "\n## When done\n\nWrite your output first, then create the done marker last:\n\n    %s\n\ncontaining one JSON object:\n\n    {\"agent_id\": %q, \"output_file\": \"<absolute path of your output>\", \"completed_at\": \"<RFC 3339 time>\"}\n", a.DoneMarker, a.Agent)
	}
	return b.String()
}

// DonePath returns the absolute path of agent's done marker of subtask,
// agents/<agent>/outputs/<subtask>.done.
func (t *TaskDir) DonePath(agent vocab.AgentID, subtask string) string {
	return filepath.Join(t.OutboxDir(agent), vocab.OutputsDir, subtask+".done")
}

// outboxSubdirs are created in each agent's outbox.
var outboxSubdirs = []string{vocab.OutputsDir, vocab.FrictionDir}

// MakeOutbox creates agent's outbox agents/<agent>/ with its outputs/ and
// friction/ directories (the places the agent writes).
func (t *TaskDir) MakeOutbox(agent vocab.AgentID) error {
	if err := checkID("agent", string(agent)); err != nil {
		return fmt.Errorf("workspace: make outbox: %w", err)
	}
	for _, sub := range outboxSubdirs {
		if err := os.MkdirAll(filepath.Join(t.OutboxDir(agent), sub), 0o755); err != nil {
			return fmt.Errorf("workspace: make outbox of %s: %w", agent, err)
		}
	}
	return nil
}

// ReadDone reads and validates agent's done marker of subtask,
// agents/<agent>/outputs/<subtask>.done: a JSON object whose agent_id is
// agent (the outbox owner) and an output_file that exists, is a non-empty regular
// file, and lies inside the task directory or the task's project (after
// resolving symlinks; ErrOutside otherwise). A relative output_file is
// taken relative to the task directory, then to the project. completed_at
// may be RFC 3339, a local time without zone (taken as UTC), unix seconds,
// or missing (zero). The returned OutputFile is absolute and clean. Invalid
// markers wrap ErrBadMarker; a missing marker wraps fs.ErrNotExist.
func (t *TaskDir) ReadDone(agent vocab.AgentID, subtask string) (vocab.DoneMarker, error) {
	var m vocab.DoneMarker
	if err := checkID("agent", string(agent)); err != nil {
		return m, fmt.Errorf("workspace: read done marker %s: %w", subtask, err)
	}
	data, err := t.readNamed("subtask", subtask, filepath.Join(vocab.OutboxRel(agent), vocab.OutputsDir), ".done")
	if err != nil {
		return m, fmt.Errorf("workspace: read done marker %s: %w", subtask, err)
	}
	m, err = parseDone(data)
	if err != nil {
		return vocab.DoneMarker{}, fmt.Errorf("workspace: read done marker %s: %w: %v", subtask, ErrBadMarker, err)
	}
	if m.AgentID != agent {
		return vocab.DoneMarker{}, fmt.Errorf("workspace: read done marker %s: %w: agent_id is %q but the marker is in the outbox of %s: write only your own marker, with your own agent_id",
			subtask, ErrBadMarker, m.AgentID, agent)
	}
	out, err := t.resolveOutput(m.OutputFile)
	if err != nil {
		return vocab.DoneMarker{}, fmt.Errorf("workspace: read done marker %s: output_file %q: %w", subtask, m.OutputFile, err)
	}
	m.OutputFile = out
	return m, nil
}

func parseDone(data []byte) (vocab.DoneMarker, error) {
	var m vocab.DoneMarker
	var raw struct {
		AgentID     string          `json:"agent_id"`
		OutputFile  string          `json:"output_file"`
		CompletedAt json.RawMessage `json:"completed_at"`
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return m, errors.New("empty file")
	}
	if data[0] != '{' {
		return m, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return m, err
	}
	if !vocab.ValidID(raw.AgentID) {
		return m, fmt.Errorf("agent_id %q is not a valid agent id", raw.AgentID)
	}
	if strings.TrimSpace(raw.OutputFile) == "" {
		return m, errors.New("output_file missing")
	}
	at, err := parseLooseTime(raw.CompletedAt)
	if err != nil {
		return m, fmt.Errorf("completed_at: %v", err)
	}
	return vocab.DoneMarker{AgentID: vocab.AgentID(raw.AgentID), OutputFile: strings.TrimSpace(raw.OutputFile), CompletedAt: at}, nil
}

// parseLooseTime accepts the time formats agents actually write.
func parseLooseTime(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, nil
	}
	if raw[0] != '"' {
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("not a time: %s", raw)
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised time %q", s)
}

// resolveOutput makes an output path absolute and checks it stays in the
// task directory or the project and names a non-empty regular file.
func (t *TaskDir) resolveOutput(of string) (string, error) {
	var project, projectReal string
	if task, err := t.Task(); err == nil && task.Project != "" {
		project = filepath.Clean(task.Project)
		if r, err := filepath.EvalSymlinks(project); err == nil {
			projectReal = r
		}
	}
	candidates := []string{of}
	if !filepath.IsAbs(of) {
		if !filepath.IsLocal(of) {
			return "", ErrOutside
		}
		candidates = []string{filepath.Join(t.dir, of)}
		if project != "" {
			candidates = append(candidates, filepath.Join(project, of))
		}
	}
	var lastErr error
	for _, c := range candidates {
		c = filepath.Clean(c)
		if !within(t.dir, c) && !within(t.real, c) && (project == "" || !within(project, c)) {
			return "", ErrOutside
		}
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			lastErr = fmt.Errorf("%w: output file does not exist", ErrBadMarker)
			continue
		}
		if !within(t.real, real) && (projectReal == "" || !within(projectReal, real)) {
			return "", ErrOutside
		}
		fi, err := os.Stat(real)
		if err != nil {
			lastErr = fmt.Errorf("%w: %v", ErrBadMarker, err)
			continue
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%w: output is not a regular file", ErrBadMarker)
		}
		if fi.Size() == 0 {
			return "", fmt.Errorf("%w: output file is empty", ErrBadMarker)
		}
		return c, nil
	}
	return "", lastErr
}

// Archive moves the file at fromRel to toRel (both relative to the task
// directory, e.g. "plan-feedback.md" → "reviews/plan_v1-feedback.md"),
// creating toRel's directory. It never overwrites: an existing toRel is
// ErrExists and nothing moves.
func (t *TaskDir) Archive(fromRel, toRel string) error {
	from, err := t.Path(fromRel)
	if err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	to, err := t.Path(toRel)
	if err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
	}
	// Re-check now that the directory exists.
	if _, err := t.Path(toRel); err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	// link(2) fails if the destination exists, so no check-then-act race.
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workspace: archive %s to %s: %w", fromRel, toRel, ErrExists)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
		}
		// No hard links here: fall back to a checked rename.
		if _, lerr := os.Lstat(to); lerr == nil {
			return fmt.Errorf("workspace: archive %s to %s: %w", fromRel, toRel, ErrExists)
		}
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
		}
	} else if err := os.Remove(from); err != nil {
		return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
	}
	if err := syncDir(filepath.Dir(to)); err != nil {
		return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
	}
	if err := syncDir(filepath.Dir(from)); err != nil {
		return fmt.Errorf("workspace: archive %s: %w", fromRel, err)
	}
	return nil
}

// WriteHeartbeat records at as the agent's last sign of life
// (heartbeats/<agent>, unix seconds as decimal text). The write is atomic
// but not fsync'd: a heartbeat lost in a crash does not matter.
func (t *TaskDir) WriteHeartbeat(agent vocab.AgentID, at time.Time) error {
	if err := checkID("agent", string(agent)); err != nil {
		return fmt.Errorf("workspace: write heartbeat: %w", err)
	}
	p, err := t.Path(filepath.Join(vocab.HeartbeatsDir, string(agent)))
	if err != nil {
		return fmt.Errorf("workspace: write heartbeat: %w", err)
	}
	if err := writeAtomic(p, []byte(strconv.FormatInt(at.Unix(), 10)+"\n"), 0o644, false); err != nil {
		return fmt.Errorf("workspace: write heartbeat for %s: %w", agent, err)
	}
	return nil
}

// Heartbeat reads the agent's last heartbeat (second precision). Integer
// or fractional unix seconds are accepted. A missing heartbeat wraps
// fs.ErrNotExist.
func (t *TaskDir) Heartbeat(agent vocab.AgentID) (time.Time, error) {
	if err := checkID("agent", string(agent)); err != nil {
		return time.Time{}, fmt.Errorf("workspace: read heartbeat: %w", err)
	}
	p, err := t.Path(filepath.Join(vocab.HeartbeatsDir, string(agent)))
	if err != nil {
		return time.Time{}, fmt.Errorf("workspace: read heartbeat: %w", err)
	}
	data, err := readNoFollow(p)
	if err != nil {
		return time.Time{}, fmt.Errorf("workspace: read heartbeat for %s: %w", agent, err)
	}
	s := strings.TrimSpace(string(data))
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("workspace: read heartbeat for %s: %q is not unix time", agent, s)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
}

// AgentLogPath returns logs/agents/<agent>.log (absolute). Characters not
// allowed in an id are replaced by '_', so the path stays in the directory.
func (t *TaskDir) AgentLogPath(agent vocab.AgentID) string {
	return filepath.Join(t.dir, vocab.AgentLogsDir, sanitizeName(string(agent))+".log")
}

func sanitizeName(s string) string {
	if vocab.ValidID(s) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	out := string(b)
	if out == "" {
		out = "_"
	}
	if len(out) > 128 {
		out = out[:128]
	}
	return out
}
