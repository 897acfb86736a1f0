package sshtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The harness's server takes key logins as the remote user, in that
// user's home, with the restricted PATH of an Env alias, and its clean-up
// finds processes the sessions left behind.
func TestServer(t *testing.T) {
	s := Start(t, Options{})
	if got := strings.TrimSpace(s.Run("id -u; echo $HOME")); got != strconv.Itoa(s.UID)+"\n"+s.Home {
		t.Errorf("id/home: %q", got)
	}
	nogit := s.AddAlias("nogit", AliasOptions{Env: []string{"PATH=" + s.PathWithout("git")}})
	out, err := s.SSH(t.Context(), nogit, "command -v git || echo missing; command -v ls").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "missing\n") {
		t.Errorf("restricted PATH: %v %q", err, out)
	}
	// A process that leaves its session and ignores SIGHUP outlives the
	// connection: Procs finds it.
	s.Run("setsid sh -c 'trap \"\" HUP; exec sleep 300' </dev/null >/dev/null 2>&1 &")
	if len(s.Procs()) == 0 {
		t.Fatal("the detached sleep is not found")
	}
	bad := s.AddAlias("badkey", AliasOptions{UnknownKey: true})
	if out, err := s.SSH(t.Context(), bad, "true").CombinedOutput(); err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("unknown key: %v %q", err, out)
	}
	start := time.Now()
	s.stop()
	if left := s.Procs(); len(left) > 0 {
		t.Errorf("left after stop: %v", left)
	}
	t.Logf("stop took %v", time.Since(start))
}

// Down drops the connections at once and refuses new ones; Up serves
// again on the same port.
func TestServerDownUp(t *testing.T) {
	s := Start(t, Options{})
	port := s.Port
	direct := s.AddAlias("direct", AliasOptions{NoControlMaster: true})
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	said := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	live := s.SSH(t.Context(), direct, "echo started; exec sleep 60")
	live.Stdout, live.Stderr = out, out
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(said(), "started"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session never started: %q", said())
		}
	}
	start := time.Now()
	s.Down()
	err = live.Wait()
	if took := time.Since(start); live.ProcessState.ExitCode() != 255 || took > 10*time.Second {
		t.Errorf("the live session ended after %v with %v (%q), want ssh's 255 at once", took, err, said())
	}
	o, err := s.SSH(t.Context(), direct, "true").CombinedOutput()
	if err == nil || !strings.Contains(string(o), "Connection refused") {
		t.Errorf("down: %v %q", err, o)
	}
	s.Up()
	if s.Port != port {
		t.Errorf("up on port %d, want %d", s.Port, port)
	}
	if got := strings.TrimSpace(s.Run("echo up")); got != "up" {
		t.Errorf("up: %q", got)
	}
}
