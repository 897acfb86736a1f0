package sim

import (
	"math/rand/v2"

	"github.com/hivemind-dev/hivemind/internal/sim/script"
	"github.com/hivemind-dev/hivemind/vocab"
)

// FileWrite is one file an agent writes (absolute path), in order.
type FileWrite = script.FileWrite

// Narration is what an agent says while it works.
type Narration = script.Narration

// Scenario configures the script (rejections, checkpoint issues, friction,
// forbidden writes, pace). Start from DefaultScenario.
type Scenario = script.Scenario

// DefaultScenario rejects the first plan and reports checkpoint issues once.
func DefaultScenario() Scenario { return script.DefaultScenario() }

// Respond decides, with the default scenario, which files an agent writes
// for assignment a (done marker last). See script.Scenario.Respond.
func Respond(a vocab.Assignment, taskDir, project string, rnd *rand.Rand) ([]FileWrite, Narration) {
	return script.Respond(a, taskDir, project, rnd)
}
