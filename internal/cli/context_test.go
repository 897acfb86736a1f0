package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// `hivemind context` only reads: in a workspace without shared knowledge it
// prints empty lists and creates nothing.
func TestCmdContextReadOnly(t *testing.T) {
	project := t.TempDir()
	o := options{Options: app.Options{Project: project}, args: []string{"context"}}
	var out bytes.Buffer
	if err := cmdContext(o, &out); err == nil {
		t.Fatal("no error without a workspace")
	}
	root := workspace.DefaultRoot(project)
	if _, err := os.Stat(root); err == nil {
		t.Fatal("context created the workspace")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cmdContext(o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Decisions (0)", "Constraints (0)", "Glossary (0)", filepath.Join(root, vocab.KnowledgeDir)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	o.JSON = true
	if err := cmdContext(o, &out); err != nil {
		t.Fatal(err)
	}
	var ctx map[string][]any
	if err := json.Unmarshal(out.Bytes(), &ctx); err != nil || len(ctx) != 3 ||
		ctx["decisions"] == nil || ctx["constraints"] == nil || ctx["glossary"] == nil {
		t.Errorf("json: %v\n%s", err, out.String())
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("context created %v in the workspace", entries)
	}
}
