package ptyagent

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
)

// Behavior is how the session and its monitor read one kind of agent CLI:
// its default submit and ready rules and the signals its terminal and
// files give. Each kind registers one (RegisterKind); a Spec whose Kind is
// not registered is refused by Start, never given another kind's rules.
type Behavior struct {
	Submit SubmitRules
	Ready  ReadyRules
	// BusyTitle reports that the window title says the CLI is working
	// (Claude Code's spinner): a message counts as submitted and the
	// agent as busy. Nil: the title says nothing.
	BusyTitle func(title string) bool
	// IdleTitle reports that the title says the CLI is idle: a busy agent
	// whose title says so after a quiet spell (IdleFallback) without a
	// Stop hook (an interrupt fires none) is idle again.
	IdleTitle    func(title string) bool
	IdleFallback time.Duration
	// IdleWhenQuiet: a busy agent is idle again once its output has been
	// quiet for Ready.Quiet (and Ready.Pattern matches): CLIs without a
	// turn-end hook.
	IdleWhenQuiet bool
	// Transcript: the CLI's hooks name its session file
	// (transcript_path), which the session keeps.
	Transcript bool
	// Usage is the format in which the CLI records its token usage in the
	// session file its hooks name (transcript_path); ReadUsage reads every
	// registered kind's. Nil: it records none.
	Usage *UsageFormat
	// TurnFailure reads the session file for a turn that ended without a
	// hook (Codex fires none on an API error): rate limited, and why.
	// Looked at once a busy agent's output was quiet for 2 s.
	TurnFailure func(transcript string) (rateLimited bool, detail string)
	// Retrying finds, in the screen's text, the line of a CLI retrying a
	// rate-limited model call itself (Claude Code's "Retrying in 18s ·
	// attempt 6/10", which fires no hook): while it shows, the agent is
	// rate_limited (its account held, no hang counted); once it is gone
	// the retry went through and the agent is busy again. Looked at every
	// second while the agent works.
	Retrying *regexp.Regexp
	// ProgressByHooks: while busy, only the CLI's hooks and the growth of
	// its session file (transcript_path) are turn progress; output alone
	// (a spinner redrawn while a model call never answers) is not, so such
	// a turn is warned at half of HangTimeout and hung at HangTimeout.
	// Otherwise any output counts (CLIs without hooks).
	ProgressByHooks bool
	// StartAlone: a start of this kind waits until no other agent of the
	// kind is starting (it leaves starting on its prompt, a hang warning
	// or its exit): the CLI's instances share state that concurrent first
	// starts leave one of them stuck on (opencode, profiles/opencode.go).
	StartAlone bool
	// ExitCommand is typed to end an idle agent before SIGTERM ("/exit\r").
	ExitCommand string
	// DropEnv are inherited variables that would change how the CLI runs
	// in Hivemind's terminal.
	DropEnv []string
}

var (
	kindsMu sync.RWMutex
	kinds   = map[ProfileKind]Behavior{}
	// usageTypes are the registered usage formats by the "type" of the
	// lines they read.
	usageTypes = map[string]*UsageFormat{}
)

// RegisterKind registers the behavior of kind k. It panics on an empty or
// second registration: both are programming errors found at start.
func RegisterKind(k ProfileKind, b Behavior) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if k == "" {
		panic("ptyagent: RegisterKind with an empty kind")
	}
	if _, dup := kinds[k]; dup {
		panic("ptyagent: kind " + string(k) + " registered twice")
	}
	if f := b.Usage; f != nil {
		if f.Line == nil || len(f.Types) == 0 {
			panic("ptyagent: kind " + string(k) + ": a usage format needs its Types and Line")
		}
		for _, t := range f.Types {
			if o := usageTypes[t]; o != nil && o != f {
				panic(fmt.Sprintf("ptyagent: kind %s: usage lines of type %q are read by %s already", k, t, o.Name))
			}
			usageTypes[t] = f
		}
	}
	kinds[k] = b
}

// usageFormatOf is the registered usage format reading lines of type typ.
func usageFormatOf(typ string) *UsageFormat {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return usageTypes[typ]
}

// KindBehavior returns the registered behavior of k.
func KindBehavior(k ProfileKind) (Behavior, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	b, ok := kinds[k]
	return b, ok
}

// Kinds are the registered kinds, sorted.
func Kinds() []ProfileKind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]ProfileKind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// errUnknownKind is Start's answer to a Spec whose kind nobody registered.
func errUnknownKind(k ProfileKind) error {
	var names []string
	for _, n := range Kinds() {
		names = append(names, string(n))
	}
	return fmt.Errorf("ptyagent: unknown profile kind %q (registered: %s)", k, strings.Join(names, ", "))
}

// hookSubmitRules are the submit rules of CLIs typed as a bracketed paste
// with a separate Enter (an Enter within ~100 ms of a plain burst of keys
// is taken as part of the paste), confirmed by the prompt-submit hook.
var hookSubmitRules = SubmitRules{Paste: true, EnterDelay: 150 * time.Millisecond, Confirm: ConfirmHook,
	ConfirmTimeout: 3 * time.Second, EnterRetries: 2, Resends: 1}

// HookSubmitRules returns hookSubmitRules, for CLIs registered elsewhere.
func HookSubmitRules() SubmitRules { return hookSubmitRules }

func init() {
	RegisterKind(ProfileClaude, Behavior{
		Submit: SubmitRules{Paste: true, EnterDelay: 80 * time.Millisecond, Confirm: ConfirmHook,
			ConfirmTimeout: 3 * time.Second, EnterRetries: 2, Resends: 1},
		Ready:     ReadyRules{Mode: ReadyClaude, Quiet: 500 * time.Millisecond},
		BusyTitle: titleBusy,
		Retrying:  claudeRetrying,
		IdleTitle: func(t string) bool { return strings.HasPrefix(t, claudeIdleGlyph) },
		// An Esc/Ctrl-C interrupt fires no Stop hook.
		IdleFallback:    claudeIdleFallback,
		ProgressByHooks: true,
		Usage:           claudeUsage,
		ExitCommand:     "/exit\r",
		// Instances sharing a ~/.claude.json write it non-atomically as
		// they start: one started beside another can read it half
		// written and stop on a "Configuration error … JSON Parse error"
		// dialog (anthropics/claude-code#65335; seen in .ci/run).
		StartAlone: true,
		// A Claude Code parent marks its children; a nested claude would
		// refuse to start or change behaviour.
		DropEnv: []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"},
	})
	RegisterKind(ProfileCodex, Behavior{
		Submit:          hookSubmitRules,
		Ready:           ReadyRules{Mode: ReadyQuiet, Quiet: 500 * time.Millisecond, Pattern: `Ask Codex`},
		Transcript:      true,
		TurnFailure:     codexTurnFailure,
		Usage:           codexUsage,
		ProgressByHooks: true,
	})
	RegisterKind(ProfileGemini, Behavior{
		Submit:          hookSubmitRules,
		Ready:           ReadyRules{Mode: ReadyQuiet, Quiet: 500 * time.Millisecond, Pattern: `Type your message`},
		ProgressByHooks: true,
		Usage:           geminiUsage,
		// Gemini CLI runs headless when CI=true or GITHUB_ACTIONS=true,
		// even in a terminal: it then waits for a prompt on stdin and
		// exits 42 ("No input provided via stdin"). Its terminal is
		// Hivemind's pane.
		DropEnv: []string{"CI", "GITHUB_ACTIONS"},
	})
	RegisterKind(ProfileSim, Behavior{
		Submit: SubmitRules{Confirm: ConfirmHook, ConfirmTimeout: 2 * time.Second, EnterRetries: 1, Resends: 1},
		Ready:  ReadyRules{Mode: ReadyHook},
		// Its turns record tokens as Claude's transcript does
		// (internal/sim).
		Usage: claudeUsage,
	})
	RegisterKind(ProfileCustom, Behavior{
		Submit:        SubmitRules{Confirm: ConfirmScreen, ConfirmTimeout: 2 * time.Second, EnterRetries: 1, Resends: 0},
		Ready:         ReadyRules{Mode: ReadyQuiet, Quiet: config.DefaultReadyQuietMS * time.Millisecond},
		IdleWhenQuiet: true,
	})
}

// codexTurnFailure is Codex's TurnFailure: its task_complete records a 429.
func codexTurnFailure(transcript string) (bool, string) {
	u := codexLastTurn(transcript)
	return u.RateLimited, "Codex task_complete: " + u.Detail
}
