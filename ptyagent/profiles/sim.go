package profiles

import (
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/roles"
)

// The built-in simulated agent (`hivemind sim-agent`): no model, no
// network; the demo and most tests run it.
func init() {
	register(Profile{
		Name: "sim", Title: "the built-in sim agent", Kind: ptyagent.ProfileSim, Remote: true,
		About:       "built-in simulated agents (no Claude Code, no network needed)",
		Hook:        roles.NoHook,
		Enforcement: "the built-in simulated agent runs the same PreToolUse hook.",
		Launch: func(l Launch) (ptyagent.Spec, error) {
			return ptyagent.SimSpec(l.Base, l.Self, l.SimArgs...)
		},
	})
}
