// Command webframes measures what a web page is sent by a team's server:
// the team in `hivemind --server --web`, every agent a command that
// streams lines (about 200 a second), a WebSocket client that asks for
// every pane with one focused, as the page does when it shows them all
// and types into one. It prints frames a second per pane, frames and
// KB a second in all and for the focused pane, and the server's CPU over
// the window (its emulators, the diffs and the bridge).
//
//	go build -o /tmp/hm . && go run ./bench/webframes -bin /tmp/hm
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// stream is each agent: a line every 5 ms.
const stream = `sh -c 'i=0; while :; do i=$((i+1)); echo "line $i of a streaming agent, with more text to fill the row"; sleep 0.005; done'`

func main() {
	bin := flag.String("bin", "", "the hivemind binary")
	window := flag.Duration("for", 10*time.Second, "how long to count (after 2 s of warm-up)")
	workers := flag.Int("workers", 6, "workers (with the lead and the reviewer: the panes)")
	focus := flag.String("focus", "lead", "the focused pane")
	flag.Parse()
	if err := run(*bin, *window, *workers, *focus); err != nil {
		fmt.Fprintln(os.Stderr, "webframes:", err)
		os.Exit(1)
	}
}

type msg struct {
	T     string `json:"t"`
	Panes []struct {
		Agent string `json:"agent"`
	} `json:"panes"`
	Pane *struct {
		Agent string `json:"agent"`
	} `json:"pane"`
}

func run(bin string, window time.Duration, workers int, focus string) error {
	if bin == "" {
		return errors.New("-bin: the hivemind binary to measure")
	}
	dir, err := os.MkdirTemp("", "webframes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, filepath.Join(home, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	c := exec.Command(bin, "--server", "--web", "--project", project, "--agent", stream, "--workers", strconv.Itoa(workers), "stream for the web page")
	c.Dir = project
	c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "TERM=tmux-256color")
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hivemind --server --web: %v\n%s", err, out)
	}
	pidText, err := os.ReadFile(filepath.Join(project, ".hivemind", "server.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		return fmt.Errorf("server.pid: %q", pidText)
	}
	defer stop(pid)
	m := regexp.MustCompile(`(?m)^web client: (http://\S+)$`).FindStringSubmatch(string(out))
	if m == nil {
		return fmt.Errorf("no web client URL in:\n%s", out)
	}
	u, err := url.Parse(m[1])
	if err != nil {
		return err
	}
	ws := *u
	ws.Scheme, ws.Path = "ws", "/ws"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, _, err := websocket.Dial(ctx, ws.String(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + u.Host}}})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	var agents []string
	for len(agents) < workers+2 {
		_, p, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		var mm msg
		if json.Unmarshal(p, &mm) == nil && mm.T == "panes" {
			agents = agents[:0]
			for _, p := range mm.Panes {
				agents = append(agents, p.Agent)
			}
		}
	}
	view := []map[string]string{}
	for _, a := range agents {
		view = append(view, map[string]string{"agent": a})
	}
	b, _ := json.Marshal(map[string]any{"t": "view", "view": view, "focus": focus})
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		return err
	}
	var mu sync.Mutex
	frames, bytes := map[string]int{}, map[string]int{}
	go func() {
		for {
			_, p, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var mm msg
			if json.Unmarshal(p, &mm) == nil && mm.T == "pane" && mm.Pane != nil {
				mu.Lock()
				frames[mm.Pane.Agent]++
				bytes[mm.Pane.Agent] += len(p)
				mu.Unlock()
			}
		}
	}()
	time.Sleep(2 * time.Second)
	mu.Lock()
	clear(frames)
	clear(bytes)
	mu.Unlock()
	t0 := cpuTicks(pid)
	time.Sleep(window)
	cpu := float64(cpuTicks(pid)-t0) / 100 / window.Seconds() * 100 // USER_HZ is 100 on Linux
	mu.Lock()
	defer mu.Unlock()
	s := window.Seconds()
	all, allBytes := 0, 0
	var per []string
	for _, a := range agents {
		all += frames[a]
		allBytes += bytes[a]
		per = append(per, fmt.Sprintf("%s %.1f", a, float64(frames[a])/s))
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("frames/s per pane: %s\n", strings.Join(per, ", "))
	fmt.Printf("all panes: %.1f frames/s, %.0f KB/s; the focused %s: %.1f frames/s, %.0f KB/s\n",
		float64(all)/s, float64(allBytes)/s/1024, focus, float64(frames[focus])/s, float64(bytes[focus])/s/1024)
	fmt.Printf("server CPU: %.0f%% of a core; load %s\n", cpu, strings.Join(strings.Fields(string(load))[:3], " "))
	return nil
}

// cpuTicks is pid's user and system time in clock ticks.
func cpuTicks(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return u + st
}

// stop asks the server to end and waits for it (30 s, then SIGKILL).
func stop(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
