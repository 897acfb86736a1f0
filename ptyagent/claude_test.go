package ptyagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/workspace"
)

// TestRealClaude drives real Claude Code against the fake Messages API:
// ready, three injections of 10, 200 and 5000 characters each submitted
// exactly once (UserPromptSubmit hooks and the API log agree), busy → idle
// through the Stop hook, a clean /exit, and a restart with --resume that
// keeps the conversation.
func TestRealClaude(t *testing.T) {
	bin, ok := claudetest.Binary()
	if !ok {
		t.Skip("claude not on PATH: install with `npm install -g @anthropic-ai/claude-code` to run the real Claude Code test")
	}
	if testing.Short() {
		t.Skip("real Claude Code test skipped in -short mode")
	}
	api := fakeapi.New(fakeapi.DefaultScript())
	defer api.Close()
	project := t.TempDir()
	home := claudetest.Home(t, project)
	env := claudetest.Env(home, api.URL())

	// Claude runs `<hook command> hook <Event>`: a wrapper re-executes this
	// test binary as the hook client.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hookCmd := filepath.Join(t.TempDir(), "hm-hook")
	if err := os.WriteFile(hookCmd, []byte(fmt.Sprintf("#!/bin/sh\n%s=hook exec '%s' \"$@\"\n", helperEnv, exe)), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(t.TempDir(), "settings.json")
	if err := WriteClaudeSettings(settings, hookCmd); err != nil {
		t.Fatal(err)
	}
	sessionID := uuid.NewString()
	var rec recorder
	m, err := NewManager(ManagerConfig{
		OnEvent:     rec.add,
		StopTimeout: 10 * time.Second,
		Factory: func(id, role string, resume bool) (Spec, error) {
			return ClaudeSpec(Spec{Dir: project, BaseEnv: env, Cols: 120, Rows: 40,
				LogPath: filepath.Join(project, "logs", id+".log")},
				ClaudeOptions{Binary: bin, SessionID: sessionID, Resume: resume, SettingsPath: settings,
					AppendSystemPrompt: "You are a test agent."}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer func() {
		if t.Failed() {
			if s, ok := m.Session("lead"); ok {
				t.Logf("screen:\n%s", s.Text())
			}
			for _, r := range api.Requests() {
				t.Logf("request tools=%v prompt=%q", r.HasTools, clip(r.Prompt, 60))
			}
			for _, e := range rec.all() {
				t.Logf("event %s %s %s seq=%d %s", e.Agent, e.Kind, e.Health, e.Seq, clip(e.Detail, 120))
			}
		}
	}()

	t0 := time.Now()
	if err := m.Start("lead", "lead", false); err != nil {
		t.Fatal(err)
	}
	s, _ := m.Session("lead")
	waitFor(t, 60*time.Second, "ready", func() bool { return s.Health() == workspace.HealthReady })
	t.Logf("ready after %s", time.Since(t0).Round(time.Millisecond))

	msgs := []string{}
	for i, n := range []int{10, 200, 5000} {
		msg := fmt.Sprintf("m%d:", i+1) + strings.Repeat(string(rune('a'+i)), n-3)
		msgs = append(msgs, msg)
		if err := m.Inject("lead", i+1, msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 120*time.Second, "three deliveries", func() bool {
		return rec.count(func(e Event) bool { return e.Kind == EventDelivered || e.Kind == EventDeliveryFailed }) == 3
	})
	waitFor(t, 60*time.Second, "idle after the third turn", func() bool {
		return rec.count(func(e Event) bool { return e.Kind == EventHook && e.Detail == HookStop }) == 3 && s.Health() == workspace.HealthIdle
	})
	for i := 1; i <= 3; i++ {
		e, ok := rec.find(delivered(i))
		if !ok {
			t.Errorf("seq %d not delivered", i)
			continue
		}
		t.Logf("seq %d (%d chars): %s", i, len(msgs[i-1]), e.Detail)
	}
	if n := rec.count(func(e Event) bool { return e.Kind == EventHook && e.Detail == HookUserPromptSubmit }); n != 3 {
		t.Errorf("%d UserPromptSubmit hooks, want 3", n)
	}
	// Each message reached the model exactly once, whole.
	for i, msg := range msgs {
		n := 0
		for _, r := range api.Requests() {
			// The first turn's prompt also carries Claude's system reminders.
			if r.Kind == "messages" && r.HasTools && strings.HasSuffix(r.Prompt, msg) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("message %d (%d chars) reached the API %d times as the last prompt", i+1, len(msg), n)
		}
	}
	hs := rec.healths("lead")
	busyIdle := 0
	for i := 1; i < len(hs); i++ {
		if hs[i-1] == workspace.HealthBusy && hs[i] == workspace.HealthIdle {
			busyIdle++
		}
	}
	if busyIdle != 3 {
		t.Errorf("busy → idle %d times: %v", busyIdle, hs)
	}

	// Stop: idle, so /exit, exit code 0, nothing left.
	t1 := time.Now()
	if err := m.Stop("lead"); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	t.Logf("stopped in %s, exit code %d", time.Since(t1).Round(time.Millisecond), s.ExitCode())
	if s.ExitCode() != 0 {
		t.Errorf("exit code %d", s.ExitCode())
	}
	assertGone(t, s)

	// Restart with --resume: the conversation survives.
	if err := m.Start("lead", "lead", true); err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Session("lead")
	if !strings.Contains(strings.Join(s2.Spec().Argv, " "), "--resume "+sessionID) {
		t.Errorf("restart argv %q", s2.Spec().Argv)
	}
	waitFor(t, 60*time.Second, "ready after resume", func() bool { return s2.Health() == workspace.HealthReady })
	if err := m.Inject("lead", 4, "m4: after resume"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "fourth delivery", func() bool { _, ok := rec.find(delivered(4)); return ok })
	waitFor(t, 30*time.Second, "resumed request", func() bool {
		for _, r := range api.Requests() {
			if r.HasTools && strings.HasSuffix(r.Prompt, "m4: after resume") {
				if !strings.Contains(string(r.Body), msgs[0]) {
					t.Errorf("the resumed conversation lacks the first message")
				}
				return true
			}
		}
		return false
	})
	waitFor(t, 60*time.Second, "idle after resume", func() bool { return s2.Health() == workspace.HealthIdle })
	m.Stop("lead")
	<-s2.Done()
	assertGone(t, s2)
}
