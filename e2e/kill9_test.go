package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment of the chaos agent's "escape" mode (chaosEscape).
const (
	escapeTokenEnv = "CHAOS_ESCAPE_TOKEN" // the sleep argument naming the run's escaped processes
	escapeDropEnv  = "CHAOS_ESCAPE_DROP"  // "1": one more that clears its whole environment
)

// chaosEscape leaves processes behind the way agents' tools do, each a
// `sleep` of the token's length (so the test finds them by command line
// whatever their environment): one in its own session (setsid), one
// immune to hangups (nohup), one double-forked onto its new parent, and
// with escapeDropEnv one double-forked in its own session with an empty
// environment (no session mark, no HIVEMIND_*).
func chaosEscape() {
	tok := os.Getenv(escapeTokenEnv)
	if tok == "" {
		return
	}
	sleep := "sleep " + tok + " >/dev/null 2>&1"
	cmds := []*exec.Cmd{
		exec.Command("setsid", "sleep", tok),
		exec.Command("nohup", "sleep", tok),
		exec.Command("sh", "-c", "("+sleep+" &)"),
	}
	if os.Getenv(escapeDropEnv) == "1" {
		cmds = append(cmds, exec.Command("env", "-i", "PATH="+os.Getenv("PATH"), "setsid", "sh", "-c", "("+sleep+" &)"))
	}
	for _, c := range cmds {
		if c.Start() == nil {
			go func() { _ = c.Wait() }()
		}
	}
}

// escaped lists the live processes whose command line holds tok, with
// their parent's command name.
func escaped(tok string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.Contains(cmd, []byte(tok)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil || isZombie(stat) {
			continue
		}
		ppid := ""
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				ppid = f[1]
			}
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", ppid, "comm"))
		found = append(found, fmt.Sprintf("pid %s parent %s (%s): %s", e.Name(), ppid, strings.TrimSpace(string(comm)),
			bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return found
}

// kill -9 of Hivemind leaves no process of its run behind, with no next
// run to reap them: its agents die by their parent-death signal, and its
// guard reaps what they left — a setsid child, a nohup child, a
// double-forked orphan and (with cgroups) a double-forked orphan in its
// own session with an empty environment — within seconds. The next
// `--resume` then completes the task.
func TestKill9LeavesNothing(t *testing.T) {
	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"cgroup", []string{escapeDropEnv + "=1"}},
		// Without cgroups nothing can find a process that cleared its
		// environment once its parent is gone (docs/PROCESS-TRUST.md).
		{"mark", []string{"HIVEMIND_CGROUPS=off"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			parallel(t)
			project, home := chaosProject(t, "")
			tok := fmt.Sprintf("86%03d.%06d", os.Getpid()%1000, rand.N(1000000))
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
			defer cancel()
			cmd, out := hivemind(t, ctx, home, "--headless", "--agent", self, "--project", project, "chaos: write two files")
			// The Lead stalls: the run is still planning when it is killed.
			cmd.Env = append(cmd.Env, append(mode.env, chaosModeEnv+"=escape+stall", escapeTokenEnv+"="+tok)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				// A failed test leaves nothing running either.
				for _, l := range escaped(tok) {
					if pid, err := strconv.Atoi(strings.Fields(l)[1]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			want := 3
			if len(mode.env) > 0 && mode.env[0] == escapeDropEnv+"=1" {
				want = 4
			}
			// Every escape done: as many as the Lead leaves, none still
			// the child of the shell that double-forked it.
			waitFor(t, runDeadline, "the Lead's escaped processes", func() bool {
				select {
				case <-exited:
					t.Fatalf("hivemind exited early:\n%s", out.String())
				default:
				}
				e := escaped(tok)
				if len(e) < want {
					return false
				}
				for _, l := range e {
					if strings.Contains(l, "(sh)") {
						return false
					}
				}
				return true
			})
			t.Logf("escaped before the kill:\n%s", strings.Join(escaped(tok), "\n"))
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-exited
			killed := time.Now()
			var left []string
			if !pollUntil(10*time.Second, func() bool {
				left = append(escaped(tok), leftovers(project)...)
				return len(left) == 0
			}) {
				t.Fatalf("10 s after kill -9, processes of the run are left:\n%s", strings.Join(left, "\n"))
			}
			t.Logf("every process of the run gone %v after kill -9", time.Since(killed).Round(time.Millisecond))

			code, dir, out2, _ := chaosExec(t, project, home, "behave", "--resume")
			chaosComplete(t, code, dir, out2)
		})
	}
}
