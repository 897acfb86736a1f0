package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/hivemind-dev/hivemind/vocab"
)

// Built-in agents: what `agent` (top level or under [roles.<role>]) and
// --agent name without a [profiles.<name>] table. Each agent CLI's profile
// registers its name (RegisterAgent, from ptyagent/profiles). A profile
// named like a built-in CLI replaces it; claude and sim cannot be
// redefined.
var builtinAgents []string

// RegisterAgent makes name a built-in agent.
func RegisterAgent(name string) {
	if !slices.Contains(builtinAgents, name) {
		builtinAgents = append(builtinAgents, name)
		slices.Sort(builtinAgents)
	}
}

// AgentOf returns the agent that runs role: its [roles.<role>] agent, else
// the top-level agent. A worker's own agent is AgentOfID's.
func (c Config) AgentOf(role vocab.Role) string {
	if a := c.Roles[role].Agent; a != "" {
		return a
	}
	return c.Agent
}

// AgentOfID returns the agent that runs agent id: a worker's
// [agents.<worker>] agent, else its role's (AgentOf).
func (c Config) AgentOfID(id vocab.AgentID) string {
	return c.AgentIn(vocab.RoleOf(id), id)
}

// AgentIn is AgentOfID for agent id in role.
func (c Config) AgentIn(role vocab.Role, id vocab.AgentID) string {
	if a := c.WorkerAgents[id]; a != "" && role == vocab.RoleWorker {
		return a
	}
	return c.AgentOf(role)
}

// TeamIDs are the agent ids of the team: the Lead, the Reviewer and the
// workers.
func (c Config) TeamIDs() []vocab.AgentID {
	ids := []vocab.AgentID{vocab.AgentLead, vocab.AgentReviewer}
	for n := 1; n <= c.Workers; n++ {
		ids = append(ids, vocab.WorkerID(n))
	}
	return ids
}

// Team returns the agent of each role, keyed by role name.
func (c Config) Team() map[vocab.Role]string {
	t := make(map[vocab.Role]string)
	for _, r := range vocab.Roles() {
		t[r] = c.AgentOf(r)
	}
	return t
}

// WorkerTeam returns the workers that run an agent other than the worker
// role's, worker id → agent (nil when none does). Load checks that each is
// one of the Workers workers.
func (c Config) WorkerTeam() map[vocab.AgentID]string {
	var t map[vocab.AgentID]string
	role := c.AgentOf(vocab.RoleWorker)
	for id, a := range c.WorkerAgents {
		if a != "" && a != role {
			if t == nil {
				t = map[vocab.AgentID]string{}
			}
			t[id] = a
		}
	}
	return t
}

// workerIDs are the ids of WorkerTeam, by worker number.
func (c Config) workerIDs() []vocab.AgentID {
	ids := slices.Collect(maps.Keys(c.WorkerTeam()))
	vocab.SortAgents(ids)
	return ids
}

// Mixed reports whether the agents do not all run the same agent.
func (c Config) Mixed() bool {
	for _, r := range vocab.Roles() {
		if c.AgentOf(r) != c.AgentOf(vocab.RoleLead) {
			return true
		}
	}
	return c.WorkerTeam() != nil
}

// TeamString is the team in the --agent form: the agent alone when every
// agent runs it, else "lead=…,reviewer=…,worker=…", followed by
// "worker_2=…" for each worker that runs another agent than its role.
func (c Config) TeamString() string {
	if !c.Mixed() {
		return c.Agent
	}
	var parts []string
	for _, r := range vocab.Roles() {
		parts = append(parts, string(r)+"="+c.AgentOf(r))
	}
	for _, id := range c.workerIDs() {
		parts = append(parts, string(id)+"="+c.WorkerAgents[id])
	}
	return strings.Join(parts, ",")
}

// AgentFlag is a parsed --agent value: one agent for every role (All), or
// agents for some roles (PerRole, role → agent) and some workers
// (PerWorker, worker id → agent; a worker named here runs its agent
// whatever its role's is).
type AgentFlag struct {
	All       string
	PerRole   map[vocab.Role]string
	PerWorker map[vocab.AgentID]string
}

// ParseAgentFlag parses --agent: an agent for every role ("codex", a
// profile name, or a command line), or a comma-separated list of
// role=agent and worker=agent ("reviewer=codex,worker=gemini,worker_2=codex").
// A value whose first word before "=" is a lower-case name (letters,
// digits, "_") is the list form, so a command line starting with a
// variable assignment must be a profile. Whether a worker id is one of
// the team's is checked once the worker count is known (Load).
func ParseAgentFlag(s string) (AgentFlag, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return AgentFlag{}, fmt.Errorf("must not be empty")
	}
	if !perRoleForm(s) {
		return AgentFlag{All: s}, nil
	}
	f := AgentFlag{PerRole: map[vocab.Role]string{}}
	for _, item := range strings.Split(s, ",") {
		name, agent, ok := strings.Cut(strings.TrimSpace(item), "=")
		name, agent = strings.TrimSpace(name), strings.TrimSpace(agent)
		if !ok || agent == "" {
			return AgentFlag{}, fmt.Errorf("%q: want role=agent or worker_N=agent (e.g. reviewer=codex,worker=gemini,worker_2=codex)", item)
		}
		if id := vocab.AgentID(name); vocab.RoleOf(id) == vocab.RoleWorker {
			if _, ok := vocab.WorkerNum(id); !ok {
				return AgentFlag{}, fmt.Errorf("%q is not a worker id (worker_1, worker_2, …)", name)
			}
			if _, dup := f.PerWorker[id]; dup {
				return AgentFlag{}, fmt.Errorf("worker %s given twice", id)
			}
			if f.PerWorker == nil {
				f.PerWorker = map[vocab.AgentID]string{}
			}
			f.PerWorker[id] = agent
			continue
		}
		role, err := vocab.ParseRole(name)
		if err != nil {
			return AgentFlag{}, fmt.Errorf("%v, or a worker id (worker_1, worker_2, …)", err)
		}
		if _, dup := f.PerRole[role]; dup {
			return AgentFlag{}, fmt.Errorf("role %s given twice", role)
		}
		f.PerRole[role] = agent
	}
	return f, nil
}

// perRoleForm reports whether s starts with "name=": a lower-case letter,
// then lower-case letters, digits or "_" ("worker_2=").
func perRoleForm(s string) bool {
	k, _, ok := strings.Cut(s, "=")
	if !ok || k == "" || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for _, r := range k {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// checkAgentName returns a did-you-mean error for an agent that is one
// word, neither built in nor a profile, and close to one of those: a typo
// ("codx") would otherwise run as a command of that name.
func checkAgentName(v string, profiles []string) string {
	if strings.ContainsAny(v, " \t/") || slices.Contains(builtinAgents, v) || slices.Contains(profiles, v) {
		return ""
	}
	known := slices.Concat(builtinAgents, profiles)
	if sg := Suggest(v, known, 2); sg != "" {
		return fmt.Sprintf("unknown agent %q (did you mean %q?); to run a program of that name give its path (./%s) or define [profiles.%s]", v, sg, v, v)
	}
	return ""
}

// checkAgents checks the agent names the files set, once the profiles of
// both files are known.
func checkAgents(cfg Config, src Sources) Errors {
	var errs Errors
	profiles := cfg.ProfileNames()
	check := func(key, v string) {
		if msg := checkAgentName(v, profiles); msg != "" {
			s := src.Of(key)
			errs = append(errs, &Error{File: s.File, Line: s.Line, Key: key, Msg: msg})
		}
	}
	check("agent", cfg.Agent)
	for _, r := range vocab.Roles() {
		if a := cfg.Roles[r].Agent; a != "" {
			check("roles."+string(r)+".agent", a)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.WorkerAgents)) {
		check(workerAgentKey(id), cfg.WorkerAgents[id])
	}
	return errs
}

// workerAgentKey is the dotted key of worker id's agent.
func workerAgentKey(id vocab.AgentID) string { return "agents." + string(id) + ".agent" }

// checkWorkerIDs checks that every worker given its own agent or model
// (in a file or --agent) is one of the team's workers.
func checkWorkerIDs(cfg Config, src Sources) Errors {
	var errs Errors
	keys := workerKeys(cfg)
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		id := keys[key]
		if n, _ := vocab.WorkerNum(id); n <= cfg.Workers {
			continue
		}
		valid := make([]string, 0, cfg.Workers)
		for _, w := range cfg.TeamIDs()[2:] {
			valid = append(valid, string(w))
		}
		msg := fmt.Sprintf("%s is not a worker of this team of %d (workers = %d): valid ids are %s",
			id, cfg.Workers, cfg.Workers, strings.Join(valid, ", "))
		s := src.Of(key)
		if s.Kind == SourceFlag {
			key = s.Flag
		}
		errs = append(errs, &Error{File: s.File, Line: s.Line, Key: key, Msg: msg})
	}
	return errs
}

// workerKeys are the dotted keys set for single workers (their agent or
// model), each with its worker.
func workerKeys(cfg Config) map[string]vocab.AgentID {
	keys := map[string]vocab.AgentID{}
	for id := range cfg.WorkerAgents {
		keys[workerAgentKey(id)] = id
	}
	for id := range cfg.WorkerModels {
		keys["agents."+string(id)+".model"] = id
	}
	return keys
}

// workerAgents loads the [agents.<worker>] tables. Whether each worker is
// one of the team's is checked once the worker count is known
// (checkWorkerIDs).
func (l *fileLoader) workerAgents(path []string, prim toml.Primitive) {
	tbl, ok := l.table(path, prim)
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tbl)) {
		wpath := append(slices.Clip(path), name)
		id := vocab.AgentID(name)
		if _, ok := vocab.WorkerNum(id); !ok {
			l.errorf(wpath, "%q is not a worker id: want worker_1 … worker_%d (the Lead's and the Reviewer's agents are set in [roles.<role>])", name, MaxWorkers)
			continue
		}
		fields, ok := l.table(wpath, tbl[name])
		if !ok {
			continue
		}
		w := WorkerAgent{Agent: l.cfg.WorkerAgents[id], Model: l.cfg.WorkerModels[id]}
		setKeys(l, wpath, fields, workerAgentKeys, &w)
		if w.Agent != "" {
			l.cfg.WorkerAgents[id] = w.Agent
		}
		if w.Model != "" {
			if l.cfg.WorkerModels == nil {
				l.cfg.WorkerModels = map[vocab.AgentID]string{}
			}
			l.cfg.WorkerModels[id] = w.Model
		}
	}
}

// applyAgentFlag applies --agent: one agent for every role replaces the
// per-role agents of the files too; the list form sets the roles it names.
func applyAgentFlag(cfg *Config, src Sources, v string) *Error {
	f, err := ParseAgentFlag(v)
	if err != nil {
		return &Error{Key: "--agent", Msg: err.Error()}
	}
	profiles := cfg.ProfileNames()
	flag := Source{Kind: SourceFlag, Flag: "--agent"}
	if f.All != "" {
		if msg := checkAgentName(f.All, profiles); msg != "" {
			return &Error{Key: "--agent", Msg: msg}
		}
		src["agent"] = flag
		for _, r := range vocab.Roles() {
			delete(src, "roles."+string(r)+".agent")
		}
	}
	for _, r := range vocab.Roles() {
		if a, ok := f.PerRole[r]; ok {
			if msg := checkAgentName(a, profiles); msg != "" {
				return &Error{Key: "--agent", Msg: string(r) + ": " + msg}
			}
			src["roles."+string(r)+".agent"] = flag
		}
	}
	if f.All != "" || f.PerRole[vocab.RoleWorker] != "" {
		for id := range cfg.WorkerAgents {
			delete(src, workerAgentKey(id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(f.PerWorker)) {
		if msg := checkAgentName(f.PerWorker[id], profiles); msg != "" {
			return &Error{Key: "--agent", Msg: string(id) + ": " + msg}
		}
		src[workerAgentKey(id)] = flag
	}
	*cfg = cfg.WithAgents(f)
	return nil
}

// WithAgents returns c with f applied: f.All runs every role (the
// per-role and per-worker agents are dropped), f.PerRole sets the roles it
// names (a worker role drops the per-worker agents), f.PerWorker the
// workers it names. The maps are copied, never changed in place.
func (c Config) WithAgents(f AgentFlag) Config {
	c.Roles = maps.Clone(c.Roles)
	if c.Roles == nil {
		c.Roles = map[vocab.Role]RoleConfig{}
	}
	c.WorkerAgents = maps.Clone(c.WorkerAgents)
	if c.WorkerAgents == nil || f.All != "" || f.PerRole[vocab.RoleWorker] != "" {
		c.WorkerAgents = map[vocab.AgentID]string{}
	}
	maps.Copy(c.WorkerAgents, f.PerWorker)
	if f.All != "" {
		c.Agent = f.All
	}
	for _, r := range vocab.Roles() {
		rc := c.Roles[r]
		if f.All != "" {
			rc.Agent = ""
		}
		if a, ok := f.PerRole[r]; ok {
			rc.Agent = a
		}
		c.Roles[r] = rc
	}
	return c
}
