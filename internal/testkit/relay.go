package testkit

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemind-dev/hivemind/ptyagent/hookrelay"
)

// Relay listens where a hook relay would (a short path: unix socket paths
// are limited) and hands over every message a hook sends, acknowledging
// each one as Hivemind's relay does. stop closes it (as a Hivemind that
// went away); it is closed when the test ends in any case.
func Relay(t *testing.T) (sock string, got <-chan hookrelay.Message, stop func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hmr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock = filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	ch := make(chan hookrelay.Message, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				var m hookrelay.Message
				if json.Unmarshal(sc.Bytes(), &m) == nil {
					ch <- m
				}
				_, _ = c.Write([]byte(hookrelay.Ack))
			}
			_ = c.Close()
		}
	}()
	return sock, ch, func() { _ = ln.Close() }
}
