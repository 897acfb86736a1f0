package flow

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestRecoverState(t *testing.T) {
	sc := newScenario(t)
	sc.toCheckpointReview()
	var history []vocab.EventRecord
	for i, e := range sc.log {
		history = append(history, EncodeEvent(e, "t1"))
		if i == 2 {
			// Records that are not inputs are skipped.
			history = append(history, vocab.EventRecord{Type: "state_changed", Task: "t1"})
		}
	}
	cases := []struct {
		name    string
		loaded  State
		fresh   bool
		history []vocab.EventRecord
		want    State
		from    Recovery
		err     string
	}{
		{"state.json loaded", sc.s, false, history, sc.s, FromState, ""},
		{"state and backups gone: rebuilt from events", State{}, true, history, sc.s, FromEvents, ""},
		{"nothing recorded", State{}, true, nil, State{}, NothingRecorded, ""},
		{"unknown state refused", State{TaskID: "t1", Phase: "warp_speed"}, false, history, State{}, FromState, `names the state "warp_speed"`},
		{"undecodable input refused", State{}, true, []vocab.EventRecord{{Type: vocab.InputPrefix + "bogus"}}, State{}, FromEvents, "line 1 cannot be replayed"},
		{"no task start refused", State{}, true, []vocab.EventRecord{EncodeEvent(KeyPressed{Action: KeyPause, When: When{At: t0}}, "t1")}, State{}, FromEvents, "does not record the task's start"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, from, err := RecoverState(testMachine, c.loaded, c.fresh, c.history)
			if c.err != "" {
				if !errors.Is(err, ErrCannotResume) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || from != c.from {
				t.Fatalf("from %v err %v", from, err)
			}
			if !reflect.DeepEqual(marshalState(t, got), marshalState(t, c.want)) || (c.from == FromEvents && got.Timestamp.IsZero()) {
				t.Fatalf("state differs:\n%s\nwant\n%s", marshalState(t, got), marshalState(t, c.want))
			}
		})
	}
}
