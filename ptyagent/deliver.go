package ptyagent

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bracketed paste delimiters.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// deliverer types queued messages into the agent one at a time, only when
// it is ready or idle, and confirms each submission.
func (s *Session) deliverer() {
	defer s.workers.Done()
	for {
		m, ok := s.next()
		if !ok {
			return
		}
		start := time.Now()
		ok, detail := s.deliver(m)
		s.mu.Lock()
		if len(s.queue) > 0 && s.queue[0] == m {
			s.queue = s.queue[1:]
		}
		s.typing = 0
		s.mu.Unlock()
		detail = fmt.Sprintf("%s (%s)", detail, time.Since(start).Round(time.Millisecond))
		if ok {
			s.emit(Event{Kind: EventDelivered, Seq: m.seq, Detail: detail})
		} else {
			s.emit(Event{Kind: EventDeliveryFailed, Seq: m.seq, Detail: detail})
		}
	}
}

// next waits for a message and an agent that may receive it.
func (s *Session) next() (message, bool) {
	for {
		s.mu.Lock()
		held := len(s.queue) > 0 && s.draftHoldLocked(time.Now())
		if len(s.queue) > 0 && s.health.Injectable() && !s.stopping && !s.queueHeld && !held {
			m := s.queue[0]
			s.typing = m.seq
			s.mu.Unlock()
			return m, true
		}
		s.mu.Unlock()
		select {
		case <-s.kick:
		case <-draftRecheckC(held):
		case <-s.quit:
			return message{}, false
		}
	}
}

// HoldDelivery stops (hold) or lets the deliverer type the queued
// messages: while held, nothing more is typed into the agent (a message
// it is typing already is finished). The engine holds an agent while the
// team or the agent is paused.
func (s *Session) HoldDelivery(hold bool) {
	s.mu.Lock()
	s.queueHeld = hold
	s.mu.Unlock()
	s.poke()
}

// Withdraw takes the queued messages with a seq below before out of the
// queue, but not one being typed, and returns their seqs: they are never
// typed, and no delivery event comes for them.
func (s *Session) Withdraw(before int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	s.queue = slices.DeleteFunc(s.queue, func(m message) bool {
		if m.seq < before && m.seq != s.typing {
			out = append(out, m.seq)
			return true
		}
		return false
	})
	return out
}

// arm prepares for a confirmation of the next write.
func (s *Session) arm() {
	s.mu.Lock()
	s.awaiting = true
	s.awaitVer = s.version.Load()
	s.mu.Unlock()
	select {
	case <-s.confirm: // a stale confirmation
	default:
	}
}

func (s *Session) disarm() {
	s.mu.Lock()
	s.awaiting = false
	s.mu.Unlock()
}

// deliver types one message and waits for its confirmation: Enter is
// resent first (the paste may have swallowed it), then the whole message,
// then the delivery fails.
func (s *Session) deliver(m message) (bool, string) {
	r := s.spec.Submit
	text := sanitize(m.text, r.Paste)
	body := text
	if r.Paste {
		body = pasteStart + text + pasteEnd
	}
	attempts := 0
	defer s.disarm()
	for send := 0; send <= r.Resends; send++ {
		if send > 0 && r.Paste && s.inputHolds(text) {
			// The text still sits in the input box: pasting again would
			// double it. Only Enter can help.
			body = ""
		}
		if r.Paste {
			// Let a redraw in progress (Claude repaints after each turn)
			// finish before pasting.
			s.waitUntil(2*time.Second, func() bool { return s.quietFor() >= pasteSettle })
		}
		s.arm()
		if body != "" {
			if err := s.writeInput([]byte(body)); err != nil {
				return false, "write failed: " + err.Error()
			}
			if r.Paste {
				// An Enter that arrives while the paste is still being
				// processed is swallowed: wait until the text shows in the
				// input box (bounded), then the usual short delay.
				s.waitUntil(pasteShowTimeout, func() bool { return s.inputHolds(text) })
			}
			if !s.pause(r.EnterDelay) {
				return false, "agent exited"
			}
		}
		for enter := 0; ; enter++ {
			attempts++
			shown := r.Paste && s.inputHolds(text)
			if err := s.writeInput([]byte("\r")); err != nil {
				return false, "write failed: " + err.Error()
			}
			if r.Confirm == ConfirmNone {
				return true, "written"
			}
			// When the input box emptied after this Enter, the agent took
			// the message and its hook is merely slow (a loaded machine):
			// wait longer instead of pressing Enter again.
			for grace := 0; ; grace++ {
				select {
				case how := <-s.confirm:
					return true, fmt.Sprintf("confirmed by %s after %d Enter(s)", how, attempts)
				case <-time.After(r.ConfirmTimeout):
				case <-s.quit:
					return false, "agent exited"
				}
				if !shown || grace >= 2 || s.inputHolds(text) {
					break
				}
			}
			if enter >= r.EnterRetries {
				break
			}
			s.arm()
		}
	}
	return false, fmt.Sprintf("not confirmed after %d Enter(s) and %d resend(s)", attempts, r.Resends)
}

const (
	pasteSettle      = 100 * time.Millisecond
	pasteShowTimeout = 1500 * time.Millisecond
)

// quietFor is how long the agent has printed nothing.
func (s *Session) quietFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastOutput)
}

// waitUntil polls cond every 10 ms for at most d (or until the session
// ends) and reports whether it held.
func (s *Session) waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-s.quit:
			return false
		}
	}
	return true
}

// pause waits d unless the session ends first.
func (s *Session) pause(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.quit:
		return false
	}
}

// inputHolds reports whether the input box — the last screen line with
// the prompt glyph ❯ — shows the start of text or Claude's collapsed
// "[Pasted text" marker. Earlier prompts in the transcript do not count.
func (s *Session) inputHolds(text string) bool {
	lines := strings.Split(s.Text(), "\n")
	cols, _ := s.Size()
	for i := len(lines) - 1; i >= 0; i-- {
		k := strings.LastIndex(lines[i], claudePrompt)
		if k < 0 {
			continue
		}
		box := lines[i][k:]
		if strings.Contains(box, "[Pasted text") {
			return true
		}
		probe := []rune(strings.TrimSpace(strings.SplitN(text, "\n", 2)[0]))
		if n := min(40, cols-6); n > 0 && len(probe) > n {
			probe = probe[:n]
		}
		return len(probe) > 0 && strings.Contains(box, string(probe))
	}
	return false
}

// sanitize removes bytes that would end a paste or act as keys: ESC and
// other control characters. In a paste, newlines and tabs stay; typed as a
// line, newlines become spaces (a newline would submit early).
func sanitize(text string, paste bool) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == '\n' || r == '\t':
			if paste {
				b.WriteRune(r)
			} else {
				b.WriteByte(' ')
			}
		case r == '\r':
			if !paste {
				b.WriteByte(' ')
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// control characters (ESC included) and C1 controls
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
