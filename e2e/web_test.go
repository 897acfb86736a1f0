package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// requireChromium returns Debian's chromium, or skips the test without it
// (CI installs it: there, its absence fails).
func requireChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: CI must install it (.ci/run)")
	}
	t.Skip("chromium is not installed: the web client's browser tests need it (apt-get install chromium)")
	return ""
}

// browser starts a headless chromium with a fresh profile; the returned
// context drives its one tab. The browser is started here, on that
// context: chromedp ties it to the context of the first action, and the
// actions run with deadlines of their own (within).
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 1000),
	}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update",
		"disable-sync", "no-first-run", "no-default-browser-check"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// emulators follows the server's own screens of the agents as a
// read-only proto client: the truth the page must show.
type emulators struct {
	mu      sync.Mutex
	mirrors map[vocab.AgentID]*proto.Mirror
}

func watchServer(t *testing.T, sock string) *emulators {
	t.Helper()
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := proto.NewConn(nc)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Kind: proto.KindUI, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	e := &emulators{mirrors: map[vocab.AgentID]*proto.Mirror{}}
	go func() {
		for {
			m, err := c.Recv()
			if err != nil {
				return
			}
			switch m.T {
			case proto.TPanes:
				view := make([]proto.Want, len(m.Panes))
				for i, p := range m.Panes {
					view[i] = proto.Want{Agent: p.Agent}
				}
				_ = c.Send(proto.Msg{T: proto.TView, View: view})
			case proto.TPane:
				e.mu.Lock()
				mr := e.mirrors[m.Pane.Agent]
				if mr == nil {
					mr = &proto.Mirror{}
					e.mirrors[m.Pane.Agent] = mr
				}
				mr.Apply(*m.Pane)
				e.mu.Unlock()
			}
		}
	}()
	return e
}

// text is an agent's screen as text, rows right-trimmed.
func (e *emulators) text(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	mr := e.mirrors[vocab.AgentID(id)]
	if mr == nil {
		return ""
	}
	rows := make([]string, len(mr.Rows))
	for i, r := range mr.Rows {
		rows[i] = strings.TrimRight(ansi.Strip(r), " ")
	}
	return strings.Join(rows, "\n")
}

// pageText is an agent's pane on the page as text, rows right-trimmed.
func pageText(ctx context.Context, id string) (string, error) {
	return within(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`Array.from(document.querySelectorAll('.pane[data-agent=%q] .row')).map(r => r.textContent.replace(/ +$/, '')).join('\n')`, id)))
}

// within runs one browser action with a deadline (a browser that hangs
// fails the test instead of holding it).
func within[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	c, cancel := context.WithTimeout(ctx, tuiWait)
	defer cancel()
	return chromedp.Run(c, a)
}

func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	t.Logf("%s", what)
	c, cancel := context.WithTimeout(ctx, 3*tuiWait)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// evalBool polls a JS condition on the page until it holds.
func waitPage(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	t.Logf("waiting for the page to show %s", what)
	if !pollUntil(tuiWait, func() bool {
		ok, err := within(ctx, chromedp.Evaluate[bool](cond))
		return err == nil && ok
	}) {
		body, err := within(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("the page never showed %s (%s); it shows (%v):\n%s", what, cond, err, body)
	}
}

// The web client in a real browser, on a sim team served with --web: the
// page shows every agent's screen as the server's emulator has it, pause
// stops what is typed to the agents until resume, keys typed into a
// focused agent reach it, the plan is approved at the human gate from the
// page; nothing the page receives holds the API key or a hook token, and
// its notices name the page's buttons, not the TUI's keys; the phone
// layout shows one agent. Screenshots go to the test's artifacts
// (HIVEMIND_WEB_SHOTS, else a temp dir).
func TestWebClientInBrowser(t *testing.T) {
	parallel(t)
	realCLISlot(t) // Chromium keeps a core busy, as the agent CLIs do
	chrome := requireChromium(t)
	const apiKey = "sk-ant-web-test-secret-0123456789"
	env := append(serverEnv(t), "HIVEMIND_SIM_ARGS=--pace 30ms", "ANTHROPIC_API_KEY="+apiKey, "HOME="+t.TempDir())
	project := t.TempDir()
	out, url := startWeb(t, project, env, "--agent", "sim", "--workers", "2", "--plan-approval", "human", "build a tiny calculator")
	infos := servers(t, project, env)
	if len(infos) != 1 || infos[0].Web != url {
		t.Fatalf("hivemind ls --json: %+v, want the web URL %s", infos, url)
	}
	if ls, _ := hmIn(t, project, env, tuiWait, "ls"); !strings.Contains(ls, url) {
		t.Errorf("hivemind ls does not show the URL:\n%s", ls)
	}
	if again, code := hmIn(t, project, env, tuiWait, "web"); code != 0 || !strings.Contains(again, url) {
		t.Errorf("hivemind web with the server running: exit %d\n%s\nwant the same URL", code, again)
	}
	emu := watchServer(t, infos[0].Socket)

	ctx := browser(t, chrome)
	var fmu sync.Mutex
	var frames, views []string
	if err := chromedp.Listen(ctx, func(ev any) {
		fmu.Lock()
		defer fmu.Unlock()
		switch f := ev.(type) {
		case *network.EventWebSocketFrameReceived:
			if f.Response != nil {
				frames = append(frames, string(f.Response.PayloadData))
			}
		case *network.EventWebSocketFrameSent:
			if f.Response != nil && strings.HasPrefix(string(f.Response.PayloadData), `{"t":"view"`) {
				views = append(views, string(f.Response.PayloadData))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "open the page", chromedp.Navigate(url))
	if loc, _ := within(ctx, chromedp.Evaluate[string](`location.href`)); strings.Contains(loc, "token") {
		t.Errorf("the page's address still holds the token: %s", loc)
	}
	waitPage(t, ctx, "four panes, the lead's with its assignment", `document.querySelectorAll('.pane').length === 4 &&
		document.querySelector('.pane[data-agent="lead"]').textContent.includes('[HIVEMIND]')`)
	dir := taskDir(t, project)
	// The plan gate: the page shows it; the panes are the server's.
	waitPage(t, ctx, "the plan gate", `!document.getElementById('plan').hidden && document.getElementById('plantext').textContent.length > 0`)
	if st := readState(t, dir); st.Phase != vocab.PhasePlanApproval {
		t.Fatalf("the page shows the plan gate in %s", st.Phase)
	}
	for _, id := range simAgents {
		var want, got string
		if !pollUntil(tuiWait, func() bool {
			want = emu.text(id)
			got, _ = pageText(ctx, id)
			return got == want && strings.TrimSpace(want) != ""
		}) {
			t.Errorf("pane %s differs from the server's emulator:\npage:\n%s\nserver:\n%s", id, got, want)
		}
	}
	// The secrets, read while the agents run: the hook token is in their
	// environment.
	secrets := map[string]string{"ANTHROPIC_API_KEY": apiKey}
	for id, a := range readState(t, dir).Agents {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", a.PID)); err == nil {
			for _, kv := range strings.Split(string(b), "\x00") {
				if v, ok := strings.CutPrefix(kv, "HIVEMIND_HOOK_TOKEN="); ok && v != "" {
					secrets["hook token of "+string(id)] = v
				}
			}
		}
	}
	if len(secrets) < 1+len(simAgents) {
		t.Fatalf("secrets %d, want the API key and each agent's hook token", len(secrets))
	}
	shots := os.Getenv("HIVEMIND_WEB_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	shot := func(name string) {
		t.Helper()
		png, err := within(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(shots, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	shot("web-desktop.png")
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	waitPage(t, ctx, "one pane on the phone", `Array.from(document.querySelectorAll('.pane')).filter(p => p.offsetParent !== null).length === 1 &&
		getComputedStyle(document.getElementById('agents')).display === 'flex'`)
	shot("web-phone.png")
	run(t, ctx, "switch to the reviewer", chromedp.Click(`#agents button:nth-child(2)`))
	waitPage(t, ctx, "another pane on the phone", `Array.from(document.querySelectorAll('.pane')).filter(p => p.offsetParent !== null).length === 1 &&
		document.querySelector('.pane.shown').dataset.agent !== 'lead'`)
	// The page asks the server for the panes it shows, the one it
	// focuses at the full rate (the bridge slows the others): on the
	// phone, the one pane it shows.
	lastView := func(what string, ok func(view []proto.Want, focus vocab.AgentID) bool) {
		t.Helper()
		var last string
		waitFor(t, tuiWait, what, func() bool {
			fmu.Lock()
			defer fmu.Unlock()
			if len(views) == 0 {
				return false
			}
			last = views[len(views)-1]
			var m struct {
				View  []proto.Want
				Focus vocab.AgentID
			}
			return json.Unmarshal([]byte(last), &m) == nil && ok(m.View, m.Focus)
		})
		t.Logf("the page's view: %s", last)
	}
	shown, _ := within(ctx, chromedp.Evaluate[string](`document.querySelector('.pane.shown').dataset.agent`))
	lastView("the phone's one pane asked, focused", func(v []proto.Want, f vocab.AgentID) bool {
		return len(v) == 1 && string(v[0].Agent) == shown && string(f) == shown
	})
	run(t, ctx, "desktop size", chromedp.EmulateViewport(1600, 1000))
	lastView("the desktop's panes asked, none focused", func(v []proto.Want, f vocab.AgentID) bool { return len(v) > 1 && f == "" })
	// A page hidden (another tab) asks for no pane; shown again, for
	// them again.
	hide := func(hidden bool) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`Object.defineProperty(document, "hidden", {value: %v, configurable: true}),
			document.dispatchEvent(new Event("visibilitychange")), undefined`, hidden))
	}
	run(t, ctx, "hide the page", hide(true))
	lastView("no pane asked while hidden", func(v []proto.Want, f vocab.AgentID) bool { return len(v) == 0 })
	run(t, ctx, "show the page", hide(false))
	lastView("the panes asked again", func(v []proto.Want, f vocab.AgentID) bool { return len(v) > 1 })

	// Type into worker_1: the keys reach its terminal (echoed) and the
	// agent answers the line.
	run(t, ctx, "focus worker_1", chromedp.Click(`.pane[data-agent="worker_1"] .ptitle button:last-child`))
	lastView("worker_1 focused", func(v []proto.Want, f vocab.AgentID) bool { return f == "worker_1" })
	const typed = "hello from the web page"
	run(t, ctx, "type", chromedp.SendKeys("#keys", typed), chromedp.KeyEvent("\r"))
	waitFor(t, tuiWait, "worker_1's answer to the typed line", func() bool {
		txt := emu.text("worker_1")
		return strings.Contains(txt, typed) && strings.Contains(txt, "I follow Hivemind")
	})
	for _, id := range []string{"lead", "reviewer", "worker_2"} {
		if strings.Contains(emu.text(id), typed) {
			t.Errorf("the typed text reached %s too", id)
		}
	}
	// Feedback at the gate from the page: the Lead revises, the plan
	// comes back to the gate.
	const feedback = "please add a command line"
	run(t, ctx, "send feedback", chromedp.SendKeys("#feedback", feedback), chromedp.Click("#sendfb"))
	waitFor(t, 3*tuiWait, "the revised plan back at the gate", func() bool {
		return countRecords(readEventLog(dir), "plan_awaiting_human", nil) == 2 && readState(t, dir).Phase == vocab.PhasePlanApproval
	})
	if fb, _ := filepath.Glob(filepath.Join(dir, vocab.ReviewsDir, "*human-feedback.md")); len(fb) != 1 {
		t.Errorf("human feedback files %v, want one", fb)
	} else if b, _ := os.ReadFile(fb[0]); !strings.Contains(string(b), feedback) {
		t.Errorf("%s does not hold the feedback:\n%s", fb[0], b)
	}
	waitPage(t, ctx, "the gate again, the feedback box empty", `!document.getElementById('plan').hidden && document.getElementById('feedback').value === ''`)

	// Approve the plan from the page, then pause the build at once:
	// nothing is typed to the agents until resume.
	run(t, ctx, "approve", chromedp.Click("#approve"))
	waitPage(t, ctx, "the build", `document.getElementById('phase').textContent === 'the Workers build'`)
	// Pause one agent from its pane during the build, and resume it.
	run(t, ctx, "pause worker_2", chromedp.Click(`.pane[data-agent="worker_2"] .ppause`))
	waitFor(t, tuiWait, "worker_2 paused", func() bool { return readState(t, dir).Agents["worker_2"].Paused })
	waitPage(t, ctx, "worker_2's resume button", `document.querySelector('.pane[data-agent="worker_2"] .ppause').textContent === 'resume'`)
	run(t, ctx, "resume worker_2", chromedp.Click(`.pane[data-agent="worker_2"] .ppause`))
	waitFor(t, tuiWait, "worker_2 resumed", func() bool { return !readState(t, dir).Agents["worker_2"].Paused })

	run(t, ctx, "click pause", chromedp.Click("#pause"))
	waitFor(t, tuiWait, "the paused state", func() bool { return readState(t, dir).Phase == vocab.PhasePaused })
	waitPage(t, ctx, "the paused header", `document.getElementById('phase').textContent === 'paused' && document.getElementById('pause').textContent === 'Resume'`)
	recs := readEventLog(dir)
	paused := recordIndex(recs, 0, "paused")
	if paused < 0 {
		t.Fatal("no paused record")
	}
	if recordIndex(recs, 0, "plan_decision") < 0 {
		t.Error("no plan_decision record after approving on the page")
	}
	waitFor(t, tuiWait, "an event deferred while paused", func() bool {
		return recordIndex(readEventLog(dir), paused, "event_deferred") >= 0
	})
	if i := recordIndex(readEventLog(dir), paused, "assignment_sent"); i >= 0 {
		t.Errorf("an assignment was sent to %s while paused", readEventLog(dir)[i].Agent)
	}
	run(t, ctx, "click resume", chromedp.Click("#pause"))
	waitFor(t, tuiWait, "resumed_from_pause and a new assignment", func() bool {
		recs := readEventLog(dir)
		r := recordIndex(recs, paused, "resumed_from_pause")
		return r >= 0 && recordIndex(recs, r, "assignment_sent") >= 0
	})
	waitFor(t, 3*tuiWait, "the task to complete", func() bool { return readState(t, dir).Phase == vocab.PhaseComplete })
	waitPage(t, ctx, "complete", `document.getElementById('phase').textContent === 'complete'`)

	// The watch-only URL: no buttons, and a command sent anyway is
	// refused.
	ro := regexp.MustCompile(`(?m)^watch only: (http://\S+)$`).FindStringSubmatch(out)
	if ro == nil {
		t.Fatalf("hivemind --web printed no watch-only URL:\n%s", out)
	}
	run(t, ctx, "open the watch-only page", chromedp.Navigate(ro[1]))
	waitPage(t, ctx, "the watch-only page", `document.body.classList.contains('ro') && document.getElementById('phase').textContent === 'complete' &&
		document.getElementById('pause').offsetParent === null && document.querySelectorAll('.pane').length > 0`)
	run(t, ctx, "a command from the watcher", chromedp.Evaluate[chromedp.Void](`st.ws.send(JSON.stringify({t: "cmd", cmd: "retry"})), undefined`))
	waitPage(t, ctx, "the refusal", `document.getElementById('notice').textContent.includes('read-only')`)

	// Nothing secret reached the page.
	fmu.Lock()
	seen := append([]string(nil), frames...)
	fmu.Unlock()
	all, n := strings.Join(seen, "\n"), len(seen)
	if n < 10 {
		t.Fatalf("only %d WebSocket frames seen", n)
	}
	for name, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("the page received the %s", name)
		}
	}
	// The notices in the page's words: the plan gate's names its
	// buttons, none the TUI's keys (the revised plan came back to the
	// gate with the page open).
	gate := false
	for _, f := range seen {
		var m struct{ T, Text string }
		if json.Unmarshal([]byte(f), &m) != nil || m.T != "notice" {
			continue
		}
		gate = gate || strings.Contains(m.Text, "approve it (Approve and build) or send feedback (Send feedback)")
		if tuiKey.MatchString(m.Text) {
			t.Errorf("a notice names the TUI's key: %q", m.Text)
		}
	}
	if !gate {
		t.Error("no notice of the plan gate names the page's buttons")
	}
	for _, f := range []string{"/", "/static/app.js", "/static/app.css"} {
		body, err := within(ctx, chromedp.Evaluate[string](`fetch(`+strconv.Quote(f)+`).then(r => r.text())`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("%s holds the %s", f, name)
			}
		}
	}
	t.Logf("%d WebSocket frames, %d secrets checked", n, len(secrets))
}

// syscallKill asks a server that is still up to stop.
func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// stopServers stops the project's servers and waits for them to be gone
// (before the test's directories are removed under them).
func stopServers(t *testing.T, project string, env []string) {
	for _, in := range servers(t, project, env) {
		if in.Project != project {
			continue
		}
		_ = syscallKill(in.PID)
		pollUntil(tuiWait, func() bool { return syscall.Kill(in.PID, 0) != nil })
	}
}

// hivemind web with no team running and nothing to resume starts nothing
// and says how to start a team with the web client.
func TestWebNoTeam(t *testing.T) {
	parallel(t)
	project := t.TempDir()
	env := append(serverEnv(t), "HOME="+t.TempDir())
	out, code := hmIn(t, project, env, tuiWait, "web")
	if code == 0 || !strings.Contains(out, "nothing to resume") || !strings.Contains(out, `hivemind --web "task"`) {
		t.Fatalf("hivemind web with no team: exit %d\n%s", code, out)
	}
	if len(servers(t, project, env)) != 0 {
		t.Fatal("a server runs")
	}
}

// A team's server started without the page serves it once hivemind web
// asks (the same URL after, in hivemind ls too); config web = true
// serves it from the start.
func TestWebOnRunningServer(t *testing.T) {
	parallel(t)
	env := append(serverEnv(t), "HIVEMIND_SIM_ARGS=--pace 5ms", "HOME="+t.TempDir())
	start := func(config string) (string, string) {
		project := t.TempDir()
		if config != "" {
			if err := os.MkdirAll(filepath.Join(project, ".hivemind"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".hivemind", "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, code := hmIn(t, project, env, tuiWait, "--server", "--agent", "sim", "--plan-approval", "human", "build a tiny calculator")
		if code != 0 {
			t.Fatalf("hivemind --server: exit %d\n%s", code, out)
		}
		t.Cleanup(func() { stopServers(t, project, env) })
		return project, out
	}
	get := func(u string) int {
		c := &http.Client{Timeout: tuiWait, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	project, out := start("")
	if webURLs.MatchString(out) {
		t.Fatalf("a server without web printed a URL:\n%s", out)
	}
	if in := servers(t, project, env); len(in) != 1 || in[0].Web != "" {
		t.Fatalf("hivemind ls --json before hivemind web: %+v", in)
	}
	out, code := hmIn(t, project, env, tuiWait, "web")
	m := webURLs.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("hivemind web: exit %d\n%s", code, out)
	}
	if c := get(m[1]); c != http.StatusSeeOther {
		t.Fatalf("GET the page with its token: %d, want 303 (the cookie, then the page)", c)
	}
	if c := get(strings.Split(m[1], "?")[0]); c != http.StatusUnauthorized {
		t.Fatalf("GET the page without its token: %d, want 401", c)
	}
	if in := servers(t, project, env); len(in) != 1 || in[0].Web != m[1] {
		t.Fatalf("hivemind ls --json after hivemind web: %+v, want %s", in, m[1])
	}
	if again, _ := hmIn(t, project, env, tuiWait, "web"); !strings.Contains(again, m[1]) {
		t.Fatalf("hivemind web again gave another URL:\n%s\nwant %s", again, m[1])
	}

	// Stopped (the task stays resumable), hivemind web resumes it in a
	// server with the page.
	first := project
	for _, in := range servers(t, first, env) {
		_ = syscallKill(in.PID)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, first, env)) == 0 }) {
		t.Fatal("the server did not stop on SIGTERM")
	}
	out, code = hmIn(t, first, env, tuiWait, "web")
	m = webURLs.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("hivemind web with the task stopped: exit %d\n%s", code, out)
	}
	if in := servers(t, first, env); len(in) != 1 || in[0].Web != m[1] {
		t.Fatalf("hivemind ls --json after hivemind web resumed: %+v", in)
	}

	project, out = start("web = true\n")
	m = webURLs.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("web = true: no URL printed\n%s", out)
	}
	if c := get(m[1]); c != http.StatusSeeOther {
		t.Fatalf("web = true: GET the page: %d", c)
	}
	found := false
	for _, in := range servers(t, project, env) {
		found = found || (in.Project == project && in.Web == m[1])
	}
	if !found {
		t.Fatalf("web = true: hivemind ls --json does not show %s for %s", m[1], project)
	}
}

// tuiKey matches a key hint of the full-screen UI ("(a)", "R in the TUI").
var tuiKey = regexp.MustCompile(` \([A-Za-z]\)|\b[A-Za-z] in the TUI`)

// webURLs is the URL hivemind --web or hivemind web printed (with the
// token that acts).
var webURLs = regexp.MustCompile(`(?m)^web client: (http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64})$`)

// startWeb runs hivemind --web args in project and returns its output and
// the page's URL; the server is stopped when t ends.
func startWeb(t *testing.T, project string, env []string, args ...string) (string, string) {
	t.Helper()
	out, code := hmIn(t, project, env, 3*tuiWait, append([]string{"--web"}, args...)...)
	if code != 0 {
		t.Fatalf("hivemind --web: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { stopServers(t, project, env) })
	u := webURLs.FindStringSubmatch(out)
	if u == nil {
		t.Fatalf("hivemind --web printed no URL:\n%s", out)
	}
	return out, u[1]
}

// Cancel, retry and abandon from the page, each seen in the team's state,
// its event log and the page's header. A team whose agents cannot start
// (a sim flag that does not exist) waits in needs_human: the page says to
// use its Retry button (not the TUI's key R), Retry sends the team back
// to work (a retry, then needs_human again), Abandon ends the task.
// Another team is cancelled from the page; Cancel asks first, and
// dismissed it sends nothing.
func TestWebClientCancelRetryAbandon(t *testing.T) {
	parallel(t)
	realCLISlot(t) // Chromium keeps a core busy
	chrome := requireChromium(t)
	home := "HOME=" + t.TempDir()
	stuck, live := t.TempDir(), t.TempDir()
	stuckEnv := append(serverEnv(t), home, "HIVEMIND_SIM_ARGS=--no-such-flag")
	liveEnv := append(serverEnv(t), home, "HIVEMIND_SIM_ARGS=--pace 30ms")
	_, stuckURL := startWeb(t, stuck, stuckEnv, "--agent", "sim", "--workers", "1", "build a tiny calculator")
	_, liveURL := startWeb(t, live, liveEnv, "--agent", "sim", "--workers", "1", "--plan-approval", "human", "build a tiny calculator")

	ctx := browser(t, chrome)
	var accept atomic.Bool
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept.Load()})
		}
	}()

	// Cancel, dismissed: nothing is sent (the pause clicked after it is
	// the next command the server gets).
	run(t, ctx, "open the live team's page", chromedp.Navigate(liveURL))
	waitPage(t, ctx, "the live team's panes and state", `document.querySelectorAll('.pane').length === 3 &&
		!document.getElementById('cancel').hidden && document.getElementById('phase').textContent !== 'connecting…'`)
	dir := taskDir(t, live)
	run(t, ctx, "click cancel, then dismiss", chromedp.Click("#cancel"))
	run(t, ctx, "click pause", chromedp.Click("#pause"))
	waitFor(t, tuiWait, "the paused state", func() bool { return readState(t, dir).Phase.Terminal() || readState(t, dir).Phase == vocab.PhasePaused })
	if st := readState(t, dir); st.Phase != vocab.PhasePaused || recordIndex(readEventLog(dir), 0, vocab.RecordCancelled) >= 0 {
		t.Fatalf("a dismissed Cancel: state %s, want paused and no cancelled record", st.Phase)
	}
	waitPage(t, ctx, "the paused header", `document.getElementById('pause').textContent === 'Resume'`)
	run(t, ctx, "click resume", chromedp.Click("#pause"))
	waitFor(t, tuiWait, "resumed", func() bool { return recordIndex(readEventLog(dir), 0, vocab.RecordResumedFromPause) >= 0 })
	accept.Store(true)
	run(t, ctx, "click cancel, then confirm", chromedp.Click("#cancel"))
	waitFor(t, tuiWait, "the cancelled state and record", func() bool {
		return readState(t, dir).Phase == vocab.PhaseCancelled && recordIndex(readEventLog(dir), 0, vocab.RecordCancelled) >= 0
	})
	waitPage(t, ctx, "the cancelled header, no Cancel button", `document.getElementById('phase').textContent === 'cancelled' &&
		document.getElementById('cancel').hidden`)

	// Retry and abandon at needs_human.
	dir = taskDir(t, stuck)
	waitFor(t, tuiWait, "the stuck team in needs_human", func() bool { return readState(t, dir).Phase == vocab.PhaseNeedsHuman })
	run(t, ctx, "open the stuck team's page", chromedp.Navigate(stuckURL))
	waitPage(t, ctx, "needs you, with the page's words, and Retry and Abandon", `!document.getElementById('needs').hidden &&
		document.getElementById('needslist').textContent.includes('then retry (the Retry button)') &&
		document.getElementById('needslist').textContent.includes('the Abandon button ends the task') &&
		!document.getElementById('retry').hidden && !document.getElementById('abandon').hidden &&
		document.getElementById('phase').textContent === 'needs you'`)
	if txt, _ := within(ctx, chromedp.Evaluate[string](`document.body.innerText`)); strings.Contains(txt, "in the TUI") {
		t.Errorf("the page names the TUI's key:\n%s", txt)
	}
	// A task stopped on an error (a checkpoint that cannot progress) shows
	// the same buttons, and its line names them.
	const deadlock = "checkpoint 1 cannot progress: no subtask is ready and none is running"
	errLine, err := within(ctx, chromedp.Evaluate[string](`needsYou({state: "error", reason: "`+deadlock+`", error: "`+deadlock+`"}).join("\n")`))
	if err != nil || !strings.Contains(errLine, deadlock) || !strings.Contains(errLine, "the Retry button") || !strings.Contains(errLine, "the Abandon button") {
		t.Errorf("the needs-you line of an error: %q (%v), want the reason and the Retry and Abandon buttons", errLine, err)
	}
	run(t, ctx, "click retry", chromedp.Click("#retry"))
	waitFor(t, tuiWait, "a retry, then needs_human again", func() bool {
		recs := readEventLog(dir)
		r := recordIndex(recs, 0, vocab.RecordRetry)
		return r >= 0 && recordIndex(recs, r, vocab.RecordNeedsHuman) >= 0 && readState(t, dir).Phase == vocab.PhaseNeedsHuman
	})
	run(t, ctx, "click abandon, then confirm", chromedp.Click("#abandon"))
	waitFor(t, tuiWait, "the task abandoned", func() bool {
		return readState(t, dir).Abandoned() && recordIndex(readEventLog(dir), 0, vocab.RecordAbandoned) >= 0
	})
	waitPage(t, ctx, "the abandoned header, no Retry, Abandon or Cancel", `document.getElementById('phase').textContent === 'abandoned' &&
		document.getElementById('retry').hidden && document.getElementById('abandon').hidden && document.getElementById('cancel').hidden &&
		document.getElementById('needs').hidden`)
}

// The page of a real Claude Code team offline (the fake API), served
// with --web: every pane shows what the server's emulator has, cell for
// cell as text, as for the sim team.
func TestWebClientClaudeOffline(t *testing.T) {
	parallel(t)
	chrome := requireChromium(t)
	c := SetupClaudeOffline(t, fakeapi.DefaultScript())
	env := append(serverEnv(t), c.Env...)
	_, url := startWeb(t, c.Project, env, "--agent", "claude", "--workers", "1", "add a greeting service")
	infos := servers(t, c.Project, env)
	if len(infos) != 1 {
		t.Fatalf("hivemind ls --json: %+v, want one server", infos)
	}
	emu := watchServer(t, infos[0].Socket)
	ctx := browser(t, chrome)
	run(t, ctx, "open the page", chromedp.Navigate(url))
	waitPage(t, ctx, "three panes", `document.querySelectorAll('.pane').length === 3`)
	for _, id := range []string{"lead", "reviewer", "worker_1"} {
		var want, got string
		if !pollUntil(c.wait(3*tuiWait), func() bool {
			want = emu.text(id)
			got, _ = pageText(ctx, id)
			return got == want && strings.Contains(want, "❯") // Claude Code's prompt
		}) {
			t.Errorf("pane %s differs from the server's emulator (or shows no Claude Code prompt):\npage:\n%s\nserver:\n%s", id, got, want)
		}
	}
}
