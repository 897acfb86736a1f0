package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/hivemind-dev/hivemind/vocab"
)

// LocalHost is the placement name of this machine in [roles.<role>] hosts
// and --workers N@host; it cannot name a [hosts.<name>] table.
const LocalHost = "local"

// DefaultMaxAgents is a host's agent limit when max_agents is not set.
const DefaultMaxAgents = 4

// Host is a [hosts.<name>] table: a machine reached over ssh where agents
// can run (docs/REMOTE.md).
type Host struct {
	// SSH is the ssh destination: anything ssh accepts (an alias of
	// ~/.ssh/config, user@host, ssh://user@host:port).
	SSH string
	// SSHOptions are passed to ssh before the destination ("-J", "bastion").
	SSHOptions []string
	// Dir is the remote work directory: absolute or "~/…".
	Dir string
	// MaxAgents is how many agents run at once on the host.
	MaxAgents int
	// Agent is the agent command there, when not the profile's own name
	// on the host's PATH; "" uses the profile's.
	Agent string
}

// Placement is one part of --workers: Count workers on Host (LocalHost
// for this machine).
type Placement struct {
	Count int
	Host  string
}

var hostName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// hostKeys are the keys of a [hosts.<name>] table.
var hostKeys = []key[Host]{
	{name: "ssh", spec: spec{kind: kindString, nonEmpty: true},
		field: func(h *Host) any { return &h.SSH }, defText: "required",
		doc: "the ssh destination: an alias of `~/.ssh/config`, `user@host` or `ssh://user@host:port`"},
	{name: "ssh_options", spec: spec{kind: kindStrings}, def: []string{},
		field: func(h *Host) any { return &h.SSHOptions },
		doc:   "options passed to ssh before the destination (`[\"-J\", \"bastion\"]`)"},
	{name: "dir", spec: spec{kind: kindString, check: checkRemoteDir}, def: "~/hivemind",
		field: func(h *Host) any { return &h.Dir }, typ: "absolute path or `~/…`",
		doc: "the work directory there"},
	{name: "max_agents", spec: spec{kind: kindInt, min: 1, max: 64}, def: DefaultMaxAgents,
		field: func(h *Host) any { return &h.MaxAgents },
		doc:   "how many agents run there at once"},
	{name: "agent", spec: spec{kind: kindString, nonEmpty: true},
		field: func(h *Host) any { return &h.Agent }, omitEmpty: true, defText: "the profile's",
		doc: "the agent command there, when not the profile's own name on the host's `PATH`"},
}

func defaultHost() Host {
	var h Host
	applyDefaults(&h, hostKeys)
	return h
}

func checkRemoteDir(s string) error {
	if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~/") {
		return fmt.Errorf("%q: want an absolute path or one starting with ~/ (the remote home)", s)
	}
	return nil
}

// hosts decodes the [hosts.<name>] tables of one file.
func (l *fileLoader) hosts(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tbl)) {
		hpath := append(slices.Clip(path), name)
		if name == LocalHost {
			l.errorf(hpath, "%q means this machine in placements and cannot name a host; choose another name", name)
			continue
		}
		if !hostName.MatchString(name) {
			l.errorf(hpath, "invalid host name (use lower-case letters, digits, _ and -)")
			continue
		}
		fields, ok := l.table(hpath, tbl[name])
		if !ok {
			continue
		}
		h, exists := l.cfg.Hosts[name]
		if !exists {
			h = defaultHost()
		}
		l.src[strings.Join(hpath, ".")] = l.source(hpath)
		setKeys(l, hpath, fields, hostKeys, &h)
		l.cfg.Hosts[name] = h
	}
}

// checkHosts validates what only the merged files (and flags) can tell:
// every host has an ssh destination, every placement names a host.
func (c *Config) checkHosts(src Sources, placement []Placement) Errors {
	var errs Errors
	for _, name := range c.HostNames() {
		if c.Hosts[name].SSH == "" {
			s := src.Of("hosts." + name)
			errs = append(errs, &Error{File: s.File, Line: s.Line, Key: "hosts." + name,
				Msg: `ssh is required (the ssh destination, e.g. "buildbox" or "ci@10.0.0.7")`})
		}
	}
	for _, r := range vocab.Roles() {
		key := "roles." + string(r) + ".hosts"
		for _, h := range c.Roles[r].Hosts {
			if r != vocab.RoleWorker && h != LocalHost {
				s := src.Of(key)
				errs = append(errs, &Error{File: s.File, Line: s.Line, Key: key,
					Msg: fmt.Sprintf("only workers run on other hosts for now; the %s runs here (remove %q)", r, h)})
				continue
			}
			if msg := c.unknownHost(h); msg != "" {
				s := src.Of(key)
				errs = append(errs, &Error{File: s.File, Line: s.Line, Key: key, Msg: msg})
			}
		}
	}
	perHost := map[string]int{}
	for _, p := range placement {
		if msg := c.unknownHost(p.Host); msg != "" {
			errs = append(errs, &Error{Key: "--workers", Msg: msg})
			continue
		}
		perHost[p.Host] += p.Count
	}
	for _, name := range slices.Sorted(maps.Keys(perHost)) {
		if name != LocalHost && perHost[name] > c.Hosts[name].MaxAgents {
			errs = append(errs, &Error{Key: "--workers", Msg: fmt.Sprintf("%d workers on %s, more than its max_agents (%d)",
				perHost[name], name, c.Hosts[name].MaxAgents)})
		}
	}
	return errs
}

// unknownHost says what is wrong with a placement's host name, "" if
// nothing.
func (c *Config) unknownHost(h string) string {
	if h == LocalHost {
		return ""
	}
	if _, ok := c.Hosts[h]; ok {
		return ""
	}
	known := append(c.HostNames(), LocalHost)
	msg := fmt.Sprintf("unknown host %q", h)
	if s := Suggest(h, known, 2); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + "; hosts: " + strings.Join(known, ", ") + " (define one with [hosts.<name>])"
}

// HostNames returns the configured hosts, sorted.
func (c Config) HostNames() []string { return slices.Sorted(maps.Keys(c.Hosts)) }

// WorkerHosts returns the host of each of the Workers workers, in worker
// order (LocalHost for this machine): the --workers placement when given,
// else [roles.worker] hosts in order, each host filled up to its
// max_agents, then this machine.
func (c Config) WorkerHosts() []string {
	out := make([]string, 0, c.Workers)
	if len(c.Placement) > 0 {
		for _, p := range c.Placement {
			for range p.Count {
				out = append(out, p.Host)
			}
		}
		return out
	}
	for _, h := range c.Roles[vocab.RoleWorker].Hosts {
		n := c.Workers // "local" takes every worker left
		if h != LocalHost {
			n = c.Hosts[h].MaxAgents
		}
		for ; n > 0 && len(out) < c.Workers; n-- {
			out = append(out, h)
		}
	}
	for len(out) < c.Workers {
		out = append(out, LocalHost)
	}
	return out
}

// ParseWorkers parses --workers: "4" (four workers, placed by config),
// "4@buildbox" (four on buildbox), "2,3@buildbox" (two here, three on
// buildbox). It returns the total and, when any part names a host, the
// placement (a bare count is on this machine).
func ParseWorkers(s string) (int, []Placement, error) {
	total, named := 0, false
	var out []Placement
	parts := strings.Split(s, ",")
	for _, part := range parts {
		count, host, at := strings.Cut(strings.TrimSpace(part), "@")
		n, err := strconv.Atoi(count)
		// A bare count out of range is the caller's to report (with the range).
		if err != nil || n < 1 && (at || len(parts) > 1) {
			return 0, nil, fmt.Errorf("%q: want a count of workers, optionally @host (4, 4@buildbox, 2,3@buildbox)", part)
		}
		if !at {
			host = LocalHost
		} else {
			named = true
			if !hostName.MatchString(host) {
				return 0, nil, fmt.Errorf("%q: %q is not a host name", part, host)
			}
		}
		total += n
		out = append(out, Placement{Count: n, Host: host})
	}
	if !named {
		if len(out) > 1 {
			return 0, nil, fmt.Errorf("%q: several counts need a host on all but one (2,3@buildbox)", s)
		}
		out = nil
	}
	return total, out, nil
}

// placementText renders the --workers placement ("2@local", "3@buildbox").
func (c Config) placementText() []string {
	out := make([]string, len(c.Placement))
	for i, p := range c.Placement {
		out[i] = fmt.Sprintf("%d@%s", p.Count, p.Host)
	}
	return out
}
