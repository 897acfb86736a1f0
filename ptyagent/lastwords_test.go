package ptyagent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// An agent that dies says why on its screen; the exit event quotes it.
func TestExitQuotesLastWords(t *testing.T) {
	spec := Spec{ID: "dying", Argv: []string{"sh", "-c",
		`echo starting; echo '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons'; echo '╰──────╯'; exit 1`}}
	var rec recorder
	spec.OnEvent = rec.add
	s, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-s.Done()
	e, ok := rec.find(func(e Event) bool { return e.Health == vocab.HealthExited })
	want := "exit code 1; last output: starting / --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
	if !ok || e.Detail != want {
		t.Errorf("exit detail %q\nwant        %q", e.Detail, want)
	}
}

// A message for an agent that exited is refused with the cause (exit code
// and last output), not "agent has exited"; the Manager does not repeat
// the agent's name. It is still ErrExited.
func TestInjectAfterExitNamesTheCause(t *testing.T) {
	spec := Spec{ID: "lead", Argv: []string{"sh", "-c", `echo 'error: no API key'; exit 3`}}
	s, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-s.Done()
	err = s.Inject(1, "[HIVEMIND] hello")
	want := "lead is not running: it exited, exit code 3; last output: error: no API key"
	if !errors.Is(err, ErrExited) || err == nil || err.Error() != want {
		t.Errorf("inject: %v\nwant       %s", err, want)
	}
}

// A clean exit, and a stop Hivemind asked for, quote nothing.
func TestExitWithoutLastWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		stop bool
	}{
		{"exit 0", []string{"sh", "-c", "echo bye; exit 0"}, false},
		{"stopped", []string{"sh", "-c", "echo working; sleep 30"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			s, err := Start(Spec{ID: "a", Argv: tc.argv, OnEvent: rec.add})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.stop {
				waitFor(t, 20*time.Second, "output", func() bool { return strings.Contains(s.Text(), "working") })
				s.Stop()
			}
			<-s.Done()
			e, _ := rec.find(func(e Event) bool { return e.Health == vocab.HealthExited })
			if strings.Contains(e.Detail, "last output") {
				t.Errorf("detail %q", e.Detail)
			}
		})
	}
}

func TestLastWords(t *testing.T) {
	for _, tc := range []struct{ screen, want string }{
		{"", ""},
		{"\n\n   \n", ""},
		{"one\ntwo\nthree\n\n", "two / three"},
		{"sh: 1: nonexist: not found\n", "sh: 1: nonexist: not found"},
		{"Error: bad\n│ ❯  │\n╰────╯\n", "Error: bad"},
		{strings.Repeat("x", 300), strings.Repeat("x", 239) + "…"},
	} {
		if got := lastWords(tc.screen); got != tc.want {
			t.Errorf("lastWords(%q) = %q, want %q", tc.screen, got, tc.want)
		}
	}
}
