package flow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Events have two encodings, both driven by eventKinds: MarshalEvent's
// envelope {"type": kind, "event": <the struct as JSON>} (deferred events in
// state.json, Resumed.OnDisk, replay files) and EncodeEvent's events.jsonl
// record {"type": "input.<kind>", "details": <eventWire>}. Both formats are
// on disk in users' workspaces: keep them byte-compatible.

// eventKinds is every event, by kind name (in both encodings: MarshalEvent's
// "type" and events.jsonl's "input.<kind>"), with its gate. An event missing
// here cannot be encoded (TestEventCodecsRoundTrip fails).
var eventKinds, eventKindsByType = kinds(
	kind[TaskSubmitted]("task_submitted", gateNone),
	kind[ProjectSelected]("project_selected", gateNone),
	// Without a task, Resumed still takes what is on disk (a trigger that
	// starts nothing is reported as ignored).
	kind[Resumed]("resumed", gateNone),
	kind[TriggerCompleted]("trigger_completed", gateTask),
	kind[SubtaskDone]("subtask_done", gateTask),
	// Health is recorded in every state; only a failure is deferred while
	// paused (stepper.health).
	kind[AgentHealth]("agent_health", gateNone),
	// Deliveries are recorded in every state; only a failure is deferred
	// while paused (stepper.injection).
	kind[InjectionResult]("injection_result", gateNone),
	kind[TimerFired]("timer_fired", gateNone),
	kind[KeyPressed]("key_pressed", gateNone),
	kind[StateNotSaved]("state_not_saved", gateNone),
	// The kind keeps its first name: it is in users' events.jsonl.
	kind[KnowledgeSubmitted]("context_submitted", gateTask),
	kind[CheckpointMerged]("checkpoint_merged", gateTask),
	// Usage is recorded in every state (spend continues while paused).
	kind[AgentUsage]("agent_usage", gateNone),
)

// eventKind is one kind of event: its name and gate, how to set its time,
// and how to decode it from either encoding.
type eventKind struct {
	name      string
	gate      gate
	withTime  func(e Event, at time.Time) Event
	unmarshal func([]byte) (Event, error)
	fromWire  func(w *eventWire, agent vocab.AgentID, at time.Time) (Event, error)
	typ       reflect.Type
}

// timed is a pointer to an event: it sets the event's time (When's
// setTime), so the registry can stamp any event without a method per type.
type timed[E any] interface {
	*E
	setTime(at time.Time)
}

// kind is E's entry in eventKinds. It does not compile for a type that does
// not embed When or lacks toWire and fromWire.
func kind[E Event, P timed[E]](name string, g gate) eventKind {
	var zero E
	return eventKind{
		name: name,
		gate: g,
		withTime: func(e Event, at time.Time) Event {
			x := e.(E)
			P(&x).setTime(at)
			return x
		},
		unmarshal: func(b []byte) (Event, error) {
			var e E
			err := json.Unmarshal(b, &e)
			return e, err
		},
		fromWire: zero.fromWire,
		typ:      reflect.TypeFor[E](),
	}
}

func kinds(ks ...eventKind) (byName map[string]eventKind, byType map[reflect.Type]eventKind) {
	byName = make(map[string]eventKind, len(ks))
	byType = make(map[reflect.Type]eventKind, len(ks))
	for _, k := range ks {
		byName[k.name], byType[k.typ] = k, k
	}
	return byName, byType
}

// kindOf is e's entry in eventKinds; ok is false for an event not
// registered there.
func kindOf(e Event) (k eventKind, ok bool) {
	k, ok = eventKindsByType[reflect.TypeOf(e)]
	return k, ok
}

// kindName is e's kind name ("" for an event not registered).
func kindName(e Event) string {
	k, _ := kindOf(e)
	return k.name
}

// gateOf is e's gate (gateNone for an event not registered).
func gateOf(e Event) gate {
	k, _ := kindOf(e)
	return k.gate
}

// withTime returns e with its time set to at (e unchanged if it is not
// registered).
func withTime(e Event, at time.Time) Event {
	if k, ok := kindOf(e); ok {
		return k.withTime(e, at)
	}
	return e
}

// registered reports whether e's kind is in eventKinds.
func registered(e Event) bool {
	_, ok := kindOf(e)
	return ok
}

type eventEnvelope struct {
	Type  string          `json:"type"`
	Event json.RawMessage `json:"event"`
}

// MarshalEvent encodes an event as {"type": "<kind>", "event": {...}}, one
// line of JSON (the replay and deferred-event format).
func MarshalEvent(e Event) ([]byte, error) {
	if e == nil || !registered(e) {
		return nil, fmt.Errorf("engine: marshal event: unknown event %T", e)
	}
	t := kindName(e)
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("engine: marshal %s: %w", t, err)
	}
	return json.Marshal(eventEnvelope{Type: t, Event: body})
}

// UnmarshalEvent decodes what MarshalEvent produced.
func UnmarshalEvent(data []byte) (Event, error) {
	var env eventEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("engine: unmarshal event: %w", err)
	}
	k, ok := eventKinds[env.Type]
	if !ok {
		return nil, fmt.Errorf("engine: unmarshal event: unknown type %q", env.Type)
	}
	e, err := k.unmarshal(env.Event)
	if err != nil {
		return nil, fmt.Errorf("engine: unmarshal %s: %w", env.Type, err)
	}
	return e, nil
}

func marshalEvents(evs []Event) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, ev := range evs {
		raw, err := MarshalEvent(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func unmarshalEvents(raw []json.RawMessage) ([]Event, error) {
	var out []Event
	for _, r := range raw {
		ev, err := UnmarshalEvent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// resumedJSON is Resumed as JSON: OnDisk as MarshalEvent envelopes.
type resumedJSON struct {
	At     time.Time
	Retry  bool              `json:",omitempty"`
	OnDisk []json.RawMessage `json:",omitempty"`
}

// MarshalJSON encodes OnDisk with MarshalEvent, so it decodes back.
func (e Resumed) MarshalJSON() ([]byte, error) {
	raw, err := marshalEvents(e.OnDisk)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resumedJSON{At: e.At, Retry: e.Retry, OnDisk: raw})
}

// UnmarshalJSON reverses MarshalJSON.
func (e *Resumed) UnmarshalJSON(data []byte) error {
	var w resumedJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	evs, err := unmarshalEvents(w.OnDisk)
	if err != nil {
		return err
	}
	*e = Resumed{When: When{At: w.At}, Retry: w.Retry, OnDisk: evs}
	return nil
}

// eventWire is the details object of an input record.
type eventWire struct {
	Task      *vocab.Task  `json:"task,omitempty"`
	TaskDir   string       `json:"task_dir,omitempty"`
	ModTime   *time.Time   `json:"mod_time,omitempty"`
	Inode     uint64       `json:"inode,omitempty"`
	Project   string       `json:"project,omitempty"`
	Path      string       `json:"path,omitempty"`
	Content   *string      `json:"content,omitempty"`
	Subtask   string       `json:"subtask,omitempty"`
	OK        *bool        `json:"ok,omitempty"`
	Problem   string       `json:"problem,omitempty"`
	Health    vocab.Health `json:"health,omitempty"`
	ExitCode  *int         `json:"exit_code,omitempty"`
	PID       int          `json:"pid,omitempty"`
	Detail    string       `json:"detail,omitempty"`
	Cause     string       `json:"cause,omitempty"`
	Stopped   bool         `json:"stopped,omitempty"`
	Seq       *int         `json:"seq,omitempty"`
	Delivered *bool        `json:"delivered,omitempty"`
	Cancelled bool         `json:"cancelled,omitempty"`
	ID        string       `json:"id,omitempty"`
	Action    string       `json:"action,omitempty"`
	// Merge is a CheckpointMerged, whole.
	Merge *CheckpointMerged `json:"merge,omitempty"`
	// Usage is an AgentUsage's usage, Files the session files it sums.
	Usage *vocab.Usage `json:"usage,omitempty"`
	Files []string     `json:"files,omitempty"`
	// OnDisk are a Resumed's on-disk events (MarshalEvent envelopes).
	OnDisk []json.RawMessage `json:"on_disk,omitempty"`
}

// setFile records a file an event carries (a trigger, a knowledge entry):
// its path, whole content and modification time (when known).
func (w *eventWire) setFile(path string, content []byte, mod time.Time) {
	c := string(content)
	w.Path, w.Content = path, &c
	if !mod.IsZero() {
		w.ModTime = &mod
	}
}

// file is what setFile recorded.
func (w *eventWire) file() (path string, content []byte, mod time.Time) {
	if w.Content != nil {
		content = []byte(*w.Content)
	}
	if w.ModTime != nil {
		mod = *w.ModTime
	}
	return w.Path, content, mod
}

// EncodeEvent turns an input event into its events.jsonl record (Type
// "input.<kind>"); DecodeEvent reverses it, so a log can be replayed
// through Step.
func EncodeEvent(ev Event, task string) vocab.EventRecord {
	var w eventWire
	agent := ev.toWire(&w)
	var details map[string]any
	if b, err := json.Marshal(w); err == nil {
		_ = json.Unmarshal(b, &details)
	}
	if len(details) == 0 {
		details = nil
	}
	return vocab.EventRecord{Time: ev.Time(), Type: vocab.InputRecord(kindName(ev)), Task: task, Agent: agent, Details: details}
}

// DecodeEvent turns an input record written by the runner back into the
// event. ok is false for records that are not input events.
func DecodeEvent(rec vocab.EventRecord) (ev Event, ok bool, err error) {
	name, found := rec.Type.InputKind()
	if !found {
		return nil, false, nil
	}
	k, known := eventKinds[name]
	if !known {
		return nil, true, fmt.Errorf("engine: decode: unknown input event %q", rec.Type)
	}
	var w eventWire
	if rec.Details != nil {
		b, err := json.Marshal(rec.Details)
		if err != nil {
			return nil, true, fmt.Errorf("engine: decode %s: %w", rec.Type, err)
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, true, fmt.Errorf("engine: decode %s: %w", rec.Type, err)
		}
	}
	ev, err = k.fromWire(&w, rec.Agent, rec.Time)
	if err != nil {
		return nil, true, fmt.Errorf("engine: decode %s: %w", rec.Type, err)
	}
	return ev, true, nil
}
