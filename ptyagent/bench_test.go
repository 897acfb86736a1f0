package ptyagent

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// discardScreen is a Screen that drops everything: it measures the raw
// PTY read path (reader goroutine, log off) for comparison.
type discardScreen struct{ cols, rows int }

func (d *discardScreen) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardScreen) Resize(c, r int)             { d.cols, d.rows = c, r }
func (d *discardScreen) Size() (int, int)            { return d.cols, d.rows }
func (d *discardScreen) Lines(int) []string          { return nil }
func (d *discardScreen) Text() string                { return "" }
func (d *discardScreen) Cursor() (int, int, bool)    { return 0, 0, false }
func (d *discardScreen) Title() string               { return "" }
func (d *discardScreen) Modes() screen.Modes         { return screen.Modes{} }
func (d *discardScreen) ScrollbackLen() int          { return 0 }
func (d *discardScreen) Version() uint64             { return 0 }
func (d *discardScreen) Close() error                { return nil }
func newDiscard(o screen.Options) screen.Screen      { return &discardScreen{o.Cols, o.Rows} }
func withScreen(f func(screen.Options) screen.Screen) func() {
	old := NewScreen
	NewScreen = f
	return func() { NewScreen = old }
}

const floodBytes = 16 << 20

// BenchmarkPTYToScreen measures agent-like output (colours, Ink redraws,
// wrapping text, CJK/emoji, diffs, alt-screen episodes) through a real PTY
// into the emulator, against the raw PTY read path and tmux processing
// the same bytes.
func BenchmarkPTYToScreen(b *testing.B) {
	run := func(b *testing.B) {
		b.SetBytes(floodBytes)
		// CPU of this process (reader, emulator, log) per MB read: the
		// figure a loaded machine does not distort much, unlike MB/s.
		cpu0 := processCPU()
		defer func() {
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/(float64(b.N)*floodBytes/1e6), "ms-cpu/MB")
		}()
		for i := 0; i < b.N; i++ {
			spec := helperSpec("f", "flood", "HM_FLOOD_BYTES="+strconv.Itoa(floodBytes))
			spec.Cols, spec.Rows = 120, 40
			s, err := Start(spec)
			if err != nil {
				b.Fatal(err)
			}
			<-s.Done()
			s.Close()
		}
	}
	b.Run("screen", run)
	b.Run("raw", func(b *testing.B) {
		defer withScreen(newDiscard)()
		run(b)
	})
	b.Run("tmux", func(b *testing.B) {
		if _, err := exec.LookPath("tmux"); err != nil {
			b.Skip("tmux not installed")
		}
		exe, _ := os.Executable()
		b.SetBytes(floodBytes)
		sock := fmt.Sprintf("hm-bench-%d", os.Getpid())
		defer exec.Command("tmux", "-L", sock, "kill-server").Run()
		for i := 0; i < b.N; i++ {
			// remain-on-exit keeps the pane until tmux has read and
			// processed every byte; pane_dead then turns 1.
			cmd := fmt.Sprintf("env %s=flood HM_FLOOD_BYTES=%d %s", helperEnv, floodBytes, exe)
			if out, err := exec.Command("tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40",
				"-s", "b", ";", "set-option", "-t", "b", "remain-on-exit", "on", ";", "respawn-pane", "-k", "-t", "b", cmd).CombinedOutput(); err != nil {
				b.Fatalf("tmux: %v %s", err, out)
			}
			for {
				out, _ := exec.Command("tmux", "-L", sock, "display-message", "-p", "-t", "b", "#{pane_dead}").Output()
				if string(out) == "1\n" {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			_ = exec.Command("tmux", "-L", sock, "kill-session", "-t", "b").Run()
		}
	})
}

// BenchmarkMemoryPerSession reports the heap a session holds after 20 MB
// of agent-like output (120×40, 2000 lines of scrollback).
func BenchmarkMemoryPerSession(b *testing.B) {
	const sessions = 3
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var ss []*Session
		for j := 0; j < sessions; j++ {
			spec := helperSpec("m", "flood", "HM_FLOOD_BYTES="+strconv.Itoa(20<<20))
			spec.Cols, spec.Rows, spec.Scrollback = 120, 40, 2000
			s, err := Start(spec)
			if err != nil {
				b.Fatal(err)
			}
			<-s.Done()
			ss = append(ss, s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/sessions/(1<<20), "MiB/session")
		b.ReportMetric(float64(ss[0].ScrollbackLen()), "scrollback-lines")
		for _, s := range ss {
			if s.ScrollbackLen() == 0 {
				b.Fatal("no scrollback kept")
			}
			s.Close()
		}
	}
}

// BenchmarkInjectToSubmit measures Inject → confirmed submission (the
// UserPromptSubmit hook through the relay) with the sim-like raw-mode
// helper (plain line) and the Claude-like helper (bracketed paste, wait
// for the text to show, 80 ms, Enter).
func BenchmarkInjectToSubmit(b *testing.B) {
	for _, mode := range []string{"sim", "claude"} {
		b.Run(mode, func(b *testing.B) {
			got := make(chan Event, 64)
			m, err := NewManager(ManagerConfig{
				Factory: func(id vocab.AgentID, role vocab.Role, resume bool) (Spec, error) {
					s := helperSpec(id, mode, "HM_WORK_MS=0")
					s.Kind = ProfileSim
					if mode == "claude" {
						s.Kind = ProfileClaude
					}
					return s, nil
				},
				OnEvent: func(e Event) {
					if e.Kind == EventDelivered || e.Kind == EventDeliveryFailed {
						got <- e
					}
				},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			if err := m.Start("a", "worker", false); err != nil {
				b.Fatal(err)
			}
			s, _ := m.Session("a")
			waitFor(b, 30*time.Second, "ready", func() bool { return s.Health() == vocab.HealthReady })
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := m.Inject("a", i, "[HIVEMIND] read /tmp/x/assignments/a.json"); err != nil {
					b.Fatal(err)
				}
				e := <-got
				total += time.Since(t0)
				if e.Kind != EventDelivered {
					b.Fatalf("delivery failed: %s", e.Detail)
				}
				b.StopTimer()
				waitFor(b, 10*time.Second, "idle", func() bool { return s.Health().Injectable() })
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/submit")
		})
	}
}

// BenchmarkTrickleCPU reports the CPU this process spends (per second of
// wall time, as % of one core) while 8 sessions each receive 20 KB/s of
// agent-like output in 10 ms pieces: the cost of draining and emulating
// trickling agents, without a UI.
func BenchmarkTrickleCPU(b *testing.B) {
	const sessions, window = 8, 3 * time.Second
	for i := 0; i < b.N; i++ {
		var ss []*Session
		for j := 0; j < sessions; j++ {
			spec := helperSpec(vocab.AgentID(fmt.Sprintf("t%d", j)), "trickle", "HM_TRICKLE_RATE=20000")
			spec.Cols, spec.Rows = 80, 24
			s, err := Start(spec)
			if err != nil {
				b.Fatal(err)
			}
			ss = append(ss, s)
		}
		time.Sleep(time.Second) // warm-up: a steady state to measure
		cpu0, t0 := processCPU(), time.Now()
		time.Sleep(window) // the measurement window
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Since(t0))*100, "%cpu")
		for _, s := range ss {
			s.Close()
		}
	}
}

// processCPU is this process's user+system CPU time (its threads only:
// /proc/self/stat, not getrusage, which may count reaped children).
func processCPU() time.Duration {
	b, _ := os.ReadFile("/proc/self/stat")
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond // USER_HZ = 100
}
