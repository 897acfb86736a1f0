package ptyagent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// idleSession is a session without a process, for the monitor's rules.
func idleSession(t *testing.T, kind ProfileKind, h vocab.Health) *Session {
	t.Helper()
	spec, re, err := Spec{ID: "m", Kind: kind}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	close(exited) // no process: setsid scans return at once
	return &Session{spec: spec, readyRe: re, health: h, base: vocab.HealthBusy, scrClosed: true,
		exited: exited, sids: map[int]bool{}}
}

// TestCheckDeadlines: the monitor sleeps until the next moment time alone
// can change the health, and not at all when nothing can.
func TestCheckDeadlines(t *testing.T) {
	now := time.Now()
	ht := 120 * time.Second
	cases := []struct {
		name       string
		kind       ProfileKind
		health     vocab.Health
		base       vocab.Health
		setup      func(s *Session)
		want       vocab.Health
		next       func(s *Session) time.Time // zero: no deadline
		wantOutput bool
	}{
		{name: "idle sleeps", kind: ProfileCustom, health: vocab.HealthIdle, want: vocab.HealthIdle},
		{name: "ready sleeps", kind: ProfileClaude, health: vocab.HealthReady, want: vocab.HealthReady},
		{name: "permission: only the setsid scan", kind: ProfileClaude, health: vocab.HealthWaitingPermission,
			setup: func(s *Session) { s.lastLife = now },
			want:  vocab.HealthWaitingPermission, next: func(s *Session) time.Time { return now.Add(scanEvery) }},
		{name: "custom busy: quiet deadline", kind: ProfileCustom, health: vocab.HealthBusy,
			setup: func(s *Session) {
				s.lastOutput, s.lastLife, s.busySince, s.lastScan = now.Add(-100*time.Millisecond), now, now.Add(-time.Second), now
			},
			want: vocab.HealthBusy, next: func(s *Session) time.Time { return now.Add(400 * time.Millisecond) }},
		{name: "custom busy: quiet long enough", kind: ProfileCustom, health: vocab.HealthBusy,
			setup: func(s *Session) {
				s.lastOutput, s.lastLife, s.busySince, s.lastScan = now.Add(-time.Second), now, now.Add(-time.Second), now
			},
			want: vocab.HealthIdle},
		{name: "claude busy: idle fallback deadline", kind: ProfileClaude, health: vocab.HealthBusy,
			setup: func(s *Session) {
				s.lastOutput, s.lastLife, s.lastHook, s.busySince, s.lastScan = now.Add(-2*time.Second), now, now.Add(-time.Second), now.Add(-time.Minute), now
			},
			// It looks at its screen for a retry line every retryCheckEvery.
			want: vocab.HealthBusy, next: func(s *Session) time.Time { return now.Add(min(claudeIdleFallback-time.Second, retryCheckEvery)) }},
		{name: "claude busy, title not idle: wait for output", kind: ProfileClaude, health: vocab.HealthBusy,
			setup: func(s *Session) {
				// A hook 30 s ago: progress (output alone would not be).
				s.lastOutput, s.lastLife, s.lastHook, s.busySince, s.lastScan = now.Add(-time.Minute), now, now.Add(-30*time.Second), now.Add(-time.Minute), now
			},
			want: vocab.HealthBusy, next: func(s *Session) time.Time { return now.Add(retryCheckEvery) }, wantOutput: true},
		{name: "sim busy: hang warning deadline", kind: ProfileSim, health: vocab.HealthBusy,
			setup: func(s *Session) { s.lastLife, s.lastScan = now.Add(-10*time.Second), now.Add(time.Hour) },
			want:  vocab.HealthBusy, next: func(s *Session) time.Time { return now.Add(ht/2 - 10*time.Second) }},
		{name: "sim busy: warning then hung deadline", kind: ProfileSim, health: vocab.HealthBusy,
			setup: func(s *Session) { s.lastLife, s.lastScan = now.Add(-ht/2-time.Second), now.Add(time.Hour) },
			want:  vocab.HealthHangWarning, next: func(s *Session) time.Time { return now.Add(ht/2 - time.Second) }},
		{name: "sim starting: hang warning deadline", kind: ProfileSim, health: vocab.HealthStarting, base: vocab.HealthStarting,
			setup: func(s *Session) { s.lastLife = now },
			want:  vocab.HealthStarting, next: func(s *Session) time.Time { return now.Add(ht / 2) }},
		{name: "sim starting, allowance doubled: at hang_seconds a warning, not hung", kind: ProfileSim, health: vocab.HealthStarting, base: vocab.HealthStarting,
			setup: func(s *Session) { s.spec.StartTimeout, s.lastLife, s.lastScan = 2*ht, now.Add(-ht), now.Add(time.Hour) },
			want:  vocab.HealthHangWarning, next: func(s *Session) time.Time { return now.Add(ht) }},
		{name: "sim starting, allowance doubled: warning at half of it", kind: ProfileSim, health: vocab.HealthStarting, base: vocab.HealthStarting,
			setup: func(s *Session) { s.spec.StartTimeout, s.lastLife = 2*ht, now.Add(-ht/2) },
			want:  vocab.HealthStarting, next: func(s *Session) time.Time { return now.Add(ht / 2) }},
		{name: "sim busy: the start allowance does not apply", kind: ProfileSim, health: vocab.HealthBusy,
			setup: func(s *Session) { s.spec.StartTimeout, s.lastLife, s.lastScan = 4*ht, now.Add(-ht), now.Add(time.Hour) },
			want:  vocab.HealthHung, next: func(s *Session) time.Time { return now.Add(time.Hour + scanEvery) }},
		{name: "rate limited: cooldown deadline", kind: ProfileClaude, health: vocab.HealthRateLimited,
			setup: func(s *Session) { s.limitedAt = now.Add(-time.Second) },
			want:  vocab.HealthRateLimited, next: func(s *Session) time.Time { return now.Add(59 * time.Second) }},
		{name: "rate limited: cooldown over", kind: ProfileClaude, health: vocab.HealthRateLimited,
			setup: func(s *Session) { s.limitedAt = now.Add(-time.Hour) },
			want:  vocab.HealthIdle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := idleSession(t, c.kind, c.health)
			if c.base != "" {
				s.base = c.base
			}
			if c.setup != nil {
				c.setup(s)
			}
			next := s.check(now)
			if s.health != c.want {
				t.Errorf("health %s, want %s", s.health, c.want)
			}
			var want time.Time
			if c.next != nil {
				want = c.next(s)
			}
			if !next.Equal(want) {
				t.Errorf("next check %v, want %v", fmtAt(next, now), fmtAt(want, now))
			}
			if s.wantOutput != c.wantOutput {
				t.Errorf("wantOutput %v, want %v", s.wantOutput, c.wantOutput)
			}
		})
	}
}

func fmtAt(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return "now+" + t.Sub(now).String()
}

// TestOutputWanted: a streaming agent wakes its monitor only when its
// output matters at once.
func TestOutputWanted(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name   string
		kind   ProfileKind
		health vocab.Health
		setup  func(s *Session)
		want   bool
	}{
		{"custom idle", ProfileCustom, vocab.HealthIdle, nil, false},
		{"custom busy", ProfileCustom, vocab.HealthBusy, nil, false},
		{"claude busy", ProfileClaude, vocab.HealthBusy, nil, false},
		{"starting", ProfileClaude, vocab.HealthStarting, nil, false},
		{"claude idle: the title may show work", ProfileClaude, vocab.HealthIdle, nil, true},
		{"awaiting a confirmation", ProfileCustom, vocab.HealthIdle, func(s *Session) { s.awaiting = true }, true},
		{"monitor asked", ProfileCustom, vocab.HealthBusy, func(s *Session) { s.wantOutput = true }, true},
		{"waiting for permission", ProfileClaude, vocab.HealthWaitingPermission, nil, true},
		{"hang warning", ProfileSim, vocab.HealthHangWarning, nil, true},
		{"hung", ProfileSim, vocab.HealthHung, nil, true},
		{"heartbeat due", ProfileCustom, vocab.HealthBusy, func(s *Session) {
			s.spec.OnHeartbeat = func(time.Time) {}
			s.lastBeat = now.Add(-heartbeatEvery)
		}, true},
		{"heartbeat not due", ProfileCustom, vocab.HealthBusy, func(s *Session) {
			s.spec.OnHeartbeat = func(time.Time) {}
			s.lastBeat = now.Add(-heartbeatEvery + time.Second)
		}, false},
	}
	for _, c := range cases {
		s := idleSession(t, c.kind, c.health)
		if c.setup != nil {
			c.setup(s)
		}
		if got := s.outputWanted(now); got != c.want {
			t.Errorf("%s: outputWanted %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRawLogBuffered: the buffered log writes out everything on Close and,
// without Close, within logFlushDelay; rotation keeps the stream whole.
func TestRawLogBuffered(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.log")
	l, err := openRawLog(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("hello"))
	waitFor(t, 5*time.Second, "buffered bytes flushed by the timer", func() bool {
		b, _ := os.ReadFile(path)
		return string(b) == "hello"
	})
	var want bytes.Buffer
	want.WriteString("hello")
	for i := range 2000 {
		p := fmt.Appendf(nil, "line %d\r\n", i)
		l.Write(p)
		want.Write(p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("log has %d bytes, want %d", len(got), want.Len())
	}
	l.Write([]byte("after close")) // ignored, no panic

	// Rotation: <path>.1 followed by <path> is the tail of the stream.
	rot := filepath.Join(dir, "r.log")
	l, err = openRawLog(rot, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want.Reset()
	for i := range 300 {
		p := fmt.Appendf(nil, "%04d|", i)
		l.Write(p)
		want.Write(p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	old, err1 := os.ReadFile(rot + ".1")
	cur, err2 := os.ReadFile(rot)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if len(old) > 1000 || len(cur) > 1000 || len(old) < 900 {
		t.Errorf("sizes %d %d", len(old), len(cur))
	}
	if got := append(old, cur...); !bytes.HasSuffix(want.Bytes(), got) {
		t.Errorf("rotated logs are not the tail of the stream:\n%s", got)
	}
}

// A Claude Code retrying a rate-limited call itself (its status line, no
// hook) is rate_limited at the next look, stays so — no cooldown, no hang
// however long the retries last — and is busy again when the line is
// gone or a hook shows the retry went through (before its Stop makes it
// idle: a turn that worked is never taken for one lost to the limit).
func TestClaudeRetryingIsRateLimited(t *testing.T) {
	now := time.Now()
	var healths []string
	s := idleSession(t, ProfileClaude, vocab.HealthBusy)
	s.spec.OnEvent = func(e Event) {
		if e.Kind == EventHealth {
			healths = append(healths, string(e.Health))
		}
	}
	s.scr, s.scrClosed = screen.New(screen.Options{Cols: 100, Rows: 8}), false
	s.kick = make(chan struct{}, 1)
	// Retrying for longer than the hang timeout and the cooldown.
	long := now.Add(-s.spec.HangTimeout - s.spec.RateLimitCooldown - time.Minute)
	s.lastOutput, s.lastLife, s.lastHook, s.busySince, s.lastScan = long, long, long, long, now.Add(time.Hour)
	_, _ = s.scr.Write([]byte("✻ Working…\r\n  ⎿  API error · Retrying in 18s · attempt 6/10\r\n"))
	s.check(now)
	if s.health != vocab.HealthRateLimited || !strings.Contains(s.detail, "attempt 6/10") {
		t.Fatalf("retry line shown: %s (%s), want rate_limited", s.health, s.detail)
	}
	// Neither the cooldown nor the hang timeout ends it.
	s.limitedAt = long
	later := now
	if next := s.check(later); s.health != vocab.HealthRateLimited || next.IsZero() {
		t.Fatalf("retrying long: %s (next %v), want rate_limited and another look", s.health, next)
	}
	// The line is gone: busy again once it stayed gone for retryGrace.
	_, _ = s.scr.Write([]byte("\x1b[2J\x1b[H✻ Working…\r\n"))
	if next := s.check(later); s.health != vocab.HealthRateLimited || !next.Equal(later.Add(retryCheckEvery)) {
		t.Fatalf("retry line just gone: %s (next %v), want rate_limited until %v", s.health, fmtAt(next, later), retryGrace)
	}
	later = later.Add(retryGrace)
	s.check(later)
	if s.health != vocab.HealthBusy {
		t.Fatalf("retry line gone: %s, want busy", s.health)
	}
	// Retrying again, then the turn ends: busy, then idle.
	_, _ = s.scr.Write([]byte("  ⎿  API error · Retrying in 2s · attempt 1/10\r\n"))
	s.check(later)
	s.onHook(HookMessage{Event: HookStop, Payload: []byte(`{}`)})
	if got := strings.Join(healths, " "); got != "rate_limited busy rate_limited busy idle" {
		t.Fatalf("healths %s", got)
	}
}

// TestGoneIsNeverReady: once the agent's process has exited, no rule
// reports it alive while its exit is being processed (reaping can take a
// while on a busy machine): a program that printed why it cannot start and
// exited is an early exit, not an agent that became ready by going quiet.
func TestGoneIsNeverReady(t *testing.T) {
	now := time.Now()
	for _, gone := range []bool{false, true} {
		s := idleSession(t, ProfileCustom, vocab.HealthStarting)
		s.base, s.lastOutput, s.lastLife, s.gone = vocab.HealthStarting, now.Add(-time.Minute), now, gone
		s.checkOnce(now)
		want := vocab.HealthReady
		if gone {
			want = vocab.HealthStarting
		}
		if s.health != want {
			t.Errorf("gone=%v: health %s, want %s", gone, s.health, want)
		}
		s.setHealth(vocab.HealthExited, "exit code 1")
		if s.health != vocab.HealthExited {
			t.Errorf("gone=%v: exit not reported: %s", gone, s.health)
		}
	}
}

// Each start in a row that hangs before the agent was ever ready doubles
// the next start's allowance, up to 8 × hang_seconds; a start that got
// ready brings it back to hang_seconds, and a hang after ready (a turn)
// does not count.
func TestStartAllowanceBacksOff(t *testing.T) {
	var rec recorder
	m := newTestManager(t, &rec, nil)
	a := &agent{id: "a", role: "worker"}
	health := func(spec Spec, hs ...vocab.Health) {
		for _, h := range hs {
			spec.OnEvent(Event{Agent: "a", Kind: EventHealth, Health: h})
		}
	}
	const ht = time.Second
	spec := m.complete(a, Spec{HangTimeout: ht})
	for i, want := range []time.Duration{ht, 2 * ht, 4 * ht, 8 * ht, 8 * ht} {
		if spec.StartTimeout != want {
			t.Fatalf("start %d: allowance %v, want %v", i+1, spec.StartTimeout, want)
		}
		health(spec, vocab.HealthStarting, vocab.HealthHangWarning, vocab.HealthStarting, vocab.HealthHangWarning, vocab.HealthHung, vocab.HealthExited)
		spec = m.complete(a, Spec{HangTimeout: ht})
	}
	health(spec, vocab.HealthStarting, vocab.HealthReady, vocab.HealthBusy, vocab.HealthHangWarning, vocab.HealthHung, vocab.HealthExited)
	if spec = m.complete(a, Spec{HangTimeout: ht}); spec.StartTimeout != ht {
		t.Fatalf("after a start that got ready: allowance %v, want %v", spec.StartTimeout, ht)
	}
	if got := len(rec.all()); got != 5*6+6 {
		t.Errorf("the wrapped OnEvent passed on %d events, want every one (36)", got)
	}
}
