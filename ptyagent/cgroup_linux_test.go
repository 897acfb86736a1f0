//go:build linux

package ptyagent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// When the kernel refuses to start the agent in its cgroup, the session
// runs without one (mark scan) and later sessions no longer try.
func TestCgroupCloneRefusedFallsBack(t *testing.T) {
	if why := cgroupsUnavailable(); why != "" {
		t.Skipf("cgroups v2 unavailable here: %s", why)
	}
	defer func() {
		sessionCgroup = newCgroup
		cgParent.mu.Lock()
		cgParent.tried, cgParent.why = false, ""
		cgParent.mu.Unlock()
	}()
	// A directory that is no cgroup: cloning into it fails.
	sessionCgroup = func(string) *cgroup {
		dir := filepath.Join(t.TempDir(), "notacgroup")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return &cgroup{dir: dir, fd: fd}
	}
	s, err := Start(Spec{ID: "fb", Argv: []string{"sh", "-c", "echo started; exec cat"}})
	if err != nil {
		t.Fatalf("start without the cgroup: %v", err)
	}
	defer s.Close()
	if s.cg != nil {
		t.Error("session kept the refused cgroup")
	}
	waitFor(t, 10*time.Second, "output", func() bool { return strings.Contains(s.Text(), "started") })
	if why := cgroupsUnavailable(); !strings.Contains(why, "starting a process in a cgroup failed") {
		t.Errorf("cgroups still in use after a refusal: %q", why)
	}
	s.Stop()
	<-s.Done()
}
