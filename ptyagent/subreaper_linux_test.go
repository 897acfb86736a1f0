//go:build linux

package ptyagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// As a subreaper, Hivemind reaps the orphans it adopts (20 double-forked
// sleeps leave no zombie) and never an exit status its own children's
// starters wait for: 200 `exit 7` children and an agent's `exit 5` keep
// their codes while the reaper scans as fast as it can.
func TestSubreaperReapsAdoptedOnly(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=subreaper")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v\n%s", err, out)
	}
}

func helperSubreaper() int {
	if err := BecomeSubreaper(); err != nil {
		fmt.Println(err)
		return 1
	}
	stop := make(chan struct{})
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		told := map[int]uint64{}
		for {
			select {
			case <-stop:
				return
			default:
				scanAdopted(told) // far more often than the subreaper's own poll
			}
		}
	}()
	defer func() { close(stop); <-scanned }()
	for range 20 {
		if err := exec.Command("sh", "-c", "(sleep 0.05 &)").Run(); err != nil {
			fmt.Println("double fork:", err)
			return 1
		}
	}
	for i := range 200 {
		err := exec.Command("sh", "-c", "exit 7").Run()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 7 {
			fmt.Printf("child %d: %v, want exit status 7\n", i, err)
			return 1
		}
	}
	s, err := Start(Spec{ID: "exit5", Argv: []string{"sh", "-c", "exit 5"}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	<-s.Done()
	if c := s.ExitCode(); c != 5 {
		fmt.Printf("agent exit code %d, want 5\n", c)
		return 1
	}
	_ = s.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var zombies, adopted []int
		for _, pid := range ownChildren() {
			if p, ok := readProc(pid); ok && p.zombie {
				zombies = append(zombies, pid)
			} else if ok {
				adopted = append(adopted, pid)
			}
		}
		if len(zombies) == 0 && len(adopted) == 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Printf("children left: zombies %v, live %v\n", zombies, adopted)
			return 1
		}
	}
	fmt.Println("ok")
	return 0
}
