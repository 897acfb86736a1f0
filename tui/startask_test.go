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
				if yes != 0 || h.m.fd.start.ask != nil || !strings.Contains(h.plain(), "not started (IS_SANDBOX=1") {
					t.Fatalf("%s: yes called %d times:\n%s", answer, yes, h.plain())
				}
				if h.m.fd.start.task.Value() != "add a square root" {
					t.Fatalf("the answer went into the form: %q", h.m.fd.start.task.Value())
				}
			}
		})
	}
}

const dirtyCheckout = "3 uncommitted change(s) (calc/eval.go, calc/eval_test.go, notes/todo-with-a-long-name.md)"

// dirtyQuestion is the launcher's question for a checkout with
// uncommitted edits (internal/app's checkoutQuestion); each answer
// records its key in *chose.
func dirtyQuestion(l *fakeLauncher, chose *string) *StartQuestion {
	answer := func(k string) func() (Session, error) {
		return func() (Session, error) {
			if chose != nil {
				*chose = k
			}
			return l.session(), nil
		}
	}
	return &StartQuestion{Err: errors.New("your checkout: " + dirtyCheckout),
		Question: "A task starts from a commit: these edits are not part of it unless you include them (your checkout stays as it is either way).",
		No:       "not started (nothing was created)",
		Answers: []StartAnswer{
			{Key: "i", Label: "include them as a commit on the task branch", Start: answer("i")},
			{Key: "h", Label: "start from HEAD without them", Start: answer("h")},
		}}
}

// A checkout with uncommitted edits is said on the start screen before
// anything starts; starting asks include or HEAD, each answer starts with
// its choice, anything else starts nothing and keeps the form.
func TestStartAsksAboutDirtyCheckout(t *testing.T) {
	for _, answer := range []string{"i", "h", "esc", "y"} {
		t.Run(answer, func(t *testing.T) {
			l := newFakeLauncher()
			l.projects[testProject] = Project{Dir: testProject, Git: true, Checkout: dirtyCheckout}
			chose := ""
			l.startErr = dirtyQuestion(l, &chose)
			h := newFrontHarness(t, l, 80, 24)
			if screen := strings.Join(strings.Fields(h.plain()), " "); !strings.Contains(screen, "⚠ your checkout: "+dirtyCheckout) {
				t.Fatalf("the start screen does not say the checkout is dirty:\n%s", h.plain())
			}
			h.typeText("add a square root")
			h.run(h.send(ctrl('s')))
			screen := strings.Join(strings.Fields(h.plain()), " ")
			for _, want := range []string{"✖ your checkout: 3 uncommitted change(s)", "i include them as a commit on the task branch",
				"h start from HEAD without them", "esc: not now", "i or h: answer above"} {
				if !strings.Contains(screen, want) {
					t.Fatalf("the question lacks %q:\n%s", want, h.plain())
				}
			}
			checkFrame(t, h.view(), 80, 24)
			h.run(h.send(keyMsg(answer)))
			switch answer {
			case "i", "h":
				if chose != answer || h.m.fd.mode != modeRun {
					t.Fatalf("%s: started with %q, mode %v", answer, chose, h.m.fd.mode)
				}
			default:
				if chose != "" || h.m.fd.start.ask != nil || !strings.Contains(h.plain(), "not started (nothing was created)") {
					t.Fatalf("%s: started with %q:\n%s", answer, chose, h.plain())
				}
				if h.m.fd.start.task.Value() != "add a square root" {
					t.Fatalf("the answer went into the form: %q", h.m.fd.start.task.Value())
				}
			}
		})
	}
}

// The start screen says whether agents' writes are confined by the
// kernel: "off" as a warning, wrapped whole at 80 columns; "on" dim.
func TestStartSaysWriteScopes(t *testing.T) {
	const off = "write scopes: off (no Landlock) — roles are enforced by tool checks only"
	for _, tc := range []struct{ status, want string }{
		{off, "⚠ " + off},
		{"write scopes: on (Landlock ABI 7) — each agent and its children write only where its role owns", "write scopes: on (Landlock ABI 7)"},
	} {
		l := newFakeLauncher()
		l.projects[testProject] = Project{Dir: testProject, Git: true, WriteScopes: tc.status}
		h := newFrontHarness(t, l, 80, 24)
		if screen := strings.Join(strings.Fields(h.plain()), " "); !strings.Contains(screen, tc.want) {
			t.Errorf("the start screen does not say %q:\n%s", tc.want, h.plain())
		}
	}
}
