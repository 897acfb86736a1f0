package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The OpenAI Responses API (POST /v1/responses), as Codex CLI speaks it
// with wire_api = "responses" (the only wire 0.169 accepts). The script's
// writes are answered as apply_patch calls: Codex's apply_patch function
// or custom tool when offered, else its exec_command (or shell) tool
// running an `apply_patch` heredoc, which Codex intercepts and applies
// with its own patch tool.

type responsesRequest struct {
	Model  string            `json:"model"`
	Input  []json.RawMessage `json:"input"`
	Tools  []responsesTool   `json:"tools"`
	Stream bool              `json:"stream"`
	// PromptCacheKey is Codex's conversation (thread) id.
	PromptCacheKey string `json:"prompt_cache_key"`
	Text           *struct {
		Format *jsonSchemaFormat `json:"format"`
	} `json:"text"`
}

// jsonSchemaFormat is a structured-output request (Anthropic's
// output_config.format, OpenAI's text.format).
type jsonSchemaFormat struct {
	Type   string     `json:"type"`
	Schema jsonSchema `json:"schema"`
}

// jsonSchema is the part of a JSON schema the fakes fill in.
type jsonSchema struct {
	Properties map[string]struct {
		Type string `json:"type"`
	} `json:"properties"`
}

type responsesTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// responsesItem is one input item: a message, a tool call or its output.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name"`
	CallID  string          `json:"call_id"`
	// Arguments (function_call) or Input (custom_tool_call).
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// text joins the item's text parts (content or output, string or parts).
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// codexWriteTools are the tools the fake can write a file with, best first.
var codexWriteTools = []string{"apply_patch", "exec_command", "shell"}

// exitCodeRE finds the exit status Codex reports for a command.
var exitCodeRE = regexp.MustCompile(`(?i)(?:exited with code|exit code:?)\s*(-?\d+)`)

// toolFailed reports whether a Codex tool output says the call failed: a
// non-zero exit status, else a first line saying it was rejected, blocked,
// denied or failed (only the first line: later lines hold paths and
// command output, which may contain any word).
func toolFailed(out string) bool {
	if m := exitCodeRE.FindStringSubmatch(out); m != nil {
		return m[1] != "0"
	}
	first, _, _ := strings.Cut(strings.ToLower(out), "\n")
	for _, w := range []string{"rejected", "blocked", "denied", "failed", "not allowed", "error"} {
		if strings.Contains(first, w) {
			return true
		}
	}
	return false
}

func (f *Server) responses(w http.ResponseWriter, r *http.Request, rec *Request) {
	var req responsesRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		rec.Status, rec.Reply = http.StatusBadRequest, "error"
		writeJSON(w, http.StatusBadRequest, openAIError("invalid_request_error", "fakeapi: bad json: "+err.Error()))
		return
	}
	rec.Stream, rec.Model = req.Stream, req.Model
	rec.SessionID = r.Header.Get("session-id")
	if rec.SessionID == "" {
		rec.SessionID = req.PromptCacheKey
	}
	offered := map[string]string{}
	for _, t := range req.Tools {
		offered[t.Name] = t.Type
	}
	writeTool := ""
	for _, n := range codexWriteTools {
		if _, ok := offered[n]; ok {
			writeTool = n
			break
		}
	}
	rec.HasTools = writeTool != ""

	items := make([]responsesItem, len(req.Input))
	texts := make([]*string, len(req.Input))
	for i, raw := range req.Input {
		_ = json.Unmarshal(raw, &items[i])
		it := items[i]
		if it.Type == "message" || (it.Type == "" && it.Role != "") {
			t := rawText(it.Content)
			if it.Role == "user" {
				texts[i] = &t
				if !isContext(t) {
					rec.Prompt = t
				}
			}
			if m := codexCwdRE.FindStringSubmatch(t); m != nil {
				rec.Cwd = m[1]
			}
		}
	}
	h, assignment, htext := locate(texts)
	assignment = resolve(assignment, rec.Cwd)
	rec.Assignment, rec.Line = assignment, htext
	rec.Agent = agentFor(r, assignment)
	if line, agent := notice(texts); h < 0 && line != "" {
		rec.Line = line // answered in words; error and wait rules match its turn
		if rec.Agent == "" {
			rec.Agent = agent
		}
	}
	in := turnInput{hivemind: h, hivemindAt: htext}
	if h >= 0 {
		paths := map[string]string{}
		for _, it := range items[h+1:] {
			switch it.Type {
			case "function_call":
				text := callText(it.Arguments)
				paths[it.CallID] = patchPath(text)
				if paths[it.CallID] == "" {
					paths[it.CallID] = stepLabel(text)
				}
				rec.Results = nil // Results answer the newest calls only
			case "custom_tool_call":
				paths[it.CallID] = patchPath(it.Input)
				rec.Results = nil
			case "function_call_output", "custom_tool_call_output":
				out := rawText(it.Output)
				failed := toolFailed(out)
				rec.Results = append(rec.Results, ToolResult{ID: it.CallID, IsError: failed, Text: out})
				if p := paths[it.CallID]; p != "" {
					in.calls = append(in.calls, writeCall{Path: p, Failed: failed})
				}
			}
		}
	}
	if f.scriptedError(w, r, rec, func(status int) any {
		kind := "rate_limit_exceeded"
		if status >= 500 {
			kind = "server_error"
		}
		return openAIError(kind, fmt.Sprintf("fakeapi: scripted %d for %s", status, rec.Agent))
	}) {
		return
	}
	var s step
	switch {
	case h >= 0 && rec.HasTools:
		s = f.writeStep(in, assignment, rec.Cwd)
	case req.Text != nil && req.Text.Format != nil && req.Text.Format.Type == "json_schema":
		s = step{text: schemaObject(req.Text.Format.Schema), stopReason: "end_turn"}
	default:
		s = step{text: "OK.", stopReason: "end_turn"}
	}
	rec.Status, rec.StopReason, rec.Reply = http.StatusOK, s.stopReason, "text"
	model := req.Model
	if f.script.Model != "" {
		model = f.script.Model
	}
	var output []map[string]any
	if s.text != "" || s.tool == "" {
		text := s.text
		if text == "" {
			text = "Done."
		}
		output = append(output, map[string]any{"type": "message", "id": f.id("msg"), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	if s.tool != "" {
		rec.Reply, rec.ToolPath, rec.ToolContent = "tool_use", s.path, s.content
		rec.Tool, rec.ToolID = writeTool, f.id("call")
		patch := addFilePatch(s.path, s.content)
		item := map[string]any{"id": f.id("fc"), "call_id": rec.ToolID, "name": writeTool, "status": "completed"}
		switch {
		case s.tool == "Bash":
			// A scripted shell command: Codex's command tool.
			var args any = map[string]any{"command": []string{"bash", "-lc", s.content}}
			rec.Tool = "shell"
			if _, ok := offered["exec_command"]; ok {
				rec.Tool, args = "exec_command", map[string]any{"cmd": s.content}
			}
			b, _ := json.Marshal(args)
			item["name"], item["type"], item["arguments"] = rec.Tool, "function_call", string(b)
		case writeTool == "apply_patch" && offered[writeTool] == "custom":
			item["type"], item["input"] = "custom_tool_call", patch
		default:
			var args any
			switch writeTool {
			case "apply_patch":
				args = map[string]any{"input": patch}
			case "exec_command":
				args = map[string]any{"cmd": heredoc(patch)}
			default: // shell
				args = map[string]any{"command": []string{"bash", "-lc", heredoc(patch)}}
			}
			b, _ := json.Marshal(args)
			item["type"], item["arguments"] = "function_call", string(b)
		}
		output = append(output, item)
	}
	in0, out0 := usageOf(len(rec.Body), s)
	rec.InputTokens, rec.OutputTokens = in0, out0
	usage := map[string]any{"input_tokens": in0, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out0, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in0 + out0}
	resp := map[string]any{"id": f.id("resp"), "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": model, "output": output, "usage": usage}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	f.streamResponses(w, r, resp, output)
}

// codexCwdRE finds the working directory in Codex's environment context.
var codexCwdRE = regexp.MustCompile(`<cwd>([^<]+)</cwd>`)

// callText is the apply_patch text inside a function call's arguments
// (apply_patch's "input", exec_command's "cmd", shell's "command").
func callText(args string) string {
	var a struct {
		Input   string          `json:"input"`
		Cmd     string          `json:"cmd"`
		Command json.RawMessage `json:"command"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	if a.Input != "" {
		return a.Input
	}
	if a.Cmd != "" {
		return a.Cmd
	}
	var argv []string
	if json.Unmarshal(a.Command, &argv) == nil {
		return strings.Join(argv, "\n")
	}
	return rawText(a.Command)
}

// heredoc runs an apply_patch envelope as a shell command, the form Codex
// recognises and applies with its own patch tool.
func heredoc(patch string) string {
	return "apply_patch <<'PATCH'\n" + patch + "PATCH\n"
}

func openAIError(kind, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": kind, "code": kind, "message": msg, "param": nil}}
}

// schemaObject is a JSON object filling every property of a structured
// output request with a value of its type (side calls such as titles).
func schemaObject(schema jsonSchema) string {
	obj := map[string]any{}
	for name, p := range schema.Properties {
		switch strings.ToLower(p.Type) {
		case "boolean":
			obj[name] = false
		case "number", "integer":
			obj[name] = 1
		case "array":
			obj[name] = []any{}
		case "object":
			obj[name] = map[string]any{}
		default:
			obj[name] = "Hivemind assignment"
		}
	}
	b, _ := json.Marshal(obj)
	return string(b)
}

// streamResponses writes the Responses API SSE sequence of resp: created,
// each output item added / delta / done, then completed with the usage.
func (f *Server) streamResponses(w http.ResponseWriter, r *http.Request, resp map[string]any, output []map[string]any) {
	send := f.sse(w, r)
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
	seq := 0
	ev := func(typ string, data map[string]any) bool {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		return send(typ, data)
	}
	if !ev("response.created", map[string]any{"response": created}) {
		return
	}
	for i, item := range output {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch item["type"] {
		case "message":
			added["content"] = []any{}
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			text := item["content"].([]map[string]any)[0]["text"].(string)
			for _, c := range chunks(text, 24) {
				if !ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "delta": c}) {
					return
				}
			}
			ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "text": text})
		case "function_call":
			added["arguments"] = ""
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, c := range chunks(item["arguments"].(string), 256) {
				if !ev("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": i, "delta": c}) {
					return
				}
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": i, "arguments": item["arguments"]})
		case "custom_tool_call":
			added["input"] = ""
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, c := range chunks(item["input"].(string), 256) {
				if !ev("response.custom_tool_call_input.delta", map[string]any{"item_id": item["id"], "output_index": i, "delta": c}) {
					return
				}
			}
		}
		if !ev("response.output_item.done", map[string]any{"output_index": i, "item": item}) {
			return
		}
	}
	ev("response.completed", map[string]any{"response": resp})
}

// sse starts an SSE answer and returns a sender of one event (named when
// event is not empty), paced by the script's ChunkDelay; it reports false
// once the client has gone.
func (f *Server) sse(w http.ResponseWriter, r *http.Request) func(event string, data any) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return func(event string, data any) bool {
		var buf bytes.Buffer
		b, _ := json.Marshal(data)
		if event != "" {
			fmt.Fprintf(&buf, "event: %s\n", event)
		}
		fmt.Fprintf(&buf, "data: %s\n\n", b)
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		if f.script.ChunkDelay > 0 {
			select {
			case <-time.After(f.script.ChunkDelay):
			case <-r.Context().Done():
				return false
			}
		}
		return true
	}
}
