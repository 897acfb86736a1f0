package app

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// liveTimeout bounds a reading command's talk with the server (its
// snapshot, a diff).
const liveTimeout = 30 * time.Second

// Live is what the project's running server says of its task: the state
// and the newest events its clients see.
type Live struct {
	Info     proto.Info
	Snapshot proto.Snapshot
}

// ReadLive asks the running server of o's workspace for its task's state
// and newest events (hivemind status and events); nil and no error when
// no server runs there (the workspace answers). A server of another
// protocol version is refused with its message.
func ReadLive(o Options, binary string) (*Live, error) {
	c, info, err := dialLive(o, binary)
	if c == nil || err != nil {
		return nil, err
	}
	defer c.Close()
	for {
		m, err := c.Recv()
		if err != nil {
			return nil, liveFailed(info, err) // nil: it stopped
		}
		switch {
		case m.T == proto.TSnapshot && m.Snapshot != nil:
			return &Live{Info: info, Snapshot: *m.Snapshot}, nil
		case m.T == proto.TBye:
			return nil, nil // it stopped: the workspace has its last word
		}
	}
}

// LiveDiff asks the running server of o's workspace for a worker's diff
// (agent) or the task's (agent ""), as its clients see it. ok is false
// when no server runs task taskID there, when the server could not make
// the diff, or when its answer was cut to fit a message: the caller then
// reads the diff (or its error) from the workspace.
func LiveDiff(o Options, binary, taskID, agent string) (diff string, ok bool, err error) {
	c, info, err := dialLive(o, binary)
	if c == nil || err != nil || info.TaskID != taskID {
		if c != nil {
			_ = c.Close()
		}
		return "", false, err
	}
	defer c.Close()
	const id = 1
	if err := c.Send(proto.Msg{T: proto.TCmd, Cmd: proto.CmdDiff, Agent: vocab.AgentID(agent), ID: id}); err != nil {
		return "", false, liveFailed(info, err)
	}
	for {
		m, err := c.Recv()
		if err != nil {
			return "", false, liveFailed(info, err) // nil: it stopped
		}
		switch {
		case m.T == proto.TCmd && m.Cmd == proto.CmdReply && m.ID == id:
			if m.Err != "" || strings.HasSuffix(m.Text, diffCut) {
				return "", false, nil
			}
			return m.Text, true, nil
		case m.T == proto.TBye:
			return "", false, nil
		}
	}
}

// dialLive connects a reading command to the running server of o's
// workspace: nil and no error when none runs (or it stopped as this
// client came).
func dialLive(o Options, binary string) (*proto.Conn, proto.Info, error) {
	sock, err := findServer(o, "")
	if err != nil {
		return nil, proto.Info{}, nil // no server can run there: the workspace answers
	}
	c, info, err := dialServer(sock, proto.KindWait, binary, true)
	if errors.Is(err, errNoServer) || errors.Is(err, errServerGone) {
		return nil, proto.Info{}, nil
	}
	if err != nil {
		return nil, proto.Info{}, fmt.Errorf("the project's Hivemind server: %w", err)
	}
	_ = c.SetDeadline(time.Now().Add(liveTimeout))
	return c, info, nil
}

// liveFailed says why a server that answered the hello did not answer
// what was asked: nil when it hung up (it stopped, killed or not: the
// workspace has its last word).
func liveFailed(info proto.Info, err error) error {
	if errors.Is(helloFailed("", err), errServerGone) {
		return nil
	}
	return fmt.Errorf("the Hivemind server of %s (pid %d) did not answer: %w; hivemind ls shows it", info.Project, info.PID, err)
}
