package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
)

// Where a project's server is found: its pid and log in the workspace, its
// socket there too unless the path is too long for a unix socket (then in
// the user's runtime directory, named after the workspace), and an entry
// in the runtime directory's registry that `hivemind ls` lists.
const (
	serverSockName = "server.sock"
	serverPIDName  = "server.pid"
	serverLogName  = "server.log"
	// maxSockPath is below the kernel's 108 bytes of sun_path.
	maxSockPath = 100
)

// serverPaths are the files of the server of one workspace.
type serverPaths struct {
	root, sock, pid, log, entry string
}

func pathsOf(root string) (serverPaths, error) {
	p := serverPaths{root: root, sock: filepath.Join(root, serverSockName),
		pid: filepath.Join(root, serverPIDName), log: filepath.Join(root, serverLogName)}
	run, err := runtimeDir()
	if err != nil {
		return p, err
	}
	sum := sha256.Sum256([]byte(root))
	key := hex.EncodeToString(sum[:8])
	if len(p.sock) > maxSockPath {
		p.sock = filepath.Join(run, key+".sock")
	}
	p.entry = filepath.Join(run, "servers", key+".json")
	return p, nil
}

// runtimeDir is the user's directory of server sockets and registry
// entries: $XDG_RUNTIME_DIR/hivemind, else <tmp>/hivemind-<uid>; mode
// 0700, and refused when another user owns it.
func runtimeDir() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("hivemind-%d", os.Getuid()))
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
		dir = filepath.Join(x, "hivemind")
	}
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o700); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (ok && int(st.Uid) != os.Getuid()) || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a private directory of this user (mode %v): remove it", dir, fi.Mode())
	}
	return dir, nil
}

// registryEntry is a running server as `hivemind ls` finds it.
type registryEntry struct {
	Root    string    `json:"root"`
	Project string    `json:"project"`
	Sock    string    `json:"sock"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// registered lists the registry's entries (unreadable ones are skipped).
func registered() ([]registryEntry, error) {
	run, err := runtimeDir()
	if err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(run, "servers", "*.json"))
	var out []registryEntry
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var e registryEntry
		if json.Unmarshal(b, &e) == nil && e.Sock != "" {
			out = append(out, e)
		}
	}
	return out, nil
}

// errNoServer says no server runs for a workspace.
var errNoServer = errors.New("no Hivemind server runs here")

// helloFailed says why the hello failed: errServerGone when the server
// closed the connection.
func helloFailed(sock string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w (%s: %v)", errServerGone, sock, err)
	}
	return fmt.Errorf("the server at %s did not answer: %w", sock, err)
}

// errServerGone says the server closed the connection during the hello:
// it was stopping (its listener closed with this client in its queue).
var errServerGone = errors.New("the server stopped while this client connected")

// dialServer connects to the server of the workspace at root and says
// hello as kind; it returns the connection and the server's Info. A
// server of another protocol version is refused with its error.
func dialServer(sock, kind, binary string, readOnly bool) (*proto.Conn, proto.Info, error) {
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, proto.Info{}, fmt.Errorf("%w (%s: %v)", errNoServer, sock, err)
	}
	c := proto.NewConn(nc)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Binary: binary, Kind: kind, ReadOnly: readOnly}); err != nil {
		_ = c.Close()
		return nil, proto.Info{}, helloFailed(sock, err)
	}
	m, err := c.Recv()
	if err != nil {
		_ = c.Close()
		return nil, proto.Info{}, helloFailed(sock, err)
	}
	_ = c.SetDeadline(time.Time{})
	if m.T == proto.TError {
		_ = c.Close()
		return nil, proto.Info{}, errors.New(m.Err)
	}
	if m.T != proto.TWelcome || m.Info == nil {
		_ = c.Close()
		return nil, proto.Info{}, fmt.Errorf("the server at %s answered %q, not a welcome", sock, m.T)
	}
	return c, *m.Info, nil
}
