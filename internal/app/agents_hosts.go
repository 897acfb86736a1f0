package app

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
	"github.com/hivemind-dev/hivemind/vocab"
)

// A host's agent CLI is checked as a local one is: the preflight checks
// of its profile (version against the tested one, Node, logged in, …)
// run there, each command over ssh with the variables the run passes to
// it (claudePassed) given on stdin, never on a command line.

// hostAgentChecks runs the preflight checks of the CLIs of the workers
// placed on host h there, one CLI after another (nil when they run the
// sim agent or a command Hivemind has no profile for).
func hostAgentChecks(ctx context.Context, cfg config.Config, h remote.Host, rep remote.Report) []preflight.Result {
	var rs []preflight.Result
	for i, agent := range hostAgents(cfg, h.Name) {
		hc := h
		if i > 0 {
			hc.Agent = "" // the host's agent command is the first CLI's
		}
		rs = append(rs, hostAgentCheck(ctx, cfg, hc, rep, agent)...)
	}
	return rs
}

// hostAgentCheck runs agent's preflight checks on host h.
func hostAgentCheck(ctx context.Context, cfg config.Config, h remote.Host, rep remote.Report, agent string) []preflight.Result {
	p, ok := profiles.Lookup(agent)
	if !ok || p.Binary == "" {
		return nil
	}
	a := preflight.Agent{Name: p.Name, CLI: p.CLI(), Roles: "the workers on " + h.Name, Bypass: bypasses(cfg.Role(vocab.RoleWorker))}
	env := hostEnv(h, rep, claudePassed(os.Environ()))
	if h.Agent != "" {
		// The host's agent command stands for the CLI's program.
		look := env.LookPath
		env.LookPath = func(file string) (string, error) {
			if file == p.Binary {
				file = h.Agent
			}
			return look(file)
		}
	}
	rs := preflight.Run(ctx, env, []preflight.Agent{a})
	for i := range rs {
		rs[i].Check = h.Name + ": " + rs[i].Check
	}
	return rs
}

// hostEnv is the preflight's world on host h: commands, PATH lookups and
// connections run there over ssh; Getenv is the variable the run passes
// (from here) or else the host's own.
func hostEnv(h remote.Host, rep remote.Report, passed []string) preflight.Env {
	var exports bytes.Buffer
	for _, k := range passed {
		if v, ok := os.LookupEnv(k); ok {
			fmt.Fprintf(&exports, "%s=%s\n", k, remote.Quote(v))
		}
	}
	run := func(ctx context.Context, script string) (string, error) {
		return h.Exec(ctx, "set -a; . /dev/stdin; set +a; "+script, bytes.NewReader(exports.Bytes()))
	}
	var once sync.Once
	vars := map[string]string{}
	return preflight.Env{
		LookPath: func(file string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := run(ctx, "command -v "+remote.Quote(file))
			if p := strings.TrimSpace(out); err == nil && p != "" {
				return p, nil
			}
			return "", fmt.Errorf("%s not found on %s's PATH", file, h.Name)
		},
		Getenv: func(k string) string {
			if v, ok := os.LookupEnv(k); ok && slices.Contains(passed, k) {
				return v
			}
			once.Do(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				out, _ := h.Exec(ctx, "env", nil)
				for _, line := range strings.Split(out, "\n") {
					if k, v, ok := strings.Cut(line, "="); ok {
						vars[k] = v
					}
				}
			})
			return vars[k]
		},
		Root: rep.User == "root",
		Output: func(ctx context.Context, argv ...string) ([]byte, error) {
			q := make([]string, len(argv))
			for i, a := range argv {
				q[i] = remote.Quote(a)
			}
			out, err := run(ctx, strings.Join(q, " "))
			return []byte(out), err
		},
		Dial: func(ctx context.Context, address string) error {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			_, err = run(ctx, "timeout 5 bash -c "+remote.Quote("exec 3<>/dev/tcp/"+host+"/"+port))
			if err != nil {
				return fmt.Errorf("from %s: %v", h.Name, err)
			}
			return nil
		},
		// Each command is an ssh round trip.
		CommandTimeout: 30 * time.Second,
		DialTimeout:    15 * time.Second,
	}
}
