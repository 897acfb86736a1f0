package ptyagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// This file reads the token usage each CLI records of a session on disk
// (JSON lines; the Stop hooks' transcript_path names the file). Each kind
// declares the format its CLI writes (Behavior.Usage: Claude Code's
// transcript, Codex's rollout file, Gemini CLI's chat file); one reader
// takes every registered format, recognising each line by its "type", so
// it needs no profile and a team mixing CLIs reads every agent the same
// way.

// Usage is what one session consumed. Input excludes cached input, which
// is counted in CacheRead (cache hits) and CacheWrite (tokens written to
// the prompt cache), so each count has one price.
type Usage struct {
	Model      string // the model of the last counted response
	Input      int64
	Output     int64 // including reasoning/thinking tokens
	CacheRead  int64
	CacheWrite int64
	// RateLimited is set when the session's last turn ended on an HTTP 429
	// (Codex records it in its task_complete), with the error in Detail;
	// a turn started since clears it.
	RateLimited bool
	Detail      string
}

// Tokens is the sum of every count.
func (u Usage) Tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Bounds of ReadUsage: a session file past maxUsageFile is refused, a line
// past maxUsageLine is skipped (a huge tool output, not a usage record).
const (
	maxUsageFile = 256 << 20
	maxUsageLine = 16 << 20
)

// counts are one message's tokens: input, output, cache read, cache write.
type counts struct{ in, out, cr, cw int64 }

// UsageFormat is how one CLI records usage in its session file: the
// "type" values of the JSON lines it reads, and how one such line adds to
// the records (Behavior.Usage).
type UsageFormat struct {
	Name  string
	Types []string
	Line  func(line []byte, r *UsageRecords)
}

// UsageRecords are what a session file's lines recorded so far: a
// UsageFormat's Line adds one line to them.
type UsageRecords struct {
	u     Usage // model and limit so far (counts are summed by Usage)
	byID  map[string]counts
	order []string
	total *counts
	anon  int
}

// Message records one message's tokens: a message recorded again
// (streamed, or updated) replaces its earlier record; an empty id is a
// message of its own.
func (r *UsageRecords) Message(id string, input, output, cacheRead, cacheWrite int64) {
	if id == "" {
		r.anon++
		id = fmt.Sprintf("#%d", r.anon)
	}
	if r.byID == nil {
		r.byID = map[string]counts{}
	}
	if _, ok := r.byID[id]; !ok {
		r.order = append(r.order, id)
	}
	r.byID[id] = counts{input, output, cacheRead, cacheWrite}
}

// Total records the session's running total (Codex): it replaces the last
// one, and adds to the messages.
func (r *UsageRecords) Total(input, output, cacheRead, cacheWrite int64) {
	r.total = &counts{input, output, cacheRead, cacheWrite}
}

// Model records the model of the last response ("" is ignored).
func (r *UsageRecords) Model(m string) {
	if m != "" {
		r.u.Model = m
	}
}

// Limit records how the last turn ended: rate limited, and why (a turn
// started: false, "").
func (r *UsageRecords) Limit(rateLimited bool, detail string) {
	r.u.RateLimited, r.u.Detail = rateLimited, detail
}

// Usage sums what was recorded so far.
func (r *UsageRecords) Usage() Usage {
	u := r.u
	for _, id := range r.order {
		m := r.byID[id]
		u.Input += m.in
		u.Output += m.out
		u.CacheRead += m.cr
		u.CacheWrite += m.cw
	}
	if c := r.total; c != nil {
		u.Input += c.in
		u.Output += c.out
		u.CacheRead += c.cr
		u.CacheWrite += c.cw
	}
	return u
}

// Read sums the whole lines of b in this format alone (lines of other
// formats are skipped).
func (f *UsageFormat) Read(b []byte) Usage {
	var r UsageRecords
	readLines(b, &r, func(typ string) *UsageFormat {
		if slices.Contains(f.Types, typ) {
			return f
		}
		return nil
	})
	return r.Usage()
}

// ReadUsage sums the usage recorded in a session file of any registered
// kind's format. A message recorded several times (streamed, or updated)
// counts once, as its last record; Codex's running total is taken as it
// last stands. A last line without its newline is still being written and
// is left for the next read; lines that are not usage records are skipped.
func ReadUsage(path string) (Usage, error) { return NewUsageFile(path).Read() }

// UsageFile follows one session file as it grows: each Read parses only
// the bytes appended since the last one, so a live session is read at the
// cost of its growth, and at any moment Read says what the file recorded
// so far. A file that shrank was rewritten: it is read again from its
// start. Not safe for concurrent use.
type UsageFile struct {
	path string
	off  int64 // bytes parsed: the start of the next line
	skip bool  // off is inside a line longer than maxUsageLine
	recs UsageRecords
}

// NewUsageFile follows the session file at path.
func NewUsageFile(path string) *UsageFile { return &UsageFile{path: path} }

// Path is the file followed.
func (f *UsageFile) Path() string { return f.path }

// Read parses what was appended since the last Read and returns the usage
// the whole file records.
func (f *UsageFile) Read() (Usage, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return f.usage(), err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return f.usage(), err
	}
	if fi.Size() > maxUsageFile {
		return f.usage(), fmt.Errorf("%s: %d bytes, more than the %d read for usage", f.path, fi.Size(), maxUsageFile)
	}
	if fi.Size() < f.off { // rewritten
		*f = *NewUsageFile(f.path)
	}
	if _, err := fh.Seek(f.off, io.SeekStart); err != nil {
		return f.usage(), err
	}
	r := bufio.NewReaderSize(io.LimitReader(fh, maxUsageFile-f.off), 64<<10)
	var line []byte
	tooBig := f.skip
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !tooBig && len(line)+len(chunk) <= maxUsageLine {
				line = append(line, chunk...)
			} else {
				f.off += int64(len(line) + len(chunk)) // skipped for good
				tooBig, line = true, line[:0]
			}
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return f.usage(), err
		case err != nil: // EOF: a partial last line is read next time
			f.skip = tooBig
			if tooBig {
				f.off += int64(len(chunk))
			}
		default:
			if !tooBig {
				line = append(line, chunk...)
				parseUsageLine(bytes.TrimSpace(line), &f.recs, usageFormatOf)
				f.off += int64(len(line))
			} else {
				f.off += int64(len(chunk))
			}
			tooBig, line = false, line[:0]
			continue
		}
		break
	}
	return f.usage(), nil
}

// usage sums what the file recorded so far.
func (f *UsageFile) usage() Usage { return f.recs.Usage() }

// parseUsageLine adds one line to r, read by the format of its "type"
// (format returns nil for a type no format reads: skipped).
func parseUsageLine(b []byte, r *UsageRecords, format func(typ string) *UsageFormat) {
	if len(b) == 0 || b[0] != '{' {
		return
	}
	var l struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &l) != nil {
		return
	}
	if f := format(l.Type); f != nil {
		f.Line(b, r)
	}
}

// readLines parses the complete lines of b into r.
func readLines(b []byte, r *UsageRecords, format func(typ string) *UsageFormat) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // still being written
		}
		parseUsageLine(bytes.TrimSpace(b[:i]), r, format)
		b = b[i+1:]
	}
}

// claudeUsage is Claude Code's transcript:
// {"type":"assistant","message":{"id","model","usage"}}, a message
// streamed in several records counting as its last.
var claudeUsage = &UsageFormat{Name: "Claude Code transcript", Types: []string{"assistant"},
	Line: func(b []byte, r *UsageRecords) {
		var l struct {
			Message *struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage *struct {
					Input       int64 `json:"input_tokens"`
					CacheCreate int64 `json:"cache_creation_input_tokens"`
					CacheRead   int64 `json:"cache_read_input_tokens"`
					Output      int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(b, &l) != nil || l.Message == nil || l.Message.Usage == nil {
			return
		}
		m := l.Message.Usage
		r.Message(l.Message.ID, m.Input, m.Output, m.CacheRead, m.CacheCreate)
		r.Model(l.Message.Model)
	}}

// ClaudeUsage is the format of Claude Code's transcript, for CLIs that
// write their usage the same way (opencode's plugin, the sim agent).
func ClaudeUsage() *UsageFormat { return claudeUsage }

// geminiUsage is Gemini CLI's chat file: {"id","type":"gemini","model",
// "tokens":{…}}, appended again whenever the message is updated.
var geminiUsage = &UsageFormat{Name: "Gemini CLI chat file", Types: []string{"gemini"},
	Line: func(b []byte, r *UsageRecords) {
		var l struct {
			ID     string `json:"id"`
			Model  string `json:"model"`
			Tokens *struct {
				Input    int64 `json:"input"`
				Output   int64 `json:"output"`
				Cached   int64 `json:"cached"`
				Thoughts int64 `json:"thoughts"`
			} `json:"tokens"`
		}
		if json.Unmarshal(b, &l) != nil || l.Tokens == nil {
			return
		}
		t := l.Tokens
		// Gemini's input count includes its cache hits; thoughts are
		// billed as output.
		r.Message(l.ID, max(t.Input-t.Cached, 0), t.Output+t.Thoughts, t.Cached, 0)
		r.Model(l.Model)
	}}

// codexUsage is Codex's rollout file: {"type":"turn_context","payload":
// {"model"}}, {"type":"event_msg","payload":{"type":"token_count","info":
// {"total_token_usage"}}} (a running total, taken as it last stands) and
// {"type":"event_msg","payload":{"type":"task_complete","error":…}}.
var codexUsage = &UsageFormat{Name: "Codex rollout file", Types: []string{"turn_context", "event_msg"},
	Line: func(b []byte, r *UsageRecords) {
		var l struct {
			Type    string `json:"type"`
			Payload *struct {
				Type  string `json:"type"`
				Model string `json:"model"`
				Info  *struct {
					Total *struct {
						Input      int64 `json:"input_tokens"`
						Cached     int64 `json:"cached_input_tokens"`
						CacheWrite int64 `json:"cache_write_input_tokens"`
						Output     int64 `json:"output_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
				Error json.RawMessage `json:"error"`
			} `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil || l.Payload == nil {
			return
		}
		switch p := l.Payload; {
		case l.Type == "turn_context":
			r.Model(p.Model)
		case p.Type == "token_count" && p.Info != nil && p.Info.Total != nil:
			t := p.Info.Total
			// OpenAI's input count includes its cache hits.
			r.Total(max(t.Input-t.Cached, 0), t.Output, t.Cached, t.CacheWrite)
		case p.Type == "task_started":
			r.Limit(false, "") // a new turn: the last one's failure is past
		case p.Type == "task_complete":
			r.Limit(false, "")
			if len(p.Error) > 0 && string(p.Error) != "null" {
				r.Limit(codexStatus429(p.Error), clip(string(p.Error), 200))
			}
		}
	}}

// codexStatus429 reports whether a Codex task_complete error carries
// http_status_code 429 (codex_error_info.<kind>.http_status_code).
func codexStatus429(raw json.RawMessage) bool {
	var e struct {
		Info map[string]struct {
			Status int `json:"http_status_code"`
		} `json:"codex_error_info"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	for _, v := range e.Info {
		if v.Status == 429 {
			return true
		}
	}
	return false
}

// codexFailCheck is how long a busy Codex session's output stays quiet
// before its session file is read for a failed turn.
const codexFailCheck = 2 * time.Second

// codexTail is how much of a Codex session file codexLastTurn reads: the
// last turn's records, not the whole conversation.
const codexTail = 256 << 10

// codexLastTurn reads the end of a Codex session file: RateLimited when
// its last turn ended on an HTTP 429 (task_complete) and none started
// since.
func codexLastTurn(path string) Usage {
	f, err := os.Open(path)
	if err != nil {
		return Usage{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return Usage{}
	}
	off := max(fi.Size()-codexTail, 0)
	b := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(b, off)
	b = b[:n]
	if off > 0 { // the first line is cut
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	var r UsageRecords
	readLines(b, &r, usageFormatOf)
	return r.Usage()
}

// noteTranscript records the session file a hook names.
func (s *Session) noteTranscript(payload []byte) {
	var p struct {
		Path string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) == nil && filepath.IsAbs(p.Path) {
		s.mu.Lock()
		s.transcript = p.Path
		s.mu.Unlock()
	}
}
