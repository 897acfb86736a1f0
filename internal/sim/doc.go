// Package sim is the built-in simulated agent (`hivemind sim-agent`, used by
// `--agent sim` and `hivemind demo`). It reads injected `[HIVEMIND]` lines on
// its terminal, follows the named assignment with the shared script
// (package script: plans, reviews, code, outputs, done markers), prints
// lively agent-like output, and reports SessionStart, UserPromptSubmit and
// Stop through the hook relay exactly like Claude Code's hooks do.
package sim
