package ptyagent

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestDraftModel(t *testing.T) {
	cases := []struct {
		name   string
		in     []string // writes, in order
		text   string
		unsure bool
	}{
		{"typed", []string{"hello world"}, "hello world", false},
		{"submitted", []string{"hello\r"}, "", false},
		{"backspaced away", []string{"ab", "\x7f\x7f"}, "", false},
		{"backspace keeps the rest", []string{"abc\x7f"}, "ab", false},
		{"ctrl+u clears", []string{"abc\x15"}, "", false},
		{"ctrl+c clears", []string{"abc\x03"}, "", false},
		{"ctrl+w drops a word", []string{"one two\x17"}, "one ", false},
		{"utf-8", []string{"héllo ❯"}, "héllo ❯", false},
		{"utf-8 split over writes", []string{"\xe2\x9d", "\xaf"}, "❯", false},
		{"bracketed paste with newline", []string{"\x1b[200~a\nb\x1b[201~"}, "a\nb", false},
		{"paste split inside the marker", []string{"\x1b[20", "0~pasted\x1b[201~"}, "pasted", false},
		{"enter after paste submits", []string{"\x1b[200~x\x1b[201~\r"}, "", false},
		{"arrow: unsure", []string{"ab\x1b[D"}, "ab", true},
		{"history recall: unsure", []string{"\x1b[A"}, "", true},
		{"ss3 arrow: unsure", []string{"\x1bOA"}, "", true},
		{"sgr mouse is not text", []string{"\x1b[<0;3;4M\x1b[<0;3;4m"}, "", false},
		{"x10 mouse is not text", []string{"\x1b[M !!"}, "", false},
		{"focus is not text", []string{"\x1b[I\x1b[O"}, "", false},
		{"tab completion: unsure", []string{"/he\t"}, "/he", true},
		{"enter clears unsure", []string{"\x1b[A\r"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d draft
			now := time.Now()
			for _, w := range c.in {
				d.feed([]byte(w), now)
			}
			if got := string(d.text); got != c.text || d.unsure != c.unsure {
				t.Errorf("text %q unsure %v; want %q %v", got, d.unsure, c.text, c.unsure)
			}
			if d.held() != (c.text != "" || c.unsure) {
				t.Errorf("held %v", d.held())
			}
			if d.held() && d.since.IsZero() {
				t.Error("held without a since")
			}
		})
	}
}

func TestPromptEmptyFromScreen(t *testing.T) {
	claude := &Session{spec: Spec{Ready: ReadyRules{Mode: ReadyClaude}}}
	for text, want := range map[string]bool{
		"────\n❯\u00a0\n────":          true,
		"────\n❯\u00a0hello\n────":     false,
		"❯ old prompt\n────\n❯ \n────": true, // the last prompt glyph is the input box
		"no prompt drawn":              false,
		"│ ❯\u00a0                  │": true,
	} {
		if got := claude.promptEmptyLocked(text); got != want {
			t.Errorf("claude %q: empty %v, want %v", text, got, want)
		}
	}
	spec, re, err := Spec{ID: "c", Kind: ProfileCodex, Argv: []string{"codex"}, Cols: 80, Rows: 24, Ready: DefaultReadyRules(ProfileCodex)}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	codex := &Session{spec: spec, readyRe: re}
	if !codex.promptEmptyLocked("› Ask Codex to do anything") || codex.promptEmptyLocked("› hello") {
		t.Error("codex: the placeholder shows exactly when the input is empty")
	}
}

// typedThenInjected starts a Claude-like agent, types text as the
// attached user would, queues a message and waits until the queue is
// held for the draft.
func typedThenInjected(t *testing.T, typed string) (*Manager, *Session, *recorder) {
	t.Helper()
	rec := &recorder{}
	spec := helperSpec("c", "claude", "HM_WORK_MS=50")
	spec.Kind = ProfileClaude
	m := newTestManager(t, rec, map[vocab.AgentID]Spec{"c": spec})
	if err := m.Start("c", "lead", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("c")
	waitFor(t, 10*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
	if _, err := s.Write([]byte(typed)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "echo", func() bool { return strings.Contains(s.Text(), typed) })
	if err := m.Inject("c", 1, "[HIVEMIND] Checkpoint 2 reached"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "hold", func() bool { held, n, _ := s.DraftHold(); return held && n == 1 })
	// Long past the typing and echo windows, the message still waits.
	deadline := time.Now().Add(draftTyping + draftEcho + time.Second)
	for time.Now().Before(deadline) {
		if _, ok := rec.find(delivered(1)); ok {
			t.Fatalf("delivered over the user's draft:\n%s", s.Text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, unsure := s.Draft(); got != typed || unsure {
		t.Fatalf("draft %q unsure %v, want %q", got, unsure, typed)
	}
	return m, s, rec
}

func TestDraftHoldsDeliveryUntilSent(t *testing.T) {
	_, s, rec := typedThenInjected(t, "hello world")
	if err := s.SendDraft(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "delivery", func() bool { _, ok := rec.find(delivered(1)); return ok })
	waitFor(t, 5*time.Second, "both submitted", func() bool { return strings.Contains(s.Text(), "submitted #2") })
	txt := s.Text()
	if !strings.Contains(txt, "submitted #1: hello world\n") || !strings.Contains(txt, "submitted #2: [HIVEMIND] Checkpoint 2 reached") {
		t.Errorf("the user's text and the message were not submitted apart:\n%s", txt)
	}
	if strings.Contains(txt, "hello world[HIVEMIND]") {
		t.Errorf("merged:\n%s", txt)
	}
}

func TestDraftHoldsDeliveryUntilCleared(t *testing.T) {
	_, s, rec := typedThenInjected(t, "half typed")
	if err := s.ClearDraft(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "delivery", func() bool { _, ok := rec.find(delivered(1)); return ok })
	waitFor(t, 5*time.Second, "submitted", func() bool { return strings.Contains(s.Text(), "submitted #1") })
	txt := s.Text()
	if !strings.Contains(txt, "submitted #1: [HIVEMIND] Checkpoint 2 reached") || strings.Contains(txt, "half typed[") {
		t.Errorf("cleared draft leaked into the message:\n%s", txt)
	}
}

// A draft the user erased in a way the model did not follow is seen on
// the screen: the prompt shows empty, the queue moves on.
func TestDraftScreenSaysEmpty(t *testing.T) {
	_, s, rec := typedThenInjected(t, "abc")
	// Erase it behind the model's back (as a CLI's own shortcut would).
	if err := s.writeInput([]byte("\x7f\x7f\x7f")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "delivery", func() bool { _, ok := rec.find(delivered(1)); return ok })
	if held, _, _ := s.DraftHold(); held {
		t.Error("still held")
	}
}
