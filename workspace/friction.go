package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// frictionDoc is the content of friction.json.
type frictionDoc struct {
	Entries []vocab.FrictionEntry `json:"entries"`
}

// FrictionTypes are the allowed friction entry types.
var FrictionTypes = []string{vocab.FrictionRepeatedRevision, vocab.FrictionReviewerPattern, vocab.FrictionWorkerFailure, vocab.FrictionTimeout, vocab.FrictionEscalation}

// Friction statuses.
const (
	FrictionPending   = "pending"
	FrictionApplied   = "applied"
	FrictionDismissed = "dismissed"
)

// withFriction runs fn on the friction log under the in-process mutex and
// an flock on friction.json.lock, and writes it back atomically if fn
// returns write = true. A corrupt friction.json is an error; it is never
// overwritten.
func (w *Workspace) withFriction(fn func(doc *frictionDoc) (write bool, err error)) error {
	w.frictionMu.Lock()
	defer w.frictionMu.Unlock()
	lock, err := openLockFile(filepath.Join(w.root, vocab.FrictionFile+".lock"))
	if err != nil {
		return err
	}
	defer unlockFileKeep(lock)
	if err := flockWait(lock); err != nil {
		return err
	}
	path := filepath.Join(w.root, vocab.FrictionFile)
	doc, err := readFriction(path)
	if err != nil {
		return err
	}
	write, err := fn(&doc)
	if err != nil || !write {
		return err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o644)
}

func readFriction(path string) (frictionDoc, error) {
	var doc frictionDoc
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return doc, nil
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("%s is corrupt (fix or remove it): %w", path, err)
	}
	return doc, nil
}

func frictionKey(typ, desc string) string {
	return typ + "\x00" + strings.ToLower(strings.Join(strings.Fields(desc), " "))
}

// AddFriction records a friction entry in <root>/friction.json. An entry
// with the same type and description (ignoring case and spacing) is merged:
// occurrences are added, affected tasks united, an empty suggested action
// filled in. A new entry gets the next id friction_NNN, occurrences ≥ 1,
// status pending and timestamp now unless set. The stored entry is
// returned.
func (w *Workspace) AddFriction(e vocab.FrictionEntry) (vocab.FrictionEntry, error) {
	if !slices.Contains(FrictionTypes, e.Type) {
		return vocab.FrictionEntry{}, fmt.Errorf("workspace: add friction: unknown type %q (want one of %s)", e.Type, strings.Join(FrictionTypes, ", "))
	}
	if strings.TrimSpace(e.Description) == "" {
		return vocab.FrictionEntry{}, errors.New("workspace: add friction: empty description")
	}
	if e.Occurrences < 1 {
		e.Occurrences = 1
	}
	if e.Status == "" {
		e.Status = FrictionPending
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = w.now().UTC()
	}
	var out vocab.FrictionEntry
	err := w.withFriction(func(doc *frictionDoc) (bool, error) {
		key := frictionKey(e.Type, e.Description)
		maxN := 0
		for i := range doc.Entries {
			old := &doc.Entries[i]
			if n, err := strconv.Atoi(strings.TrimPrefix(old.ID, "friction_")); err == nil && n > maxN {
				maxN = n
			}
			if frictionKey(old.Type, old.Description) != key {
				continue
			}
			old.Occurrences += e.Occurrences
			for _, t := range e.AffectedTasks {
				if !slices.Contains(old.AffectedTasks, t) {
					old.AffectedTasks = append(old.AffectedTasks, t)
				}
			}
			if old.SuggestedAction == "" {
				old.SuggestedAction = e.SuggestedAction
			}
			out = *old
			return true, nil
		}
		e.ID = fmt.Sprintf("friction_%03d", maxN+1)
		var tasks []string
		for _, t := range e.AffectedTasks {
			if !slices.Contains(tasks, t) {
				tasks = append(tasks, t)
			}
		}
		e.AffectedTasks = tasks
		if e.AffectedTasks == nil {
			e.AffectedTasks = []string{}
		}
		doc.Entries = append(doc.Entries, e)
		out = e
		return true, nil
	})
	if err != nil {
		return vocab.FrictionEntry{}, fmt.Errorf("workspace: add friction: %w", err)
	}
	return out, nil
}

// UpdateFriction changes the entry with that id through fn (its id cannot
// change). An unknown id wraps ErrNotFound.
func (w *Workspace) UpdateFriction(id string, fn func(*vocab.FrictionEntry)) error {
	err := w.withFriction(func(doc *frictionDoc) (bool, error) {
		for i := range doc.Entries {
			if doc.Entries[i].ID == id {
				fn(&doc.Entries[i])
				doc.Entries[i].ID = id
				return true, nil
			}
		}
		return false, fmt.Errorf("entry %q: %w", id, ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("workspace: update friction: %w", err)
	}
	return nil
}

// Friction returns all friction entries in the order they were added.
func (w *Workspace) Friction() ([]vocab.FrictionEntry, error) {
	var out []vocab.FrictionEntry
	err := w.withFriction(func(doc *frictionDoc) (bool, error) {
		out = doc.Entries
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace: read friction: %w", err)
	}
	return out, nil
}
