package app

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// fakeServer answers each client of the workspace at root with answer
// (after reading its hello) and hangs up.
func fakeServer(t *testing.T, root string, answer func(c *proto.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(root, serverSockName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			c := proto.NewConn(nc)
			if _, err := c.Recv(); err == nil {
				answer(c)
			}
			_ = c.Close()
		}
	}()
}

// liveWorkspace is a workspace (short: a unix socket path) with a
// registry of its own.
func liveWorkspace(t *testing.T) (string, Options) {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	root, err := os.MkdirTemp("", "hmrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	return root, Options{Workspace: root}
}

// The reading commands ask the project's server; a server of another
// protocol version is refused with its own message (not answered from
// the workspace as if none ran); no server, or one that hangs up after
// its welcome (it stopped), leaves the answer to the workspace.
func TestReadLiveFromTheServer(t *testing.T) {
	root, o := liveWorkspace(t)
	if live, err := ReadLive(o, "test"); live != nil || err != nil {
		t.Fatalf("no server: %v %v, want nil, nil", live, err)
	}

	refusal := "this Hivemind server runs protocol 7 (hivemind v9.9); the client (hivemind test) speaks protocol 1"
	fakeServer(t, root, func(c *proto.Conn) { _ = c.Send(proto.Msg{T: proto.TError, Err: refusal}) })
	if _, err := ReadLive(o, "test"); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("a server of another version: %v, want its refusal", err)
	}
	if _, ok, err := LiveDiff(o, "test", "t1", ""); ok || err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("diff from a server of another version: %v %v, want its refusal", ok, err)
	}
}

func TestReadLiveServerStopping(t *testing.T) {
	root, o := liveWorkspace(t)
	info := &proto.Info{Version: proto.Version, TaskID: "t1", PID: 1}
	fakeServer(t, root, func(c *proto.Conn) { _ = c.Send(proto.Msg{T: proto.TWelcome, Info: info}) })
	if live, err := ReadLive(o, "test"); live != nil || err != nil {
		t.Fatalf("a server that hung up after its welcome: %v %v, want nil, nil", live, err)
	}
	if _, ok, err := LiveDiff(o, "test", "t1", "worker_1"); ok || err != nil {
		t.Fatalf("diff: %v %v, want not ok, no error", ok, err)
	}
}

// A running server's snapshot is what status reads; its diff reply what
// diff prints, unless it was cut (then the workspace's whole diff).
func TestReadLiveAnswers(t *testing.T) {
	root, o := liveWorkspace(t)
	info := &proto.Info{Version: proto.Version, TaskID: "t1", PID: 1}
	var reply atomic.Pointer[string]
	reply.Store(ptr("diff --git a/x b/x\n"))
	fakeServer(t, root, func(c *proto.Conn) {
		_ = c.Send(proto.Msg{T: proto.TWelcome, Info: info})
		_ = c.Send(proto.Msg{T: proto.TSnapshot, Snapshot: &proto.Snapshot{State: vocab.State{TaskID: "t1", Phase: vocab.PhaseExecuting}}})
		if m, err := c.Recv(); err == nil && m.Cmd == proto.CmdDiff {
			_ = c.Send(proto.Msg{T: proto.TCmd, Cmd: proto.CmdReply, ID: m.ID, Text: *reply.Load()})
		}
	})
	live, err := ReadLive(o, "test")
	if err != nil || live == nil || live.Snapshot.State.Phase != vocab.PhaseExecuting || live.Info.TaskID != "t1" {
		t.Fatalf("ReadLive: %+v %v", live, err)
	}
	if d, ok, err := LiveDiff(o, "test", "t1", "worker_1"); !ok || err != nil || d != *reply.Load() {
		t.Fatalf("diff: %q %v %v, want the server's", d, ok, err)
	}
	if _, ok, err := LiveDiff(o, "test", "another task", "worker_1"); ok || err != nil {
		t.Fatalf("diff of a task the server does not run: %v %v, want the workspace's", ok, err)
	}
	reply.Store(ptr("diff --git a/x b/x" + diffCut))
	if _, ok, err := LiveDiff(o, "test", "t1", ""); ok || err != nil {
		t.Fatalf("a cut diff: %v %v, want the workspace's", ok, err)
	}
}
