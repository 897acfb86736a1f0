package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestHostsAndPlacement(t *testing.T) {
	user := `[hosts.buildbox]
ssh = "ci@10.0.0.7"
max_agents = 2
`
	project := `workers = 5

[hosts.buildbox]
ssh_options = ["-J", "bastion"]

[hosts.gpu]
ssh = "gpu"
dir = "/srv/hm"
agent = "/opt/node/bin/claude"

[roles.worker]
hosts = ["buildbox", "gpu"]
`
	ws, ud := dirs(t, project, user)
	cfg, src, err := Load(ws, ud, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Host{
		"buildbox": {SSH: "ci@10.0.0.7", SSHOptions: []string{"-J", "bastion"}, Dir: "~/hivemind", MaxAgents: 2},
		"gpu":      {SSH: "gpu", SSHOptions: []string{}, Dir: "/srv/hm", MaxAgents: DefaultMaxAgents, Agent: "/opt/node/bin/claude"},
	}
	if !reflect.DeepEqual(cfg.Hosts, want) {
		t.Errorf("hosts:\n got %+v\nwant %+v", cfg.Hosts, want)
	}
	// buildbox is full at 2, gpu takes its 4 → the 5 workers need no local one.
	if got := cfg.WorkerHosts(); !reflect.DeepEqual(got, []string{"buildbox", "buildbox", "gpu", "gpu", "gpu"}) {
		t.Errorf("placement by config: %v", got)
	}
	if s := src.Of("hosts.buildbox.ssh").String(); !strings.HasPrefix(s, "user ") || !strings.HasSuffix(s, ":2") {
		t.Errorf("source of hosts.buildbox.ssh: %s", s)
	}
	d := cfg.Describe(src)
	for _, line := range []string{`[hosts.buildbox]`, `ssh_options = ["-J", "bastion"]`, `hosts = ["buildbox", "gpu"]`, `agent = "/opt/node/bin/claude"`} {
		if !strings.Contains(d, line) {
			t.Errorf("Describe lacks %q:\n%s", line, d)
		}
	}

	// --workers 1,2@gpu: one here, two on gpu, whatever [roles.worker] says.
	n, pl, err := ParseWorkers("1,2@gpu")
	if err != nil || n != 3 {
		t.Fatalf("ParseWorkers: %d %v %v", n, pl, err)
	}
	cfg, _, err = Load(ws, ud, Overrides{Workers: &n, Placement: pl})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.WorkerHosts(); !reflect.DeepEqual(got, []string{"local", "gpu", "gpu"}) {
		t.Errorf("placement by flag: %v", got)
	}
}

func TestWorkerHostsLocalFillsTheRest(t *testing.T) {
	cfg := Default()
	cfg.Workers = 3
	cfg.Hosts["a"] = Host{SSH: "a", MaxAgents: 1}
	cfg.Roles["worker"] = RoleConfig{Hosts: []string{"a"}}
	if got := cfg.WorkerHosts(); !reflect.DeepEqual(got, []string{"a", "local", "local"}) {
		t.Errorf("got %v", got)
	}
	cfg.Roles["worker"] = RoleConfig{}
	if got := cfg.WorkerHosts(); !reflect.DeepEqual(got, []string{"local", "local", "local"}) {
		t.Errorf("no hosts: %v", got)
	}
}

func TestHostErrors(t *testing.T) {
	project := `[hosts.buildbox]
ssh = "bb"
dir = "relative/dir"
max_agents = 0
colour = 1

[hosts.local]
ssh = "x"

[hosts.Big]
ssh = "x"

[hosts.nossh]
dir = "~/x"

[roles.worker]
hosts = ["buildbx"]

[roles.lead]
hosts = ["buildbox"]
`
	ws, ud := dirs(t, project, "")
	_, _, err := Load(ws, ud, Overrides{})
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.ReplaceAll(err.Error(), ws+"/config.toml", "F")
	for _, want := range []string{
		`F:3: hosts.buildbox.dir: "relative/dir": want an absolute path or one starting with ~/ (the remote home)`,
		`F:4: hosts.buildbox.max_agents: must be at least 1 (got 0)`,
		`F:5: hosts.buildbox.colour: unknown key; known keys here: agent, dir, max_agents, ssh, ssh_options`,
		`F:7: hosts.local: "local" means this machine in placements and cannot name a host; choose another name`,
		`F:10: hosts.Big: invalid host name (use lower-case letters, digits, _ and -)`,
		`F:13: hosts.nossh: ssh is required`,
		`F:17: roles.worker.hosts: unknown host "buildbx" (did you mean "buildbox"?); hosts: buildbox, nossh, local`,
		`F:20: roles.lead.hosts: only workers run on other hosts for now; the lead runs here (remove "buildbox")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing error %q in:\n%s", want, got)
		}
	}

	ws, ud = dirs(t, "[hosts.buildbox]\nssh = \"bb\"\nmax_agents = 2\n", "")
	n, pl, _ := ParseWorkers("3@buildbox,1@buidlbox")
	_, _, err = Load(ws, ud, Overrides{Workers: &n, Placement: pl})
	if err == nil || !strings.Contains(err.Error(), `--workers: unknown host "buidlbox" (did you mean "buildbox"?)`) ||
		!strings.Contains(err.Error(), "--workers: 3 workers on buildbox, more than its max_agents (2)") {
		t.Errorf("flag placement errors: %v", err)
	}
}

func TestParseWorkers(t *testing.T) {
	for _, c := range []struct {
		in    string
		n     int
		pl    []Placement
		error string
	}{
		{in: "4", n: 4},
		{in: "4@buildbox", n: 4, pl: []Placement{{4, "buildbox"}}},
		{in: "2,3@buildbox", n: 5, pl: []Placement{{2, "local"}, {3, "buildbox"}}},
		{in: "1@a,1@b", n: 2, pl: []Placement{{1, "a"}, {1, "b"}}},
		{in: "2,3", error: "several counts need a host"},
		{in: "0@a", error: "want a count of workers"},
		{in: "x", error: "want a count of workers"},
		{in: "2@Bad!", error: `"Bad!" is not a host name`},
	} {
		n, pl, err := ParseWorkers(c.in)
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.error)
			}
			continue
		}
		if err != nil || n != c.n || !reflect.DeepEqual(pl, c.pl) {
			t.Errorf("%s: %d %v %v, want %d %v", c.in, n, pl, err, c.n, c.pl)
		}
	}
}
