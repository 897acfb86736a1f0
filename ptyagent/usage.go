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
	"time"
)

// This file reads the token usage each CLI records of a session on disk:
// Claude Code's transcript, Codex's rollout file and Gemini CLI's chat file
// (all JSON lines; the Stop hooks' transcript_path names them). One reader
// takes all three, recognising each line by its shape, so it needs no
// profile and a team mixing CLIs reads every agent the same way.

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

// usageLine holds the fields of the three formats that ReadUsage needs.
type usageLine struct {
	Type string `json:"type"`
	// Claude Code: {"type":"assistant","message":{"id","model","usage"}}.
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
	// Codex: {"type":"turn_context","payload":{"model"}},
	// {"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage"}}}
	// and {"type":"event_msg","payload":{"type":"task_complete","error":…}}.
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
	// Gemini CLI: {"id","type":"gemini","model","tokens":{…}}, appended
	// again whenever the message is updated.
	ID     string `json:"id"`
	Model  string `json:"model"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
	} `json:"tokens"`
}

// ReadUsage sums the usage recorded in a session file of Claude Code, Codex
// or Gemini CLI. A message recorded several times (streamed, or updated)
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
	path  string
	off   int64 // bytes parsed: the start of the next line
	skip  bool  // off is inside a line longer than maxUsageLine
	u     Usage // model and limit so far (counts are summed by Read)
	byID  map[string]counts
	order []string
	codex *counts
	anon  int
}

// NewUsageFile follows the session file at path.
func NewUsageFile(path string) *UsageFile { return &UsageFile{path: path, byID: map[string]counts{}} }

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
				parseUsageLine(bytes.TrimSpace(line), &f.u, f.put, &f.codex)
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

// put records one message's counts: a message recorded again replaces
// its earlier record.
func (f *UsageFile) put(id string, m counts) {
	if id == "" {
		f.anon++
		id = fmt.Sprintf("#%d", f.anon)
	}
	if _, ok := f.byID[id]; !ok {
		f.order = append(f.order, id)
	}
	f.byID[id] = m
}

// usage sums what the file recorded so far.
func (f *UsageFile) usage() Usage {
	u := f.u
	for _, id := range f.order {
		m := f.byID[id]
		u.Input += m.in
		u.Output += m.out
		u.CacheRead += m.cr
		u.CacheWrite += m.cw
	}
	if c := f.codex; c != nil {
		u.Input += c.in
		u.Output += c.out
		u.CacheRead += c.cr
		u.CacheWrite += c.cw
	}
	return u
}

// parseUsageLine adds one line's record to u (model, limit) and put
// (per-message counts), or to *codex (Codex's running total).
func parseUsageLine(b []byte, u *Usage, put func(string, counts), codex **counts) {
	if len(b) == 0 || b[0] != '{' {
		return
	}
	var l usageLine
	if json.Unmarshal(b, &l) != nil {
		return
	}
	switch {
	case l.Type == "assistant" && l.Message != nil && l.Message.Usage != nil:
		m := l.Message.Usage
		put(l.Message.ID, counts{m.Input, m.Output, m.CacheRead, m.CacheCreate})
		if l.Message.Model != "" {
			u.Model = l.Message.Model
		}
	case l.Type == "gemini" && l.Tokens != nil:
		t := l.Tokens
		// Gemini's input count includes its cache hits; thoughts are
		// billed as output.
		put(l.ID, counts{max(t.Input-t.Cached, 0), t.Output + t.Thoughts, t.Cached, 0})
		if l.Model != "" {
			u.Model = l.Model
		}
	case l.Payload == nil:
	case l.Type == "turn_context" && l.Payload.Model != "":
		u.Model = l.Payload.Model
	case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Total != nil:
		t := l.Payload.Info.Total
		// OpenAI's input count includes its cache hits.
		*codex = &counts{max(t.Input-t.Cached, 0), t.Output, t.Cached, t.CacheWrite}
	case l.Type == "event_msg" && l.Payload.Type == "task_started":
		u.RateLimited, u.Detail = false, "" // a new turn: the last one's failure is past
	case l.Type == "event_msg" && l.Payload.Type == "task_complete":
		u.RateLimited, u.Detail = false, ""
		if len(l.Payload.Error) > 0 && string(l.Payload.Error) != "null" {
			u.Detail = clip(string(l.Payload.Error), 200)
			u.RateLimited = codexStatus429(l.Payload.Error)
		}
	}
}

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
	var u Usage
	f, err := os.Open(path)
	if err != nil {
		return u
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return u
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
	var c *counts
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // still being written
		}
		parseUsageLine(bytes.TrimSpace(b[:i]), &u, func(string, counts) {}, &c)
		b = b[i+1:]
	}
	return u
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
