package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/workspace"
)

// Describe renders the effective configuration as TOML, every value followed
// by a comment saying where it came from. The output is itself a valid
// config file.
func (c Config) Describe(src Sources) string {
	var rows []row
	add := func(key, name string, v any) {
		rows = append(rows, row{text: name + " = " + tomlValue(v), src: src.Of(key).String()})
	}
	header := func(h string) { rows = append(rows, row{text: "\n[" + h + "]"}) }

	add("workers", "workers", c.Workers)
	add("agent", "agent", c.Agent)
	add("plan_approval", "plan_approval", c.PlanApproval)
	add("quiet_period_ms", "quiet_period_ms", c.QuietPeriodMS)
	add("hang_seconds", "hang_seconds", c.HangSeconds)
	add("agent_timeout_seconds", "agent_timeout_seconds", c.AgentTimeoutSeconds)
	add("stall_seconds", "stall_seconds", c.StallSeconds)
	add("rate_limit_cooldown_seconds", "rate_limit_cooldown_seconds", c.RateLimitCooldownSeconds)
	add("max_retries", "max_retries", c.MaxRetries)
	add("max_revision_cycles", "max_revision_cycles", c.MaxRevisionCycles)
	add("backoff_seconds", "backoff_seconds", c.BackoffSeconds)
	add("scrollback_lines", "scrollback_lines", c.ScrollbackLines)
	add("fps", "fps", c.FPS)
	add("retention_full_days", "retention_full_days", c.RetentionFullDays)
	add("retention_summary_days", "retention_summary_days", c.RetentionSummaryDays)
	add("check", "check", c.Check)
	add("worktree_copy", "worktree_copy", c.WorktreeCopy)
	add("budget_usd", "budget_usd", c.BudgetUSD)

	for _, r := range workspace.Roles() {
		rc := c.Roles[r]
		p := "roles." + string(r) + "."
		header("roles." + string(r))
		if rc.Agent != "" {
			add(p+"agent", "agent", rc.Agent)
		} else {
			// Inherited from the top-level agent: shown commented out, so
			// the output read back sets no per-role agent.
			rows = append(rows, row{text: "# agent = " + tomlValue(c.Agent), src: src.Of("agent").String() + " (from agent)"})
		}
		add(p+"model", "model", rc.Model)
		add(p+"extra_args", "extra_args", rc.ExtraArgs)
		add(p+"permission_mode", "permission_mode", rc.PermissionMode)
		if len(rc.Hosts) > 0 {
			add(p+"hosts", "hosts", rc.Hosts)
		}
		if len(rc.Writable) > 0 {
			add(p+"writable", "writable", rc.Writable)
		}
	}
	for _, name := range c.HostNames() {
		h := c.Hosts[name]
		p := "hosts." + name + "."
		header("hosts." + name)
		add(p+"ssh", "ssh", h.SSH)
		add(p+"ssh_options", "ssh_options", h.SSHOptions)
		add(p+"dir", "dir", h.Dir)
		add(p+"max_agents", "max_agents", h.MaxAgents)
		if h.Agent != "" {
			add(p+"agent", "agent", h.Agent)
		}
	}
	if len(c.Placement) > 0 {
		rows = append(rows, row{text: "\n# workers placed by --workers: " + strings.Join(c.placementText(), ", ")})
	}
	for _, name := range c.ProfileNames() {
		pr := c.Profiles[name]
		p := "profiles." + tomlKey(name) + "."
		sp := "profiles." + name + "."
		header("profiles." + tomlKey(name))
		add(sp+"command", "command", pr.Command)
		add(sp+"submit", "submit", pr.Submit)
		add(sp+"submit_delay_ms", "submit_delay_ms", pr.SubmitDelayMS)
		add(sp+"ready_regex", "ready_regex", pr.ReadyRegex)
		add(sp+"ready_quiet_ms", "ready_quiet_ms", pr.ReadyQuietMS)
		if len(pr.Env) > 0 {
			header(strings.TrimSuffix(p, ".") + ".env")
			for _, k := range slices.Sorted(maps.Keys(pr.Env)) {
				add(sp+"env."+k, tomlKey(k), pr.Env[k])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Pricing)) {
		pr := c.Pricing[name]
		sp := "pricing." + name + "."
		header("pricing." + tomlKey(name))
		add(sp+"input", "input", pr.Input)
		add(sp+"output", "output", pr.Output)
		add(sp+"cache_read", "cache_read", pr.CacheRead)
		add(sp+"cache_write", "cache_write", pr.CacheWrite)
	}

	width := 0
	for _, r := range rows {
		if r.src != "" {
			width = max(width, len(strings.TrimPrefix(r.text, "\n")))
		}
	}
	var b strings.Builder
	b.WriteString("# Effective Hivemind configuration; each value's source is in its comment.\n")
	if c.Files.User != "" {
		fmt.Fprintf(&b, "# user file:    %s\n", c.Files.User)
	}
	if c.Files.Project != "" {
		fmt.Fprintf(&b, "# project file: %s\n", c.Files.Project)
	}
	b.WriteString("\n")
	for _, r := range rows {
		if r.src == "" {
			b.WriteString(r.text + "\n")
			continue
		}
		fmt.Fprintf(&b, "%-*s  # %s\n", width, r.text, r.src)
	}
	return b.String()
}

type row struct{ text, src string }

// tomlValue renders v as a TOML value.
func tomlValue(v any) string {
	switch x := v.(type) {
	case int:
		return itoa(x)
	case string:
		return tomlString(x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []int:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = itoa(n)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	panic(fmt.Sprintf("config: cannot render %T", v))
}

// tomlString quotes s as a TOML basic string (JSON escapes are valid TOML).
func tomlString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return strings.TrimSuffix(buf.String(), "\n")
}

// tomlKey returns k as a bare key when possible, else quoted.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}
