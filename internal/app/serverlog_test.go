package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chattyLogEnv makes this test binary a chatty server writing to the log
// it names (TestServerLogBounded).
const chattyLogEnv = "HIVEMIND_TEST_CHATTY_LOG"

// A chatty server's log stays bounded while it runs: its own lines and a
// child's output (notify_command) through serverLog rotate server.log into
// server.log.1 past the bound; nothing of the newest lines is lost, and
// nothing but the two files is left.
func TestServerLogBounded(t *testing.T) {
	const max = 64 << 10
	if path := os.Getenv(chattyLogEnv); path != "" {
		l := &serverLog{path: path, max: max}
		for i := range 20000 {
			fmt.Fprintf(l, "line %d of a chatty server\n", i)
		}
		cmd := exec.Command("sh", "-c", "head -c 2000000 /dev/zero | tr '\\0' x")
		cmd.Stdout, cmd.Stderr = l, l
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(l, "\nthe last line")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, serverLogName)
	log, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerLogBounded$", "-test.count=1")
	cmd.Env = append(os.Environ(), chattyLogEnv+"="+path)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	_ = log.Close()
	if err != nil {
		t.Fatalf("the chatty server: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 {
		t.Errorf("files %v, want server.log and server.log.1", files)
	}
	slack := int64(64 << 10) // one write (a pipe's read) past the bound
	for _, f := range []string{path, path + ".1"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > max+slack {
			t.Errorf("%s: %d bytes, want at most %d", filepath.Base(f), fi.Size(), max+slack)
		}
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte("the last line\n")) || !strings.HasSuffix(string(b), "PASS\n") {
		t.Errorf("server.log does not end with the newest lines:\n%s", clipTail(b))
	}
}

func clipTail(b []byte) []byte {
	if len(b) > 500 {
		return b[len(b)-500:]
	}
	return b
}
