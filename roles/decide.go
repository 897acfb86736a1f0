package roles

import (
	"github.com/hivemind-dev/hivemind/vocab"

	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Decide is the PreToolUse decision for one tool call of an agent with
// policy p. taskDir and project are absolute (the workspace root is taskDir's
// grandparent, <workspace>/tasks/<id>). A relative file path is taken
// relative to project. When the call is denied, reason is written for the
// model: what was refused, why, and what the role may do instead.
func Decide(p Policy, taskDir, project string, toolName string, toolInput map[string]any) (allow bool, reason string) {
	switch {
	case slices.Contains(writeTools, toolName), slices.Contains(editTools, toolName):
		ok := p.Tools.Write
		if slices.Contains(editTools, toolName) {
			ok = p.Tools.Edit
		}
		if !ok {
			return false, fmt.Sprintf("Hivemind: the %s role may not use the %s tool. %s", p.Role, toolName, p.mayWrite(taskDir, project))
		}
		key := "file_path"
		if toolName == "NotebookEdit" {
			key = "notebook_path"
		}
		raw, _ := toolInput[key].(string)
		if raw == "" {
			return false, fmt.Sprintf("Hivemind: %s call without %s; cannot check it against the %s role's write paths.", toolName, key, p.Role)
		}
		return decidePath(p, taskDir, project, raw)
	case slices.Contains(bashTools, toolName):
		cmd, _ := toolInput["command"].(string)
		switch p.Tools.Bash {
		case BashFull:
			if why := bashTouchesEngineFiles(cmd); why != "" {
				return false, "Hivemind: " + why + " Only Hivemind writes state.json and events.jsonl."
			}
			return true, ""
		case BashReadOnly:
			if why := bashReadOnlyViolation(cmd); why != "" {
				return false, fmt.Sprintf("Hivemind: the %s role may run only read-only shell commands; %s. %s", p.Role, why, p.mayWrite(taskDir, project))
			}
			return true, ""
		default:
			return false, fmt.Sprintf("Hivemind: the %s role may not run shell commands (Bash). Use Read, Glob and Grep to inspect files. %s", p.Role, p.mayWrite(taskDir, project))
		}
	case slices.Contains(webTools, toolName):
		if !p.Tools.Web {
			return false, fmt.Sprintf("Hivemind: the %s role may not use %s.", p.Role, toolName)
		}
	case slices.Contains(subagentTools, toolName):
		if !p.Tools.Subagents {
			return false, fmt.Sprintf("Hivemind: the %s role may not start sub-agents (%s); do the work yourself.", p.Role, toolName)
		}
	case slices.Contains(passiveTools, toolName), p.Tools.Bash == BashFull:
		// A role with full Bash can run anything already.
	case strings.HasPrefix(toolName, "mcp__"):
		return false, fmt.Sprintf("Hivemind: the %s role may not use MCP tools (%s): they may write files or run programs outside its permissions. Use Read, Glob and Grep. %s",
			p.Role, toolName, p.mayWrite(taskDir, project))
	default:
		return false, fmt.Sprintf("Hivemind: %q is not a tool the %s role may use (tool names are exact: %s). %s",
			toolName, p.Role, strings.Join(p.toolNames(), ", "), p.mayWrite(taskDir, project))
	}
	return true, ""
}

// toolNames lists the tools the policy allows, for denial reasons.
func (p Policy) toolNames() []string {
	names := slices.Clone(passiveTools)
	add := func(ok bool, tools []string) {
		if ok {
			names = append(names, tools...)
		}
	}
	add(p.Tools.Write, writeTools)
	add(p.Tools.Edit, editTools)
	add(p.Tools.Bash != BashNone, bashTools)
	add(p.Tools.Web, webTools)
	add(p.Tools.Subagents, subagentTools)
	return names
}

// decidePath checks one file path a Write/Edit tool would touch.
func decidePath(p Policy, taskDir, project, raw string) (bool, string) {
	abs := raw
	if !filepath.IsAbs(abs) {
		if project == "" {
			return false, fmt.Sprintf("Hivemind: relative path %q and no project directory to resolve it against; use an absolute path.", raw)
		}
		// Not filepath.Join: keep ".." for resolve to apply physically.
		abs = strings.TrimSuffix(project, string(filepath.Separator)) + string(filepath.Separator) + raw
	}
	real, err := resolve(abs)
	if err != nil {
		return false, fmt.Sprintf("Hivemind: cannot resolve %s: %v.", raw, err)
	}
	roots := resolveRoots(taskDir, project, p.Agent)
	allowed, rule := matchWritePaths(p.WritePaths, roots, real)
	if allowed {
		return true, ""
	}
	shown := raw
	if real != raw {
		shown = fmt.Sprintf("%s (resolves to %s)", raw, real)
	}
	why := "it is outside the role's write paths"
	if rule != "" {
		why = "it matches the protected pattern " + strings.TrimPrefix(rule, "!")
	}
	if strings.HasSuffix(real, string(filepath.Separator)+"state.json") {
		why += "; only Hivemind writes state.json"
	}
	return false, fmt.Sprintf("Hivemind: the %s role may not write %s: %s. %s", p.Role, shown, why, p.mayWrite(taskDir, project))
}

// mayWrite lists, for a denial reason, the paths the role may write.
func (p Policy) mayWrite(taskDir, project string) string {
	wt := worktreeOf(taskDir, project)
	roots := map[string]string{"{task}": taskDir, "{project}": project, "{workspace}": workspaceOf(taskDir), "{worktree}": wt,
		"{outbox}": outboxOf(taskDir, p.Agent)}
	var allow []string
	for _, w := range p.WritePaths {
		if strings.HasPrefix(w, "!") {
			continue
		}
		if w == "{worktree}/**" {
			if wt != "" {
				allow = append(allow, "files in your git worktree "+wt)
			}
			continue
		}
		if w == "{project}/**" && wt != "" {
			continue // the project is the worktree
		}
		if w == "{project}/**" {
			allow = append(allow, "project files under "+orDash(project)+" (not inside the Hivemind workspace)")
			continue
		}
		allow = append(allow, expandRoot(w, roots))
	}
	if len(allow) == 0 {
		return "This role may not write any file."
	}
	return "The " + string(p.Role) + " role may write only: " + strings.Join(allow, ", ") + "."
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func expandRoot(pattern string, roots map[string]string) string {
	for k, v := range roots {
		if strings.HasPrefix(pattern, k) && v != "" {
			return v + strings.TrimPrefix(pattern, k)
		}
	}
	return pattern
}

// outboxOf returns agent's outbox in the task dir ("" when either is
// unknown or the id is not valid: {outbox} patterns then match nothing).
func outboxOf(taskDir string, agent vocab.AgentID) string {
	if taskDir == "" || !vocab.ValidID(string(agent)) {
		return ""
	}
	return filepath.Join(taskDir, vocab.OutboxRel(agent))
}

// workspaceOf returns the workspace root of a task dir
// (<workspace>/tasks/<id>).
func workspaceOf(taskDir string) string {
	if taskDir == "" {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Clean(taskDir)))
}

// worktreeOf returns project when it lies strictly inside the workspace
// of taskDir (a worker's git worktree, <workspace>/worktrees/<agent>), else
// "".
func worktreeOf(taskDir, project string) string {
	ws := workspaceOf(taskDir)
	if ws == "" || project == "" || !filepath.IsAbs(ws) || !filepath.IsAbs(project) {
		return ""
	}
	rws, err1 := resolve(ws)
	rp, err2 := resolve(project)
	if err1 != nil || err2 != nil {
		return ""
	}
	if rel, ok := within(rws, rp); ok && rel != "" {
		return project
	}
	return ""
}

// resolveRoots resolves the pattern roots physically, so they compare with
// resolved file paths (e.g. /tmp being a symlink). {worktree} is set only
// when the project lies inside the workspace (worktreeOf).
func resolveRoots(taskDir, project string, agent vocab.AgentID) map[string]string {
	roots := map[string]string{}
	for k, v := range map[string]string{"{task}": taskDir, "{project}": project, "{workspace}": workspaceOf(taskDir),
		"{worktree}": worktreeOf(taskDir, project), "{outbox}": outboxOf(taskDir, agent)} {
		if v == "" || !filepath.IsAbs(v) {
			continue
		}
		if r, err := resolve(v); err == nil {
			roots[k] = r
		}
	}
	return roots
}

// matchWritePaths applies the ordered patterns to the resolved path; it
// returns whether writing is allowed and, when a "!" pattern denied it, that
// pattern.
func matchWritePaths(patterns []string, roots map[string]string, target string) (bool, string) {
	for _, pat := range patterns {
		neg := strings.HasPrefix(pat, "!")
		body := strings.TrimPrefix(pat, "!")
		root, rest, ok := strings.Cut(body, "/")
		if !ok {
			root, rest = body, ""
		}
		base, ok := roots[root]
		if !ok {
			continue
		}
		rel, ok := within(base, target)
		if !ok || !globMatch(rest, rel) {
			continue
		}
		if neg {
			return false, pat
		}
		return true, ""
	}
	return false, ""
}

// within returns target relative to base ("" for base itself) if target is
// base or below it.
func within(base, target string) (string, bool) {
	if target == base {
		return "", true
	}
	prefix := strings.TrimSuffix(base, string(filepath.Separator)) + string(filepath.Separator)
	if !strings.HasPrefix(target, prefix) {
		return "", false
	}
	return filepath.ToSlash(strings.TrimPrefix(target, prefix)), true
}

// globMatch matches a slash-separated relative path against a pattern where
// "*" and "?" match within a segment and "**" matches zero or more segments.
func globMatch(pattern, rel string) bool {
	var ps, ns []string
	if pattern != "" {
		ps = strings.Split(pattern, "/")
	}
	if rel != "" {
		ns = strings.Split(rel, "/")
	}
	return matchSegs(ps, ns)
}

func matchSegs(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(ns); i++ {
				if matchSegs(ps[1:], ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, err := path.Match(ps[0], ns[0]); err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}

// maxLinks bounds symlink resolution (as the kernel's ELOOP limit does).
const maxLinks = 40

var errLoop = errors.New("too many levels of symbolic links")

// resolve returns the physical absolute path that abs names: every existing
// component is resolved through symlinks (including a dangling final
// symlink, whose target a write would create), ".." is applied to the
// resolved parent as the kernel does, and the non-existing rest is appended
// lexically.
func resolve(abs string) (string, error) {
	links := 0
	return resolveLinks(abs, &links)
}

func resolveLinks(abs string, links *int) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("not an absolute path: %s", abs)
	}
	parts := strings.Split(filepath.ToSlash(abs), "/")
	cur := string(filepath.Separator)
	missing := false
	for _, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		if *links > maxLinks {
			return "", errLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			// Not filepath.Join: it would clean "link/.." lexically.
			target = cur + string(filepath.Separator) + target
		}
		r, err := resolveLinks(target, links)
		if err != nil {
			return "", err
		}
		cur = r
		// The rest continues from the link target; if that does not exist,
		// everything below it is missing too.
		if _, err := os.Lstat(cur); err != nil {
			missing = true
		}
	}
	return cur, nil
}
