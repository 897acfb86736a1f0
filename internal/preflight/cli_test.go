package preflight

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Codex and Gemini CLI: on PATH, their version, and a key (a warning
// only); a mixed team checks each of its agents.
func TestCodexAndGeminiChecks(t *testing.T) {
	w := &fakeWorld{
		path: map[string]string{"codex": "/n/bin/codex", "gemini": "/n/bin/gemini"},
		env:  map[string]string{"OPENAI_API_KEY": "sk-x"},
		outputs: map[string]fakeOut{
			"/n/bin/codex --version":  {out: "codex-cli 0.169.0\n"},
			"/n/bin/gemini --version": {out: "0.61.0\n"},
		},
	}
	rs := Run(context.Background(), w.env_(), []Agent{{Name: "codex", CLI: testCodex, Roles: "reviewer"}, {Name: "gemini", CLI: testGemini, Roles: "2 workers"}})
	for check, want := range map[string]struct {
		status Status
		msg    string
	}{
		"codex command":  {OK, "/n/bin/codex for reviewer"},
		"codex version":  {OK, "codex-cli 0.169.0"},
		"codex key":      {OK, "OPENAI_API_KEY is set"},
		"gemini command": {OK, "/n/bin/gemini for 2 workers"},
		"gemini version": {OK, "0.61.0"},
		"gemini key":     {Warn, "none of GEMINI_API_KEY"},
	} {
		if r := find(t, rs, check); r.Status != want.status || !strings.Contains(r.Msg, want.msg) {
			t.Errorf("%s: %v, want %s ~%q", check, r, want.status, want.msg)
		}
	}
	if Failed(rs) {
		t.Errorf("a missing key failed the preflight: %v", rs)
	}

	// Not installed: a failure naming the roles and the install command;
	// a broken binary: a failure.
	w.path = map[string]string{"codex": "/n/bin/codex"}
	w.outputs["/n/bin/codex --version"] = fakeOut{out: "boom\n", err: errors.New("exit status 1")}
	rs = Run(context.Background(), w.env_(), []Agent{{Name: "codex", CLI: testCodex, Roles: "lead"}, {Name: "gemini", CLI: testGemini, Roles: "reviewer"}})
	if r := find(t, rs, "gemini command"); r.Status != Fail || !strings.Contains(r.Msg, "agent of reviewer") || !strings.Contains(r.Fix, "@google/gemini-cli") {
		t.Errorf("missing gemini: %v", r)
	}
	if r := find(t, rs, "codex version"); r.Status != Fail || !strings.Contains(r.Msg, "codex --version failed") {
		t.Errorf("broken codex: %v", r)
	}
}
