package tui

import (
	"errors"
	"strings"
	"testing"
)

const rootFix = "this looks like a container (docker): if it is one you can throw away, run IS_SANDBOX=1 hivemind …; otherwise run hivemind as a normal user, or set permission_mode = \"acceptEdits\" under [roles.lead], [roles.reviewer] and [roles.worker] in .hivemind/config.toml"

// The start screen shows every setup failure in full, wrapped, with its
// fix, at 80 columns; a failure only a yes can settle asks [y/N].
func TestStartShowsSetupFailuresInFullAndAsks(t *testing.T) {
	for _, answer := range []string{"y", "n", "enter"} {
		t.Run(answer, func(t *testing.T) {
			l := newFakeLauncher()
			yes := 0
			full := errors.New("the agents cannot start; nothing was started or created:\nclaude as root: Claude Code refuses to bypass permissions as root\nfix: " + rootFix)
			l.startErr = &StartQuestion{Err: full, Question: "Is this a container or VM you can throw away? Run the agents with IS_SANDBOX=1",
				No: "not started (IS_SANDBOX=1 hivemind … skips this question)",
				Yes: func() (Session, error) {
					yes++
					return l.session(), nil
				}}
			h := newFrontHarness(t, l, 80, 30)
			h.typeText("add a square root")
			h.run(h.send(ctrl('s')))
			screen := strings.Join(strings.Fields(h.plain()), " ")
			for _, want := range []string{
				"✖ the agents cannot start; nothing was started or created:",
				"claude as root: Claude Code refuses to bypass permissions as root",
				"[roles.worker] in .hivemind/config.toml", // the end of the fix: nothing cut
				"Run the agents with IS_SANDBOX=1 [y/N]",
			} {
				if !strings.Contains(screen, want) {
					t.Fatalf("the start screen lacks %q:\n%s", want, h.plain())
				}
			}
			checkFrame(t, h.view(), 80, 30)
			h.run(h.send(keyMsg(answer)))
			switch answer {
			case "y":
				if yes != 1 || h.m.fd.mode != modeRun {
					t.Fatalf("y: yes called %d times, mode %v", yes, h.m.fd.mode)
				}
			default:
				if yes != 0 || h.m.fd.ask != nil || !strings.Contains(h.plain(), "not started (IS_SANDBOX=1") {
					t.Fatalf("%s: yes called %d times:\n%s", answer, yes, h.plain())
				}
				if h.m.fd.task.Value() != "add a square root" {
					t.Fatalf("the answer went into the form: %q", h.m.fd.task.Value())
				}
			}
		})
	}
}
