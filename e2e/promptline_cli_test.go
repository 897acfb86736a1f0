package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
)

// asProfile makes the session Hivemind's session of a CLI of kind: its
// ready rule (the empty prompt's placeholder) and a pasted message. The
// hook relay is not wired here, so a message counts as written at its
// Enter; the hook log says what the CLI submitted.
func asProfile(kind ptyagent.ProfileKind) func(*ptyagent.Spec) {
	return func(s *ptyagent.Spec) {
		s.Kind, s.Ready, s.Submit = kind, ptyagent.DefaultReadyRules(kind), ptyagent.DefaultSubmitRules(kind)
		s.Submit.Confirm = ptyagent.ConfirmNone
	}
}

// promptLineCLI: text typed into the real CLI's prompt and not sent holds
// a queued [HIVEMIND] message (nothing is submitted, nothing reaches the
// model); ClearDraft empties the CLI's input line (its placeholder shows
// again), and the message then goes in on its own: the submit hook and
// the model see exactly the [HIVEMIND] line.
func promptLineCLI(t *testing.T, c *cliOffline, ready, submitHook string) {
	t.Helper()
	c.waitScreen(t, time.Minute, ready)
	s := c.Session
	waitFor(t, time.Minute, c.Name+" ready", func() bool { return s.Health() == vocab.HealthReady })
	for try := 0; ; try++ {
		if _, err := s.Write([]byte(typedText)); err != nil {
			t.Fatal(err)
		}
		if pollUntil(5*time.Second, func() bool { return strings.Contains(s.Text(), typedText) }) {
			break
		}
		if try == 2 {
			t.Fatalf("%s never echoed the typed text", c.Name)
		}
		_, _ = s.Write([]byte{0x15}) // a CLI still probing the terminal dropped the keys
	}
	line := c.hivemindLine()
	if err := s.Inject(1, line); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the message held", func() bool { held, n, _ := s.DraftHold(); return held && n == 1 })
	deadline := time.Now().Add(3 * time.Second) // past the typing and echo windows
	for time.Now().Before(deadline) {
		if n := len(c.hooks(submitHook)); n > 0 || strings.Contains(s.Text(), "[HIVEMIND]") {
			t.Fatalf("the message went in over the typed text (%d submit hooks):\n%s", n, s.Text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.ClearDraft(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the message typed in", func() bool { return s.Queued() == 0 })
	// Gemini sometimes takes a second Enter for a first message.
	for try := 0; len(c.hooks(submitHook)) == 0 && try < 5; try++ {
		if !pollUntil(3*time.Second, func() bool { return len(c.hooks(submitHook)) > 0 }) {
			_, _ = s.Write([]byte("\r"))
		}
	}
	hooks := c.hooks(submitHook)
	if len(hooks) != 1 || hooks[0]["prompt"] != line {
		t.Fatalf("%s submitted %v, want exactly %q", submitHook, hooks, line)
	}
	waitFor(t, cliTurnDeadline, "the line at the model", func() bool {
		for _, r := range c.API.Requests() {
			if strings.Contains(r.Line, line) {
				return true
			}
		}
		return false
	})
	if bad := mergedPrompts(c.API); len(bad) > 0 {
		t.Fatalf("typed text merged into a [HIVEMIND] message: %q", bad)
	}
}

func TestPromptLineCodex(t *testing.T) {
	parallel(t)
	c := setupCLI(t, "codex", "@openai/codex")
	codexHome := filepath.Join(c.Home, "codex")
	if err := agenttest.WriteCodexHome(codexHome, c.API.URL(), []string{c.Project}, c.logHooks("UserPromptSubmit", "Stop")); err != nil {
		t.Fatal(err)
	}
	c.Spec = asProfile(ptyagent.ProfileCodex)
	c.start(t, []string{c.Bin, "--no-daemon", "--sandbox", "workspace-write", "--ask-for-approval", "never",
		"--dangerously-bypass-hook-trust"}, agenttest.CodexEnv(codexHome))
	promptLineCLI(t, c, "Ask Codex", "UserPromptSubmit")
	waitFor(t, cliTurnDeadline, "Stop hook", func() bool { return len(c.hooks("Stop")) == 1 })
	c.quit(t)
}

func TestPromptLineGemini(t *testing.T) {
	parallel(t)
	c := setupCLI(t, "gemini", "@google/gemini-cli")
	if err := agenttest.WriteGeminiHome(c.Home, []string{c.Project}, c.logHooks("BeforeAgent", "AfterAgent")); err != nil {
		t.Fatal(err)
	}
	c.Spec = asProfile(ptyagent.ProfileGemini)
	c.start(t, []string{c.Bin, "--session-id", uuid.NewString(), "--approval-mode", "auto_edit"},
		agenttest.GeminiEnv(c.Home, c.API.URL()))
	promptLineCLI(t, c, "Type your message", "BeforeAgent")
	waitFor(t, cliTurnDeadline, "AfterAgent hook", func() bool { return len(c.hooks("AfterAgent")) == 1 })
	c.quit(t)
}
