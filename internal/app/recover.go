package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/vocab"
)

// recover decides what a resumed task starts from (flow.RecoverState):
// its state.json, the state rebuilt from events.jsonl when state.json and
// its backups are gone or it references content (blobs/) that is missing
// or corrupt, or — only when nothing was ever recorded and no
// work is on disk — a fresh start from task.json. Anything else is refused
// with the reason and the command to start over: a resume never silently
// loses or redoes work. It returns the state (zero for a fresh start), the
// first event and records to log.
func (w *wiring) recover() (engine.State, engine.Event, []vocab.EventRecord, error) {
	task, terr := w.td.Task()
	startOver := ""
	if terr == nil {
		startOver = fmt.Sprintf(" To start the task over instead: hivemind --project %s %s", w.project, strconv.Quote(task.Description))
	}
	if old := w.td.LegacyLayout(); old != "" {
		return engine.State{}, nil, nil, fmt.Errorf("task %s: %w: it was started by an older Hivemind whose agents wrote their files at the task directory's root (%s there); "+
			"this version takes them only from each agent's outbox %s/<agent id>/ and would never see them. Finish it with the version that started it, "+
			"or start it again; nothing was changed.%s", w.td.ID(), flow.ErrCannotResume, old, vocab.OutboxesDir, startOver)
	}
	reason := "state.json and its backups are gone"
	if w.lost != "" {
		reason = w.lost
	}
	st, from, err := flow.RecoverState(newMachine(w.cfg, w.git != nil), w.loaded, w.fresh || w.lost != "", w.history)
	if err != nil {
		return engine.State{}, nil, nil, fmt.Errorf("task %s: %w.%s", w.td.ID(), err, startOver)
	}
	switch from {
	case flow.FromEvents:
		return st, engine.Resumed{Retry: w.o.Retry}, []vocab.EventRecord{{Type: vocab.RecordStateRebuilt,
			Details: map[string]any{"from": vocab.EventsFile, "state": string(st.Phase), "reason": reason}}}, nil
	case flow.NothingRecorded:
		if w.lost != "" {
			return engine.State{}, nil, nil, fmt.Errorf("task %s: %w: %s, and events.jsonl records nothing to rebuild it from; nothing was changed.%s",
				w.td.ID(), flow.ErrCannotResume, w.lost, startOver)
		}
		if work := workOnDisk(w.td.Dir()); work != "" {
			return engine.State{}, nil, nil, fmt.Errorf("task %s: %w: state.json, its backups and events.jsonl are gone but work is on disk (%s); nothing was changed.%s",
				w.td.ID(), flow.ErrCannotResume, work, startOver)
		}
		// The process died before the task's first write: nothing was
		// done, so it starts from task.json.
		if terr != nil {
			return engine.State{}, nil, nil, terr
		}
		return engine.State{}, engine.TaskSubmitted{Task: task, TaskDir: w.td.Dir()}, nil, nil
	}
	return st, engine.Resumed{Retry: w.o.Retry}, nil, nil
}

// workOnDisk names the first sign that a task did work (an archived
// trigger, an output), or "".
func workOnDisk(dir string) string {
	for _, sub := range []string{vocab.ReviewsDir, vocab.OutboxesDir} {
		if es, err := os.ReadDir(filepath.Join(dir, sub)); err == nil && len(es) > 0 {
			return filepath.Join(sub, es[0].Name())
		}
	}
	return ""
}
