package roles

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// BashAccess says how a role may use the Bash tool.
type BashAccess string

// Bash access levels.
const (
	// BashNone removes the Bash tool.
	BashNone BashAccess = "none"
	// BashReadOnly allows commands the hook recognises as read-only
	// (ls, cat, grep, git log, ...); anything that may write is denied.
	BashReadOnly BashAccess = "read-only"
	// BashFull allows any command.
	BashFull BashAccess = "full"
)

// ToolRules are the tool groups a role may use. Reading (Read, Glob, Grep,
// TodoWrite) is always allowed.
type ToolRules struct {
	Write     bool       // the Write tool (create or overwrite a file)
	Edit      bool       // Edit, MultiEdit, NotebookEdit
	Bash      BashAccess // none, read-only or full
	Web       bool       // WebFetch, WebSearch
	Subagents bool       // Task / Agent (sub-agents)
}

// Policy is one role's permissions.
type Policy struct {
	Role vocab.Role
	// Agent is the agent the policy is applied to: {outbox} is its outbox
	// agents/<Agent>/ in the task dir (unset: {outbox} matches nothing).
	Agent vocab.AgentID
	Tools ToolRules
	// WritePaths are the paths the Write/Edit tools may touch: globs
	// rooted at {task} (the task dir), {outbox} (the agent's outbox in
	// it), {workspace} (the workspace root) or {project}. "*" matches within one path segment, "**" any number of
	// segments. They are checked in order and the first match decides; a
	// pattern starting with "!" denies. No match denies.
	WritePaths []string
}

// Tool names of Claude Code.
var (
	readTools  = []string{"Read", "Glob", "Grep", "TodoWrite"}
	writeTools = []string{"Write"}
	editTools  = []string{"Edit", "MultiEdit", "NotebookEdit"}
	// claudeEditTools are the edit tools named on Claude Code's command
	// line: version 2.1.197 has no MultiEdit and warns about the unknown
	// name (Decide still checks MultiEdit calls, for older versions).
	claudeEditTools = []string{"Edit", "NotebookEdit"}
	bashTools       = []string{"Bash"}
	// passiveTools change nothing outside the conversation: they read,
	// track the agent's own to-do list or background tasks, or ask the
	// user. Roles without full Bash may use these and the tool groups
	// their policy grants, and nothing else: Claude Code keeps adding
	// tools that write or run code (REPL, Monitor, Workflow, MCP tools…).
	passiveTools = slices.Concat(readTools, []string{"LS", "NotebookRead", "TodoRead",
		"TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "TaskOutput", "TaskStop", "BashOutput", "KillShell", "KillBash",
		"ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "ListMcpResourcesTool", "ReadMcpResourceTool"})
	webTools      = []string{"WebFetch", "WebSearch"}
	subagentTools = []string{"Task", "Agent"}
)

// protectedPaths are never written by any agent: engine-owned files,
// archives, configuration and git internals.
var protectedPaths = []string{
	"!{task}/state.json",
	"!{task}/backups/**",
	"!{task}/blobs/**",
	"!{task}/events.jsonl",
	"!{task}/task.json",
	"!{task}/task.md",
	"!{task}/assignments/**",
	"!{task}/reviews/**",
	"!{task}/logs/**",
	"!{task}/heartbeats/**",
	"!{task}/procs/**",
	"!{task}/locks/**",
	"!{workspace}/config.toml",
	"!{workspace}/roles/**",
	"!{workspace}/friction.json",
	"!{workspace}/context/*.json",
	"!{project}/.git/**",
}

// outboxPaths are the files of the trigger table agents of role write, in
// their own outbox.
func outboxPaths(role vocab.Role) []string {
	var out []string
	for _, k := range triggers.OwnedBy(role) {
		out = append(out, "{outbox}/"+string(k))
	}
	return out
}

// DefaultPolicy returns the built-in policy of role (lead, reviewer,
// worker). An unknown role gets a read-only policy.
//
// Adapted from the seed permission table: the Lead reads everything and
// writes only the plan and friction files (Bash read-only, to inspect the
// project); the Reviewer reads everything and writes only its review
// trigger files (no Bash, no Edit); Workers edit project files, run Bash,
// and write their outputs and checkpoint.md. Each writes its trigger files
// (the rows of the trigger table its role writes) only in its own outbox.
func DefaultPolicy(role vocab.Role) Policy {
	p := Policy{Role: role, Tools: ToolRules{Bash: BashNone, Web: true}}
	switch role {
	case vocab.RoleLead:
		p.Tools.Write = true
		p.Tools.Bash = BashReadOnly
	case vocab.RoleReviewer:
		p.Tools.Write = true
	case vocab.RoleWorker:
		p.Tools = ToolRules{Write: true, Edit: true, Bash: BashFull, Web: true, Subagents: true}
	default:
		p.Tools.Web = false
		p.WritePaths = slices.Clone(protectedPaths)
		return p
	}
	p.WritePaths = slices.Concat(protectedPaths, outboxPaths(role))
	if role == vocab.RoleWorker {
		// Project files, but nothing else inside the workspace. In a git
		// project a worker's project is its own worktree, which lies
		// inside the workspace ({worktree} is defined only then): that
		// worktree is writable, except a workspace checked in below it;
		// other workers' worktrees stay denied by !{workspace}/**.
		p.WritePaths = append(p.WritePaths, "!{worktree}/.hivemind/**", "{worktree}/**", "!{workspace}/**", "{project}/**")
	}
	return p
}

// ClaudeToolFlags returns the tool names for Claude Code's --allowedTools
// and --disallowedTools. Disallowed tools are removed from the model's
// context entirely; allowed tools run without a permission prompt. Path
// limits and read-only Bash are enforced by the PreToolUse hook (Decide),
// which applies in every permission mode.
func ClaudeToolFlags(p Policy) (allowed, disallowed []string) {
	allowed = append(allowed, readTools...)
	pick := func(ok bool, tools []string) {
		if ok {
			allowed = append(allowed, tools...)
		} else {
			disallowed = append(disallowed, tools...)
		}
	}
	pick(p.Tools.Write, writeTools)
	pick(p.Tools.Edit, claudeEditTools)
	pick(p.Tools.Bash == BashFull || p.Tools.Bash == BashReadOnly, bashTools)
	pick(p.Tools.Web, webTools)
	pick(p.Tools.Subagents, subagentTools)
	return allowed, disallowed
}

// ClaudeArgs returns the Claude Code command-line arguments that give an
// agent its role: the prompt (appended to Claude's own system prompt), the
// tool lists, the model and permission mode from the role's config, and its
// extra args last.
func ClaudeArgs(p Policy, rc config.RoleConfig, prompt string) []string {
	allowed, disallowed := ClaudeToolFlags(p)
	var args []string
	if prompt != "" {
		args = append(args, "--append-system-prompt", prompt)
	}
	if rc.Model != "" {
		args = append(args, "--model", rc.Model)
	}
	if rc.PermissionMode != "" {
		args = append(args, "--permission-mode", rc.PermissionMode)
	}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowed, ","))
	}
	if len(disallowed) > 0 {
		args = append(args, "--disallowedTools", strings.Join(disallowed, ","))
	}
	return append(args, rc.ExtraArgs...)
}

// Table renders the effective per-role permissions and settings, as
// printed by `hivemind roles`.
func Table(cfg config.Config) string {
	var b strings.Builder
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "-"
	}
	rows := [][]string{{"ROLE", "READ", "WRITE", "EDIT", "BASH", "WEB", "SUBAGENTS", "MODEL", "PERMISSION MODE"}}
	for _, r := range vocab.Roles() {
		p := DefaultPolicy(r)
		rc := cfg.Role(r)
		model := rc.Model
		if model == "" {
			model = "(agent default)"
		}
		rows = append(rows, []string{string(r), "all", yes(p.Tools.Write), yes(p.Tools.Edit), string(p.Tools.Bash),
			yes(p.Tools.Web), yes(p.Tools.Subagents), model, rc.PermissionMode})
	}
	writeTable(&b, rows)

	b.WriteString("\nWrite paths (checked in order, first match decides, ! = denied, no match = denied;\n")
	b.WriteString("{task} = task dir, {outbox} = the agent's own outbox {task}/agents/<agent id>, {workspace} = workspace root, {project} = project,\n")
	b.WriteString("{worktree} = the worker's own git worktree when the project is a git repository):\n")
	for _, r := range vocab.Roles() {
		p := DefaultPolicy(r)
		fmt.Fprintf(&b, "\n  %s:\n", r)
		var allow []string
		for _, w := range p.WritePaths {
			if !strings.HasPrefix(w, "!") {
				allow = append(allow, w)
			}
		}
		fmt.Fprintf(&b, "    may write: %s\n", strings.Join(allow, "  "))
		var deny []string
		for _, w := range p.WritePaths {
			if strings.HasPrefix(w, "!") && !slices.Contains(protectedPaths, w) {
				deny = append(deny, strings.TrimPrefix(w, "!"))
			}
		}
		if len(deny) > 0 {
			fmt.Fprintf(&b, "    except:    %s (checked before {project}/**)\n", strings.Join(deny, "  "))
		}
		allowed, disallowed := ClaudeToolFlags(p)
		fmt.Fprintf(&b, "    claude:    --allowedTools %s", strings.Join(allowed, ","))
		if len(disallowed) > 0 {
			fmt.Fprintf(&b, " --disallowedTools %s", strings.Join(disallowed, ","))
		}
		b.WriteString("\n")
		if extra := cfg.Role(r).ExtraArgs; len(extra) > 0 {
			fmt.Fprintf(&b, "    extra:     %s\n", strings.Join(extra, " "))
		}
		_, src, err := Prompt(r, cfg.Files.ProjectRolesDir, cfg.Files.UserRolesDir)
		if err != nil {
			src = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "    prompt:    %s\n", src)
	}
	b.WriteString("\nNever writable by any role: " + strings.Join(trimBang(protectedPaths), "  ") + "\n")
	b.WriteString("Read-only Bash allows: " + strings.Join(readOnlyCommandNames(), " ") + "\n")
	b.WriteString("Roles without full Bash may use only the tools granted above and " + strings.Join(passiveTools, " ") +
		"; no MCP tool (mcp__*) and no other tool.\n")
	b.WriteString(enforcement(cfg))
	return b.String()
}

func trimBang(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimPrefix(p, "!")
	}
	return out
}

func writeTable(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				line.WriteString(c)
				break
			}
			fmt.Fprintf(&line, "%-*s  ", widths[i], c)
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
