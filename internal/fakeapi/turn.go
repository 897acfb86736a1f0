package fakeapi

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
)

// The OpenAI and Gemini fakes share one wire-neutral view of a turn: the
// conversation's [HIVEMIND] message and the write calls made since, each
// with whether the CLI's tool reported a failure.

// writeCall is one write tool call the model made in the current turn.
type writeCall struct {
	Path   string
	Failed bool
}

// turnInput is what a wire handler extracts from one request.
type turnInput struct {
	hivemind   int    // index of the [HIVEMIND] message, -1 if none
	hivemindAt string // its text (part of the plan cache key)
	calls      []writeCall
}

// writeStep decides the answer of a [HIVEMIND] turn on a wire whose write
// tool creates or overwrites a file without a prior read (Codex's
// apply_patch, Gemini's write_file): write the next scripted file, retry a
// failed write once (never a forbidden one, whose denial is the point), or
// end the turn with the script's summary.
func (f *Server) writeStep(in turnInput, assignment, cwd string) step {
	key := turnKey(in.hivemind, assignment, in.hivemindAt)
	files, narr := f.filesFor(key, assignment, cwd)
	i := 0
	retried := map[int]bool{}
	for _, c := range in.calls {
		if i >= len(files) || c.Path != files[i].Path {
			continue
		}
		if c.Failed && !files[i].Forbidden && !retried[i] {
			retried[i] = true
			continue
		}
		i++
	}
	if i >= len(files) {
		return step{text: narr.Summary, stopReason: "end_turn"}
	}
	var text string
	if i == 0 && len(in.calls) == 0 && len(narr.Thoughts) > 0 {
		text = strings.Join(narr.Thoughts, "\n")
	}
	if files[i].Command != "" {
		return step{text: text, tool: "Bash", path: files[i].Path, content: files[i].Command, stopReason: "tool_use"}
	}
	return step{text: text, tool: "Write", path: files[i].Path, content: files[i].Content, stopReason: "tool_use"}
}

// stepLabel is the step a scripted shell command answers (its first line
// "# hivemind-step: <label>"), "" for any other command.
func stepLabel(cmd string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(cmd), "\n")
	label, _ := strings.CutPrefix(first, script.StepLabel)
	return strings.TrimSpace(label)
}

// turnKey is the plan cache key of a [HIVEMIND] turn (see filesFor).
func turnKey(h int, assignment, text string) string {
	return strconv.Itoa(h) + "\x00" + assignment + "\x00" + text
}

// locate finds the [HIVEMIND] message of the current turn among user
// texts (nil for messages that are not user text, such as tool calls and
// results): the newest user text if it names an assignment, else the
// newest before it that does, as long as no other user text came between.
// It returns the index (-1 if none), the assignment path and the text.
func locate(userTexts []*string) (int, string, string) {
	for i := len(userTexts) - 1; i >= 0; i-- {
		t := userTexts[i]
		if t == nil {
			continue
		}
		if p := hivemindPath(*t); p != "" {
			return i, p, *t
		}
		if !isContext(*t) {
			return -1, "", ""
		}
	}
	return -1, "", ""
}

// notice returns the line of a notice turn — the newest user text holds a
// [HIVEMIND] line that names no assignment (a notice carries its content)
// — and the agent an earlier line's assignment names ("" when the newest
// user text is no notice).
func notice(userTexts []*string) (line, agent string) {
	for i := len(userTexts) - 1; i >= 0; i-- {
		t := userTexts[i]
		if t == nil {
			continue
		}
		if !strings.Contains(*t, "[HIVEMIND]") || hivemindPath(*t) != "" {
			return "", ""
		}
		line = *t
		for _, u := range userTexts[:i] {
			if u != nil {
				if p := hivemindPath(*u); p != "" {
					agent = agentOf(p)
				}
			}
		}
		return line, agent
	}
	return "", ""
}

// agentFor names the agent of a request: the X-Hivemind-Agent header,
// else the agent the assignment path names.
func agentFor(r *http.Request, assignment string) string {
	if a := r.Header.Get("X-Hivemind-Agent"); a != "" {
		return a
	}
	return agentOf(assignment)
}

// resolve makes a relative assignment path absolute against the agent's
// working directory, as the CLI's own tools would read it.
func resolve(path, cwd string) string {
	if path == "" || filepath.IsAbs(path) || cwd == "" {
		return path
	}
	return filepath.Join(cwd, path)
}

// isContext reports whether a user message is context the CLI adds on its
// own (Codex's <environment_context>, Gemini's <session_context>) rather
// than something typed.
func isContext(t string) bool {
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "<environment_context>") || strings.HasPrefix(t, "<session_context>") ||
		strings.HasPrefix(t, "<user_instructions>") || strings.HasPrefix(t, "# AGENTS.md")
}

// patchFileRE finds the files an apply_patch envelope adds or updates.
var patchFileRE = regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update) File: (.+)$`)

// patchPath returns the first file an apply_patch text adds or updates.
func patchPath(s string) string {
	if m := patchFileRE.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// addFilePatch is an apply_patch envelope creating path (Codex's Add File
// replaces an existing file).
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: ")
	b.WriteString(path)
	b.WriteString("\n")
	for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+")
		b.WriteString(strings.TrimSuffix(l, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// scriptedError waits while a WaitRule says so, then answers the request
// with the next matching error rule, if any, through render (each wire has its own error body). It reports
// whether it answered.
func (f *Server) scriptedError(w http.ResponseWriter, r *http.Request, rec *Request, render func(status int) any) bool {
	f.wait(r, rec)
	st, ok := f.takeError(rec)
	if !ok {
		return false
	}
	rec.Status, rec.Reply = st.Status, "error"
	if st.RetryAfter > 0 {
		w.Header().Set("retry-after", strconv.Itoa(int((st.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, st.Status, render(st.Status))
	return true
}

// usageOf is the token usage the fakes report: about one token per 40
// bytes of request and per 4 bytes of answer, at least one each.
func usageOf(reqBytes int, s step) (in, out int) {
	return 1 + reqBytes/40, 1 + (len(s.text)+len(s.content))/4
}
