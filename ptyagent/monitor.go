package ptyagent

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
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

const (
	monitorTick = 50 * time.Millisecond
	// claudeIdleFallback: a busy Claude whose title shows ✳ and which has
	// been silent this long without a Stop hook (an Esc/Ctrl-C interrupt
	// fires none) counts as idle.
	claudeIdleFallback = 3 * time.Second
	scanEvery          = 2 * time.Second
)

// monitor turns hooks, output activity and time into health changes.
func (s *Session) monitor() {
	defer s.workers.Done()
	tick := time.NewTicker(monitorTick)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case m := <-s.hooks:
			s.onHook(m)
		case <-s.activity:
			s.onOutput()
		case <-tick.C:
			s.onTick()
		}
	}
}

// lifeSigns records a sign of life: a hang warning clears and the
// heartbeat callback runs (at most once a second).
func (s *Session) lifeSigns(now time.Time) {
	s.mu.Lock()
	s.lastLife = now
	h, base := s.health, s.base
	beat := s.spec.OnHeartbeat != nil && now.Sub(s.lastBeat) >= time.Second
	if beat {
		s.lastBeat = now
	}
	s.mu.Unlock()
	if h == HealthHangWarning || h == HealthHung {
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

func (s *Session) onOutput() {
	now := time.Now()
	s.mu.Lock()
	s.lastOutput = now
	title := ""
	if !s.scrClosed {
		title = s.scr.Title()
	}
	h := s.health
	awaitScreen := s.awaiting && s.spec.Submit.Confirm == ConfirmScreen && s.version.Load() > s.awaitVer
	userAnswered := h == HealthWaitingPermission && s.userIn.Load() > s.permSince.UnixNano()
	s.mu.Unlock()
	s.lifeSigns(now)

	if awaitScreen {
		s.setHealth(HealthBusy, "message echoed")
		s.confirmed("screen changed")
	}
	if userAnswered {
		s.setHealth(HealthBusy, "permission answered")
	}
	if s.spec.Kind == ProfileClaude && titleBusy(title) {
		s.mu.Lock()
		awaiting := s.awaiting
		s.mu.Unlock()
		if awaiting || h.Injectable() {
			// Claude is working: a message was submitted (by us, whose
			// hook may still be on its way, or by the user).
			s.setHealth(HealthBusy, "title shows busy")
			s.confirmed("title shows busy")
		}
	}
}

func (s *Session) onHook(m HookMessage) {
	now := time.Now()
	s.mu.Lock()
	s.lastHook = now
	s.mu.Unlock()
	s.lifeSigns(now)
	if m.Event != HookPreToolUse {
		s.emit(Event{Kind: EventHook, Detail: m.Event, Payload: append([]byte(nil), m.Payload...)})
	}
	switch m.Event {
	case HookSessionStart:
		s.mu.Lock()
		s.sawStart = true
		h := s.health
		s.mu.Unlock()
		if s.spec.Ready.Mode == ReadyHook && (h == HealthStarting || h == HealthHangWarning || h == HealthHung) {
			s.setHealth(HealthReady, "SessionStart hook")
		}
	case HookUserPromptSubmit:
		s.setHealth(HealthBusy, "UserPromptSubmit hook")
		s.confirmed("UserPromptSubmit hook")
	case HookStop:
		s.setHealth(HealthIdle, "Stop hook")
	case HookStopFailure:
		text := payloadText(m.Payload)
		if rateLimitRe.MatchString(text) {
			s.mu.Lock()
			s.limitedAt = now
			s.mu.Unlock()
			s.setHealth(HealthRateLimited, clip(text, 200))
		} else {
			s.setHealth(HealthIdle, "StopFailure: "+clip(text, 200))
		}
	case HookPermissionRequest:
		s.setHealth(HealthWaitingPermission, "PermissionRequest hook")
	case HookNotification:
		text := payloadText(m.Payload)
		if strings.Contains(strings.ToLower(text), "permission") {
			s.setHealth(HealthWaitingPermission, "Notification: "+clip(text, 200))
		}
	case HookPreToolUse:
		if m.Decision == "deny" {
			s.emit(Event{Kind: EventHookDenied, Detail: clip(toolName(m.Payload)+": "+m.Reason, 300),
				Payload: append([]byte(nil), m.Payload...)})
		}
		s.mu.Lock()
		h := s.health
		s.mu.Unlock()
		if h == HealthWaitingPermission || h.Injectable() {
			s.setHealth(HealthBusy, "PreToolUse hook")
		}
	}
}

func (s *Session) onTick() {
	now := time.Now()
	s.mu.Lock()
	h, base := s.health, s.base
	sp := s.spec
	quietFor := now.Sub(s.lastOutput)
	lifeAgo := now.Sub(s.lastLife)
	busyFor := now.Sub(s.busySince)
	hookAgo := now.Sub(s.lastHook)
	limitedFor := now.Sub(s.limitedAt)
	scanDue := now.Sub(s.lastScan) >= scanEvery
	title, text := "", ""
	needText := h == HealthStarting || (h == HealthBusy && sp.Kind == ProfileCustom && s.readyRe != nil)
	if !s.scrClosed {
		title = s.scr.Title()
		if needText {
			text = s.scr.Text()
		}
	}
	s.mu.Unlock()

	if scanDue && (h == HealthBusy || h == HealthWaitingPermission || h == HealthHangWarning || h == HealthHung) {
		s.scanSessions()
	}

	switch h {
	case HealthStarting:
		switch sp.Ready.Mode {
		case ReadyClaude:
			if strings.HasPrefix(title, claudeIdleGlyph) && strings.Contains(text, claudePrompt) && quietFor >= sp.Ready.Quiet {
				s.setHealth(HealthReady, "title ✳, prompt drawn, output quiet")
				return
			}
		case ReadyQuiet:
			if quietFor >= sp.Ready.Quiet && (s.readyRe == nil || s.readyRe.MatchString(text)) {
				s.setHealth(HealthReady, "output quiet")
				return
			}
		}
	case HealthBusy:
		switch {
		case sp.Kind == ProfileClaude && strings.HasPrefix(title, claudeIdleGlyph) &&
			quietFor >= claudeIdleFallback && hookAgo >= claudeIdleFallback && busyFor >= claudeIdleFallback:
			s.setHealth(HealthIdle, "title shows idle without a Stop hook (interrupted?)")
			return
		case sp.Kind == ProfileCustom && sp.Ready.Mode == ReadyQuiet && quietFor >= sp.Ready.Quiet &&
			busyFor >= sp.Ready.Quiet && (s.readyRe == nil || s.readyRe.MatchString(text)):
			s.setHealth(HealthIdle, "output quiet")
			return
		}
	case HealthRateLimited:
		if limitedFor >= sp.RateLimitCooldown {
			s.setHealth(HealthIdle, "rate-limit cooldown over")
		}
		return
	}

	// Hang detection: only while the agent should be making progress.
	if base == HealthStarting || base == HealthBusy {
		if h == base || h == HealthHangWarning || h == HealthHung {
			switch {
			case lifeAgo >= sp.HangTimeout && h != HealthHung:
				s.setHealth(HealthHung, "no output or hook for "+lifeAgo.Round(time.Second).String())
			case lifeAgo >= sp.HangTimeout/2 && h == base:
				s.setHealth(HealthHangWarning, "no output or hook for "+lifeAgo.Round(time.Second).String())
			}
		}
	}
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
