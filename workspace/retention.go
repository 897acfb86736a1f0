package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Default retention periods (days after a task finished).
const (
	DefaultFullDays    = 7
	DefaultSummaryDays = 30
)

// summaryKeep are the entries a summarised task keeps.
var summaryKeep = []string{vocab.TaskFile, vocab.TaskMarkdown, vocab.StateFile, BlobsDir, vocab.FrictionDir}

// CleanupReport says what Cleanup did.
type CleanupReport struct {
	// Summarized are tasks reduced to task.json, task.md, the final
	// state.json and friction/ in this run.
	Summarized []string
	// Deleted are tasks removed entirely in this run.
	Deleted []string
	// Kept are finished tasks still within the full retention period, and
	// unfinished tasks (never touched).
	Kept []string
	// Skipped are tasks left alone because their state could not be read,
	// with the reason.
	Skipped map[string]string
	// FreedBytes is the size of the files removed.
	FreedBytes int64
}

// Cleanup applies retention at time now. A task that is over (complete,
// cancelled or abandoned: State.Over) and ended less than fullDays ago is
// kept whole; after that it is reduced
// to its summary (task.json, task.md, the final state.json and the blobs/ it references, friction/);
// after summaryDays it is deleted. The cross-task friction.json is never
// touched, and neither is an unfinished task or one whose state cannot be
// read. fullDays ≤ 0 and summaryDays ≤ 0 mean the defaults (7, 30);
// summaryDays must not be less than fullDays. The finish time is the
// state's EndedAt, else state.json's mtime.
func (w *Workspace) Cleanup(now time.Time, fullDays, summaryDays int) (CleanupReport, error) {
	rep := CleanupReport{Skipped: map[string]string{}}
	if fullDays <= 0 {
		fullDays = DefaultFullDays
	}
	if summaryDays <= 0 {
		summaryDays = DefaultSummaryDays
	}
	if summaryDays < fullDays {
		return rep, fmt.Errorf("workspace: cleanup: summary period (%d days) shorter than full period (%d days)", summaryDays, fullDays)
	}
	infos, err := w.Tasks()
	if err != nil {
		return rep, fmt.Errorf("workspace: cleanup: %w", err)
	}
	day := 24 * time.Hour
	for _, in := range infos {
		if in.State == nil {
			if in.Problem != "" {
				rep.Skipped[in.ID] = in.Problem
			} else {
				rep.Kept = append(rep.Kept, in.ID)
			}
			continue
		}
		if !finished(in.State) {
			rep.Kept = append(rep.Kept, in.ID)
			continue
		}
		// Only a state read from state.json itself counts; a state that
		// exists only as a backup means something is wrong: leave it.
		if in.Problem != "" {
			rep.Skipped[in.ID] = in.Problem
			continue
		}
		end := in.State.EndedAt()
		if end.IsZero() {
			if fi, err := os.Stat(filepath.Join(in.Dir, vocab.StateFile)); err == nil {
				end = fi.ModTime()
			}
		}
		age := now.Sub(end)
		switch {
		case age >= time.Duration(summaryDays)*day:
			n := dirSize(in.Dir)
			if err := os.RemoveAll(in.Dir); err != nil {
				return rep, fmt.Errorf("workspace: cleanup: delete task %s: %w", in.ID, err)
			}
			rep.FreedBytes += n
			rep.Deleted = append(rep.Deleted, in.ID)
		case age >= time.Duration(fullDays)*day:
			n, changed, err := summarize(in.Dir)
			rep.FreedBytes += n
			if err != nil {
				return rep, fmt.Errorf("workspace: cleanup: summarise task %s: %w", in.ID, err)
			}
			if changed {
				rep.Summarized = append(rep.Summarized, in.ID)
			} else {
				rep.Kept = append(rep.Kept, in.ID)
			}
		default:
			rep.Kept = append(rep.Kept, in.ID)
		}
	}
	return rep, nil
}

// summarize removes everything in dir but the summary entries.
func summarize(dir string) (freed int64, changed bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, false, err
	}
	for _, e := range entries {
		if slices.Contains(summaryKeep, e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		n := dirSize(p)
		// RemoveAll does not follow symlinks: a planted link is removed,
		// not its target.
		if err := os.RemoveAll(p); err != nil {
			return freed, changed, err
		}
		freed += n
		changed = true
	}
	return freed, changed, nil
}

// dirSize sums regular file sizes under p without following symlinks.
func dirSize(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
