// Package roles owns what makes a Hivemind role real: the role prompts
// (lead.md, reviewer.md, worker.md, embedded and overridable per project or
// per user) and the per-role permission policy, enforced for Claude Code in
// two ways: tool lists on its command line (ClaudeToolFlags) and a
// PreToolUse hook decision (Decide, PreToolUse) that denies writes outside
// the role's paths with a reason the model sees.
package roles
