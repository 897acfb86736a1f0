package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestProgramSmoke runs the model in a real tea.Program: snapshots arrive
// with Send, screen changes through the Changed channel, keys reach the
// engine and the attached agent, and q quits.
func TestProgramSmoke(t *testing.T) {
	eng := &fakeEngine{}
	terms := newFakeTerms(agentIDs(4)...)
	m := New(Options{FPS: 30, Engine: eng, Terminals: terms, Title: "smoke"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))

	tm.Send(SnapshotMsg{State: testState(4)})
	waitOutput(t, tm, "worker_2 $ line 0")

	// A screen change reaches the display through the change signal.
	lead := terms.terms["lead"]
	lead.mu.Lock()
	lead.id = "LEADCHANGED"
	lead.cache = map[[4]int][]string{}
	lead.mu.Unlock()
	lead.bump()
	terms.signal()
	waitOutput(t, tm, "LEADCHANGED $ line 0")

	tm.Send(tea.KeyPressMsg{Code: 'p', Text: "p"})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: 'h', Text: "h"})
	tm.Send(tea.KeyPressMsg{Code: 'i', Text: "i"})
	tm.Send(tea.KeyPressMsg{Code: ']', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	waitOutput(t, tm, "Quit Hivemind?")
	tm.Send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	final := tm.FinalModel(t).(Model)
	final.run.input.wait()
	eng.requireCalls(t, "pause")
	if got := lead.written(); got != "hi" {
		t.Fatalf("attached input = %q, want %q", got, "hi")
	}
}

// waitOutput waits (with a deadline) until the program has written want.
func waitOutput(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		return strings.Contains(stripForMatch(seen.String()), want)
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// stripForMatch removes escape sequences, so text split by cursor moves or
// styles can still be found.
func stripForMatch(s string) string {
	var b strings.Builder
	r := strings.NewReader(s)
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return b.String()
		}
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		n, _ := r.ReadByte()
		switch n {
		case '[':
			for {
				x, err := r.ReadByte()
				if err != nil || (x >= 0x40 && x <= 0x7e) {
					break
				}
			}
		case ']':
			for {
				x, err := r.ReadByte()
				if err != nil || x == 0x07 {
					break
				}
				if x == 0x1b {
					_, _ = r.ReadByte()
					break
				}
			}
		}
	}
}

// TestNewProgram runs the program NewProgram builds until q quits it.
func TestNewProgram(t *testing.T) {
	var out bytes.Buffer
	p := NewProgram(Options{FPS: 30, Title: "np"}, tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(80, 24))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	// tea sends the initial size from a goroutine of its own: sent here too,
	// so the model has a size before q, however the scheduler runs them.
	p.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	p.Send(SnapshotMsg{State: testState(2)})
	p.Send(tea.KeyPressMsg{Code: 'q', Text: "q"}) // no live terminals: quits at once
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		p.Kill()
		t.Fatal("program did not quit on q")
	}
	if !strings.Contains(stripForMatch(out.String()), "HIVEMIND") {
		t.Fatal("program rendered nothing")
	}
}
