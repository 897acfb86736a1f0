package app

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/ptyagent"
	"github.com/hivemind-dev/hivemind/vocab"
)

// A worker's queued host operations run one after another in the order
// queued; another worker's do not wait for them.
func TestHostQueue(t *testing.T) {
	var q hostQueue
	var mu sync.Mutex
	var order []int
	release := make(chan struct{})
	for i := range 5 {
		q.do("worker_1", func() {
			if i == 0 {
				<-release // the first job holds the rest of worker_1's
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
	}
	other := make(chan struct{})
	q.do("worker_2", func() { close(other) })
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("worker_2's job waited for worker_1's")
	}
	close(release)
	q.wait()
	if !reflect.DeepEqual(order, []int{0, 1, 2, 3, 4}) {
		t.Errorf("order %v", order)
	}
}

// The marks of a task's process records (<agent>-<mark>.json); other
// files are ignored.
func TestRecordedMarks(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"worker_1-123-0123456789abcdef.json", "lead-9-fedcba9876543210.json", "worker_2-1-xyz.json",
		"junk.json", "worker_3-5-0123456789abcdef.json.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := recordedMarks(dir)
	want := []string{"9-fedcba9876543210", "123-0123456789abcdef"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	if recordedMarks(filepath.Join(dir, "none")) != nil {
		t.Error("marks of a missing dir")
	}
}

// A remote worker's ssh failure (exit 255) reaches the engine with its
// host's one-line diagnosis as the detail; any other exit, and a local
// worker's, pass as they are, at once.
func TestRemoteExitDiagnosed(t *testing.T) {
	if _, err := os.Stat("/usr/bin/ssh"); err != nil {
		t.Skip("no ssh client")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close() // closed: connections are refused
	rw := &remoteWork{ctx: context.Background(), log: func(vocab.RecordType, string, map[string]any) {}, workers: map[string]*remoteHost{
		"worker_1": {h: remote.Host{Name: "box", Dest: "127.0.0.1", SSHArgs: []string{"-F", "/dev/null", "-p", strconv.Itoa(port)}}}}}
	w := &wiring{held: held{git: &gitWire{remote: rw}}}
	got := make(chan ptyagent.Event, 4)
	events := w.remoteEvents(func(ev ptyagent.Event) { got <- ev })
	exit := func(agent vocab.AgentID, code int) ptyagent.Event {
		return ptyagent.Event{Agent: agent, Kind: ptyagent.EventHealth, Health: vocab.HealthExited, ExitCode: code,
			Detail: "exit code " + strconv.Itoa(code)}
	}
	for _, ev := range []ptyagent.Event{exit("worker_1", 1), exit("worker_2", 255), {Agent: "worker_1", Kind: ptyagent.EventHealth, Health: vocab.HealthBusy}} {
		events(ev)
		select {
		case g := <-got:
			if !reflect.DeepEqual(g, ev) {
				t.Errorf("passed %+v as %+v", ev, g)
			}
		default:
			t.Errorf("%+v not passed at once", ev)
		}
	}
	events(exit("worker_1", 255))
	select {
	case g := <-got:
		want := "exit code 255; box: ssh: connect to host 127.0.0.1 port " + strconv.Itoa(port) + ": Connection refused — is sshd running there"
		if !strings.HasPrefix(g.Detail, want) {
			t.Errorf("detail %q, want it to start with %q", g.Detail, want)
		}
	case <-time.After(diagnoseTimeout + 5*time.Second):
		t.Fatal("the diagnosed exit never came")
	}
	rw.bg.Wait()
}

// A remote worker's line waits for the copy of its assignment queued
// before it; a copy that failed fails the injection (an InjectionResult
// to the runner) instead of typing a line that names missing files.
func TestRemoteInjectAfterPush(t *testing.T) {
	sent := make(chan engine.Event, 4)
	rw := &remoteWork{ctx: context.Background(), log: func(vocab.RecordType, string, map[string]any) {},
		send: func(ev engine.Event) { sent <- ev }, pushErr: map[string]error{},
		workers: map[string]*remoteHost{"worker_1": {h: remote.Host{Name: "box"}}}}
	release := make(chan struct{})
	rw.pushAssignment("worker_1", func(context.Context) error {
		<-release
		return errors.New("box: ssh: connect to host x port 22: Connection refused")
	})
	if err := (remoteAgents{rw: rw}).Inject("worker_1", 7, "[HIVEMIND] read it"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sent:
		t.Fatalf("the injection's outcome came before its assignment was copied: %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case ev := <-sent:
		ir, ok := ev.(engine.InjectionResult)
		if !ok || ir.Agent != "worker_1" || ir.Seq != 7 || ir.Delivered || !strings.Contains(ir.Detail, "assignment not on the host: box: ssh: connect to host x port 22: Connection refused") {
			t.Errorf("sent %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no injection result")
	}
	rw.queue.wait()
}
