// Package preflight checks, before any agent starts, that the agents a run
// will use can start at all: each agent's command is installed, answers
// its version, is logged in, may run in its permission mode as this user
// (Claude Code refuses to bypass permissions as root outside a sandbox),
// and reaches its API. Each check says what it found and, when it fails,
// how to fix it. `hivemind doctor` prints the checks; a run stops on a
// failed one before it creates its task.
//
// The checks read the outside world only through Env, so tests give them
// a fake PATH, environment, user, commands and network.
package preflight
