package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Bounds of the bridge.
const (
	// maxPageMsg bounds a message of the page (keys typed or pasted).
	maxPageMsg  = 1 << 20
	maxInput    = 64 << 10 // bytes of one input message
	maxWants    = 64       // panes one view may ask for
	maxFeedback = 64 << 10
	helloTime   = 10 * time.Second
	// unfocusedFPS is how often the panes of a view other than its focus
	// take new content (the full-screen client's rate of its unfocused
	// panes, tui.Options.UnfocusedFPS: min(fps, 10)).
	unfocusedFPS = 10
)

// pageWriteTime: a page that takes longer to take a message is dropped
// (the server drops this bridge the same way when it stalls: nothing
// waits on a browser but the browser's own connection). A variable for
// tests.
var pageWriteTime = 10 * time.Second

// pageCmds are the engine commands the page may send (stop and diff are
// the terminal client's).
var pageCmds = []string{proto.CmdPause, proto.CmdResume, proto.CmdCancel, proto.CmdRetry, proto.CmdAbandon, proto.CmdPauseAgent, proto.CmdPlan}

// pageInfo is what the page is told of the run: names and numbers, no
// paths, sockets or process ids.
type pageInfo struct {
	Title      string                   `json:"title"`
	TaskID     string                   `json:"task_id"`
	Project    string                   `json:"project"`
	Branch     string                   `json:"branch,omitempty"`
	FPS        int                      `json:"fps"`
	Version    string                   `json:"version"`
	Team       map[vocab.Role]string    `json:"team,omitempty"`
	WorkerTeam map[vocab.AgentID]string `json:"worker_team,omitempty"`
}

// pageHello is the bridge's first message to the page.
type pageHello struct {
	T        string   `json:"t"` // "hello"
	ReadOnly bool     `json:"ro"`
	Info     pageInfo `json:"info"`
}

// pageIn is a message of the page: one of the protocol's, and with a
// view, the pane of it the page focuses.
type pageIn struct {
	proto.Msg
	// Focus is the pane the user looks at closely (types into, or a
	// phone's one pane): it takes new content at the server's fps, the
	// view's other panes at unfocusedFPS (the server holds their new
	// content until due and drops none). "" : none is.
	Focus vocab.AgentID `json:"focus,omitempty"`
}

// bridge is one page's connection to the server.
type bridge struct {
	ws   *websocket.Conn
	c    *proto.Conn
	fps  int // the server's (Info.FPS)
	once sync.Once
}

func (b *bridge) close() {
	b.once.Do(func() {
		_ = b.c.Close()
		_ = b.ws.CloseNow()
	})
}

// websocket bridges one page to the server as a UI client of its own
// (read-only with the watchers' token).
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	ro, _, ok := s.authorize(w, r)
	if !ok {
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "cross-origin WebSocket refused", http.StatusForbidden)
		return
	}
	nc, err := s.o.Dial()
	if err != nil {
		http.Error(w, "the Hivemind server does not answer: "+err.Error(), http.StatusBadGateway)
		return
	}
	c := proto.NewConn(nc)
	_ = c.SetDeadline(time.Now().Add(helloTime))
	info, err := hello(c, s.o.Binary, ro == watcher)
	if err != nil {
		_ = c.Close()
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_ = c.SetDeadline(time.Time{})
	ws, err := websocket.Accept(w, r, nil) // its own origin check agrees with sameOrigin
	if err != nil {
		_ = c.Close()
		return
	}
	ws.SetReadLimit(maxPageMsg)
	b := &bridge{ws: ws, c: c, fps: info.FPS}
	s.mu.Lock()
	s.bridges[b] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.bridges, b)
		s.mu.Unlock()
		b.close()
	}()
	first, _ := json.Marshal(pageHello{T: "hello", ReadOnly: ro == watcher, Info: pageInfo{Title: info.Title, TaskID: info.TaskID,
		Project: filepath.Base(info.Project), Branch: info.Branch, FPS: info.FPS, Version: info.Binary, Team: info.Team, WorkerTeam: info.WorkerTeam}})
	if err := b.toPage(first); err != nil {
		return
	}
	go b.fromServer()
	b.fromPage(ro == watcher)
}

// hello says hello to the server as a UI client.
func hello(c *proto.Conn, binary string, readOnly bool) (proto.Info, error) {
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Binary: binary, Kind: proto.KindUI, ReadOnly: readOnly}); err != nil {
		return proto.Info{}, err
	}
	m, err := c.Recv()
	if err != nil {
		return proto.Info{}, err
	}
	if m.T != proto.TWelcome || m.Info == nil {
		return proto.Info{}, fmt.Errorf("the Hivemind server refused the web client: %s", m.Err)
	}
	return *m.Info, nil
}

func (b *bridge) toPage(p []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), pageWriteTime)
	defer cancel()
	return b.ws.Write(ctx, websocket.MessageText, p)
}

// fromServer takes the server's messages to the page; a bye loses its
// Info (paths), notices and reasons are put in the page's words
// (pageWords), everything else is the page's to show.
func (b *bridge) fromServer() {
	defer b.close()
	for {
		m, err := b.c.Recv()
		if err != nil {
			return
		}
		switch m.T {
		case proto.TPanes, proto.TSnapshot, proto.TNotice, proto.TPane, proto.TCmd:
		case proto.TBye:
			m.Info = nil
		default:
			continue
		}
		forPage(&m)
		p, err := json.Marshal(m)
		if err != nil {
			continue
		}
		if err := b.toPage(p); err != nil {
			return
		}
	}
}

// fromPage takes the page's messages to the server: only what the page
// may send, rebuilt field by field; a watcher's keys and commands are
// refused here (and by the server).
func (b *bridge) fromPage(readOnly bool) {
	for {
		_, p, err := b.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m pageIn
		if err := json.Unmarshal(p, &m); err != nil {
			b.notice("error", "the page sent a message that is not JSON")
			continue
		}
		out, why := pageMsg(m, readOnly, b.fps)
		if why != "" {
			b.notice("warn", why)
			continue
		}
		if err := b.c.Send(out); err != nil {
			return
		}
	}
}

// pageMsg is the message the server gets for the page's m (fps: the
// server's), or why none.
func pageMsg(in pageIn, readOnly bool, fps int) (proto.Msg, string) {
	m := in.Msg
	switch m.T {
	case proto.TView:
		if len(m.View) > maxWants {
			return proto.Msg{}, fmt.Sprintf("a view of %d panes (at most %d)", len(m.View), maxWants)
		}
		if in.Focus != "" && !slices.ContainsFunc(m.View, func(w proto.Want) bool { return w.Agent == in.Focus }) {
			return proto.Msg{}, "the view's focus is not one of its panes"
		}
		slow := unfocusedFPS
		if fps > 0 {
			slow = min(fps, unfocusedFPS)
		}
		view := make([]proto.Want, len(m.View))
		for i, w := range m.View {
			view[i] = proto.Want{Agent: w.Agent, Scroll: min(max(w.Scroll, 0), 1_000_000)}
			if w.Agent != in.Focus {
				view[i].FPS = slow
			}
		}
		return proto.Msg{T: proto.TView, View: view}, ""
	case proto.TInput, proto.TCmd:
	default:
		return proto.Msg{}, fmt.Sprintf("the page may not send %q", m.T)
	}
	if readOnly {
		return proto.Msg{}, "read-only: this page watches (open the URL with the other token to act)"
	}
	if m.T == proto.TInput {
		if len(m.Data) > maxInput {
			return proto.Msg{}, fmt.Sprintf("input of %d bytes (at most %d at once)", len(m.Data), maxInput)
		}
		return proto.Msg{T: proto.TInput, Agent: m.Agent, Data: m.Data}, ""
	}
	if !slices.Contains(pageCmds, m.Cmd) {
		return proto.Msg{}, fmt.Sprintf("the page may not send the command %q", m.Cmd)
	}
	if len(m.Feedback) > maxFeedback {
		return proto.Msg{}, fmt.Sprintf("feedback of %d bytes (at most %d)", len(m.Feedback), maxFeedback)
	}
	return proto.Msg{T: proto.TCmd, Cmd: m.Cmd, Agent: m.Agent, Approve: m.Approve, Feedback: m.Feedback, ID: m.ID}, ""
}

// notice tells the page something went wrong with what it sent.
func (b *bridge) notice(level, text string) {
	p, _ := json.Marshal(proto.Msg{T: proto.TNotice, Level: level, Text: text})
	_ = b.toPage(p)
}
