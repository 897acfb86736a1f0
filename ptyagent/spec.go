package ptyagent

import (
	"fmt"
	"regexp"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// ProfileKind says which kind of agent CLI a session runs; it selects the
// Behavior registered for it (RegisterKind): the default ready, idle and
// submit rules and the monitor's signals.
type ProfileKind string

// Profile kinds.
const (
	ProfileClaude ProfileKind = "claude" // Claude Code: hooks + window title
	ProfileSim    ProfileKind = "sim"    // built-in sim agent: hooks through the relay
	ProfileCustom ProfileKind = "custom" // any other CLI: output activity / screen regex
	ProfileCodex  ProfileKind = "codex"  // Codex CLI: Claude-style hooks (profile_codex.go)
	ProfileGemini ProfileKind = "gemini" // Gemini CLI: its own hooks (profile_gemini.go)
)

// ConfirmMode says how a submitted message is confirmed.
type ConfirmMode string

// Confirmation modes.
const (
	// ConfirmHook waits for the UserPromptSubmit hook (Claude Code, sim).
	ConfirmHook ConfirmMode = "hook"
	// ConfirmScreen waits for the screen to change after the write (echo).
	ConfirmScreen ConfirmMode = "screen"
	// ConfirmNone counts a message as delivered once written.
	ConfirmNone ConfirmMode = "none"
)

// SubmitRules say how a message is typed into the agent and how its
// submission is confirmed. Zero fields take the defaults of the profile
// kind (see DefaultSubmitRules).
type SubmitRules struct {
	// Paste wraps the text in a bracketed paste (ESC[200~ … ESC[201~)
	// before the Enter; otherwise the text is typed as a plain line.
	Paste bool
	// EnterDelay is the pause between the text and the `\r` (Claude: 80 ms).
	EnterDelay time.Duration
	// Confirm selects the confirmation signal.
	Confirm ConfirmMode
	// ConfirmTimeout is how long one attempt waits for confirmation.
	ConfirmTimeout time.Duration
	// EnterRetries is how many times a lone `\r` is resent before the
	// whole message is sent again.
	EnterRetries int
	// Resends is how many times the whole message is sent again before the
	// delivery is reported as failed.
	Resends int
}

// ReadyMode selects how a session is found ready (and, for custom
// agents, idle again after a turn).
type ReadyMode string

// Ready modes.
const (
	// ReadyClaude: title starts with ✳, the prompt box (❯) is drawn and
	// the output has been quiet for Quiet (default 500 ms).
	ReadyClaude ReadyMode = "claude"
	// ReadyHook: the SessionStart hook arrived (sim agent).
	ReadyHook ReadyMode = "hook"
	// ReadyQuiet: no output for Quiet, and Pattern matches the screen when set.
	ReadyQuiet ReadyMode = "quiet"
)

// ReadyRules say when a session is ready for input.
type ReadyRules struct {
	Mode ReadyMode
	// Quiet is the output silence required (default 500 ms).
	Quiet time.Duration
	// Pattern, when set, must match the screen text (ReadyQuiet only).
	Pattern string
	// Loaded, when set, must report true as well (ReadyQuiet only): a
	// CLI resumed with a saved conversation that draws its prompt before
	// it has loaded the conversation (Gemini CLI), so that a message
	// typed in between would go to a fresh chat the load then replaces.
	// It is polled while the rest holds; LoadedWait (default 60 s) after
	// the rest first held, the agent is ready without it, and the health
	// detail says so.
	Loaded     func() bool
	LoadedWait time.Duration
}

// Spec describes one agent process.
type Spec struct {
	ID   vocab.AgentID // agent id ("lead", "worker_1" …)
	Role vocab.Role

	Argv []string // command and arguments; Argv[0] is looked up in PATH
	Dir  string   // working directory ("" = current)
	// Env holds extra KEY=VAL entries added to the base environment
	// (HIVEMIND_* and profile variables). Values are never logged.
	Env []string
	// HookToken is the secret every hook relay line of this session must
	// carry (it is in the agent's environment as HIVEMIND_HOOK_TOKEN). Set
	// by Manager; a session without one accepts no relayed hooks.
	HookToken string
	// BaseEnv is the environment to start from; nil means os.Environ().
	// Tests set it to keep the parent's credentials out.
	BaseEnv []string

	Cols, Rows int // initial PTY size (default 120×40)

	// Sandbox, when its Helper is set, confines the agent's writes
	// (sandbox.go).
	Sandbox Sandbox

	// RecordDir, when set, holds a record of the session's processes
	// while it runs, so that a later run can reap them after a crash
	// (ReapRecorded). Set by Manager from ManagerConfig.RecordDir.
	RecordDir string

	LogPath     string // raw output log ("" = none)
	LogMaxBytes int64  // rotate the log at this size, keeping one .1 (default 16 MiB)
	// Scrollback is how many lines the emulator keeps above the screen,
	// taken as given: 0 keeps none (config's scrollback_lines, 0–1000000).
	Scrollback int

	Kind   ProfileKind
	Submit SubmitRules
	Ready  ReadyRules
	// behavior is Kind's registered Behavior (set by withDefaults).
	behavior Behavior

	// HangTimeout: no output and no hook for this long while starting or
	// busy means hung; half of it raises hang_warning (default
	// config.DefaultHangSeconds).
	HangTimeout time.Duration
	// StartTimeout replaces HangTimeout while the agent starts, when it is
	// longer: the manager doubles it for each start in a row that hung
	// before the agent was ever ready (see Manager's startHangs).
	StartTimeout time.Duration
	// StopTimeout is the wait between SIGTERM and SIGKILL (default 10 s).
	StopTimeout time.Duration
	// RateLimitCooldown is how long rate_limited lasts before the session
	// counts as idle again and held messages flow (default
	// config.DefaultRateLimitCooldownSeconds).
	RateLimitCooldown time.Duration

	// OnEvent receives the session's events in order. It is called from the
	// session's own goroutine and must return quickly. Set by Manager.
	OnEvent func(Event)
	// OnChange is called (without blocking) when the screen or health
	// changed. Set by Manager.
	OnChange func()
	// startFailed, set by the Manager, is called when the process could
	// not be started.
	startFailed func()
	// beforeStart, set by the Manager, is given the session just before
	// its process starts: a hook the process sends at once (SessionStart)
	// finds its session while Start is still finishing.
	beforeStart func(*Session)
	// OnHeartbeat is called on signs of life, at most once every 5 seconds.
	OnHeartbeat func(at time.Time)
}

// DefaultSubmitRules returns the submit rules registered for a profile
// kind (RegisterKind); zero for a kind nobody registered.
func DefaultSubmitRules(k ProfileKind) SubmitRules {
	b, _ := KindBehavior(k)
	return b.Submit
}

// DefaultReadyRules returns the ready rules registered for a profile kind.
func DefaultReadyRules(k ProfileKind) ReadyRules {
	b, _ := KindBehavior(k)
	return b.Ready
}

// withDefaults fills zero fields.
func (s Spec) withDefaults() (Spec, *regexp.Regexp, error) {
	if s.Kind == "" {
		s.Kind = ProfileCustom
	}
	b, ok := KindBehavior(s.Kind)
	if !ok {
		return s, nil, errUnknownKind(s.Kind)
	}
	s.behavior = b
	if s.Cols <= 0 {
		s.Cols = 120
	}
	if s.Rows <= 0 {
		s.Rows = 40
	}
	if s.LogMaxBytes <= 0 {
		s.LogMaxBytes = 16 << 20
	}
	s.Scrollback = max(s.Scrollback, 0)
	if s.HangTimeout <= 0 {
		s.HangTimeout = config.DefaultHangSeconds * time.Second
	}
	if s.StopTimeout <= 0 {
		s.StopTimeout = 10 * time.Second
	}
	if s.RateLimitCooldown <= 0 {
		s.RateLimitCooldown = config.DefaultRateLimitCooldownSeconds * time.Second
	}
	ds := DefaultSubmitRules(s.Kind)
	if s.Submit == (SubmitRules{}) {
		s.Submit = ds
	}
	if s.Submit.Confirm == "" {
		s.Submit.Confirm = ds.Confirm
	}
	if s.Submit.ConfirmTimeout <= 0 {
		s.Submit.ConfirmTimeout = ds.ConfirmTimeout
	}
	if s.Submit.EnterRetries < 0 {
		s.Submit.EnterRetries = 0
	}
	if s.Submit.Resends < 0 {
		s.Submit.Resends = 0
	}
	dr := DefaultReadyRules(s.Kind)
	if s.Ready.Mode == "" {
		s.Ready.Mode = dr.Mode
	}
	if s.Ready.Quiet <= 0 {
		s.Ready.Quiet = config.DefaultReadyQuietMS * time.Millisecond
	}
	if s.Ready.LoadedWait <= 0 {
		s.Ready.LoadedWait = time.Minute
	}
	var re *regexp.Regexp
	if s.Ready.Pattern != "" {
		r, err := regexp.Compile(s.Ready.Pattern)
		if err != nil {
			return s, nil, fmt.Errorf("ready pattern: %w", err)
		}
		re = r
	}
	return s, re, nil
}
