package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
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

	for _, k := range topKeys {
		if v, ok := shown(&c, k); ok {
			add(k.name, k.name, v)
		}
	}
	for _, r := range vocab.Roles() {
		rc := c.Roles[r]
		p := "roles." + string(r) + "."
		header("roles." + string(r))
		for _, k := range roleKeys {
			if k.name == "agent" && rc.Agent == "" {
				// Inherited from the top-level agent: shown commented
				// out, so the output read back sets no per-role agent.
				rows = append(rows, row{text: "# agent = " + tomlValue(c.Agent), src: src.Of("agent").String() + " (from agent)"})
				continue
			}
			if v, ok := shown(&rc, k); ok {
				add(p+k.name, k.name, v)
			}
		}
	}
	workers := slices.Collect(maps.Keys(c.WorkerAgents))
	for id := range c.WorkerModels {
		if _, ok := c.WorkerAgents[id]; !ok {
			workers = append(workers, id)
		}
	}
	vocab.SortAgents(workers)
	for _, id := range workers {
		header("agents." + string(id))
		if a := c.WorkerAgents[id]; a != "" {
			add(workerAgentKey(id), "agent", a)
		}
		if m := c.WorkerModels[id]; m != "" {
			add("agents."+string(id)+".model", "model", m)
		}
	}
	for _, name := range c.HostNames() {
		h := c.Hosts[name]
		p := "hosts." + name + "."
		header("hosts." + name)
		for _, k := range hostKeys {
			if v, ok := shown(&h, k); ok {
				add(p+k.name, k.name, v)
			}
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
		for _, k := range profileKeys {
			if v, ok := shown(&pr, k); ok {
				add(sp+k.name, k.name, v)
			}
		}
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
		for _, k := range priceKeys {
			if v, ok := shown(&pr, k); ok {
				add(sp+k.name, k.name, v)
			}
		}
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
	case bool:
		return strconv.FormatBool(x)
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
