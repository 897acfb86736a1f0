package vocab

import (
	"errors"
	"strings"
	"testing"
)

func TestParseInboxEntry(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    InboxEntry
		wantErr string // substring of the error; "" = valid
	}{
		{name: "decision with body", in: "---\nkind: decision\ntitle: Use SQLite\n---\nOne file, no server.\n",
			want: InboxEntry{Kind: KindDecision, Title: "Use SQLite", Text: "One file, no server."}},
		{name: "decision with field", in: "---\nkind: decision\ntitle: \"Use SQLite\"\nrationale: 'simple'\n---\n",
			want: InboxEntry{Kind: KindDecision, Title: "Use SQLite", Text: "simple"}},
		{name: "constraint", in: "---\nKind: Constraint\nName: Go 1.26 only\n---\nNo generics tricks beyond 1.26.",
			want: InboxEntry{Kind: KindConstraint, Title: "Go 1.26 only", Text: "No generics tricks beyond 1.26."}},
		{name: "term", in: "\ufeff---\r\nkind: term\r\nterm: checkpoint\r\ndefinition: a reviewed milestone\r\n---\r\n",
			want: InboxEntry{Kind: KindTerm, Title: "checkpoint", Text: "a reviewed milestone"}},
		{name: "multi-line body kept", in: "---\nkind: decision\ntitle: T\n---\nline 1\n\nline 2\n",
			want: InboxEntry{Kind: KindDecision, Title: "T", Text: "line 1\n\nline 2"}},
		{name: "no front matter", in: "kind: decision\ntitle: x\n", wantErr: "must start with a front matter"},
		{name: "unclosed", in: "---\nkind: decision\ntitle: x\n", wantErr: "not closed"},
		{name: "no kind", in: "---\ntitle: x\n---\nwhy\n", wantErr: "no `kind:`"},
		{name: "unknown kind", in: "---\nkind: rule\ntitle: x\n---\nwhy\n", wantErr: `unknown kind "rule"`},
		{name: "unknown field", in: "---\nkind: decision\ntitel: x\n---\nwhy\n", wantErr: `unknown field "titel"`},
		{name: "field of another kind", in: "---\nkind: term\nterm: x\ndescription: y\n---\n", wantErr: `unknown field "description" for a term`},
		{name: "missing title", in: "---\nkind: decision\n---\nwhy\n", wantErr: "needs a non-empty `title:`"},
		{name: "missing text", in: "---\nkind: constraint\nname: x\n---\n", wantErr: "needs a description"},
		{name: "text twice", in: "---\nkind: term\nterm: x\ndefinition: y\n---\nz\n", wantErr: "not both"},
		{name: "duplicate field", in: "---\nkind: term\nterm: x\nterm: y\n---\nz\n", wantErr: "appears twice"},
		{name: "not a field line", in: "---\nkind: term\njust words\n---\nz\n", wantErr: "is not `field: value`"},
		{name: "title too long", in: "---\nkind: decision\ntitle: " + strings.Repeat("x", 201) + "\n---\nwhy\n", wantErr: "keep it under 200"},
		{name: "text too long", in: "---\nkind: decision\ntitle: t\n---\n" + strings.Repeat("x", 4001) + "\n", wantErr: "keep it under 4000"},
		{name: "not utf-8", in: "---\nkind: decision\ntitle: \xff\n---\nwhy\n", wantErr: "not UTF-8"},
		{name: "empty", in: "", wantErr: "must start with a front matter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInboxEntry([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBadInbox) {
					t.Fatalf("err = %v, want one containing %q (wrapping ErrBadInbox)", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
