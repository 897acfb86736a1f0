package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// The Gemini API (POST /v1beta/models/<model>:generateContent and
// :streamGenerateContent?alt=sse), as Gemini CLI speaks it with
// GOOGLE_GEMINI_BASE_URL and an API key. The script's writes are answered
// as write_file function calls, which Gemini CLI runs with its own tool.

type geminiRequest struct {
	Contents []geminiContent `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	SystemInstruction *geminiContent `json:"systemInstruction"`
	GenerationConfig  struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

func (c geminiContent) text() string {
	var out []string
	for _, p := range c.Parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// geminiCwdRE finds the first workspace directory in Gemini CLI's
// <session_context> message.
var geminiCwdRE = regexp.MustCompile(`Workspace Directories:\**\s*\n\s*- (/[^\n]+)`)

// geminiModelRE splits the model and method out of the request path.
var geminiModelRE = regexp.MustCompile(`/models/([^/:]+):(\w+)`)

func (f *Server) gemini(w http.ResponseWriter, r *http.Request, rec *Request) {
	m := geminiModelRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		rec.Status, rec.Reply = http.StatusNotFound, "error"
		writeJSON(w, http.StatusNotFound, geminiError(http.StatusNotFound, "NOT_FOUND", "fakeapi: no such method "+r.URL.Path))
		return
	}
	rec.Model = m[1]
	method := m[2]
	if method == "countTokens" {
		rec.Kind, rec.Status = "count_tokens", http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 1 + len(rec.Body)/4})
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		rec.Status, rec.Reply = http.StatusBadRequest, "error"
		writeJSON(w, http.StatusBadRequest, geminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "fakeapi: bad json: "+err.Error()))
		return
	}
	rec.Stream = method == "streamGenerateContent"
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == "write_file" {
				rec.HasTools = true
			}
		}
	}
	// Gemini CLI folds tool results into user turns of functionResponse
	// parts: only user text parts count as typed messages.
	texts := make([]*string, len(req.Contents))
	for i, c := range req.Contents {
		t := c.text()
		if c.Role == "user" && t != "" {
			texts[i] = &t
			// Gemini CLI sends the first typed line as a second part after
			// its <session_context>.
			if last := c.Parts[len(c.Parts)-1].Text; !isContext(last) {
				rec.Prompt = last
			}
		}
		if mm := geminiCwdRE.FindStringSubmatch(t); mm != nil && rec.Cwd == "" {
			rec.Cwd = strings.TrimSpace(mm[1])
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
		// Calls and responses pair up in order (ids are optional).
		var pending []string
		for _, c := range req.Contents[h+1:] {
			for _, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					var a struct {
						FilePath string `json:"file_path"`
						Command  string `json:"command"`
					}
					_ = json.Unmarshal(p.FunctionCall.Args, &a)
					path := ""
					switch p.FunctionCall.Name {
					case "write_file":
						path = a.FilePath
					case "run_shell_command":
						path = stepLabel(a.Command)
					}
					pending = append(pending, path)
					rec.Results = nil // Results answer the newest calls only
				case p.FunctionResponse != nil:
					failed, text := geminiResult(p.FunctionResponse.Response)
					rec.Results = append(rec.Results, ToolResult{ID: p.FunctionResponse.ID, IsError: failed, Text: text})
					if len(pending) > 0 {
						if pending[0] != "" {
							in.calls = append(in.calls, writeCall{Path: pending[0], Failed: failed})
						}
						pending = pending[1:]
					}
				}
			}
		}
	}
	if f.scriptedError(w, r, rec, func(status int) any {
		st := "RESOURCE_EXHAUSTED"
		if status >= 500 {
			st = "UNAVAILABLE"
		}
		return geminiError(status, st, fmt.Sprintf("fakeapi: scripted %d for %s", status, rec.Agent))
	}) {
		return
	}
	var s step
	switch {
	case h >= 0 && rec.HasTools:
		s = f.writeStep(in, assignment, rec.Cwd)
	case req.GenerationConfig.ResponseMimeType == "application/json":
		s = step{text: schemaObject(firstSchema(req.GenerationConfig.ResponseJSONSchema, req.GenerationConfig.ResponseSchema)), stopReason: "end_turn"}
	default:
		s = step{text: "OK.", stopReason: "end_turn"}
	}
	rec.Status, rec.StopReason, rec.Reply = http.StatusOK, s.stopReason, "text"
	var pieces []string
	if s.text != "" || s.tool == "" {
		text := s.text
		if text == "" {
			text = "Done."
		}
		pieces = chunks(text, 24)
	}
	// Text streams in pieces; the last chunk carries the function call (or
	// the last piece of text), the finish reason and the usage, as the real
	// API sends them.
	var tail []map[string]any
	if s.tool != "" {
		rec.Reply, rec.Tool, rec.ToolPath, rec.ToolContent = "tool_use", "write_file", s.path, s.content
		rec.ToolID = f.id("call")
		tail = []map[string]any{{"functionCall": map[string]any{"id": rec.ToolID, "name": "write_file",
			"args": map[string]any{"file_path": s.path, "content": s.content}}}}
		if s.tool == "Bash" {
			rec.Tool = "run_shell_command"
			tail = []map[string]any{{"functionCall": map[string]any{"id": rec.ToolID, "name": "run_shell_command",
				"args": map[string]any{"command": s.content, "description": "Run a scripted command"}}}}
		}
	} else {
		tail = []map[string]any{{"text": pieces[len(pieces)-1]}}
		pieces = pieces[:len(pieces)-1]
	}
	model := rec.Model
	if f.script.Model != "" {
		model = f.script.Model
	}
	in0, out0 := usageOf(len(rec.Body), s)
	rec.InputTokens, rec.OutputTokens = in0, out0
	usage := map[string]any{"promptTokenCount": in0, "candidatesTokenCount": out0, "totalTokenCount": in0 + out0}
	chunk := func(ps []map[string]any, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": rec.ToolID}
		if last {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = usage
		}
		return c
	}
	if !rec.Stream {
		parts := tail
		if s.tool == "" {
			parts = []map[string]any{{"text": strings.Join(pieces, "") + tail[0]["text"].(string)}}
		} else if len(pieces) > 0 {
			parts = append([]map[string]any{{"text": strings.Join(pieces, "")}}, tail...)
		}
		writeJSON(w, http.StatusOK, chunk(parts, true))
		return
	}
	send := f.sse(w, r)
	for _, p := range pieces {
		if !send("", chunk([]map[string]any{{"text": p}}, false)) {
			return
		}
	}
	send("", chunk(tail, true))
}

// geminiResult reads a functionResponse's response: Gemini CLI reports a
// failed or denied call as {"error": …}, a successful one as {"output": …}.
func geminiResult(raw json.RawMessage) (failed bool, text string) {
	var r map[string]any
	_ = json.Unmarshal(raw, &r)
	if e, ok := r["error"]; ok && e != nil && e != "" {
		return true, fmt.Sprint(e)
	}
	if o, ok := r["output"]; ok {
		return false, fmt.Sprint(o)
	}
	return false, string(raw)
}

// firstSchema returns the first of the given JSON schemas that parses
// with properties (Gemini sends responseJsonSchema or responseSchema).
func firstSchema(schemas ...json.RawMessage) jsonSchema {
	for _, raw := range schemas {
		var s jsonSchema
		if json.Unmarshal(raw, &s) == nil && s.Properties != nil {
			return s
		}
	}
	return jsonSchema{}
}

func geminiError(code int, status, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}}
}
