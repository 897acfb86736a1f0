package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// typedText is what the user types into an agent's prompt and leaves there.
const typedText = "hello world"

// mergedPrompts are the model requests in which typed text sits inside a
// [HIVEMIND] message: what must never happen.
func mergedPrompts(api *fakeapi.Server) []string {
	var bad []string
	for _, r := range api.Requests() {
		// UserPrompts reads Anthropic requests; Line is the turn's
		// [HIVEMIND] message in every API's format.
		for _, p := range append(r.UserPrompts(), r.Line) {
			if strings.Contains(p, "[HIVEMIND]") && strings.Contains(p, typedText) {
				bad = append(bad, r.Agent+": "+p)
			}
		}
	}
	return bad
}

// promptSent reports whether the model received the typed text alone, as
// the user's own prompt.
func promptSent(api *fakeapi.Server, agent string) bool {
	for _, r := range api.Requests() {
		if r.Agent != "" && r.Agent != agent {
			continue
		}
		for _, p := range r.UserPrompts() {
			if strings.TrimSpace(p) == typedText {
				return true
			}
		}
	}
	return false
}

// The prompt line belongs to the user (real Claude Code, the built binary
// in tmux, the fake API): text typed into the Lead's prompt and not sent
// holds the Lead's next message (the banner says so) instead of being
// merged into it; on detach the TUI asks, s sends the text as the user's
// own prompt, and only then the held message goes in, on its own. Before:
// the model's next prompt was "hello world[HIVEMIND] …".
func TestTUIPromptLineClaude(t *testing.T) {
	parallel(t)
	c, gate, r := startClaudeTUI(t, fakeapi.DefaultScript(), "lead", "[HIVEMIND] Plan the task")
	seen := newClaudeScreens()
	seen.waitPromptBoxes(r)
	dir := r.taskDir()

	// The Lead is mid-turn (its planning request held at the API): attach
	// to it and type, without Enter.
	gate.waitHeld(t, r, claudeTUIWait, "the lead's planning request")
	r.keys("1", "Enter")
	r.waitScreen(claudeTUIWait, "attached to the lead", func(s tuiScreen) bool { return s.contains("attached to lead") })
	r.typeText(typedText)
	r.waitScreen(claudeTUIWait, "the typed text in the lead's prompt", func(s tuiScreen) bool {
		text, _ := s.paneText("lead")
		return strings.Contains(text, typedText)
	})

	// The turn ends; the Reviewer asks for a revision; the Lead's next
	// message waits for the typed text, and the banner says so.
	gate.open()
	s := r.waitScreen(claudeTUIWait, "the lead's message held for the typed text", func(s tuiScreen) bool {
		return s.contains("waiting for your input in lead's prompt")
	})
	held := len(readEventLog(dir))
	// Long enough for a message typed in to reach the model (about a
	// second after the Lead goes idle, when nothing holds it): nothing
	// goes in, nothing merged reaches the model.
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if bad := mergedPrompts(c.API); len(bad) > 0 {
			t.Fatalf("typed text merged into a [HIVEMIND] message: %q", bad)
		}
		if i := findRecord(readEventLog(dir), held, func(e vocab.EventRecord) bool {
			return e.Type == vocab.InputPrefix+"injection_result" && e.Agent == "lead"
		}); i >= 0 {
			t.Fatalf("a message was typed into the lead's prompt over the user's text: %v", readEventLog(dir)[i])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(s.String(), "1 enter") {
		t.Errorf("the banner does not say which key goes there:\n%s", s)
	}

	// Detach: the TUI asks; s sends the text as the user's own prompt.
	r.keys("C-]")
	r.waitScreen(claudeTUIWait, "the question on detach", func(s tuiScreen) bool {
		return strings.Contains(s.footer(), "lead's prompt holds text you typed") && strings.Contains(s.footer(), "s send")
	})
	r.keys("s")
	waitFor(t, claudeTUIWait, "the typed text at the model on its own", func() bool { return promptSent(c.API, "lead") })
	r.waitScreen(claudeTUIWait, "the held message delivered", func(tuiScreen) bool {
		recs := readEventLog(dir)
		return findRecord(recs, held, func(e vocab.EventRecord) bool {
			d, _ := e.Details["delivered"].(bool)
			return e.Type == vocab.InputPrefix+"injection_result" && e.Agent == "lead" && d
		}) >= 0
	})
	waitFor(t, claudeTUIWait, "the lead's revision turn at the model", func() bool {
		req, ok := lastMainRequest(c.API, "lead")
		return ok && strings.Contains(req.Line, "[HIVEMIND]") && !strings.Contains(req.Line, typedText) &&
			strings.Contains(strings.ToLower(req.Line), "revis")
	})
	if bad := mergedPrompts(c.API); len(bad) > 0 {
		t.Fatalf("typed text merged into a [HIVEMIND] message: %q", bad)
	}
	r.keys("q")
	r.waitScreen(claudeTUIWait, "the quit question", func(s tuiScreen) bool { return s.contains("[y/n]") })
	r.keys("y")
	r.waitExit(claudeTUIWait)
}
