package app

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// A read-only client (attach --read-only, the web client's watchers)
// cannot have the web client served nor learn its acting token: its
// CmdWeb is refused like every command, with no reply.
func TestServerRefusesReadOnlyWeb(t *testing.T) {
	sock := testServer(t, fakePanes{"lead": {s: screen.New(screen.Options{Cols: 20, Rows: 4})}})
	c, _, err := dialServer(sock, proto.KindUI, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(proto.Msg{T: proto.TCmd, Cmd: proto.CmdWeb, ID: 7}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	for {
		m, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.T == proto.TCmd && m.ID == 7 {
			t.Fatalf("a read-only client got a reply to its CmdWeb: %+v", m)
		}
		if m.T == proto.TNotice && strings.Contains(m.Text, "read-only client") {
			return
		}
	}
}
