//go:build linux

package ptyagent

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// An agent started from a goroutine that locks its OS thread and returns
// without unlocking (so Go ends the thread) keeps running: its Pdeathsig
// fires when the thread that forked it exits, and agents are forked on the
// spawn thread, which lives as long as the process.
func TestAgentOutlivesTheThreadThatStartedIt(t *testing.T) {
	type started struct {
		s   *Session
		err error
		tid int
	}
	ch := make(chan started)
	var st started
	for st.tid == 0 {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if unix.Gettid() == os.Getpid() {
				// Go never ends the main thread: try on another.
				runtime.UnlockOSThread()
				ch <- started{}
				return
			}
			s, err := Start(Spec{ID: "thread", Argv: []string{"cat"}, StopTimeout: 5 * time.Second})
			ch <- started{s, err, unix.Gettid()}
		}()
		st = <-ch
	}
	if st.err != nil {
		t.Fatal(st.err)
	}
	s := st.s
	defer s.Close()
	waitFor(t, 10*time.Second, "the starting thread to end", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", st.tid))
		return os.IsNotExist(err)
	})
	// A round trip through the agent after the thread is gone: a SIGKILL
	// sent at the thread's exit has done its work by then.
	if _, err := s.Write([]byte("ping\r")); err != nil {
		t.Fatalf("write after the starting thread ended: %v", err)
	}
	waitFor(t, 10*time.Second, "the agent to echo", func() bool {
		select {
		case <-s.Done():
			t.Fatalf("the agent died with the thread that started it: %s", s.HealthDetail())
		default:
		}
		return strings.Count(s.Text(), "ping") >= 2
	})
	if !alive(s.PID()) {
		t.Fatalf("agent %d gone", s.PID())
	}
}
