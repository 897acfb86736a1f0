package flow

import (
	"errors"
	"fmt"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ErrCannotResume wraps every reason RecoverState refuses to resume a task;
// nothing on disk was changed.
var ErrCannotResume = errors.New("cannot resume")

// Recovery says where a resumed task's state came from.
type Recovery int

const (
	// FromState: state.json (or a backup the store restored).
	FromState Recovery = iota
	// FromEvents: state.json and every backup were gone; the state was
	// rebuilt by folding events.jsonl's input records through Step.
	FromEvents
	// NothingRecorded: no state and no input was ever recorded (the
	// process died before the task's first write): nothing was done, and
	// the task may start from task.json.
	NothingRecorded
)

// RecoverState decides what a task resumed after a restart starts from,
// so a resume never silently loses or redoes work:
//   - a state.json naming a phase this version does not know is refused
//     (ErrCannotResume), never run;
//   - with state.json and its backups gone (fresh), the state is rebuilt
//     from the input records of events.jsonl (history), which the runner
//     writes before each step: folding them through m gives the state the
//     last step left (the replay Step guarantees);
//   - with nothing recorded at all it reports NothingRecorded.
func RecoverState(m Stepper, loaded State, fresh bool, history []vocab.EventRecord) (State, Recovery, error) {
	if !fresh {
		if !loaded.Phase.Known() {
			return State{}, FromState, fmt.Errorf("%w: state.json of task %s names the state %q, which this version of hivemind does not know "+
				"(written by a newer version, or edited by hand); nothing was changed: upgrade hivemind, or set \"state\" to a known state",
				ErrCannotResume, loaded.TaskID, loaded.Phase)
		}
		return loaded, FromState, nil
	}
	s := State{Phase: vocab.PhaseIdle}
	inputs := 0
	for i, rec := range history {
		ev, ok, err := DecodeEvent(rec)
		if !ok {
			continue
		}
		if err != nil {
			return State{}, FromEvents, fmt.Errorf("%w: state.json and its backups are gone and events.jsonl line %d cannot be replayed: %v", ErrCannotResume, i+1, err)
		}
		s, _ = m.Step(s, ev)
		inputs++
	}
	if inputs == 0 {
		return State{}, NothingRecorded, nil
	}
	if s.TaskID == "" {
		return State{}, FromEvents, fmt.Errorf("%w: state.json and its backups are gone and events.jsonl does not record the task's start", ErrCannotResume)
	}
	return s, FromEvents, nil
}
