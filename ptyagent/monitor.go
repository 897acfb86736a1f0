package ptyagent

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Claude Code's window title starts with ✳ when idle and with a spinning
// half-circle while it works.
const (
	claudeIdleGlyph = "✳"
	claudePrompt    = "❯"
)

func titleBusy(t string) bool {
	for _, g := range []string{"◐", "◑", "◒", "◓"} {
		if strings.HasPrefix(t, g) {
			return true
		}
	}
	return false
}

// rateLimitRe recognises a rate-limit / overload failure in a StopFailure
// payload or an API error text.
var rateLimitRe = regexp.MustCompile(`(?i)rate[ _-]?limit|\b429\b|\b529\b|overloaded|too many requests|usage limit`)

// claudeRetrying is the status line Claude Code draws while it waits to
// retry a failed model call (2.1.197: "API error · Retrying in 18s ·
// attempt 6/10"; with a rate limit's reset time "Retrying in 18s (resets
// 3pm) · attempt 6/10"): its retries of a 429 or 529 fire no hook.
var claudeRetrying = regexp.MustCompile(`Retrying in [0-9][^·\n]{0,40}· attempt [0-9]+/[0-9]+`)

const (
	// claudeIdleFallback: a busy Claude whose title shows ✳ and which has
	// been silent this long without a Stop hook (an Esc/Ctrl-C interrupt
	// fires none) counts as idle.
	claudeIdleFallback = 3 * time.Second
	scanEvery          = 2 * time.Second
	// retryCheckEvery spaces the looks at a working agent's screen for
	// Behavior.Retrying.
	retryCheckEvery = time.Second
	// retryGrace is how long a retry line stays gone before the retry
	// counts as gone through.
	retryGrace = 3 * time.Second
	// heartbeatEvery spaces OnHeartbeat calls (a file write each); a hang
	// is judged over minutes.
	heartbeatEvery = 5 * time.Second
)

// monitor turns hooks, output activity and time into health changes.
//
// It is event-driven: after every hook, output notice or deadline it
// evaluates the session (check) and sleeps on one timer until the next
// moment something can change by the passage of time alone (a ready-quiet
// deadline, the idle fallback, a hang warning or hung deadline, the end of
// a rate-limit cooldown, the next setsid scan while busy). An idle agent
// therefore causes no wake-ups at all. The reader updates lastOutput and
// lastLife itself and wakes the monitor only when output matters at once
// (see outputWanted), so a streaming agent does not wake it on every read.
func (s *Session) monitor() {
	defer s.workers.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		if next := s.check(now); next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(max(next.Sub(now), time.Millisecond))
		}
		select {
		case <-s.quit:
			return
		case m := <-s.hooks:
			s.onHook(m)
		case <-s.activity:
			s.onOutput()
		case <-timer.C:
		}
	}
}

// outputWanted reports whether the reader must wake the monitor for output
// that just arrived, rather than leave it to the next deadline: a delivery
// waits for its confirmation, the health depends on the output at once
// (waiting for permission, hang warnings, a Claude that may have started
// working), the monitor asked for it (wantOutput), or a heartbeat is due.
// s.mu is held.
func (s *Session) outputWanted(now time.Time) bool {
	switch {
	case s.wantOutput, s.awaiting:
		return true
	case s.health == vocab.HealthWaitingPermission, s.health == vocab.HealthHangWarning, s.health == vocab.HealthHung:
		return true
	case s.spec.behavior.BusyTitle != nil && s.health.Injectable():
		return true
	}
	return s.spec.OnHeartbeat != nil && now.Sub(s.lastBeat) >= heartbeatEvery
}

// lifeSigns records a sign of life: the heartbeat callback runs (at most
// once every heartbeatEvery), and a hang warning clears unless the sign
// is output alone from a busy CLI whose progress is its hooks
// (Behavior.ProgressByHooks: a spinner is not progress).
func (s *Session) lifeSigns(now time.Time, hook bool) {
	s.mu.Lock()
	s.lastLife = now
	h, base := s.health, s.base
	beat := s.spec.OnHeartbeat != nil && now.Sub(s.lastBeat) >= heartbeatEvery
	if beat {
		s.lastBeat = now
	}
	s.mu.Unlock()
	progress := hook || !s.spec.behavior.ProgressByHooks || base != vocab.HealthBusy
	if progress && (h == vocab.HealthHangWarning || h == vocab.HealthHung) {
		s.setHealth(base, "activity resumed")
	}
	if beat {
		s.spec.OnHeartbeat(now)
	}
}

// confirmed hands a confirmation to a waiting deliverer.
func (s *Session) confirmed(how string) {
	s.mu.Lock()
	ok := s.awaiting
	s.awaiting = false
	s.mu.Unlock()
	if ok {
		select {
		case s.confirm <- how:
		default:
		}
	}
}

// onOutput handles an output notice from the reader (which already set
// lastOutput and lastLife).
func (s *Session) onOutput() {
	s.mu.Lock()
	now := s.lastOutput
	title := ""
	if !s.scrClosed {
		title = s.scr.Title()
	}
	h := s.health
	awaitScreen := s.awaiting && s.spec.Submit.Confirm == ConfirmScreen && s.version.Load() > s.awaitVer
	userAnswered := h == vocab.HealthWaitingPermission && s.userIn.Load() > s.permSince.UnixNano()
	s.mu.Unlock()
	s.lifeSigns(now, false)

	if awaitScreen {
		s.setHealth(vocab.HealthBusy, "message echoed")
		s.confirmed("screen changed")
	}
	if userAnswered {
		s.setHealth(vocab.HealthBusy, "permission answered")
	}
	if busy := s.spec.behavior.BusyTitle; busy != nil && busy(title) {
		s.mu.Lock()
		awaiting := s.awaiting
		s.mu.Unlock()
		if awaiting || h.Injectable() {
			// The CLI is working: a message was submitted (by us, whose
			// hook may still be on its way, or by the user).
			s.setHealth(vocab.HealthBusy, "title shows busy")
			s.confirmed("title shows busy")
		}
	}
}

func (s *Session) onHook(m HookMessage) {
	now := time.Now()
	s.mu.Lock()
	s.lastHook = now
	retried := s.retrying && m.Event != HookStopFailure
	s.retrying, s.retryGoneAt = false, time.Time{}
	s.mu.Unlock()
	if retried {
		// A hook while the CLI retried a rate-limited call: the retry went
		// through (a turn that ends now worked; nothing is to be re-sent).
		s.setHealth(vocab.HealthBusy, "the CLI's retry went through ("+m.Event+" hook)")
	}
	s.lifeSigns(now, true)
	if m.Event != HookPreToolUse {
		s.emit(Event{Kind: EventHook, Detail: m.Event, Payload: append([]byte(nil), m.Payload...)})
	}
	if s.spec.behavior.Transcript || s.spec.behavior.ProgressByHooks {
		s.noteTranscript(m.Payload)
	}
	switch m.Event {
	case HookSessionStart:
		s.mu.Lock()
		s.sawStart = true
		h := s.health
		s.mu.Unlock()
		if s.spec.Ready.Mode == ReadyHook && (h == vocab.HealthStarting || h == vocab.HealthHangWarning || h == vocab.HealthHung) {
			s.setHealth(vocab.HealthReady, "SessionStart hook")
		}
	case HookUserPromptSubmit:
		s.setHealth(vocab.HealthBusy, "UserPromptSubmit hook")
		s.confirmed("UserPromptSubmit hook")
	case HookStop:
		s.setHealth(vocab.HealthIdle, "Stop hook")
	case HookStopFailure:
		text := payloadText(m.Payload)
		if rateLimitRe.MatchString(text) {
			s.mu.Lock()
			s.limitedAt = now
			s.mu.Unlock()
			s.setHealth(vocab.HealthRateLimited, clip(text, 200))
		} else {
			s.setHealth(vocab.HealthIdle, "StopFailure: "+clip(text, 200))
		}
	case HookPermissionRequest:
		s.setHealth(vocab.HealthWaitingPermission, "PermissionRequest hook")
	case HookNotification:
		text := payloadText(m.Payload)
		if strings.Contains(strings.ToLower(text), "permission") {
			s.setHealth(vocab.HealthWaitingPermission, "Notification: "+clip(text, 200))
		}
	case HookPreToolUse:
		if m.Decision == "deny" {
			s.emit(Event{Kind: EventHookDenied, Detail: clip(toolName(m.Payload)+": "+m.Reason, 300),
				Payload: append([]byte(nil), m.Payload...)})
		}
		s.mu.Lock()
		h := s.health
		s.mu.Unlock()
		if h == vocab.HealthWaitingPermission || h.Injectable() {
			s.setHealth(vocab.HealthBusy, "PreToolUse hook")
		}
	}
}

// check applies the time-driven health rules (ready after quiet output,
// the idle fallbacks, rate-limit cooldown, hang detection, setsid scans)
// and returns when it must run again; zero means only a hook or output can
// change anything. Output that a rule waits for but that time alone cannot
// bring (a title, a prompt, a ready pattern) sets wantOutput, so the reader
// wakes the monitor on the next output.
func (s *Session) check(now time.Time) time.Time {
	for range 4 { // a transition can enable another rule (busy → hang_warning)
		next, changed := s.checkOnce(now)
		if !changed {
			return next
		}
	}
	return now.Add(time.Millisecond)
}

// checkOnce evaluates the rules once; changed reports a health change.
func (s *Session) checkOnce(now time.Time) (next time.Time, changed bool) {
	s.mu.Lock()
	s.wantOutput = false
	h, base := s.health, s.base
	sp := s.spec
	lastOutput, lastLife, lastHook := s.lastOutput, s.lastLife, s.lastHook
	busySince, limitedAt, lastScan := s.busySince, s.limitedAt, s.lastScan
	transcript := s.transcript
	title, text := "", ""
	beh := sp.behavior
	retrying := s.retrying
	needText := h == vocab.HealthStarting || (h == vocab.HealthBusy && beh.IdleWhenQuiet && s.readyRe != nil) ||
		beh.Retrying != nil && (h == vocab.HealthBusy || h == vocab.HealthHangWarning || retrying)
	if !s.scrClosed {
		title = s.scr.Title()
		if needText {
			text = s.scr.Text()
		}
	}
	s.mu.Unlock()

	// soon keeps the earliest deadline; wait asks for the next output.
	soon := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	wait := func() {
		s.mu.Lock()
		s.wantOutput = true
		s.mu.Unlock()
	}
	set := func(h vocab.Health, detail string) (time.Time, bool) {
		s.setHealth(h, detail)
		return time.Time{}, true
	}

	switch h {
	case vocab.HealthBusy, vocab.HealthWaitingPermission, vocab.HealthHangWarning, vocab.HealthHung:
		// Record the setsid sessions of the agent's tools while it works,
		// so they can be killed after their parent is gone.
		if now.Sub(lastScan) >= scanEvery {
			s.scanSessions()
			lastScan = now
		}
		soon(lastScan.Add(scanEvery))
	default: // not at work: no tools to record
	}

	if beh.Retrying != nil && (h == vocab.HealthBusy || h == vocab.HealthHangWarning || retrying) {
		// A CLI retrying a rate-limited call itself shows it on screen only.
		line := beh.Retrying.FindString(text)
		switch {
		case line != "" && !retrying:
			s.mu.Lock()
			s.retrying, s.retryGoneAt, s.limitedAt = true, time.Time{}, now
			s.mu.Unlock()
			return set(vocab.HealthRateLimited, "rate limited: the CLI retries a failed model call ("+clip(line, 120)+")")
		case line == "" && retrying:
			// Gone for retryGrace without a failure hook: the retry went
			// through (a CLI that gave up clears the line too, and its
			// StopFailure hook follows).
			s.mu.Lock()
			gone := s.retryGoneAt
			if gone.IsZero() {
				s.retryGoneAt, gone = now, now
			}
			over := now.Sub(gone) >= retryGrace
			if over {
				s.retrying = false
			}
			s.mu.Unlock()
			if over {
				return set(vocab.HealthBusy, "the CLI's retry went through (its retry line is gone)")
			}
			soon(gone.Add(retryGrace))
		case line != "":
			s.mu.Lock()
			s.retryGoneAt = time.Time{}
			s.mu.Unlock()
		}
		soon(now.Add(retryCheckEvery))
		if retrying {
			return next, false // no cooldown: the CLI says when it is over
		}
	}

	switch h {
	case vocab.HealthStarting:
		quietAt := lastOutput.Add(sp.Ready.Quiet)
		switch sp.Ready.Mode {
		case ReadyClaude:
			switch {
			case now.Before(quietAt):
				soon(quietAt)
			case strings.HasPrefix(title, claudeIdleGlyph) && strings.Contains(text, claudePrompt):
				return set(vocab.HealthReady, "title ✳, prompt drawn, output quiet")
			default:
				wait()
			}
		case ReadyQuiet:
			switch {
			case now.Before(quietAt):
				soon(quietAt)
			case s.readyRe == nil || s.readyRe.MatchString(text):
				detail, again := s.loaded(now)
				if !again.IsZero() {
					soon(again)
					break
				}
				return set(vocab.HealthReady, "output quiet"+detail)
			default:
				wait()
			}
		}
	case vocab.HealthBusy:
		switch {
		case beh.IdleTitle != nil:
			at := latest(lastOutput, lastHook, busySince).Add(beh.IdleFallback)
			switch {
			case now.Before(at):
				soon(at)
			case beh.IdleTitle(title):
				return set(vocab.HealthIdle, "title shows idle without a Stop hook (interrupted?)")
			default:
				wait()
			}
		case beh.IdleWhenQuiet && sp.Ready.Mode == ReadyQuiet:
			at := latest(lastOutput, busySince).Add(sp.Ready.Quiet)
			switch {
			case now.Before(at):
				soon(at)
			case s.readyRe == nil || s.readyRe.MatchString(text):
				return set(vocab.HealthIdle, "output quiet")
			default:
				wait()
			}
		}
	case vocab.HealthRateLimited:
		at := limitedAt.Add(sp.RateLimitCooldown)
		if now.Before(at) {
			return at, false
		}
		return set(vocab.HealthIdle, "rate-limit cooldown over")
	default: // the checks below
	}
	if h == vocab.HealthBusy && beh.TurnFailure != nil && transcript != "" {
		// A CLI that fires no hook when a turn fails (Codex) records the
		// failure in its session file. Looked at once output has been
		// quiet for a while.
		at := latest(lastOutput, lastHook, busySince).Add(codexFailCheck)
		switch {
		case now.Before(at):
			soon(at)
		default:
			if limited, detail := beh.TurnFailure(transcript); limited {
				s.mu.Lock()
				s.limitedAt = now
				s.mu.Unlock()
				return set(vocab.HealthRateLimited, detail)
			}
			wait()
		}
	}

	// Hang detection: only while the agent should be making progress.
	if (base == vocab.HealthStarting || base == vocab.HealthBusy) && (h == base || h == vocab.HealthHangWarning) {
		what := "no output or hook"
		if beh.ProgressByHooks && base == vocab.HealthBusy {
			// Output alone is a spinner: progress is a hook, the turn's
			// start, or the session file growing.
			if s.transcriptGrew(now, transcript) && h == vocab.HealthHangWarning {
				return set(base, "session file grew")
			}
			s.mu.Lock()
			lastLife = latest(lastHook, busySince, s.progressAt)
			s.mu.Unlock()
			what = "no turn progress (no hook, no session file growth; output alone is not progress)"
		}
		limit := sp.HangTimeout
		if base == vocab.HealthStarting {
			limit = max(limit, sp.StartTimeout)
		}
		lifeAgo := now.Sub(lastLife)
		switch {
		case lifeAgo >= limit:
			return set(vocab.HealthHung, what+" for "+lifeAgo.Round(time.Second).String())
		case h == base && lifeAgo >= limit/2:
			return set(vocab.HealthHangWarning, what+" for "+lifeAgo.Round(time.Second).String())
		case h == base:
			soon(lastLife.Add(limit / 2))
		default:
			soon(lastLife.Add(limit))
		}
	}
	return next, false
}

// latest returns the latest of the times.
func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// payloadText extracts the human text of a hook payload (error, message,
// reason fields), falling back to the raw JSON.
func payloadText(p json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(p, &m) != nil {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return s
		}
		return string(p)
	}
	var parts []string
	for _, k := range []string{"error", "error_type", "message", "reason", "stop_reason", "error_message", "notification_type"} {
		switch v := m[k].(type) {
		case string:
			parts = append(parts, v)
		case map[string]any:
			b, _ := json.Marshal(v)
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return string(p)
	}
	return strings.Join(parts, " ")
}

func toolName(p json.RawMessage) string {
	var m struct {
		ToolName string `json:"tool_name"`
	}
	_ = json.Unmarshal(p, &m)
	if m.ToolName == "" {
		return "tool"
	}
	return m.ToolName
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// transcriptGrew reports whether the session file grew since last looked
// at (recording when: turn progress).
func (s *Session) transcriptGrew(now time.Time, path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi.Size() == s.transcriptSize {
		return false
	}
	s.transcriptSize, s.progressAt = fi.Size(), now
	return true
}

// loadedPoll is how often Ready.Loaded is asked while the rest of the
// ready rules hold.
const loadedPoll = 100 * time.Millisecond

// loaded asks Ready.Loaded (the saved conversation of a resumed CLI is
// loaded) once the rest of the ready rules hold. It returns when to ask
// again while it does not hold, and the zero time with what to add to
// the health detail once the agent is ready: at once when there is no
// Loaded, or when Loaded holds; Ready.LoadedWait after the first ask
// without it, so a CLI that changed how it loads cannot keep its agent
// starting for good.
func (s *Session) loaded(now time.Time) (detail string, again time.Time) {
	r := s.spec.Ready
	if r.Loaded == nil {
		return "", time.Time{}
	}
	if r.Loaded() {
		return ", conversation loaded", time.Time{}
	}
	s.mu.Lock()
	if s.loadWaitAt.IsZero() {
		s.loadWaitAt = now
	}
	from := s.loadWaitAt
	s.mu.Unlock()
	if now.Sub(from) >= r.LoadedWait {
		return fmt.Sprintf(", its conversation not seen loaded in %s", r.LoadedWait), time.Time{}
	}
	return "", now.Add(loadedPoll)
}
