package ptyagent

import (
	"strings"
	"time"
	"unicode/utf8"
)

// The agent's input line belongs to the user while they use it: text the
// user typed (attached) and has not sent yet is never merged with an
// injected message. The deliverer holds the queue while the prompt holds
// such a draft; the user sends or clears it, or says to (the TUI asks on
// detach), and the queue moves on.
//
// Two sources say whether a draft is there: what the user sent (a small
// model of a line editor fed by Session.Write) and what the screen shows
// (the prompt line of the emulated screen). The queue is held when the
// model says the line holds text, unless the screen shows the prompt empty
// after the user's keys had time to echo; a screen that cannot say (an
// unknown CLI) leaves the model's word.

// draftEcho is how long a keystroke may take to show on the agent's
// screen; within it the screen's word that the prompt is empty does not
// count (the key may not have echoed yet).
const draftEcho = 750 * time.Millisecond

// draftTyping is how long after the user's last keystroke the queue waits
// anyway: a message is not pasted between two keys of someone typing.
const draftTyping = time.Second

// draftRecheck is how often a held queue looks again (the screen may have
// emptied the prompt without a keystroke, e.g. a CLI that cleared it).
const draftRecheck = 250 * time.Millisecond

// maxDraft bounds the text the model keeps (it only needs to know that
// there is some, and to clear it).
const maxDraft = 4096

// draft models the agent's input line from the user's keys: the text typed
// since the last submit, and whether keys the model cannot follow (cursor
// movement, history, completion) make its content unknown.
type draft struct {
	text    []rune
	unsure  bool      // keys the model does not follow: the line may hold anything
	since   time.Time // when the line last went from empty to holding a draft
	paste   bool      // inside a bracketed paste
	pending []byte    // an escape sequence cut between two writes
}

// held reports whether the model thinks the line holds a draft.
func (d *draft) held() bool { return len(d.text) > 0 || d.unsure }

// reset forgets the draft (submitted or cleared).
func (d *draft) reset() {
	d.text, d.unsure, d.paste, d.since = d.text[:0], false, false, time.Time{}
}

// feed updates the model with bytes the user sent to the agent at now.
func (d *draft) feed(p []byte, now time.Time) {
	was := d.held()
	if len(d.pending) > 0 {
		p = append(d.pending, p...)
		d.pending = nil
	}
	for i := 0; i < len(p); {
		b := p[i]
		if b == 0x1b {
			n, complete := d.escape(p[i:])
			if !complete {
				d.pending = append([]byte(nil), p[i:]...)
				break
			}
			i += n
			continue
		}
		if b >= utf8.RuneSelf && !utf8.FullRune(p[i:]) {
			d.pending = append([]byte(nil), p[i:]...) // the rest comes next
			break
		}
		i++
		if d.paste {
			if b >= 0x20 || b == '\n' || b == '\t' || b == '\r' {
				d.add(rune(b), p, &i)
			}
			continue
		}
		switch {
		case b == '\r' || b == '\n':
			d.reset() // submitted
		case b == 0x03 || b == 0x15:
			// ctrl+c and ctrl+u clear the input line of Claude Code,
			// Codex, Gemini and readline.
			d.reset()
		case b == 0x7f || b == 0x08:
			if n := len(d.text); n > 0 {
				d.text = d.text[:n-1]
			}
		case b == 0x17: // ctrl+w: the word before the cursor
			t := strings.TrimRight(string(d.text), " ")
			if k := strings.LastIndex(t, " "); k >= 0 {
				d.text = []rune(t[:k+1])
			} else {
				d.text = d.text[:0]
			}
		case b < 0x20:
			d.unsure = true // tab completion, ctrl+a/e/k …
		default:
			d.add(rune(b), p, &i)
		}
	}
	if !was && d.held() {
		d.since = now
	}
	if !d.held() {
		d.since = time.Time{}
	}
}

// add appends the character starting at byte b (p[*i-1]) to the text.
func (d *draft) add(r rune, p []byte, i *int) {
	if r >= utf8.RuneSelf {
		c, n := utf8.DecodeRune(p[*i-1:])
		r = c
		*i += n - 1
	}
	if len(d.text) < maxDraft {
		d.text = append(d.text, r)
	} else {
		d.unsure = true
	}
}

// escape consumes the escape sequence at the start of p (p[0] is ESC): n
// bytes, or complete false when p ends inside it.
func (d *draft) escape(p []byte) (n int, complete bool) {
	if len(p) < 2 {
		if !d.paste {
			d.unsure = true // a lone Esc: some CLIs clear or edit on it
		}
		return 1, true
	}
	switch p[1] {
	case '[':
		j := 2
		for j < len(p) && (p[j] < 0x40 || p[j] > 0x7e) {
			j++
		}
		if j == len(p) {
			return 0, false
		}
		params, final := string(p[2:j]), p[j]
		switch {
		case params == "200" && final == '~':
			d.paste = true
		case params == "201" && final == '~':
			d.paste = false
		case params == "" && final == 'M':
			// X10 mouse report: three more bytes, no text.
			if len(p) < j+4 {
				return 0, false
			}
			return j + 4, true
		case strings.HasPrefix(params, "<") || final == 'I' || final == 'O':
			// SGR mouse report, focus in/out: no text.
		case d.paste:
		default:
			d.unsure = true // arrows, Home/End, Delete, history …
		}
		return j + 1, true
	case 'O':
		if len(p) < 3 {
			return 0, false
		}
		if !d.paste {
			d.unsure = true
		}
		return 3, true
	}
	if !d.paste {
		d.unsure = true // alt+key
	}
	return 2, true
}

// promptEmptyLocked reports whether the screen text shows the agent's
// input line empty. Only emptiness is trusted (text on the line may be a
// CLI's placeholder), and only once the user's keys had time to echo
// (screenClearedLocked).
func (s *Session) promptEmptyLocked(text string) bool {
	switch s.spec.Ready.Mode {
	case ReadyClaude:
		lines := strings.Split(text, "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			k := strings.LastIndex(lines[i], claudePrompt)
			if k < 0 {
				continue
			}
			box := strings.Trim(lines[i][k+len(claudePrompt):], " \u00a0│")
			return box == ""
		}
		return false
	}
	// Codex and Gemini show a placeholder ("Ask Codex to do anything",
	// "Type your message") only while the input line is empty.
	return s.spec.Ready.Pattern != "" && s.readyRe != nil && s.readyRe.MatchString(text)
}

// draftRecheckC is a channel that fires after draftRecheck while held,
// and a nil channel (never fires) otherwise.
func draftRecheckC(held bool) <-chan time.Time {
	if !held {
		return nil
	}
	return time.After(draftRecheck)
}

// draftHoldLocked reports whether the queue must wait for the user's
// draft (s.mu held). A screen showing the prompt empty after the echo
// time clears the model (the user emptied it some way the model did not
// follow).
func (s *Session) draftHoldLocked(now time.Time) bool {
	last := time.Unix(0, s.userIn.Load())
	if now.Sub(last) < draftTyping {
		return true
	}
	return s.draft.held() && !s.screenClearedLocked(now)
}

// screenClearedLocked reports whether the screen shows the prompt empty
// after the user's last key had time to echo; then the model is reset
// (the user emptied the line some way it did not follow).
func (s *Session) screenClearedLocked(now time.Time) bool {
	if s.scrClosed || now.Sub(time.Unix(0, s.userIn.Load())) < draftEcho || !s.promptEmptyLocked(s.scr.Text()) {
		return false
	}
	s.draft.reset()
	return true
}

// DraftHold says whether a message waits for text the user typed into the
// agent's prompt: held with the number of messages waiting and since when
// the draft holds them. Held is false when nothing waits.
func (s *Session) DraftHold() (held bool, waiting int, since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 || s.dead || !s.draftHoldLocked(time.Now()) {
		return false, 0, time.Time{}
	}
	since = s.draft.since
	if since.IsZero() {
		since = time.Unix(0, s.userIn.Load())
	}
	return true, len(s.queue), since
}

// Draft is the text the user typed into the agent's prompt and has not
// sent, as far as Hivemind followed it: unsure when keys it does not
// follow (arrows, completion) may have changed it. Empty and not unsure:
// no draft.
func (s *Session) Draft() (text string, unsure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.draft.held() || s.screenClearedLocked(time.Now()) {
		return "", false
	}
	return string(s.draft.text), s.draft.unsure
}

// ClearDraft erases the user's draft from the agent's prompt: the cursor
// to the end of the line, then one Backspace per character (a Backspace
// on an empty line does nothing in any CLI), then ctrl+u when the model
// was unsure what the line holds.
func (s *Session) ClearDraft() error {
	s.mu.Lock()
	n, unsure := len(s.draft.text), s.draft.unsure
	s.mu.Unlock()
	b := []byte("\x05") // ctrl+e: end of line
	b = append(b, strings.Repeat("\x7f", n)...)
	if unsure {
		b = append(b, 0x15)
	}
	if err := s.writeInput(b); err != nil {
		return err
	}
	s.mu.Lock()
	s.draft.reset()
	s.mu.Unlock()
	s.poke()
	return nil
}

// SendDraft submits the user's draft (Enter), as if they had pressed it.
func (s *Session) SendDraft() error {
	_, err := s.Write([]byte("\r"))
	return err
}
