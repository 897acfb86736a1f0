package preflight

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeScript writes an agent script into dir with the given mode.
func writeScript(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each way a custom agent cannot start is named, with its fix: a file
// without the execute bit, a script whose interpreter is missing (by path
// or through env), a missing program; with Probe (doctor) a command that
// exits before its first prompt is named with its exit code and last
// output, and one that waits for input passes.
func TestCustomCommandChecks(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "plain.sh", "#!/bin/sh\necho hi\n", 0o644)
	writeScript(t, dir, "badbang.sh", "#!/usr/bin/no-such-python3\nprint('x')\n", 0o755)
	writeScript(t, dir, "envbang.sh", "#!/usr/bin/env no-such-interp -u\nx\n", 0o755)
	writeScript(t, dir, "dies.sh", "#!/bin/sh\necho 'config file missing: ~/.myagent.toml' >&2\nexit 3\n", 0o755)
	writeScript(t, dir, "waits.sh", "#!/bin/sh\nprintf 'my-agent ready\\n> '\nread line\n", 0o755)
	env := System()
	env.Probe = ProbeCommand
	for _, tc := range []struct {
		name    string
		agent   Agent
		want    []string // in the failure or the last result, in order
		fix     string
		ok      bool
		checked int // results
	}{
		{name: "not executable", agent: Agent{Name: "./plain.sh", Argv0: "./plain.sh", Shell: true, Argv: []string{"/bin/sh", "-c", "./plain.sh"}},
			want: []string{"is not executable", filepath.Join(dir, "plain.sh"), "-rw-r--r--"}, fix: "chmod +x " + filepath.Join(dir, "plain.sh")},
		{name: "missing interpreter", agent: Agent{Name: "./badbang.sh", Argv0: "./badbang.sh", Shell: true, Argv: []string{"/bin/sh", "-c", "./badbang.sh"}},
			want: []string{"cannot start", "its interpreter /usr/bin/no-such-python3", "does not exist"}, fix: "install no-such-python3"},
		{name: "interpreter not on PATH", agent: Agent{Name: "./envbang.sh", Argv0: "./envbang.sh", Shell: true, Argv: []string{"/bin/sh", "-c", "./envbang.sh"}},
			want: []string{"its interpreter no-such-interp", "is not on PATH"}, fix: "install no-such-interp"},
		{name: "missing program", agent: Agent{Name: "no-such-agent-xyz --x", Argv0: "no-such-agent-xyz", Shell: true},
			want: []string{"is not installed: no-such-agent-xyz not found on PATH"}, fix: "correct the agent"},
		{name: "exits at once", agent: Agent{Name: "sh -c 'exit 3'", Argv0: "sh", Shell: true, Argv: []string{"/bin/sh", "-c", "sh -c 'exit 3'"}},
			want: []string{"exited with code 3", "before its first prompt", "(it printed nothing)"}, fix: "run it yourself", checked: 2},
		{name: "script that errors", agent: Agent{Name: "./dies.sh", Argv0: "./dies.sh", Shell: true, Argv: []string{"/bin/sh", "-c", "./dies.sh"}},
			want: []string{"exited with code 3", "last output: config file missing: ~/.myagent.toml"}, fix: "run it yourself", checked: 2},
		{name: "waits for input", agent: Agent{Name: "./waits.sh", Argv0: "./waits.sh", Shell: true, Argv: []string{"/bin/sh", "-c", "./waits.sh"}},
			want: []string{"started and waits for input", "last output: my-agent ready / >"}, ok: true, checked: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.agent
			a.Roles, a.Dir = "lead", dir
			rs := Run(context.Background(), env, []Agent{a})
			if tc.checked == 0 {
				tc.checked = 1
			}
			if len(rs) != tc.checked {
				t.Fatalf("%d results, want %d: %v", len(rs), tc.checked, rs)
			}
			r := rs[len(rs)-1]
			if (r.Status == OK) != tc.ok || (!tc.ok && r.Status != Fail) {
				t.Fatalf("status %s: %s", r.Status, r)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(r.Msg[at:], w)
				if i < 0 {
					t.Fatalf("%q lacks %q (in order)", r.Msg, w)
				}
				at += i
			}
			if !strings.Contains(r.Fix, tc.fix) {
				t.Errorf("fix %q, want %q", r.Fix, tc.fix)
			}
			if strings.Contains(r.Msg, "not found on PATH") && tc.name != "missing program" {
				t.Errorf("%q says not found for a file that is there", r.Msg)
			}
		})
	}
}

// The start screen's mark names a file without the execute bit as such.
func TestNotFoundNotExecutable(t *testing.T) {
	dir := t.TempDir()
	p := writeScript(t, dir, "agent.sh", "#!/bin/sh\n", 0o644)
	if got, want := NotFound(System(), Agent{Name: p, Argv0: p, Shell: true}), p+" is not executable (chmod +x "+p+")"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Without Probe (a run's own preflight) nothing is started: a command
// that would exit passes the static checks.
func TestCustomCommandNotRunWithoutProbe(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	rs := Run(context.Background(), System(), []Agent{{Name: "touch " + marker, Argv0: "touch", Shell: true,
		Argv: []string{"/bin/sh", "-c", "touch " + marker}, Dir: dir, Roles: "lead"}})
	if len(rs) != 1 || rs[0].Status != OK {
		t.Fatalf("results %v", rs)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the preflight without Probe ran the command")
	}
}

func TestLastLines(t *testing.T) {
	got := lastLines("\x1b[2Jstarting\r\n\x1b[31merror:\x1b[0m no key\r\n\r\n", 2, 240)
	if got != "starting / error: no key" {
		t.Errorf("%q", got)
	}
	if got := lastLines(strings.Repeat("x", 300), 2, 10); got != "xxxxxxxxx…" {
		t.Errorf("%q", got)
	}
}
