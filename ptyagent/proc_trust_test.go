package ptyagent

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// escapeScript starts a grandchild that leaves everything the mark scan
// knows: its own session (setsid), immune to SIGHUP (nohup), the session
// mark removed from its environment, and its parent gone (the subshell
// exits, so it is reparented to init). It prints "escaped <pid>".
//
// It says "escaped <pid>" only once the grandchild has left the session and
// ignores SIGHUP (it wrote its pid after setsid and nohup): said earlier, a
// kill of the run on a loaded machine could hang it up before it escaped.
const escapeScript = `f=$(mktemp); (env -u ` + markEnv + ` setsid nohup sh -c 'echo $$ > "$0"; exec sleep 1000' "$f" >/dev/null 2>&1 &); ` +
	`while [ ! -s "$f" ]; do sleep 0.01; done; echo "escaped $(cat "$f")"; rm -f "$f"; exec cat`

var escapedRE = regexp.MustCompile(`escaped (\d+)`)

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := readProc(pid)
	return ok && !p.zombie
}

// A grandchild that changed session, dropped the mark and lost its parent
// does not outlive a graceful stop (cgroup tracking), nor the agent's own
// exit.
func TestEscapedDescendantReaped(t *testing.T) {
	if why := cgroupsUnavailable(); why != "" {
		t.Skipf("cgroups v2 unavailable here: %s (the mark scan cannot find such a process)", why)
	}
	for _, how := range []string{"stop", "agent exits"} {
		t.Run(how, func(t *testing.T) {
			script := escapeScript
			if how == "agent exits" {
				script = strings.Replace(script, "exec cat", "read x", 1)
			}
			s, err := Start(Spec{ID: "esc", Argv: []string{"sh", "-c", script}, StopTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.cg == nil {
				t.Fatal("session has no cgroup although cgroups are available")
			}
			pid := waitEscaped(t, s)
			p, _ := readProc(pid)
			if p.sid != pid || p.ppid == s.PID() || hasMark(pid, s.mark) {
				t.Fatalf("grandchild did not escape: %+v (mark %v)", p, hasMark(pid, s.mark))
			}
			if how == "stop" {
				s.Stop()
			} else if _, err := s.Write([]byte("\r")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "session done", func() bool {
				select {
				case <-s.Done():
					return true
				default:
					return false
				}
			})
			waitFor(t, 10*time.Second, "grandchild gone", func() bool { return !alive(pid) })
			if _, err := os.Stat(s.cg.dir); !os.IsNotExist(err) {
				t.Errorf("cgroup %s not removed: %v", s.cg.dir, err)
			}
		})
	}
}

func waitEscaped(t *testing.T, s *Session) int {
	t.Helper()
	pid := waitScreenPID(t, s, escapedRE)
	// Let the subshell exit, so the grandchild is an orphan.
	waitFor(t, 10*time.Second, "grandchild orphaned", func() bool {
		p, ok := readProc(pid)
		return ok && p.ppid != s.PID() && p.sid == pid
	})
	return pid
}

// A Hivemind killed with SIGKILL leaves its agents' setsid/nohup children
// running; the next run's manager reaps them from the task's process
// records before it starts anything, and removes the dead run's socket.
func TestKilledRunReapedByNextManager(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process records are matched through /proc")
	}
	trackModes(t, func(t *testing.T, cgroups bool) {
		records, sockDir, pid, sock := crashRun(t, cgroups, "")
		// The agent died with its parent; the grandchild did not.
		if !alive(pid) {
			t.Fatalf("grandchild %d died with the killed run: nothing to reap, the test proves nothing", pid)
		}
		recs, _ := filepath.Glob(filepath.Join(records, "*.json"))
		if len(recs) != 1 {
			t.Fatalf("records %v", recs)
		}

		m, err := NewManager(ManagerConfig{RecordDir: records, SocketDir: sockDir,
			Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (Spec, error) {
				return Spec{Argv: []string{"cat"}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		n, err := m.Reaped()
		if err != nil || n < 1 {
			t.Errorf("reaped %d, %v", n, err)
		}
		waitFor(t, 10*time.Second, "grandchild reaped", func() bool { return !alive(pid) })
		if recs, _ := filepath.Glob(filepath.Join(records, "*")); len(recs) != 0 {
			t.Errorf("records left: %v", recs)
		}
		if _, err := os.Lstat(sock); !os.IsNotExist(err) {
			t.Errorf("dead run's socket %s left: %v", sock, err)
		}
	})
}

// crashRun runs a Hivemind stand-in (helperManager) whose agent leaves an
// escaped grandchild (escapeScript; without cgroups it keeps the mark,
// the only thing that finds it then), with a guard when guarded, and kills
// it with SIGKILL. It returns the records and socket directories, the
// grandchild's pid and the dead run's socket.
//
// As a subreaper (guard "subreaper") the stand-in adopts the grandchild,
// which drops the mark even without cgroups, and tells its guard.
func crashRun(t *testing.T, cgroups bool, guard string) (records, sockDir string, pid int, sock string) {
	t.Helper()
	records = t.TempDir()
	sockDir, err := os.MkdirTemp("", "hmk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	script := escapeScript
	if !cgroups && guard != "subreaper" {
		script = strings.Replace(script, "env -u "+markEnv+" ", "", 1)
	}
	exe, _ := os.Executable()
	crashed := exec.Command(exe)
	crashed.Env = append(os.Environ(), helperEnv+"=manager", "HM_RECORDS="+records, "HM_SOCKDIR="+sockDir, "HM_SCRIPT="+script)
	if !cgroups {
		crashed.Env = append(crashed.Env, EnvCgroups+"=off")
	}
	if guard != "" {
		crashed.Env = append(crashed.Env, "HM_GUARD="+guard)
	}
	out, err := crashed.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	crashed.Stderr = os.Stderr
	if err := crashed.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for pid == 0 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("helper exited early")
			}
			fmt.Sscanf(l, "escaped %d %s", &pid, &sock)
		case <-deadline:
			t.Fatal("helper printed no grandchild")
		}
	}
	_ = crashed.Process.Signal(syscall.SIGKILL)
	_ = crashed.Wait()
	return records, sockDir, pid, sock
}

// A Hivemind killed with SIGKILL leaves nothing running for long: its
// guard reaps the escaped grandchild at once (by its cgroup, or its mark
// without cgroups), with no next run, and removes the records. Without
// the guard the grandchild lives on (TestKilledRunReapedByNextManager).
// A subreaper's guard also kills the grandchild that dropped its mark on
// a machine without cgroups, which nothing else finds.
func TestKilledRunReapedByItsGuard(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process records are matched through /proc")
	}
	trackModes(t, func(t *testing.T, cgroups bool) {
		for _, guard := range []string{"guard", "subreaper"} {
			t.Run(guard, func(t *testing.T) {
				records, _, pid, _ := crashRun(t, cgroups, guard)
				killed := time.Now()
				waitFor(t, 15*time.Second, "the guard to reap the grandchild", func() bool { return !alive(pid) })
				t.Logf("grandchild gone %v after the SIGKILL", time.Since(killed).Round(time.Millisecond))
				waitFor(t, 10*time.Second, "the records marked reaped", func() bool {
					recs, _ := filepath.Glob(filepath.Join(records, "*.json"))
					return len(recs) == 0
				})
				// Kept for the next run (remote marks), which removes them.
				if _, err := ReapRecorded(records); err != nil {
					t.Fatal(err)
				}
				if left, _ := filepath.Glob(filepath.Join(records, "*")); len(left) != 0 {
					t.Errorf("records left after the next run's reap: %v", left)
				}
			})
		}
	})
}

// helperManager is a Hivemind stand-in for TestKilledRunReapedByNextManager:
// a manager keeping records in HM_RECORDS runs one agent (HM_SCRIPT), and
// prints "escaped <pid> <socket>" once the agent's grandchild escaped.
func helperManager() int {
	m, err := NewManager(ManagerConfig{RecordDir: os.Getenv("HM_RECORDS"), SocketDir: os.Getenv("HM_SOCKDIR"),
		Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (Spec, error) {
			return Spec{Argv: []string{"sh", "-c", os.Getenv("HM_SCRIPT")}}, nil
		}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	guard := os.Getenv("HM_GUARD")
	if guard == "subreaper" {
		if err := BecomeSubreaper(); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	if guard != "" {
		exe, _ := os.Executable()
		if err := Guard([]string{exe, GuardCommand}, os.Getenv("HM_RECORDS")); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	if err := m.Start("w", "worker", false); err != nil {
		fmt.Println(err)
		return 1
	}
	s, _ := m.Session("w")
	for {
		if mm := escapedRE.FindStringSubmatch(s.Text()); mm != nil {
			pid, _ := strconv.Atoi(mm[1])
			if p, ok := readProc(pid); ok && p.ppid != s.PID() {
				s.scanSessions() // as the monitor does while the agent works
				if guard == "subreaper" {
					if p.ppid != os.Getpid() {
						fmt.Printf("grandchild %d not adopted: parent %d\n", pid, p.ppid)
						return 1
					}
					scanAdopted(map[int]uint64{}) // as the subreaper's poll does
				}
				fmt.Printf("escaped %d %s\n", pid, m.SocketPath())
				select {}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkStopChildren measures a graceful stop of an agent with 50
// children (half of them in their own session, all ignoring SIGHUP), from
// Stop to Done, tracked by cgroup and by the mark scan.
func BenchmarkStopChildren(b *testing.B) {
	const n = 50
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 1000 & i=$((i+2)); done; echo started; exec cat`, n)
	run := func(b *testing.B) {
		b.StopTimer()
		for range b.N {
			s, err := Start(Spec{ID: "bench", Argv: []string{"sh", "-c", script}, StopTimeout: 10 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(s.Text(), "started") {
				if time.Now().After(deadline) {
					b.Fatal("agent did not start its children")
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.StartTimer()
			s.Stop()
			<-s.Done()
			b.StopTimer()
			s.Close()
		}
	}
	b.Run("cgroup", func(b *testing.B) {
		if why := cgroupsUnavailable(); why != "" {
			b.Skip(why)
		}
		run(b)
	})
	b.Run("mark", func(b *testing.B) {
		cgroupsOff.Store(true)
		defer cgroupsOff.Store(false)
		run(b)
	})
}
