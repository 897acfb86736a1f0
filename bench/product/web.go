package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

// The web paths: the team in a Hivemind server with the web client
// (hivemind --server --web), watched by headless Chromium with every pane
// on screen ("web"), by a WebSocket client that asks for every pane and
// then never reads ("webstall": a browser that stopped reading must not
// slow the agents), or by nobody ("server", the baseline of webstall).
// The consumer measured is the server; the browser's CPU is not counted.

// webPaths are measured when Chromium is installed.
var webPaths = []string{"server", "web", "webstall"}

// chromium is Debian's chromium ("" when not installed).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

var webURLRe = regexp.MustCompile(`(?m)^web client: (http://\S+)$`)

// webServer starts the trial's team in a server with the web client and
// returns it with the page's URL (with its token).
func (t *trial) webServer() (*served, *url.URL, error) {
	project, home, err := t.projectHome()
	if err != nil {
		return nil, nil, err
	}
	_, workers := hivemindIDs(t.n)
	srv, err := t.b.startServer(project, home, t.floodCmd(""), workers, "--web")
	if err != nil {
		return nil, nil, err
	}
	m := webURLRe.FindStringSubmatch(srv.out)
	var u *url.URL
	if m != nil {
		u, err = url.Parse(m[1])
	}
	if m == nil || err != nil {
		srv.stop()
		return nil, nil, fmt.Errorf("hivemind --server --web printed no URL (%v):\n%s", err, srv.out)
	}
	return srv, u, nil
}

// hivemindServed is the server with the web client on and no client.
func (t *trial) hivemindServed() (int, func(), error) {
	srv, _, err := t.webServer()
	if err != nil {
		return 0, nil, err
	}
	return srv.pid, srv.stop, nil
}

// hivemindWeb opens the page in headless Chromium, tall enough for every
// pane to be on screen (the page asks the server only for those), and
// returns once every agent's pane shows rows.
func (t *trial) hivemindWeb() (int, func(), error) {
	srv, u, err := t.webServer()
	if err != nil {
		return 0, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium()),
		chromedp.UserDataDir(filepath.Join(t.dir, "chromium")),
		chromedp.WindowSize(1600, 900*((t.n+1)/2)+400), // two panes a row
	}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update",
		"disable-sync", "no-first-run", "no-default-browser-check"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	stop := func() { cancel(); cancelA(); srv.stop() }
	// The browser lives as long as the context of its first action: ctx,
	// cancelled if it does not start in time.
	timer := time.AfterFunc(2*time.Minute, cancel)
	if err := chromedp.Do(ctx); err != nil || !timer.Stop() {
		stop()
		return 0, nil, fmt.Errorf("chromium did not start: %v", err)
	}
	ids, _ := json.Marshal(t.ids)
	shown := fmt.Sprintf(`%s.every(id => { const p = document.querySelector('.pane[data-agent="' + id + '"]'); if (!p) return false;
		const r = p.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0 && p.querySelectorAll('.row').length > 0; })`, ids)
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	err = chromedp.Do(wctx, chromedp.Navigate(u.String()), chromedp.Poll[chromedp.Void](shown,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(2*time.Minute)))
	if err != nil {
		stop()
		return 0, nil, fmt.Errorf("the page never showed every pane: %w", err)
	}
	return srv.pid, stop, nil
}

// hivemindWebStalled connects a WebSocket to the page's server, asks for
// every agent's pane, and never reads.
func (t *trial) hivemindWebStalled() (int, func(), error) {
	srv, u, err := t.webServer()
	if err != nil {
		return 0, nil, err
	}
	ws := *u
	ws.Scheme, ws.Path = "ws", "/ws"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ws.String(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + u.Host}}})
	if err != nil {
		srv.stop()
		return 0, nil, fmt.Errorf("web socket: %w", err)
	}
	type want struct {
		Agent string `json:"agent"`
	}
	view := struct {
		T    string `json:"t"`
		View []want `json:"view"`
	}{T: "view"}
	for _, id := range t.ids {
		view.View = append(view.View, want{id})
	}
	b, _ := json.Marshal(view)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		_ = c.CloseNow()
		srv.stop()
		return 0, nil, fmt.Errorf("web socket: %w", err)
	}
	return srv.pid, func() { _ = c.CloseNow(); srv.stop() }, nil
}

// projectHome makes the trial's project and HOME directories.
func (t *trial) projectHome() (string, string, error) {
	project, home := filepath.Join(t.dir, "project"), filepath.Join(t.dir, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
	}
	return project, home, nil
}
