package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// The shared knowledge: project-wide knowledge every agent reads (a decision
// log, a constraints registry and a glossary), kept under <root>/context/.
// It outlives tasks. Only the engine (or the user, through `hivemind
// context rm` while no engine runs) writes the three JSON files; agents
// propose entries by writing small markdown notes into their own outbox in
// the task directory (agents/<id>/knowledge/*.md, triggers.Knowledge),
// which the engine validates (ParseInboxEntry), merges (KnowledgeStore.Merge)
// and archives to context/archive/.
const (
	knowledgeIDsFile  = "ids.json" // id counters, so removed ids are never reused
	knowledgeLockFile = "context.lock"
)

// Decision is one entry of decisions.json.
type Decision struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Rationale string    `json:"rationale"`
	DecidedBy string    `json:"decided_by"`
	DecidedAt time.Time `json:"decided_at"`
	TaskID    string    `json:"task_id"`
	// Source identifies the inbox file instance it came from, so merging
	// the same file again (after a crash) adds nothing.
	Source string `json:"source,omitempty"`
}

// Constraint is one entry of constraints.json.
type Constraint struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	AddedBy     string    `json:"added_by"`
	AddedAt     time.Time `json:"added_at"`
	TaskID      string    `json:"task_id,omitempty"`
	Source      string    `json:"source,omitempty"`
}

// GlossaryEntry is one entry of glossary.json. A term is unique (ignoring
// case and spacing); defining it again replaces the definition and keeps
// the previous ones in History, oldest first.
type GlossaryEntry struct {
	Term       string         `json:"term"`
	Definition string         `json:"definition"`
	AddedBy    string         `json:"added_by"`
	AddedAt    time.Time      `json:"added_at"`
	TaskID     string         `json:"task_id,omitempty"`
	Source     string         `json:"source,omitempty"`
	History    []TermRevision `json:"history,omitempty"`
}

// TermRevision is an earlier definition of a glossary term.
type TermRevision struct {
	Definition string    `json:"definition"`
	AddedBy    string    `json:"added_by"`
	AddedAt    time.Time `json:"added_at"`
	TaskID     string    `json:"task_id,omitempty"`
	Source     string    `json:"source,omitempty"`
}

// Knowledge is the whole shared knowledge.
type Knowledge struct {
	Decisions   []Decision      `json:"decisions"`
	Constraints []Constraint    `json:"constraints"`
	Glossary    []GlossaryEntry `json:"glossary"`
}

// KnowledgeItem is one entry of any kind, flattened for listings (the TUI
// panel, `hivemind context`).
type KnowledgeItem struct {
	Kind  string    `json:"kind"`
	ID    string    `json:"id"`    // D<n>, C<n>, or the term itself
	Title string    `json:"title"` // decision title, constraint name, term
	Text  string    `json:"text"`  // rationale, description, definition
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	// Revisions is the number of earlier definitions of a term.
	Revisions int `json:"revisions,omitempty"`
}

// Items lists every entry, newest first (then by kind and id).
func (c Knowledge) Items() []KnowledgeItem {
	var out []KnowledgeItem
	for _, d := range c.Decisions {
		out = append(out, KnowledgeItem{Kind: vocab.KindDecision, ID: d.ID, Title: d.Title, Text: d.Rationale, By: d.DecidedBy, At: d.DecidedAt})
	}
	for _, k := range c.Constraints {
		out = append(out, KnowledgeItem{Kind: vocab.KindConstraint, ID: k.ID, Title: k.Name, Text: k.Description, By: k.AddedBy, At: k.AddedAt})
	}
	for _, g := range c.Glossary {
		out = append(out, KnowledgeItem{Kind: vocab.KindTerm, ID: g.Term, Title: g.Term, Text: g.Definition, By: g.AddedBy, At: g.AddedAt, Revisions: len(g.History)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return idLess(out[j].ID, out[i].ID)
	})
	return out
}

// idLess orders D2 before D10.
func idLess(a, b string) bool {
	na, ea := strconv.Atoi(strings.TrimLeft(a, "DC"))
	nb, eb := strconv.Atoi(strings.TrimLeft(b, "DC"))
	if ea == nil && eb == nil && a != "" && b != "" && a[0] == b[0] {
		return na < nb
	}
	return a < b
}

// ---- inbox entries ----

// ---- the store ----

// KnowledgeStore reads and writes <root>/context/. Every change runs under an
// in-process mutex and an flock on context/context.lock (so two stores, even
// in two processes, never lose each other's entries), writes the JSON file
// with WriteFileAtomic and appends one line to changes.jsonl. A corrupt
// JSON file is an error and is never overwritten.
type KnowledgeStore struct {
	dir string
	now func() time.Time
	mu  sync.Mutex
}

// OpenKnowledge opens (creating) the shared knowledge of the workspace root:
// the context/ and archive/ directories and empty decisions,
// constraints and glossary files, so every agent can read all three from
// the first assignment on.
func OpenKnowledge(root string) (*KnowledgeStore, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: open knowledge: %w", err)
	}
	dir := filepath.Join(abs, vocab.KnowledgeDir)
	for _, d := range []string{dir, filepath.Join(dir, vocab.KnowledgeArchiveDir)} {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("workspace: open knowledge: %s: %w", d, ErrSymlink)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("workspace: open knowledge: %w", err)
		}
	}
	c := &KnowledgeStore{dir: dir, now: time.Now}
	for _, f := range []string{vocab.DecisionsFile, vocab.ConstraintsFile, vocab.GlossaryFile} {
		p := filepath.Join(dir, f)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			if err := createExclusive(p, []byte("[]\n"), 0o644); err != nil && !errors.Is(err, ErrExists) {
				return nil, fmt.Errorf("workspace: open knowledge: %w", err)
			}
		}
	}
	return c, nil
}

// ReadKnowledge reads the shared knowledge of the workspace root for a reading
// command: it creates nothing (no directory, no file, no lock file). A
// missing directory or file reads as an empty list; the lists are never
// nil. It takes no lock: each file is replaced whole (WriteFileAtomic), so
// each list is read as some writer left it. dir is the absolute knowledge
// directory (context/), whether it exists or not.
func ReadKnowledge(root string) (kn Knowledge, dir string, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Knowledge{}, "", fmt.Errorf("workspace: read knowledge: %w", err)
	}
	dir = filepath.Join(abs, vocab.KnowledgeDir)
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return Knowledge{}, dir, fmt.Errorf("workspace: read knowledge: %s: %w", dir, ErrSymlink)
	case err == nil:
		if kn, err = (&KnowledgeStore{dir: dir}).read(); err != nil {
			return Knowledge{}, dir, fmt.Errorf("workspace: read knowledge: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return Knowledge{}, dir, fmt.Errorf("workspace: read knowledge: %w", err)
	}
	if kn.Decisions == nil {
		kn.Decisions = []Decision{}
	}
	if kn.Constraints == nil {
		kn.Constraints = []Constraint{}
	}
	if kn.Glossary == nil {
		kn.Glossary = []GlossaryEntry{}
	}
	return kn, dir, nil
}

// Dir returns the absolute knowledge directory (context/).
func (c *KnowledgeStore) Dir() string { return c.dir }

// Load reads the whole shared knowledge.
func (c *KnowledgeStore) Load() (Knowledge, error) {
	var kn Knowledge
	err := c.locked(func() error {
		var err error
		kn, err = c.read()
		return err
	})
	if err != nil {
		return Knowledge{}, fmt.Errorf("workspace: load knowledge: %w", err)
	}
	return kn, nil
}

// Items returns Load().Items().
func (c *KnowledgeStore) Items() ([]KnowledgeItem, error) {
	kn, err := c.Load()
	if err != nil {
		return nil, err
	}
	return kn.Items(), nil
}

// locked runs fn under the mutex and the flock.
func (c *KnowledgeStore) locked(fn func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lock, err := openLockFile(filepath.Join(c.dir, knowledgeLockFile))
	if err != nil {
		return err
	}
	defer unlockFileKeep(lock)
	if err := flockWait(lock); err != nil {
		return err
	}
	return fn()
}

func (c *KnowledgeStore) read() (Knowledge, error) {
	var kn Knowledge
	if err := readJSONList(filepath.Join(c.dir, vocab.DecisionsFile), &kn.Decisions); err != nil {
		return kn, err
	}
	if err := readJSONList(filepath.Join(c.dir, vocab.ConstraintsFile), &kn.Constraints); err != nil {
		return kn, err
	}
	if err := readJSONList(filepath.Join(c.dir, vocab.GlossaryFile), &kn.Glossary); err != nil {
		return kn, err
	}
	return kn, nil
}

func readJSONList(path string, v any) error {
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is corrupt (fix or remove it): %w", path, err)
	}
	return nil
}

func (c *KnowledgeStore) writeList(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(c.dir, file), append(data, '\n'), 0o644)
}

// KnowledgeChange is one line of changes.jsonl.
type KnowledgeChange struct {
	Time   time.Time `json:"time"`
	Op     string    `json:"op"` // add, update, remove
	Kind   string    `json:"kind"`
	ID     string    `json:"id"`
	By     string    `json:"by"`
	TaskID string    `json:"task_id,omitempty"`
	Source string    `json:"source,omitempty"`
}

// logChange appends one change record (under the flock) and fsyncs it.
func (c *KnowledgeStore) logChange(ch KnowledgeChange) error {
	line, err := json.Marshal(ch)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(c.dir, vocab.KnowledgeChangesFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Changes returns every change record, oldest first.
func (c *KnowledgeStore) Changes() ([]KnowledgeChange, error) {
	data, err := readNoFollow(filepath.Join(c.dir, vocab.KnowledgeChangesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: knowledge changes: %w", err)
	}
	var out []KnowledgeChange
	for line := range bytes.Lines(data) {
		var ch KnowledgeChange
		if json.Unmarshal(bytes.TrimSpace(line), &ch) == nil {
			out = append(out, ch)
		}
	}
	return out, nil
}

// nextID returns the next id with prefix ("D" or "C"): above every id in
// use and every id ever issued (ids.json), so a removed id is never reused.
func (c *KnowledgeStore) nextID(prefix string, used []string) (string, error) {
	counters := map[string]int{}
	if err := readJSONList(filepath.Join(c.dir, knowledgeIDsFile), &counters); err != nil {
		counters = map[string]int{} // a broken counter file only costs id reuse protection
	}
	n := counters[prefix]
	for _, id := range used {
		if v, err := strconv.Atoi(strings.TrimPrefix(id, prefix)); err == nil && strings.HasPrefix(id, prefix) && v > n {
			n = v
		}
	}
	n++
	counters[prefix] = n
	if err := c.writeList(knowledgeIDsFile, counters); err != nil {
		return "", err
	}
	return prefix + strconv.Itoa(n), nil
}

func normText(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// AddDecision adds a decision (ID, DecidedAt are set when empty/zero). A
// decision with the same title and rationale (ignoring case and spacing),
// or from the same Source, is not added again: the existing one is
// returned with added = false.
func (c *KnowledgeStore) AddDecision(d Decision) (out Decision, added bool, err error) {
	if d.DecidedAt.IsZero() {
		d.DecidedAt = c.now().UTC()
	}
	return addListed(c, d, decisionList)
}

// AddConstraint adds a constraint (ID, AddedAt set when empty/zero). One
// with the same name and description, or from the same Source, is not
// added again (added = false, the existing one is returned).
func (c *KnowledgeStore) AddConstraint(k Constraint) (out Constraint, added bool, err error) {
	if k.AddedAt.IsZero() {
		k.AddedAt = c.now().UTC()
	}
	return addListed(c, k, constraintList)
}

// listKind is how addListed sees the entries of one numbered list
// (decisions D<n>, constraints C<n>).
type listKind[T any] struct {
	what, required, prefix, file string
	list                         func(Knowledge) []T
	// fields: the id to set, the two texts that make an entry the same
	// as another, and its source.
	fields func(*T) (id *string, title, text, source string)
	change func(T) KnowledgeChange
}

var decisionList = listKind[Decision]{
	what: "decision", required: "title and rationale", prefix: "D", file: vocab.DecisionsFile,
	list:   func(k Knowledge) []Decision { return k.Decisions },
	fields: func(d *Decision) (*string, string, string, string) { return &d.ID, d.Title, d.Rationale, d.Source },
	change: func(d Decision) KnowledgeChange {
		return KnowledgeChange{Time: d.DecidedAt, Op: "add", Kind: vocab.KindDecision, ID: d.ID, By: d.DecidedBy, TaskID: d.TaskID, Source: d.Source}
	},
}

var constraintList = listKind[Constraint]{
	what: "constraint", required: "name and description", prefix: "C", file: vocab.ConstraintsFile,
	list:   func(k Knowledge) []Constraint { return k.Constraints },
	fields: func(k *Constraint) (*string, string, string, string) { return &k.ID, k.Name, k.Description, k.Source },
	change: func(k Constraint) KnowledgeChange {
		return KnowledgeChange{Time: k.AddedAt, Op: "add", Kind: vocab.KindConstraint, ID: k.ID, By: k.AddedBy, TaskID: k.TaskID, Source: k.Source}
	},
}

// addListed appends e to its list with the next free id, unless an entry
// there is the same (same Source, or same two texts ignoring case and
// spacing): that one is returned with added = false.
func addListed[T any](c *KnowledgeStore, e T, l listKind[T]) (out T, added bool, err error) {
	id, title, text, source := l.fields(&e)
	if strings.TrimSpace(title) == "" || strings.TrimSpace(text) == "" {
		return e, false, fmt.Errorf("workspace: add %s: %s are required", l.what, l.required)
	}
	err = c.locked(func() error {
		k, err := c.read()
		if err != nil {
			return err
		}
		list := l.list(k)
		var ids []string
		for i := range list {
			oid, otitle, otext, osource := l.fields(&list[i])
			ids = append(ids, *oid)
			if (source != "" && osource == source) ||
				(normText(otitle) == normText(title) && normText(otext) == normText(text)) {
				out = list[i]
				return nil
			}
		}
		if *id, err = c.nextID(l.prefix, ids); err != nil {
			return err
		}
		if err := c.writeList(l.file, append(list, e)); err != nil {
			return err
		}
		out, added = e, true
		return c.logChange(l.change(e))
	})
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("workspace: add %s: %w", l.what, err)
	}
	return out, added, nil
}

// UpsertTerm defines a glossary term. A term already defined (ignoring case
// and spacing) gets the new definition, its old one moving to History
// (updated = true); the same definition again, or the same Source again,
// changes nothing (changed = false).
func (c *KnowledgeStore) UpsertTerm(g GlossaryEntry) (out GlossaryEntry, updated, changed bool, err error) {
	if strings.TrimSpace(g.Term) == "" || strings.TrimSpace(g.Definition) == "" {
		return g, false, false, errors.New("workspace: define term: term and definition are required")
	}
	if g.AddedAt.IsZero() {
		g.AddedAt = c.now().UTC()
	}
	g.History = nil
	err = c.locked(func() error {
		kn, err := c.read()
		if err != nil {
			return err
		}
		for i := range kn.Glossary {
			old := &kn.Glossary[i]
			if normText(old.Term) != normText(g.Term) {
				continue
			}
			if g.Source != "" && old.Source == g.Source || normText(old.Definition) == normText(g.Definition) {
				out = *old
				return nil
			}
			for _, h := range old.History {
				if g.Source != "" && h.Source == g.Source {
					out = *old
					return nil
				}
			}
			old.History = append(old.History, TermRevision{Definition: old.Definition, AddedBy: old.AddedBy, AddedAt: old.AddedAt, TaskID: old.TaskID, Source: old.Source})
			old.Definition, old.AddedBy, old.AddedAt, old.TaskID, old.Source = g.Definition, g.AddedBy, g.AddedAt, g.TaskID, g.Source
			if err := c.writeList(vocab.GlossaryFile, kn.Glossary); err != nil {
				return err
			}
			out, updated, changed = *old, true, true
			return c.logChange(KnowledgeChange{Time: g.AddedAt, Op: "update", Kind: vocab.KindTerm, ID: old.Term, By: g.AddedBy, TaskID: g.TaskID, Source: g.Source})
		}
		if err := c.writeList(vocab.GlossaryFile, append(kn.Glossary, g)); err != nil {
			return err
		}
		out, changed = g, true
		return c.logChange(KnowledgeChange{Time: g.AddedAt, Op: "add", Kind: vocab.KindTerm, ID: g.Term, By: g.AddedBy, TaskID: g.TaskID, Source: g.Source})
	})
	if err != nil {
		return GlossaryEntry{}, false, false, fmt.Errorf("workspace: define term: %w", err)
	}
	return out, updated, changed, nil
}

// MergeResult says what merging one inbox entry did.
type MergeResult struct {
	Kind string `json:"kind"`
	ID   string `json:"id"` // D<n>, C<n> or the term
	// Added: a new entry; Updated: a term got a new definition. Neither:
	// the entry was already there (a duplicate, or the same file merged
	// again after a restart).
	Added   bool `json:"added"`
	Updated bool `json:"updated"`
}

// Merge adds a parsed inbox entry written by agent `by` during task taskID.
// source identifies the inbox file instance; merging the same source again
// changes nothing, so the engine may repeat a merge after a crash.
func (c *KnowledgeStore) Merge(e vocab.InboxEntry, by, taskID, source string, at time.Time) (MergeResult, error) {
	r := MergeResult{Kind: e.Kind}
	switch e.Kind {
	case vocab.KindDecision:
		d, added, err := c.AddDecision(Decision{Title: e.Title, Rationale: e.Text, DecidedBy: by, DecidedAt: at, TaskID: taskID, Source: source})
		if err != nil {
			return r, err
		}
		r.ID, r.Added = d.ID, added
	case vocab.KindConstraint:
		k, added, err := c.AddConstraint(Constraint{Name: e.Title, Description: e.Text, AddedBy: by, AddedAt: at, TaskID: taskID, Source: source})
		if err != nil {
			return r, err
		}
		r.ID, r.Added = k.ID, added
	case vocab.KindTerm:
		g, updated, changed, err := c.UpsertTerm(GlossaryEntry{Term: e.Title, Definition: e.Text, AddedBy: by, AddedAt: at, TaskID: taskID, Source: source})
		if err != nil {
			return r, err
		}
		r.ID, r.Updated, r.Added = g.Term, updated, changed && !updated
	default:
		return r, fmt.Errorf("workspace: merge knowledge: unknown kind %q", e.Kind)
	}
	return r, nil
}

// Remove deletes the entry with that id: a decision (D<n>), a constraint
// (C<n>) or a glossary term (case-insensitive). It is a user action; an
// unknown id wraps ErrNotFound. The removed entry is returned.
func (c *KnowledgeStore) Remove(id, by string) (KnowledgeItem, error) {
	id = strings.TrimSpace(id)
	var out KnowledgeItem
	err := c.locked(func() error {
		kn, err := c.read()
		if err != nil {
			return err
		}
		log := func(kind, id string) error {
			return c.logChange(KnowledgeChange{Time: c.now().UTC(), Op: "remove", Kind: kind, ID: id, By: by})
		}
		for i, d := range kn.Decisions {
			if strings.EqualFold(d.ID, id) {
				if err := c.writeList(vocab.DecisionsFile, append(kn.Decisions[:i:i], kn.Decisions[i+1:]...)); err != nil {
					return err
				}
				out = KnowledgeItem{Kind: vocab.KindDecision, ID: d.ID, Title: d.Title, Text: d.Rationale, By: d.DecidedBy, At: d.DecidedAt}
				return log(vocab.KindDecision, d.ID)
			}
		}
		for i, k := range kn.Constraints {
			if strings.EqualFold(k.ID, id) {
				if err := c.writeList(vocab.ConstraintsFile, append(kn.Constraints[:i:i], kn.Constraints[i+1:]...)); err != nil {
					return err
				}
				out = KnowledgeItem{Kind: vocab.KindConstraint, ID: k.ID, Title: k.Name, Text: k.Description, By: k.AddedBy, At: k.AddedAt}
				return log(vocab.KindConstraint, k.ID)
			}
		}
		for i, g := range kn.Glossary {
			if normText(g.Term) == normText(id) {
				if err := c.writeList(vocab.GlossaryFile, append(kn.Glossary[:i:i], kn.Glossary[i+1:]...)); err != nil {
					return err
				}
				out = KnowledgeItem{Kind: vocab.KindTerm, ID: g.Term, Title: g.Term, Text: g.Definition, By: g.AddedBy, At: g.AddedAt, Revisions: len(g.History)}
				return log(vocab.KindTerm, g.Term)
			}
		}
		return fmt.Errorf("no decision, constraint or term %q: %w", id, ErrNotFound)
	})
	if err != nil {
		return KnowledgeItem{}, fmt.Errorf("workspace: remove knowledge entry: %w", err)
	}
	return out, nil
}

// knowledgePath joins rel (slash-separated, below the knowledge dir) safely.
func (c *KnowledgeStore) knowledgePath(rel string) (string, error) {
	rel = filepath.FromSlash(rel)
	if !filepath.IsLocal(rel) || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("workspace: knowledge path %q: %w", rel, ErrOutside)
	}
	rel = filepath.Clean(rel)
	real, err := filepath.EvalSymlinks(c.dir)
	if err != nil {
		return "", err
	}
	if err := checkNoEscape(c.dir, real, rel); err != nil {
		return "", fmt.Errorf("workspace: knowledge path %q: %w", rel, err)
	}
	return filepath.Join(c.dir, rel), nil
}

// Archive moves a note (from: its absolute path in its author's outbox,
// e.g. <task>/agents/lead/knowledge/1.md) to the archive (to, relative to
// the knowledge dir, e.g. "archive/<task>_c1_lead-1.md"). Archiving again is harmless: when the file is already
// gone and the archive exists, or the archive holds the same content, it
// succeeds.
func (c *KnowledgeStore) Archive(from, to string) error {
	if !filepath.IsAbs(from) {
		return fmt.Errorf("workspace: archive knowledge %q: not an absolute path", from)
	}
	src := filepath.Clean(from)
	dst, err := c.knowledgePath(to)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("workspace: archive knowledge %s: %w", from, err)
	}
	if err := os.Link(src, dst); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			a, aerr := readNoFollow(src)
			b, berr := readNoFollow(dst)
			if aerr == nil && berr == nil && bytes.Equal(a, b) {
				break // archived before; just drop the inbox copy
			}
			if errors.Is(aerr, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("workspace: archive knowledge %s to %s: %w", from, to, ErrExists)
		case errors.Is(err, fs.ErrNotExist):
			if _, serr := os.Lstat(dst); serr == nil {
				return nil // moved already
			}
			return fmt.Errorf("workspace: archive knowledge %s: %w", from, err)
		default:
			if err := os.Rename(src, dst); err != nil {
				return fmt.Errorf("workspace: archive knowledge %s: %w", from, err)
			}
			return syncDir(filepath.Dir(dst))
		}
	}
	if err := os.Remove(src); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace: archive knowledge %s: %w", from, err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("workspace: archive knowledge %s: %w", from, err)
	}
	return syncDir(filepath.Dir(src))
}
