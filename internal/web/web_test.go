package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hivemind-dev/hivemind/internal/proto"
)

// fakeServer is the Hivemind server's side of the bridge: it welcomes a
// hello, sends a pane, and hands over what the page sent.
type fakeServer struct {
	hellos chan proto.Msg
	got    chan proto.Msg
}

func newFake() *fakeServer {
	return &fakeServer{hellos: make(chan proto.Msg, 16), got: make(chan proto.Msg, 64)}
}

func (f *fakeServer) dial() (net.Conn, error) {
	c, srv := net.Pipe()
	go func() {
		pc := proto.NewConn(srv)
		defer pc.Close()
		m, err := pc.Recv()
		if err != nil {
			return
		}
		f.hellos <- m
		_ = pc.Send(proto.Msg{T: proto.TWelcome, Info: &proto.Info{Title: "calc", TaskID: "t1", Project: "/home/u/calc", Root: "/home/u/calc/.hivemind",
			Socket: "/home/u/calc/.hivemind/server.sock", PID: 42, FPS: 30}})
		_ = pc.Send(proto.Msg{T: proto.TPanes, Panes: []proto.PaneID{{Agent: "lead", Gen: 1}}})
		_ = pc.Send(proto.Msg{T: proto.TPane, Pane: &proto.Pane{Agent: "lead", Gen: 1, N: 1, Set: []proto.Row{{I: 0, S: "\x1b[31mhello\x1b[m"}}}})
		for {
			m, err := pc.Recv()
			if err != nil {
				return
			}
			f.got <- m
		}
	}()
	return c, nil
}

func start(t *testing.T, f *fakeServer) *Server {
	t.Helper()
	s, err := Start(Options{Listen: "127.0.0.1:0", Dial: f.dial, Binary: "test", File: filepath.Join(t.TempDir(), "web.json")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(b)
}

// The page and its files need the token: none or a wrong one is refused;
// the right one becomes a cookie and leaves the URL.
func TestTokenRequired(t *testing.T) {
	s := start(t, newFake())
	c := noRedirect(nil)
	for _, u := range []string{s.Base(), s.Base() + "?token=nope", s.Base() + "?token=" + s.token[:63], s.Base() + "static/app.js", s.Base() + "static/app.js?token=x"} {
		if resp, body := get(t, c, u, ""); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "WebSocket") {
			t.Errorf("GET %s: %d, want 401", u, resp.StatusCode)
		}
	}
	jar, _ := cookiejar.New(nil)
	c = noRedirect(jar)
	resp, _ := get(t, c, s.URL(), "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("GET with the token: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v, want one HttpOnly SameSite=Strict", ck)
	}
	for _, u := range []string{s.Base(), s.Base() + "static/app.js", s.Base() + "static/app.css"} {
		if resp, body := get(t, c, u, ""); resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s with the cookie: %d, want 200", u, resp.StatusCode)
		}
	}
}

// A Host header of another name (DNS rebinding) is refused even with the
// token; loopback names are served.
func TestForeignHostRefused(t *testing.T) {
	s := start(t, newFake())
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(s.Base(), "/"), "http://"))
	c := noRedirect(nil)
	for _, h := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.nip.io:" + port, "10.0.0.1:" + port} {
		if resp, _ := get(t, c, s.URL(), h); resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d, want 421", h, resp.StatusCode)
		}
	}
	for _, h := range []string{"localhost:" + port, "127.0.0.1:" + port, "localhost:9999"} { // ssh -L may change the port
		if resp, _ := get(t, c, s.URL(), h); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("Host %s: %d, want 303", h, resp.StatusCode)
		}
	}
}

func wsURL(s *Server) string { return "ws" + strings.TrimPrefix(s.Base(), "http") + "ws" }

// pageOn starts a web server whose server connections dial takes, and
// opens a page's websocket on it (both closed when the test ends).
func pageOn(t *testing.T, dial func() (net.Conn, error)) *websocket.Conn {
	t.Helper()
	s, err := Start(Options{Listen: "127.0.0.1:0", Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, _, err := dialWS(s, strings.TrimSuffix(s.Base(), "/"), s.token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

func dialWS(s *Server, origin, cookie string) (*websocket.Conn, int, error) {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if cookie != "" {
		h.Set("Cookie", s.cookie+"="+cookie)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, wsURL(s), &websocket.DialOptions{HTTPHeader: h})
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	return c, code, err
}

func readMsg(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, p, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A WebSocket needs the token and the page's own Origin.
func TestWebSocketRefused(t *testing.T) {
	f := newFake()
	s := start(t, f)
	origin := strings.TrimSuffix(s.Base(), "/")
	for _, tc := range []struct {
		name, origin, token string
		code                int
	}{
		{"no token", origin, "", http.StatusUnauthorized},
		{"wrong token", origin, strings.Repeat("0", 64), http.StatusUnauthorized},
		{"cross-origin", "http://evil.example", s.token, http.StatusForbidden},
		{"cross-origin same host other port", "http://127.0.0.1:1", s.token, http.StatusForbidden},
		{"no origin", "", s.token, http.StatusForbidden},
	} {
		c, code, err := dialWS(s, tc.origin, tc.token)
		if err == nil {
			_ = c.CloseNow()
			t.Errorf("%s: the WebSocket opened", tc.name)
		} else if code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
	}
	select {
	case h := <-f.hellos:
		t.Fatalf("a refused WebSocket reached the server: %+v", h)
	default:
	}
	c, _, err := dialWS(s, origin, s.token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if h := <-f.hellos; h.ReadOnly || h.Kind != proto.KindUI {
		t.Fatalf("hello %+v, want a UI client that acts", h)
	}
	hello := readMsg(t, c)
	if hello["t"] != "hello" || hello["ro"] == true {
		t.Fatalf("first message %v", hello)
	}
	raw, _ := json.Marshal(hello)
	for _, secret := range []string{"/home/u/calc/.hivemind", "server.sock", "42"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the page was told %q: %s", secret, raw)
		}
	}
	// The pane's row diff reaches the page as the server sent it.
	for {
		m := readMsg(t, c)
		if m["t"] == "pane" {
			if p := m["pane"].(map[string]any); p["agent"] != "lead" {
				t.Fatalf("pane %v", p)
			}
			break
		}
	}
	// An action goes through; a command the page may not send does not.
	for _, m := range []proto.Msg{{T: proto.TCmd, Cmd: proto.CmdStop}, {T: proto.TResize, Agent: "lead", Cols: 1, Rows: 1}, {T: proto.TCmd, Cmd: proto.CmdPause}} {
		b, _ := json.Marshal(m)
		if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-f.got; got.T != proto.TCmd || got.Cmd != proto.CmdPause {
		t.Fatalf("the server got %+v first, want the pause (stop and resize are not the page's)", got)
	}
}

// The watchers' token watches: the server is told the client is
// read-only, and its keys and commands stop at the bridge.
func TestReadOnlyCannotAct(t *testing.T) {
	f := newFake()
	s := start(t, f)
	c, _, err := dialWS(s, strings.TrimSuffix(s.Base(), "/"), s.roTok)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if h := <-f.hellos; !h.ReadOnly {
		t.Fatalf("hello %+v, want read-only", h)
	}
	if m := readMsg(t, c); m["ro"] != true {
		t.Fatalf("hello to the page %v, want ro", m)
	}
	for _, m := range []proto.Msg{{T: proto.TCmd, Cmd: proto.CmdPause}, {T: proto.TCmd, Cmd: proto.CmdPlan, Approve: true}, {T: proto.TInput, Agent: "lead", Data: []byte("rm -rf /\r")},
		{T: proto.TView, View: []proto.Want{{Agent: "lead"}}}} {
		b, _ := json.Marshal(m)
		if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-f.got; got.T != proto.TView {
		t.Fatalf("the server got %+v from a watcher, want only its view", got)
	}
	for n := 0; n < 3; {
		if m := readMsg(t, c); m["t"] == "notice" && strings.Contains(m["text"].(string), "read-only") {
			n++
		}
	}
}

// Bad tokens are rate-limited: past the limit even the right token waits.
func TestBadTokensLimited(t *testing.T) {
	s := start(t, newFake())
	c := noRedirect(nil)
	for i := 0; i < maxFails; i++ {
		if resp, _ := get(t, c, s.Base()+"?token=bad", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d", i, resp.StatusCode)
		}
	}
	if resp, _ := get(t, c, s.URL(), ""); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after %d bad tokens: %d, want 429", maxFails, resp.StatusCode)
	}
	s.lim.mu.Lock()
	s.lim.now = func() time.Time { return time.Now().Add(2 * failWindow) }
	s.lim.mu.Unlock()
	if resp, _ := get(t, c, s.URL(), ""); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a window later: %d, want 303", resp.StatusCode)
	}
}

// A listen address that is not loopback needs Remote; the tokens' file is
// the user's alone and goes with the server.
func TestListenAndFile(t *testing.T) {
	f := newFake()
	if _, err := Start(Options{Listen: "0.0.0.0:0", Dial: f.dial}); err == nil || !strings.Contains(err.Error(), "ssh -L") {
		t.Fatalf("0.0.0.0 without Remote: %v, want a refusal naming ssh -L", err)
	}
	file := filepath.Join(t.TempDir(), "web.json")
	s, err := Start(Options{Listen: "127.0.0.1:0", Dial: f.dial, File: file})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("web.json: %v %v, want mode 0600", fi, err)
	}
	var wf File
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &wf); err != nil || wf.URL != s.URL() || wf.ReadOnlyURL != s.ReadOnlyURL() {
		t.Fatalf("web.json %s (%v)", b, err)
	}
	if u, _ := url.Parse(wf.URL); len(u.Query().Get("token")) != 2*tokenBytes {
		t.Fatalf("token of %d hex digits", len(u.Query().Get("token")))
	}
	s.Close()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("web.json after Close: %v", err)
	}
}

// A page that stops reading is dropped: the bridge stops taking the
// server's messages only for pageWriteTime, then hangs up on both, so the
// server's writer (which drops a client that does not read) is never held
// longer.
func TestStalledPageDropped(t *testing.T) {
	defer func(d time.Duration) { pageWriteTime = d }(pageWriteTime)
	pageWriteTime = 300 * time.Millisecond
	flooded := make(chan error, 1)
	dial := func() (net.Conn, error) {
		c, srv := net.Pipe()
		go func() {
			pc := proto.NewConn(srv)
			defer pc.Close()
			if _, err := pc.Recv(); err != nil {
				return
			}
			_ = pc.Send(proto.Msg{T: proto.TWelcome, Info: &proto.Info{Title: "flood"}})
			row := strings.Repeat("x", 64<<10)
			for i := 0; ; i++ {
				if err := pc.Send(proto.Msg{T: proto.TPane, Pane: &proto.Pane{Agent: "lead", Gen: 1, N: 1, Set: []proto.Row{{S: row}}}}); err != nil {
					flooded <- err
					return
				}
			}
		}()
		return c, nil
	}
	pageOn(t, dial) // never read: the page stalls
	select {
	case <-flooded: // the bridge hung up on the server
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge kept the server waiting on a page that does not read")
	}
}
