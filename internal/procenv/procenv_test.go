//go:build linux

package procenv

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// A process is found by an environment entry while it runs and not after
// it exited; its recorded start time tells it from a reused pid.
func TestProcsWithEnv(t *testing.T) {
	kv := "HIVEMIND_PROCENV_TEST=" + time.Now().Format("150405.000000000")
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), kv)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	start := Start(pid)
	if start == 0 || !Alive(pid, start) || Alive(pid, start+1) {
		t.Errorf("start %d, alive %v, alive with another start %v", start, Alive(pid, start), Alive(pid, start+1))
	}
	if got := ProcsWithEnv(os.Getuid(), kv); !slices.Equal(got, []int{pid}) {
		t.Errorf("found %v, want [%d]", got, pid)
	}
	if got := ProcsWithEnv(os.Getuid(), kv+"x"); len(got) != 0 {
		t.Errorf("a longer entry matched %v", got)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := ProcsWithEnv(os.Getuid(), kv); len(got) != 0 || Alive(pid, start) {
		t.Errorf("after exit: found %v, alive %v", got, Alive(pid, start))
	}
}
