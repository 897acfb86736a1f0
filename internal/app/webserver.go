package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"

	"github.com/hivemind-dev/hivemind/internal/web"
)

// webFileName is the web client's URLs and tokens in the workspace (mode
// 0600; removed when the server stops).
const webFileName = "web.json"

// startWeb serves the web client (once; again it only says where) and
// returns its URL with the token that acts.
func (s *server) startWeb() (string, error) {
	s.webMu.Lock()
	defer s.webMu.Unlock()
	if s.web == nil {
		w, err := web.Start(web.Options{Listen: s.a.cfg.WebListen, Remote: s.a.opts.WebRemote, Dial: s.dialSelf,
			Binary: s.binary, File: filepath.Join(s.paths.root, webFileName)})
		if err != nil {
			return "", err
		}
		s.web = w
		// The log says where, not the tokens (clients see notices; web.json has them).
		fmt.Fprintf(os.Stdout, "web client at %s (its tokens: %s)\n", w.Base(), filepath.Join(s.paths.root, webFileName))
	}
	return s.web.URL(), nil
}

// webBase is the web client's address without a token, "" if none.
func (s *server) webBase() string {
	s.webMu.Lock()
	defer s.webMu.Unlock()
	if s.web == nil {
		return ""
	}
	return s.web.Base()
}

func (s *server) stopWeb() {
	s.webMu.Lock()
	defer s.webMu.Unlock()
	if s.web != nil {
		s.web.Close()
		s.web = nil
	}
}

// dialSelf is a connection to this server in memory: each page of the
// web client is a client of its own.
func (s *server) dialSelf() (net.Conn, error) {
	c, srv := net.Pipe()
	go s.handle(srv)
	return c, nil
}

// WebFile reads the web client's URLs and tokens of the server of the
// workspace at root.
func WebFile(root string) (web.File, error) {
	var f web.File
	b, err := os.ReadFile(filepath.Join(root, webFileName))
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(b, &f)
}

// ServeWeb asks the running server of the project (o's, or project as
// attach takes it) to serve the web client and returns its URLs; an
// error IsNoServer when none runs.
func ServeWeb(o Options, project, binary string) (web.File, error) {
	sock, err := findServer(o, project)
	if err != nil {
		return web.File{}, err
	}
	c, info, err := dialServer(sock, proto.KindUI, binary, false)
	if err != nil {
		return web.File{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(replyTimeout))
	if err := c.Send(proto.Msg{T: proto.TCmd, Cmd: proto.CmdWeb, ID: 1}); err != nil {
		return web.File{}, err
	}
	for {
		m, err := c.Recv()
		if err != nil {
			return web.File{}, fmt.Errorf("the server did not answer: %w", err)
		}
		switch {
		case m.T == proto.TNotice && m.Level == "error":
			return web.File{}, errors.New(m.Text) // a server that does not know the command
		case m.T == proto.TCmd && m.Cmd == proto.CmdReply && m.ID == 1:
			if m.Err != "" {
				return web.File{}, errors.New(m.Err)
			}
			f, err := WebFile(info.Root)
			if err != nil || f.URL != m.Text {
				f = web.File{URL: m.Text} // the server's word
			}
			return f, nil
		}
	}
}

// IsNoServer reports whether err says no server runs.
func IsNoServer(err error) bool { return errors.Is(err, errNoServer) }
