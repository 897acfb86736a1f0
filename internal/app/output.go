package app

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Printer writes one line per event: human-readable, or JSON lines.
type Printer struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	// tap, when set, receives notices instead of w (the full-screen UI).
	tap func(level, msg string)
}

// redirect sends records to w and notices to tap (when not nil) from now on.
func (p *Printer) redirect(w io.Writer, tap func(level, msg string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.w, p.tap = w, tap
}

// NewPrinter prints to w, JSON lines when jsonLines is set.
func NewPrinter(w io.Writer, jsonLines bool) *Printer { return &Printer{w: w, json: jsonLines} }

// Record prints one events.jsonl record.
func (p *Printer) Record(r vocab.EventRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, err := json.Marshal(r)
		if err != nil {
			return
		}
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	fmt.Fprintln(p.w, FormatRecord(r))
}

// notice prints a message of Hivemind itself (notifications, shutdown).
func (p *Printer) notice(level, msg string) {
	p.mu.Lock()
	if tap := p.tap; tap != nil {
		p.mu.Unlock()
		tap(level, msg)
		return
	}
	defer p.mu.Unlock()
	if p.json {
		b, _ := json.Marshal(map[string]any{"time": time.Now().UTC(), "type": "notice", "level": level, "message": msg})
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	mark := map[string]string{"warn": "!", "error": "✗"}[level]
	if mark == "" {
		mark = "•"
	}
	fmt.Fprintf(p.w, "%s %s %s\n", time.Now().Format("15:04:05"), mark, msg)
}

// FormatRecord renders a record as one human line:
// "15:04:05 type agent key=value …".
func FormatRecord(r vocab.EventRecord) string {
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b.WriteString(t.Local().Format("15:04:05"))
	typ, input := r.Type.InputKind()
	if input {
		b.WriteString(" ← ")
	} else {
		b.WriteString(" ")
	}
	b.WriteString(typ)
	if r.Agent != "" {
		b.WriteString(" [" + string(r.Agent) + "]")
	}
	for _, k := range slices.Sorted(maps.Keys(r.Details)) {
		v := r.Details[k]
		if k == "content" {
			if s, ok := v.(string); ok {
				fmt.Fprintf(&b, " content=%dB", len(s))
				continue
			}
		}
		b.WriteString(" " + k + "=" + short(v))
	}
	return b.String()
}

// short renders a detail value on one line, clipped.
func short(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case map[string]any:
		// An object with an id (a task, a subtask) is named by it.
		if id, ok := x["id"].(string); ok && id != "" {
			return id
		}
		bs, _ := json.Marshal(x)
		s = string(bs)
	default:
		bs, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(bs)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	if strings.ContainsAny(s, " =") {
		s = fmt.Sprintf("%q", s)
	}
	return s
}
