package proto

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// benchOutput is agent-like output: coloured lines of text, 4 KiB.
func benchOutput() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 4<<10; i++ {
		fmt.Fprintf(&b, "\x1b[32m●\x1b[m Read(src/file_%d.go) \x1b[2m⎿ Read %d lines\x1b[m the quick brown fox %d\r\n", i, i*7, i)
	}
	return []byte(b.String())
}

// BenchmarkEmulatorOnly is the server's emulator alone (what every pane
// costs with or without clients), per byte of agent output.
func BenchmarkEmulatorOnly(b *testing.B) {
	out := benchOutput()
	scr := screen.New(screen.Options{Cols: 120, Rows: 40})
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		_, _ = scr.Write(out)
		_ = scr.Lines(0)
	}
}

// BenchmarkPanePath is the emulator plus the whole way of a shown pane to
// a client, per byte of agent output: one update per 4 KiB (a client at
// full speed; the server sends at most fps a second), the row diff, JSON
// over a socket, the client's mirror.
func BenchmarkPanePath(b *testing.B) {
	out := benchOutput()
	scr := screen.New(screen.Options{Cols: 120, Rows: 40})
	term := &lockedScreen{s: scr}
	x, y := net.Pipe()
	srv, cli := NewConn(x), NewConn(y)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m Mirror
		for {
			msg, err := cli.Recv()
			if err != nil {
				return
			}
			m.Apply(*msg.Pane)
		}
	}()
	var snd Sender
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		_, _ = scr.Write(out)
		if p, ok := snd.Update("lead", term, 1, 0); ok {
			if err := srv.Send(Msg{T: TPane, Pane: &p}); err != nil {
				b.Fatal(err)
			}
		}
	}
	_ = srv.Close()
	<-done
}
