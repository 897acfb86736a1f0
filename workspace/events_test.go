package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestEventLogAppendRead(t *testing.T) {
	_, td := newTask(t)
	l, err := OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	in := []vocab.EventRecord{
		{Time: at, Type: "task_created", Agent: "lead", Details: map[string]any{"n": float64(1), "text": "multi\nline \"quoted\""}},
		{Type: "plan_ready"},
	}
	for _, r := range in {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(vocab.EventRecord{Type: "bad", Details: map[string]any{"ch": make(chan int)}}); err == nil {
		t.Error("unmarshalable details accepted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := l.Append(vocab.EventRecord{Type: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	recs, torn, err := ReadEvents(l.Path())
	if err != nil || torn || len(recs) != 2 {
		t.Fatalf("ReadEvents = %d recs, torn %v, %v", len(recs), torn, err)
	}
	if !recs[0].Time.Equal(at) || recs[0].Task != td.ID() || recs[0].Details["text"] != "multi\nline \"quoted\"" {
		t.Errorf("rec 0 = %+v", recs[0])
	}
	if recs[1].Time.IsZero() || recs[1].Task != td.ID() {
		t.Errorf("defaults not filled: %+v", recs[1])
	}
	if _, _, err := ReadEvents(filepath.Join(td.Dir(), "nope.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file err = %v", err)
	}
}

func TestParseEvents(t *testing.T) {
	ev := func(typ string) string { return `{"time":"2026-01-01T00:00:00Z","type":"` + typ + `","task":"t"}` }
	tests := []struct {
		name    string
		data    string
		n       int
		torn    bool
		errLine int // 0 = no error
	}{
		{"empty", "", 0, false, 0},
		{"one", ev("a") + "\n", 1, false, 0},
		{"unterminated complete last line", ev("a") + "\n" + ev("b"), 2, false, 0},
		{"torn last line", ev("a") + "\n" + ev("b")[:20], 1, true, 0},
		{"torn only line", `{"ti`, 0, true, 0},
		{"blank lines skipped", "\n" + ev("a") + "\n\n  \n" + ev("b") + "\n", 2, false, 0},
		{"bad middle line", ev("a") + "\n{broken\n" + ev("c") + "\n", 1, false, 2},
		{"terminated torn line is an error", ev("a") + "\n" + ev("b")[:20] + "\n", 1, false, 2},
		{"not an object", "[1,2]\n", 0, false, 1},
		{"no type", `{"task":"t"}` + "\n", 0, false, 1},
		{"crlf", ev("a") + "\r\n" + ev("b") + "\r\n", 2, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, torn, err := ParseEvents([]byte(tc.data))
			if len(recs) != tc.n || torn != tc.torn {
				t.Errorf("got %d recs torn=%v; want %d torn=%v", len(recs), torn, tc.n, tc.torn)
			}
			if tc.errLine == 0 {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadEvents) || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.errLine)) {
				t.Errorf("err = %v; want ErrBadEvents at line %d", err, tc.errLine)
			}
		})
	}
}

// TestEventLogTornLine simulates a crash mid-append: the reader reports the
// torn line, and the next append drops it (logging that it did) instead of
// gluing the new event onto it.
func TestEventLogTornLine(t *testing.T) {
	_, td := newTask(t)
	l, err := OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(vocab.EventRecord{Type: "first"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"time":"2026-01-01T00:00:00Z","type":"sec`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, torn, err := ReadEvents(l.Path())
	if err != nil || !torn || len(recs) != 1 {
		t.Fatalf("torn file: %d recs torn=%v err=%v", len(recs), torn, err)
	}
	if err := l.Append(vocab.EventRecord{Type: "third"}); err != nil {
		t.Fatal(err)
	}
	recs, torn, err = ReadEvents(l.Path())
	if err != nil || torn {
		t.Fatalf("after repair: torn=%v err=%v", torn, err)
	}
	var types []string
	for _, r := range recs {
		types = append(types, string(r.Type))
	}
	if got := strings.Join(types, ","); got != "first,"+string(vocab.RecordEventsTornLineDropped)+",third" {
		t.Fatalf("types = %s", got)
	}
	if frag, _ := recs[1].Details["fragment"].(string); !strings.HasPrefix(frag, `{"time"`) {
		t.Errorf("dropped fragment not recorded: %+v", recs[1].Details)
	}

	// A complete last line missing only its newline is kept.
	f, _ = os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	_, _ = f.WriteString(`{"time":"2026-01-01T00:00:00Z","type":"fourth","task":"x"}`)
	f.Close()
	if err := l.Append(vocab.EventRecord{Type: "fifth"}); err != nil {
		t.Fatal(err)
	}
	recs, _, err = ReadEvents(l.Path())
	if err != nil || len(recs) != 5 || recs[3].Type != "fourth" || recs[4].Type != "fifth" {
		t.Fatalf("recs %+v err %v", recs, err)
	}
}

func TestEventLogSymlinkRefused(t *testing.T) {
	_, td := newTask(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, victim, filepath.Join(td.Dir(), vocab.EventsFile))
	if _, err := OpenEventLog(td); err == nil {
		t.Fatal("opened events through a symlink")
	}
	if _, _, err := ReadEvents(filepath.Join(td.Dir(), vocab.EventsFile)); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadEvents through a symlink: %v", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("victim changed: %q", got)
	}
}

// checkNoInterleave reads the log and checks every line is intact and each
// agent's events are in order and complete.
func checkNoInterleave(t *testing.T, path string, perAgent map[vocab.AgentID]int) {
	t.Helper()
	recs, torn, err := ReadEvents(path)
	if err != nil || torn {
		t.Fatalf("ReadEvents: torn=%v err=%v", torn, err)
	}
	next := map[vocab.AgentID]int{}
	for _, r := range recs {
		i := int(r.Details["i"].(float64))
		if i != next[r.Agent] {
			t.Fatalf("agent %s: event %d after %d", r.Agent, i, next[r.Agent]-1)
		}
		if pad, _ := r.Details["pad"].(string); pad != strings.Repeat(string(r.Agent), 1000) {
			t.Fatalf("agent %s event %d: payload damaged", r.Agent, i)
		}
		next[r.Agent]++
	}
	for a, n := range perAgent {
		if next[a] != n {
			t.Errorf("agent %s: %d events, want %d", a, next[a], n)
		}
	}
}

func TestEventLogConcurrentGoroutines(t *testing.T) {
	_, td := newTask(t)
	const goroutines, n = 8, 50
	logs := make([]*EventLog, 2) // two descriptors, as two components would have
	for i := range logs {
		l, err := OpenEventLog(td)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs[i] = l
	}
	var wg sync.WaitGroup
	want := map[vocab.AgentID]int{}
	for g := range goroutines {
		agent := vocab.AgentID("g" + strconv.Itoa(g))
		want[agent] = n
		wg.Go(func() {
			for i := range n {
				if err := logs[g%2].Append(vocab.EventRecord{Type: "test", Agent: agent, Details: map[string]any{"i": i, "pad": strings.Repeat(string(agent), 1000)}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkNoInterleave(t, logs[0].Path(), want)
}

// TestEventLogConcurrentProcesses appends from several processes (the test
// binary re-executed) and goroutines here at once.
func TestEventLogConcurrentProcesses(t *testing.T) {
	w, td := newTask(t)
	const procs, n = 4, 60
	want := map[vocab.AgentID]int{}
	var helpers []*helper
	for p := range procs {
		agent := "p" + strconv.Itoa(p)
		want[vocab.AgentID(agent)] = n
		helpers = append(helpers, startHelper(t, "append", "WS_ROOT="+w.Root(), "WS_TASK="+td.ID(), "WS_N="+strconv.Itoa(n), "WS_AGENT="+agent))
	}
	l, err := OpenEventLog(td)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want["local"] = n
	for i := range n {
		if err := l.Append(vocab.EventRecord{Type: "test", Agent: "local", Details: map[string]any{"i": i, "pad": strings.Repeat("local", 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range helpers {
		if err := h.cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	checkNoInterleave(t, l.Path(), want)
}

func TestFollowEvents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, vocab.EventsFile) // does not exist yet
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan vocab.EventRecord, 100)
	done := make(chan error, 1)
	go func() { done <- FollowEvents(ctx, path, 0, func(r vocab.EventRecord) { got <- r }) }()

	expect := func(typ vocab.RecordType) {
		t.Helper()
		select {
		case r := <-got:
			if r.Type != typ {
				t.Fatalf("got %s (%v), want %s", r.Type, r.Details, typ)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event within 10s", typ)
		}
	}
	appendRaw := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	appendRaw(`{"type":"one"}` + "\n")
	expect("one")
	// A partial line is delivered only when complete.
	appendRaw(`{"type":"tw`)
	appendRaw(`o"}` + "\n" + "not json\n" + `{"type":"three"}` + "\n")
	expect("two")
	expect(vocab.RecordEventsBadLine)
	expect("three")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("FollowEvents returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FollowEvents did not stop on cancel")
	}
	select {
	case r := <-got:
		t.Errorf("unexpected event %+v", r)
	default:
	}

	// Starting at an offset skips what came before.
	data, _ := os.ReadFile(path)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { done <- FollowEvents(ctx2, path, int64(len(data)), func(r vocab.EventRecord) { got <- r }) }()
	appendRaw(`{"type":"four"}` + "\n")
	expect("four")
	cancel2()
	<-done
}
