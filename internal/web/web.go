// Package web serves the web client of a Hivemind server: a page
// embedded in the binary (plain HTML, JS and CSS) and a WebSocket that
// bridges the page to the server's protocol (internal/proto), as one more
// client of the server: the page gets the same row diffs of the agents'
// screens and the same state as the full-screen UI, and sends the same
// commands.
//
// Security: every request needs a token (a random 256-bit one that acts,
// another that only watches), given once in the URL and kept in a cookie
// after; the Host header must be a loopback address, localhost or the
// listen address (no DNS rebinding); a WebSocket's Origin must be the
// page's own; bad tokens are rate-limited; the page is sent no secret
// (it gets screens and engine state only).
package web

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/workspace"
)

//go:embed static
var static embed.FS

// Options say where and for whom to serve.
type Options struct {
	// Listen is host:port (port 0: a free one).
	Listen string
	// Remote allows a Listen address that is not loopback (the flag
	// --web-remote).
	Remote bool
	// Dial opens a new connection to the server (a proto client before
	// its hello).
	Dial func() (net.Conn, error)
	// Binary is this hivemind's version (the hello).
	Binary string
	// File, when set, is where the URLs and tokens are written (mode
	// 0600).
	File string
}

// File is what Options.File holds.
type File struct {
	URL           string `json:"url"`             // with the token that acts
	ReadOnlyURL   string `json:"read_only_url"`   // with the token that watches
	Token         string `json:"token"`           // acts
	ReadOnlyToken string `json:"read_only_token"` // watches
}

// Server is a running web client.
type Server struct {
	o      Options
	ln     net.Listener
	http   *http.Server
	base   string // http://host:port/
	token  string
	roTok  string
	cookie string // the cookie's name (per server: several may run on one host)
	host   string // the listen host
	lim    *limiter

	mu      sync.Mutex
	bridges map[*bridge]struct{}
}

// tokenBytes is the size of a token's randomness.
const tokenBytes = 32

func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Loopback reports whether host (of host:port) is a loopback address or
// localhost.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckListen says whether the web client may listen on addr (host:port):
// a loopback address, or any with remote (--web-remote); it returns the
// host.
func CheckListen(addr string, remote bool) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("web_listen %q: %v", addr, err)
	}
	if !Loopback(host) && !remote {
		return "", fmt.Errorf("web_listen %q is not a loopback address: the page and its token would cross the network in clear text; "+
			"keep 127.0.0.1 and view it from elsewhere through ssh -L, or serve it behind TLS and give --web-remote", addr)
	}
	return host, nil
}

// RemoteWarning is what is said of a web client listening on addr, not
// loopback.
func RemoteWarning(addr string) string {
	return "hivemind: warning: the web client listens on " + addr + " (not loopback) in plain HTTP: put TLS in front of it or use an SSH tunnel (ssh -L) instead"
}

// Start listens and serves until Close.
func Start(o Options) (*Server, error) {
	host, err := CheckListen(o.Listen, o.Remote)
	if err != nil {
		return nil, err
	}
	if o.Dial == nil {
		return nil, errors.New("web: no server to bridge to")
	}
	s := &Server{o: o, host: host, lim: newLimiter(), bridges: map[*bridge]struct{}{}}
	if s.token, err = newToken(); err != nil {
		return nil, err
	}
	if s.roTok, err = newToken(); err != nil {
		return nil, err
	}
	id, err := newToken()
	if err != nil {
		return nil, err
	}
	s.cookie = "hivemind_" + id[:12]
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("web client: %w", err)
	}
	s.ln = ln
	s.base = "http://" + ln.Addr().String() + "/"
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	fileServer := http.FileServerFS(files)
	mux.HandleFunc("GET /{$}", s.page(fileServer))
	mux.Handle("GET /static/", http.StripPrefix("/static/", s.guard(fileServer)))
	mux.HandleFunc("GET /ws", s.websocket)
	s.http = &http.Server{Handler: s.checkHost(mux), ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	go func() { _ = s.http.Serve(ln) }()
	if o.File != "" {
		b, _ := json.MarshalIndent(File{URL: s.URL(), ReadOnlyURL: s.ReadOnlyURL(), Token: s.token, ReadOnlyToken: s.roTok}, "", "  ")
		if err := workspace.WriteFileAtomic(o.File, append(b, '\n'), 0o600); err != nil {
			s.Close()
			return nil, err
		}
	}
	if !Loopback(host) {
		fmt.Println(RemoteWarning(o.Listen))
	}
	return s, nil
}

// Base is the URL without a token.
func (s *Server) Base() string { return s.base }

// URL is the page's URL with the token that acts.
func (s *Server) URL() string { return s.base + "?token=" + s.token }

// ReadOnlyURL is the page's URL with the token that watches.
func (s *Server) ReadOnlyURL() string { return s.base + "?token=" + s.roTok }

// Close stops serving and removes the file of tokens.
func (s *Server) Close() {
	_ = s.http.Close()
	s.mu.Lock()
	for b := range s.bridges {
		b.close()
	}
	s.mu.Unlock()
	if s.o.File != "" {
		_ = os.Remove(s.o.File)
	}
}

// role is what a token allows.
type role int

const (
	noRole role = iota
	watcher
	actor
)

// roleOf compares tok with both tokens in constant time.
func (s *Server) roleOf(tok string) role {
	a := subtle.ConstantTimeCompare([]byte(tok), []byte(s.token))
	r := subtle.ConstantTimeCompare([]byte(tok), []byte(s.roTok))
	switch {
	case a == 1:
		return actor
	case r == 1:
		return watcher
	}
	return noRole
}

// authorize says what r may do: its token (the URL's, else the cookie's),
// or an answer written to w (401, or 429 once a client gave too many bad
// tokens).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (role, string, bool) {
	ip := clientIP(r)
	if !s.lim.allow(ip) {
		http.Error(w, "too many bad tokens: wait a minute", http.StatusTooManyRequests)
		return noRole, "", false
	}
	tok := r.URL.Query().Get("token")
	if tok == "" {
		if c, err := r.Cookie(s.cookie); err == nil {
			tok = c.Value
		}
	}
	ro := s.roleOf(tok)
	if ro == noRole {
		s.lim.fail(ip)
		http.Error(w, "this Hivemind page needs its token: open the URL hivemind web or hivemind ls prints", http.StatusUnauthorized)
		return noRole, "", false
	}
	return ro, tok, true
}

// checkHost refuses a Host header that is not loopback, localhost or the
// listen address: a page of another name that resolves here (DNS
// rebinding) gets nothing.
func (s *Server) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !Loopback(host) && !strings.EqualFold(host, s.host) {
			http.Error(w, "unknown host "+r.Host+": open this page by address (127.0.0.1 or localhost)", http.StatusMisdirectedRequest)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.ServeHTTP(w, r)
	})
}

// page serves the page: a token in the URL becomes a cookie (HttpOnly,
// SameSite=Strict) and the URL loses it (history, screenshots).
func (s *Server) page(files http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, tok, ok := s.authorize(w, r)
		if !ok {
			return
		}
		if r.URL.Query().Has("token") {
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		files.ServeHTTP(w, r)
	}
}

// guard serves h to requests with a token.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := s.authorize(w, r); ok {
			h.ServeHTTP(w, r)
		}
	})
}

// sameOrigin reports whether a WebSocket's Origin is the page's own
// (http://<Host>); a request without one is refused too (browsers always
// send it).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	u, err := url.Parse(o)
	return err == nil && o != "" && u.Scheme == "http" && strings.EqualFold(u.Host, r.Host)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Rate limit of bad tokens: at most maxFails per window per address;
// more are answered 429 without looking at the token.
const (
	maxFails   = 10
	failWindow = time.Minute
	maxTracked = 4096
)

type limiter struct {
	mu    sync.Mutex
	fails map[string][]time.Time
	now   func() time.Time
}

func newLimiter() *limiter { return &limiter{fails: map[string][]time.Time{}, now: time.Now} }

func (l *limiter) recent(ip string) []time.Time {
	cut := l.now().Add(-failWindow)
	ts := l.fails[ip]
	i := 0
	for i < len(ts) && ts[i].Before(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, ip)
	} else {
		l.fails[ip] = ts
	}
	return ts
}

func (l *limiter) allow(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(ip)) < maxFails
}

func (l *limiter) fail(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fails) >= maxTracked {
		for k := range l.fails {
			l.recent(k)
		}
		if len(l.fails) >= maxTracked {
			return // bounded: a flood of addresses is not remembered
		}
	}
	l.fails[ip] = append(l.recent(ip), l.now())
}
