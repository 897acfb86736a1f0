package vocab

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The shared knowledge's place under the workspace root (context/) and
// its files; the store is workspace.KnowledgeStore.
const (
	KnowledgeDir         = "context"
	KnowledgeArchiveDir  = "archive" // below KnowledgeDir
	DecisionsFile        = "decisions.json"
	ConstraintsFile      = "constraints.json"
	GlossaryFile         = "glossary.json"
	KnowledgeChangesFile = "changes.jsonl" // one line per change, append-only
)

// Kinds of knowledge entries (the front-matter `kind:` of an inbox file).
const (
	KindDecision   = "decision"
	KindConstraint = "constraint"
	KindTerm       = "term"
)

// KnowledgeKinds are the valid inbox entry kinds.
var KnowledgeKinds = []string{KindDecision, KindConstraint, KindTerm}

// Limits of an inbox entry.
const (
	maxKnowledgeTitle = 200  // runes: decision title, constraint name, term
	maxKnowledgeText  = 4000 // bytes: rationale, description, definition
	maxInboxFile      = 16 << 10
)

// InboxEntry is one parsed shared-knowledge note (agents/<id>/knowledge/*.md).
type InboxEntry struct {
	Kind string `json:"kind"`
	// Title is the decision title, the constraint name or the term.
	Title string `json:"title"`
	// Text is the rationale, the description or the definition.
	Text string `json:"text"`
}

// inboxFields are the front-matter fields of each kind: title field, text
// field.
var inboxFields = map[string][2]string{
	KindDecision:   {"title", "rationale"},
	KindConstraint: {"name", "description"},
	KindTerm:       {"term", "definition"},
}

// InboxExample is the inbox file format, for error messages and prompts.
const InboxExample = "---\nkind: decision\ntitle: <one line>\n---\n<rationale: why, and what others must do because of it>"

// ErrBadInbox reports an inbox file that is not a valid knowledge entry.
var ErrBadInbox = errors.New("invalid knowledge inbox entry")

func inboxErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInbox, fmt.Sprintf(format, args...))
}

// ParseInboxEntry parses an inbox file: a front matter between two "---"
// lines with `kind: decision | constraint | term` and the kind's fields,
// then an optional body.
//
//	decision:   title (one line), rationale (field or body)
//	constraint: name (one line), description (field or body)
//	term:       term (one line), definition (field or body)
//
// Field names are case-insensitive; values may be quoted. The error (which
// wraps ErrBadInbox) says exactly what is wrong and how the file should
// look, so it can be passed to the author as is.
func ParseInboxEntry(content []byte) (InboxEntry, error) {
	var e InboxEntry
	if len(content) > maxInboxFile {
		return e, inboxErr("the file is %d bytes; keep an entry under %d", len(content), maxInboxFile)
	}
	if !utf8.Valid(content) {
		return e, inboxErr("the file is not UTF-8 text")
	}
	text := strings.ReplaceAll(string(content), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.TrimLeft(text, " \t\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return e, inboxErr("the file must start with a front matter: a line \"---\", `kind: decision|constraint|term` and the fields, then \"---\"; for example:\n%s", InboxExample)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return e, inboxErr("the front matter is not closed by a \"---\" line")
	}
	fields := map[string]string{}
	var order []string
	for i := 1; i < end; i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return e, inboxErr("front matter line %d %q is not `field: value`", i+1, l)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = unquote(strings.TrimSpace(v))
		if _, dup := fields[k]; dup {
			return e, inboxErr("field %q appears twice", k)
		}
		fields[k] = v
		order = append(order, k)
	}
	body := strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	kind := strings.ToLower(fields["kind"])
	if kind == "" {
		return e, inboxErr("the front matter has no `kind:` (want one of %s)", strings.Join(KnowledgeKinds, ", "))
	}
	names, ok := inboxFields[kind]
	if !ok {
		return e, inboxErr("unknown kind %q (want one of %s)", fields["kind"], strings.Join(KnowledgeKinds, ", "))
	}
	for _, k := range order {
		if k != "kind" && k != names[0] && k != names[1] {
			return e, inboxErr("unknown field %q for a %s (its fields are %s and %s)", k, kind, names[0], names[1])
		}
	}
	e.Kind = kind
	e.Title = strings.TrimSpace(fields[names[0]])
	if e.Title == "" {
		return e, inboxErr("a %s needs a non-empty `%s:` field", kind, names[0])
	}
	if n := utf8.RuneCountInString(e.Title); n > maxKnowledgeTitle {
		return e, inboxErr("the %s is %d characters; keep it under %d (put details in the %s)", names[0], n, maxKnowledgeTitle, names[1])
	}
	e.Text = fields[names[1]]
	switch {
	case e.Text != "" && body != "":
		return e, inboxErr("give the %s either as the `%s:` field or as the text after the front matter, not both", names[1], names[1])
	case e.Text == "":
		e.Text = body
	}
	if e.Text == "" {
		return e, inboxErr("a %s needs a %s: a `%s:` field or text after the front matter", kind, names[1], names[1])
	}
	if len(e.Text) > maxKnowledgeText {
		return e, inboxErr("the %s is %d bytes; keep it under %d", names[1], len(e.Text), maxKnowledgeText)
	}
	return e, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// KnowledgeFiles returns the absolute paths of decisions.json,
// constraints.json and glossary.json under a workspace root: what every
// assignment lists in its reads.
func KnowledgeFiles(root string) []string {
	d := filepath.Join(root, KnowledgeDir)
	return []string{filepath.Join(d, DecisionsFile), filepath.Join(d, ConstraintsFile), filepath.Join(d, GlossaryFile)}
}
