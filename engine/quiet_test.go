package engine

import (
	"slices"
	"testing"
	"time"
)

// The quiet tracker's rules, one step at a time: each step is something
// the owner does at a time (ms after t0), then what it must find.
func TestQuietTracker(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	v1, v2 := watchSig{size: 1}, watchSig{size: 2}

	type step struct {
		at    int      // ms
		do    string   // see, ready, report, hold, holdChange, forget
		sig   watchSig // for see
		turn  bool     // for ready: the writer's turn ended
		until int      // for hold (ms)
		want  bool     // for ready
		next  int      // the tracker's next wake after the step (ms; -1: none)
		due   bool     // "a" is due at the step's time
	}
	tests := []struct {
		name  string
		quiet time.Duration
		steps []step
	}{
		{"quiet period then once", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 50, do: "ready", want: false, next: 100},
			{at: 100, do: "see", sig: v1, next: 100, due: true},
			{at: 100, do: "ready", want: true, next: 100, due: true},
			{at: 100, do: "report", next: -1},
			{at: 500, do: "ready", want: false, next: -1},
		}},
		{"a change restarts the period", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 80, do: "see", sig: v2, next: 180},
			{at: 150, do: "ready", want: false, next: 180},
			{at: 180, do: "ready", want: true, next: 180, due: true},
		}},
		{"turn ended skips the period", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 1, do: "ready", turn: true, want: true, next: 100},
			{at: 1, do: "report", next: -1},
			{at: 2, do: "ready", turn: true, want: false, next: -1},
		}},
		{"a new version after a report is reported again", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 100, do: "report", next: -1},
			{at: 300, do: "see", sig: v2, next: 400},
			{at: 400, do: "ready", want: true, next: 400, due: true},
		}},
		{"zero period is taken as given", 0, []step{
			{at: 0, do: "see", sig: v1, next: 0, due: true},
			{at: 0, do: "ready", want: true, next: 0, due: true},
		}},
		{"a hold waits for its time, not the period", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 100, do: "hold", until: 2000, next: 2000},
			{at: 500, do: "ready", want: true, next: 2000},
			{at: 2000, do: "ready", want: true, next: 2000, due: true},
		}},
		{"a hold until change never wakes; a change ends it", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 100, do: "holdChange", next: -1},
			{at: 9000, do: "see", sig: v1, next: -1},
			{at: 9000, do: "see", sig: v2, next: 9100},
		}},
		{"forgotten is new", 100 * time.Millisecond, []step{
			{at: 0, do: "see", sig: v1, next: 100},
			{at: 100, do: "report", next: -1},
			{at: 200, do: "forget", next: -1},
			{at: 200, do: "see", sig: v1, next: 300},
			{at: 300, do: "ready", want: true, next: 300, due: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQuietTracker(tc.quiet)
			var f *quietFile
			for i, s := range tc.steps {
				now := at(s.at)
				switch s.do {
				case "see":
					f = q.see("a", s.sig, now)
				case "ready":
					if got := q.ready(f, now, s.turn); got != s.want {
						t.Fatalf("step %d: ready = %v, want %v", i, got, s.want)
					}
				case "report":
					f.report()
				case "hold":
					f.hold(at(s.until))
				case "holdChange":
					f.hold(time.Time{})
				case "forget":
					q.forget("a")
				}
				wantNext := time.Time{}
				if s.next >= 0 {
					wantNext = at(s.next)
				}
				if got := q.next(); !got.Equal(wantNext) {
					t.Fatalf("step %d (%s): next = %v, want %v", i, s.do, got.Sub(t0), wantNext.Sub(t0))
				}
				if got := slices.Contains(q.due(now), "a"); got != s.due {
					t.Fatalf("step %d (%s): due = %v, want %v", i, s.do, got, s.due)
				}
			}
		})
	}
}

// reportedAs and keep: what ScanComplete and a rescan rely on.
func TestQuietTrackerReportedAsKeep(t *testing.T) {
	q := newQuietTracker(time.Second)
	now := time.Now()
	v := watchSig{size: 1}
	q.see("a", v, now).report()
	q.see("b", v, now)
	if !q.reportedAs("a", v) || q.reportedAs("a", watchSig{size: 2}) || q.reportedAs("b", v) || q.reportedAs("c", v) {
		t.Fatal("reportedAs: want only a at v")
	}
	q.keep(map[string]bool{"b": true})
	if q.reportedAs("a", v) || len(q.files) != 1 {
		t.Fatalf("keep: a kept (%d files)", len(q.files))
	}
}
