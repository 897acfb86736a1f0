package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ReadEventsProgress streams the log with the same result as ParseEvents
// (a torn tail left out, a bad line named) and reports its progress in
// steps up to the whole file.
func TestReadEventsProgress(t *testing.T) {
	defer func(v int64) { eventsProgressStep = v }(eventsProgressStep)
	eventsProgressStep = 4 << 10
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, `{"time":"2026-11-28T00:00:00Z","type":"note","details":{"i":%d}}`+"\n", i)
	}
	full := b.String()
	for name, tc := range map[string]struct {
		data      string
		torn, bad bool
	}{
		"whole": {data: full},
		"torn":  {data: full + `{"time":"2026-11-28T00:00:00Z","ty`, torn: true},
		"bad":   {data: full + "garbage\n" + full, bad: true},
	} {
		p := filepath.Join(t.TempDir(), vocab.EventsFile)
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		var calls []int64
		recs, torn, err := ReadEventsProgress(p, func(done, total int64) {
			if total != int64(len(tc.data)) {
				t.Errorf("%s: total %d, want %d", name, total, len(tc.data))
			}
			calls = append(calls, done)
		})
		want, wtorn, werr := ParseEvents([]byte(tc.data))
		if !reflect.DeepEqual(recs, want) || torn != wtorn || (err != nil) != (werr != nil) || torn != tc.torn || (err != nil) != tc.bad {
			t.Fatalf("%s: %d records torn=%v err=%v; ParseEvents %d torn=%v err=%v", name, len(recs), torn, err, len(want), wtorn, werr)
		}
		if tc.bad && !strings.Contains(err.Error(), "line 501") {
			t.Errorf("%s: error %v does not name line 501", name, err)
		}
		if !tc.bad && len(calls) < len(tc.data)/(4<<10)-1 {
			t.Errorf("%s: %d progress calls for %d bytes", name, len(calls), len(tc.data))
		}
	}
}
