// Package fakeapi is a scripted fake of the model APIs for tests that run
// real agent CLIs offline: the Anthropic Messages API for Claude Code
// (ANTHROPIC_BASE_URL), the OpenAI Responses API for Codex (a
// model_providers base_url, openai.go) and the Gemini API for Gemini CLI
// (GOOGLE_GEMINI_BASE_URL, gemini.go). Its "model" is the
// shared sim script: when the conversation's last user message carries a
// `[HIVEMIND]` line naming an assignment file, it answers with one `Write`
// tool call per turn creating the files the script decides, then a short
// final text. Every request is logged for assertions.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Script configures the fake model.
type Script struct {
	// Scenario drives the sim script (rejections, checkpoint issues,
	// friction, forbidden write). Its Pace is the delay between streamed
	// SSE events (slow streaming) unless ChunkDelay is set.
	Scenario script.Scenario
	// Seed makes the script's random choices reproducible.
	Seed uint64
	// Errors answer some of an agent's requests with an HTTP error.
	Errors []ErrorRule
	// Waits hold back some of an agent's answers until the run under test
	// got somewhere (a script step that must come after another).
	Waits []WaitRule
	// ChunkDelay is the pause between SSE events (default Scenario.Pace).
	ChunkDelay time.Duration
	// Model is reported in responses (default: the requested model).
	Model string
	// Project overrides the project directory (default: derived from the
	// assignment path, <project>/.hivemind/tasks/<id>/assignments/x-1.json).
	Project string
}

// DefaultScript uses the default scenario (reject the first plan, report
// checkpoint issues once).
func DefaultScript() Script { return Script{Scenario: script.DefaultScenario(), Seed: 1} }

// ErrorRule answers the next Count model requests of Agent ("" = any agent,
// including requests without one) with Status (429 rate limit or 529
// overloaded). With For set, it answers every model request of Agent for
// that long instead, counted from the first request it answers. With Turn
// set, only requests of turns whose [HIVEMIND] line contains Turn count.
type ErrorRule struct {
	Agent      string
	Turn       string
	Status     int
	Count      int
	For        time.Duration
	RetryAfter time.Duration // sent as retry-after (seconds, rounded up); 0 = no header

	until time.Time // end of the For window, once started
}

// WaitRule holds back the answer to every model request of Agent's turns
// whose [HIVEMIND] line contains Turn until Until reports true (polled)
// or For has passed since the request came, whichever is first.
type WaitRule struct {
	Agent string
	Turn  string
	Until func() bool
	For   time.Duration
}

// matches reports whether a rule for agent and turn covers rec.
func matches(agent, turn string, rec *Request) bool {
	return (agent == "" || agent == rec.Agent) && (turn == "" || strings.Contains(rec.Line, turn))
}

// Request is one logged HTTP request and what the fake answered.
type Request struct {
	At     time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Kind is "messages" (Anthropic), "responses" (OpenAI), "gemini"
	// (generateContent and streamGenerateContent), "count_tokens" or
	// "other".
	Kind   string
	Stream bool
	Model  string
	// Agent is the agent named by the conversation's assignment path
	// (assignments/<agent>-<seq>.json) or the X-Hivemind-Agent header.
	Agent string
	// Line is the user message carrying the current turn's [HIVEMIND]
	// line ("" for requests outside a turn).
	Line string
	// Assignment is the assignment path of the current [HIVEMIND] turn.
	// Side calls quoting the line (title generation) carry it too; check
	// HasTools to tell the agent's own turns apart.
	Assignment string
	// Prompt is the text of the last user message (tool results omitted).
	Prompt string
	// Cwd is the agent's working directory as its system prompt states it
	// ("Primary working directory: …"); empty if absent.
	Cwd string
	// SessionID is Claude Code's conversation id (metadata.user_id's
	// session_id, or the X-Claude-Code-Session-Id header).
	SessionID string
	// HasTools is true when the request offered the Write tool (a main
	// agent turn rather than a side call such as title generation).
	HasTools bool
	// Status is the HTTP status answered.
	Status int
	// Reply says what was answered: "text", "tool_use", or "error".
	Reply string
	// Tool and ToolPath describe the tool call answered, if any (Write or
	// Read; exec_command, apply_patch or shell for Codex; write_file for
	// Gemini); ToolID is its call id and ToolContent the content written.
	Tool        string
	ToolPath    string
	ToolID      string
	ToolContent string
	// Results are the tool results the request carries for the previous
	// tool calls (what the CLI's real tools answered).
	Results []ToolResult
	// StopReason is the answer's stop_reason ("tool_use" or "end_turn";
	// the OpenAI and Gemini wires map theirs to these).
	StopReason string
	// InputTokens and OutputTokens are the usage the answer reported.
	InputTokens, OutputTokens int
}

// ToolResult is one tool_result block sent back by Claude Code.
type ToolResult struct {
	ID      string
	IsError bool
	Text    string
}

// Server is a running fake API.
type Server struct {
	srv    *httptest.Server
	script Script

	mu     sync.Mutex
	reqs   []Request
	plans  map[string][]script.FileWrite
	narr   map[string]script.Narration
	errs   []ErrorRule
	nextID int
}

// New starts a fake API listening on 127.0.0.1:0.
func New(s Script) *Server {
	if s.ChunkDelay == 0 {
		s.ChunkDelay = s.Scenario.Pace
	}
	f := &Server{script: s, plans: map[string][]script.FileWrite{}, narr: map[string]script.Narration{},
		errs: append([]ErrorRule(nil), s.Errors...)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the base URL for ANTHROPIC_BASE_URL.
func (f *Server) URL() string { return f.srv.URL }

// Close stops the server (waiting for open requests).
func (f *Server) Close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Requests returns a copy of the request log.
func (f *Server) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// AddError adds an error rule while the server runs.
func (f *Server) AddError(r ErrorRule) {
	f.mu.Lock()
	f.errs = append(f.errs, r)
	f.mu.Unlock()
}

func (f *Server) log(r Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.mu.Unlock()
}

func (f *Server) id(prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	return fmt.Sprintf("%s_fake%06d", prefix, f.nextID)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Kind: "other"}
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages/count_tokens"):
		rec.Kind = "count_tokens"
		rec.Status = http.StatusOK
		f.log(rec)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 1 + len(body)/4})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/messages"):
		rec.Kind = "messages"
		f.messages(w, r, &rec)
		f.log(rec)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		rec.Kind = "responses"
		f.responses(w, r, &rec)
		f.log(rec)
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/models/") && strings.Contains(r.URL.Path, ":"):
		rec.Kind = "gemini"
		f.gemini(w, r, &rec)
		f.log(rec)
	default:
		rec.Status = http.StatusOK
		f.log(rec)
		if strings.Contains(r.URL.Path, "models") || r.Method == http.MethodGet {
			writeJSON(w, http.StatusOK, map[string]any{"data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ---- request model ----

type apiRequest struct {
	Model    string       `json:"model"`
	Messages []apiMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Metadata struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	OutputConfig struct {
		Format *jsonSchemaFormat `json:"format"`
	} `json:"output_config"`
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

func (m apiMessage) blocks() []block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

func (m apiMessage) text() string {
	var parts []string
	for _, b := range m.blocks() {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (m apiMessage) toolResults() []ToolResult {
	var out []ToolResult
	for _, b := range m.blocks() {
		if b.Type != "tool_result" {
			continue
		}
		r := ToolResult{ID: b.ToolUseID, IsError: b.IsError}
		var s string
		if json.Unmarshal(b.Content, &s) == nil {
			r.Text = s
		} else {
			var bs []block
			_ = json.Unmarshal(b.Content, &bs)
			for _, x := range bs {
				r.Text += x.Text
			}
		}
		out = append(out, r)
	}
	return out
}

func (m apiMessage) hasToolResult() bool {
	for _, b := range m.blocks() {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// hivemindPath returns the assignment path of a [HIVEMIND] line in text.
func hivemindPath(text string) string {
	for _, l := range strings.Split(text, "\n") {
		i := strings.Index(l, "[HIVEMIND]")
		if i < 0 {
			continue
		}
		if m := script.AssignmentRE.FindString(l[i:]); m != "" {
			return strings.Trim(m, "`'\"()<>")
		}
	}
	return ""
}

// agentOf is the agent whose assignment file path is
// (assignments/<agent>-<seq>.json, or <agent>.json).
func agentOf(path string) string {
	if path == "" {
		return ""
	}
	agent, _, _ := vocab.AssignmentOf(filepath.Base(path))
	return string(agent)
}

type step struct {
	text       string
	tool       string // "Write", "Read" or ""
	path       string
	content    string
	stopReason string
}

func (f *Server) messages(w http.ResponseWriter, r *http.Request, rec *Request) {
	var req apiRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		rec.Status = http.StatusBadRequest
		rec.Reply = "error"
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "fakeapi: bad json: "+err.Error()))
		return
	}
	rec.Stream, rec.Model = req.Stream, req.Model
	rec.SessionID = sessionID(req.Metadata.UserID, r.Header)
	rec.Cwd = workingDir(req.System)
	d := claudeTools
	for _, t := range req.Tools {
		switch t.Name {
		case claudeTools.write:
			rec.HasTools = true
		case opencodeTools.write:
			rec.HasTools, d = true, opencodeTools
		}
	}
	// Find the [HIVEMIND] message this turn belongs to: the last user
	// message, or the last one before a run of tool results.
	h, last := -1, -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = i
			break
		}
	}
	if last >= 0 {
		rec.Prompt = req.Messages[last].text()
		rec.Results = req.Messages[last].toolResults()
		for i := last; i >= 0; i-- {
			m := req.Messages[i]
			if m.Role != "user" {
				continue
			}
			if p := hivemindPath(m.text()); p != "" {
				h = i
				rec.Assignment, rec.Line = p, m.text()
				break
			}
			if strings.Contains(m.text(), "[HIVEMIND]") {
				// A notice: its line carries its content and names no
				// assignment; it is answered in words (error and wait
				// rules still match its turn).
				rec.Line = m.text()
				break
			}
			if !m.hasToolResult() {
				break // a newer human message without [HIVEMIND]
			}
		}
	}
	if a := r.Header.Get("X-Hivemind-Agent"); a != "" {
		rec.Agent = a
	} else {
		rec.Agent = agentOf(rec.Assignment)
		if rec.Agent == "" {
			for _, m := range req.Messages {
				if p := hivemindPath(m.text()); p != "" {
					rec.Agent = agentOf(p)
				}
			}
		}
	}
	f.wait(r, rec)
	if st, ok := f.takeError(rec); ok {
		rec.Status, rec.Reply = st.Status, "error"
		if st.RetryAfter > 0 {
			w.Header().Set("retry-after", fmt.Sprint(int((st.RetryAfter+time.Second-1)/time.Second)))
		}
		w.Header().Set("x-should-retry", "true")
		kind := "rate_limit_error"
		if st.Status == 529 {
			kind = "overloaded_error"
		}
		writeJSON(w, st.Status, apiError(kind, fmt.Sprintf("fakeapi: scripted %d for %s", st.Status, rec.Agent)))
		return
	}
	var s step
	if h >= 0 && rec.HasTools {
		s = f.nextStep(req.Messages, h, rec.Assignment, rec.Cwd, d)
	} else {
		s = step{text: sideText(req), stopReason: "end_turn"}
	}
	rec.Status = http.StatusOK
	rec.StopReason = s.stopReason
	rec.Tool, rec.ToolPath = s.tool, s.path
	rec.Reply = "text"
	if s.tool != "" {
		rec.Reply = "tool_use"
	}
	model := req.Model
	if f.script.Model != "" {
		model = f.script.Model
	}
	content := f.content(s, d)
	for _, b := range content {
		if b["type"] == "tool_use" {
			rec.ToolID, _ = b["id"].(string)
		}
	}
	rec.ToolContent = s.content
	rec.InputTokens, rec.OutputTokens = usageOf(len(rec.Body), s)
	usage := map[string]any{"input_tokens": rec.InputTokens, "output_tokens": rec.OutputTokens,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": f.id("msg"), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": s.stopReason, "stop_sequence": nil, "usage": usage})
		return
	}
	f.stream(w, r, model, content, s.stopReason, usage)
}

// workingDirRE finds the working directory Claude Code states in its
// system prompt.
var workingDirRE = regexp.MustCompile(`(?i)working directory: *(/[^\s<>"]*)`)

// workingDir returns the working directory named in a system prompt
// (a string or a list of text blocks).
func workingDir(system json.RawMessage) string {
	var text string
	if json.Unmarshal(system, &text) != nil {
		var bs []block
		_ = json.Unmarshal(system, &bs)
		for _, b := range bs {
			text += b.Text + "\n"
		}
	}
	if m := workingDirRE.FindStringSubmatch(text); m != nil {
		return filepath.Clean(m[1])
	}
	return ""
}

// sessionID extracts Claude Code's session id from the request.
func sessionID(userID string, h http.Header) string {
	var u struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(userID), &u) == nil && u.SessionID != "" {
		return u.SessionID
	}
	if _, after, ok := strings.Cut(userID, "_session_"); ok {
		return after
	}
	return h.Get("X-Claude-Code-Session-Id")
}

func apiError(kind, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}}
}

// sideText answers side calls (title generation, summaries, probes). A
// request for structured output (output_config.format json_schema, as
// Claude Code's title generation sends) gets a JSON object with every
// property filled.
func sideText(req apiRequest) string {
	if f := req.OutputConfig.Format; f != nil && f.Type == "json_schema" {
		return schemaObject(f.Schema)
	}
	return "OK."
}

// wait holds the request back while a WaitRule covers it (never past
// the rule's For, nor after the client gave up).
func (f *Server) wait(r *http.Request, rec *Request) {
	for _, w := range f.script.Waits {
		if !matches(w.Agent, w.Turn, rec) {
			continue
		}
		deadline := time.Now().Add(w.For)
		tick := time.NewTicker(100 * time.Millisecond)
		for !w.Until() && time.Now().Before(deadline) {
			select {
			case <-r.Context().Done():
				tick.Stop()
				return
			case <-tick.C:
			}
		}
		tick.Stop()
	}
}

func (f *Server) takeError(rec *Request) (ErrorRule, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	for i := range f.errs {
		e := &f.errs[i]
		if !matches(e.Agent, e.Turn, rec) {
			continue
		}
		if e.For > 0 {
			if e.until.IsZero() {
				e.until = now.Add(e.For)
			}
			if now.Before(e.until) {
				return *e, true
			}
			continue
		}
		if e.Count > 0 {
			e.Count--
			return *e, true
		}
	}
	return ErrorRule{}, false
}

// filesFor runs the script once per [HIVEMIND] turn and caches the result,
// so retries and later steps see the same decision even after files changed.
func (f *Server) filesFor(key, path, cwd string) ([]script.FileWrite, script.Narration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fw, ok := f.plans[key]; ok {
		return fw, f.narr[key]
	}
	var a vocab.Assignment
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	if err != nil {
		n := script.Narration{Summary: "I could not read the assignment " + path + ": " + err.Error()}
		f.plans[key], f.narr[key] = nil, n
		return nil, n
	}
	if a.Agent == "" {
		a.Agent = vocab.AgentID(agentOf(path))
	}
	taskDir := filepath.Dir(filepath.Dir(path))
	// Like a real model, write project files relative to the agent's
	// working directory (a worker's git worktree), unless overridden.
	project := f.script.Project
	if project == "" {
		project = cwd
	}
	if project == "" {
		project = filepath.Dir(filepath.Dir(filepath.Dir(taskDir)))
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	rnd := rand.New(rand.NewPCG(f.script.Seed, h.Sum64()))
	fw, n := f.script.Scenario.Respond(a, taskDir, project, rnd)
	f.plans[key], f.narr[key] = fw, n
	return fw, n
}

// nextStep decides the answer in a [HIVEMIND] turn from the tool calls made
// since message h: Read an existing file before overwriting it (Claude
// Code's Write refuses otherwise), Write the next file, or finish.
func (f *Server) nextStep(msgs []apiMessage, h int, path, cwd string, d toolNames) step {
	key := fmt.Sprintf("%d\x00%s\x00%s", h, path, msgs[h].text())
	files, narr := f.filesFor(key, path, cwd)
	results := map[string]block{}
	for _, m := range msgs[h+1:] {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.blocks() {
			if b.Type == "tool_result" {
				results[b.ToolUseID] = b
			}
		}
	}
	i, lastRead, needRead := 0, "", false
	retried := map[int]bool{}
	for _, m := range msgs[h+1:] {
		if m.Role != "assistant" {
			continue
		}
		for _, b := range m.blocks() {
			if b.Type != "tool_use" {
				continue
			}
			var in map[string]any
			_ = json.Unmarshal(b.Input, &in)
			filePath, _ := in[d.path].(string)
			lastRead = ""
			switch b.Name {
			case d.shell:
				cmd, _ := in["command"].(string)
				if i < len(files) && files[i].Command != "" && stepLabel(cmd) == files[i].Path {
					i++
				}
			case d.read:
				lastRead = filePath
			case d.write:
				if i < len(files) && filePath == files[i].Path {
					res := results[b.ID]
					if res.IsError && !files[i].Forbidden && !retried[i] {
						retried[i], needRead = true, true
						continue
					}
					i++
					needRead = false
				}
			}
		}
	}
	if i >= len(files) {
		return step{text: narr.Summary, stopReason: "end_turn"}
	}
	fw := files[i]
	var text string
	if i == 0 && lastRead == "" && len(narr.Thoughts) > 0 {
		text = strings.Join(narr.Thoughts, "\n")
	}
	if fw.Command != "" {
		return step{text: text, tool: "Bash", path: fw.Path, content: fw.Command, stopReason: "tool_use"}
	}
	if lastRead != fw.Path && (needRead || fileExists(fw.Path)) {
		return step{text: text, tool: "Read", path: fw.Path, stopReason: "tool_use"}
	}
	return step{text: text, tool: "Write", path: fw.Path, content: fw.Content, stopReason: "tool_use"}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// toolNames are the file and shell tools of a CLI on the Messages wire:
// their names and the input key of the path (the shell's is "command").
type toolNames struct{ write, read, path, shell string }

var (
	// claudeTools are Claude Code's Write, Read and Bash.
	claudeTools = toolNames{"Write", "Read", "file_path", "Bash"}
	// opencodeTools are opencode's write, read and bash (opencode-ai 1.18).
	opencodeTools = toolNames{"write", "read", "filePath", "bash"}
)

// content builds the response content blocks of a step, with the file
// tools of dialect d.
func (f *Server) content(s step, d toolNames) []map[string]any {
	var c []map[string]any
	if s.text != "" {
		c = append(c, map[string]any{"type": "text", "text": s.text})
	}
	switch s.tool {
	case "Write":
		c = append(c, map[string]any{"type": "tool_use", "id": f.id("toolu"), "name": d.write,
			"input": map[string]any{d.path: s.path, "content": s.content}})
	case "Read":
		c = append(c, map[string]any{"type": "tool_use", "id": f.id("toolu"), "name": d.read,
			"input": map[string]any{d.path: s.path}})
	case "Bash":
		c = append(c, map[string]any{"type": "tool_use", "id": f.id("toolu"), "name": d.shell,
			"input": map[string]any{"command": s.content, "description": "Run a scripted command"}})
	}
	if len(c) == 0 {
		c = append(c, map[string]any{"type": "text", "text": "Done."})
	}
	return c
}

// stream writes the SSE event sequence of one message.
func (f *Server) stream(w http.ResponseWriter, r *http.Request, model string, content []map[string]any, stopReason string, usage map[string]any) {
	w.Header().Set("request-id", f.id("req"))
	send := f.sse(w, r)
	startUsage := map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": f.id("msg"), "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage}}) {
		return
	}
	send("ping", map[string]any{"type": "ping"})
	for i, b := range content {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, chunk := range chunks(b["text"].(string), 24) {
				if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": chunk}}) {
					return
				}
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			for _, chunk := range chunks(string(in), 256) {
				if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}}) {
					return
				}
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of about n bytes without splitting runes.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// UserPrompts returns the text of every user message of the request's
// conversation that is not a tool result, oldest first (what was typed into
// Claude Code, with any reminders Claude added to the same message).
func (r Request) UserPrompts() []string {
	var req apiRequest
	if json.Unmarshal(r.Body, &req) != nil {
		return nil
	}
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" && !m.hasToolResult() {
			out = append(out, m.text())
		}
	}
	return out
}

// HivemindLines returns every [HIVEMIND] line typed into the request's
// conversation, oldest first: the injected messages the model has seen.
func (r Request) HivemindLines() []string {
	var out []string
	for _, p := range r.UserPrompts() {
		for _, l := range strings.Split(p, "\n") {
			if i := strings.Index(l, "[HIVEMIND]"); i >= 0 {
				out = append(out, strings.TrimSpace(l[i:]))
			}
		}
	}
	return out
}

// TurnsEnded counts the model turns for that assignment path that ended
// (main requests, offering tools, answered with stop_reason end_turn). Side
// calls such as title generation also quote the [HIVEMIND] line; they are
// not counted.
func (f *Server) TurnsEnded(assignment string) int {
	n := 0
	for _, r := range f.Requests() {
		if (r.Kind == "messages" || r.Kind == "responses" || r.Kind == "gemini") && r.HasTools && r.Assignment == assignment && r.StopReason == "end_turn" {
			n++
		}
	}
	return n
}

// Files returns what the script decided for the newest [HIVEMIND] turn
// naming that assignment path (nil if none was seen yet).
func (f *Server) Files(assignment string) []script.FileWrite {
	f.mu.Lock()
	defer f.mu.Unlock()
	var newest []script.FileWrite
	best := -1
	for k, v := range f.plans {
		var h int
		parts := strings.SplitN(k, "\x00", 3)
		if len(parts) < 2 || parts[1] != assignment {
			continue
		}
		_, _ = fmt.Sscan(parts[0], &h)
		if h > best {
			best, newest = h, v
		}
	}
	return append([]script.FileWrite(nil), newest...)
}
