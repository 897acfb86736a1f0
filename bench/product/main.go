// Command product is Hivemind's product benchmark (issue 14): it measures
// the built binary as users run it — real PTYs, real agent processes (this
// program in an agent mode), the full-screen UI in a tmux-hosted terminal
// and headless — against tmux with N windows and raw PTY reads, in the same
// run, interleaved, and prints medians and ratios.
//
// Sections:
//
//   - throughput: N = 1, 3, 8 agents each write the seeded workload
//     (ptyagent/screen/workload) as fast as their terminal takes it, then
//     ask for the cursor position (CSI 6n), which a terminal answers only
//     after processing every byte before it. Per-agent MB/s until that
//     answer, for raw PTY reads, tmux, Hivemind headless, Hivemind's UI and
//     a Hivemind server shown by one `hivemind attach` client ("attached":
//     the server's emulator answers; its CPU is the server's plus the
//     client's); with Chromium installed, a server with the web client on
//     ("web": headless Chromium shows every pane; "webstall": a WebSocket
//     client asks for every pane and never reads; "server": no client).
//     Also the agent-side figure (until its last write returned): how long
//     the agent itself was held up, and the consumer's CPU per MB of agent
//     output (utime+stime from "go" until every agent was answered), which
//     a loaded machine distorts far less than MB/s.
//   - memory: the consumer's resident memory per agent after the workload
//     with 10 000 lines of scrollback (RSS after − RSS before, / N).
//   - scale: 1, 4, 8, 16, 32 agents stream 20 KB/s each into Hivemind's UI:
//     CPU % of one core (busy and idle), RSS, View time per frame and
//     frames drawn, and keystroke → agent latency with the others streaming.
//   - attach: 8 agents in a Hivemind server: `hivemind attach` start →
//     every pane's full screen shown, the server's and the client's CPU
//     while they stream, the client's CPU with one idle pane zoomed and the
//     others streaming hidden, keystroke → agent through the client.
//
// Usage: go run ./bench/product [flags] (`make bench` runs bench/product.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "flood":
			os.Exit(floodMain(os.Args[2:]))
		case "feed":
			os.Exit(feedMain(os.Args[2:]))
		}
	}
	b := &bench{}
	flag.StringVar(&b.hivemind, "hivemind", "", "hivemind binary (default: go build it)")
	mb := flag.Int("mb", 8, "workload MiB per agent (throughput)")
	flag.IntVar(&b.runs, "runs", 3, "interleaved runs per throughput figure (median reported)")
	ns := flag.String("n", "1,3,8", "agent counts for throughput")
	defaults := pathNames
	if chromium() != "" {
		defaults = allPaths
	}
	paths := flag.String("paths", strings.Join(defaults, ","), "throughput paths (of "+strings.Join(allPaths, ",")+"; web and webstall need chromium)")
	scale := flag.String("scale", "1,4,8,16,32", "agent counts for scale (empty: skip)")
	flag.IntVar(&b.rate, "rate", 20000, "bytes/s per agent in the scale section")
	flag.DurationVar(&b.busy, "busy", 10*time.Second, "scale: busy window")
	flag.DurationVar(&b.idle, "idle", 10*time.Second, "scale: idle window")
	flag.IntVar(&b.keys, "keys", 20, "scale and attach: keystroke samples per agent count")
	attachN := flag.Int("attach", 8, "agents of the attach section (0: skip)")
	attaches := flag.Int("attaches", 10, "attach: attach samples")
	flag.IntVar(&b.cols, "cols", 160, "terminal width")
	flag.IntVar(&b.rows, "rows", 48, "terminal height")
	flag.IntVar(&b.scrollback, "scrollback", 10000, "scrollback lines per pane (Hivemind and tmux)")
	flag.Parse()
	b.paths = strings.Split(*paths, ",")
	for _, p := range b.paths {
		if !slices.Contains(allPaths, p) {
			fmt.Fprintf(os.Stderr, "product: unknown path %q in -paths\n", p)
			os.Exit(2)
		}
	}
	b.attachN, b.attaches = *attachN, *attaches
	if err := b.main(*mb, ints(*ns), ints(*scale)); err != nil {
		fmt.Fprintln(os.Stderr, "product:", err)
		os.Exit(1)
	}
}

type bench struct {
	hivemind, self, workload, tmp string
	paths                         []string // throughput paths measured
	runs, rate, keys              int
	cols, rows, scrollback        int
	busy, idle                    time.Duration
	typed                         int // keystroke tokens typed so far
	attachN, attaches             int // the attach section: agents, samples
}

func (b *bench) main(mb int, ns, scale []int) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return fmt.Errorf("tmux is not installed")
	}
	var err error
	if b.tmp, err = os.MkdirTemp("", "hivemind-product-"); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(b.tmp) }()
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	if b.hivemind == "" {
		b.hivemind = filepath.Join(b.tmp, "hivemind")
		build := exec.Command("go", "build", "-o", b.hivemind, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build hivemind: %w", err)
		}
	}
	printMachine(b)
	if len(ns) > 0 {
		if err := b.throughput(mb, ns); err != nil {
			return err
		}
	}
	if len(scale) > 0 {
		if err := b.scale(scale); err != nil {
			return err
		}
	}
	if b.attachN > 0 {
		if err := b.attachSection(b.attachN, max(b.attaches, 1)); err != nil {
			return fmt.Errorf("attach: %w", err)
		}
	}
	return nil
}

// paths, in the order of the first run (later runs rotate it); allPaths
// adds the web client's.
var (
	pathNames = []string{"raw", "tmux", "headless", "ui", "attached"}
	allPaths  = append(slices.Clone(pathNames), webPaths...)
)

func (b *bench) throughput(mb int, ns []int) error {
	data, _ := workload.Generate(workload.Options{Seed: 1, Size: mb << 20, Cols: b.cols, Rows: b.rows})
	b.workload = filepath.Join(b.tmp, "workload.bin")
	if err := os.WriteFile(b.workload, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("== throughput: every agent writes the seeded workload (%.1f MB, seed 1, drawn for %d×%d) as fast as its terminal takes it\n",
		float64(len(data))/1e6, b.cols, b.rows)
	fmt.Printf("   %d interleaved runs; per run and path, the median agent; then the median run\n", b.runs)
	type key struct {
		n    int
		path string
	}
	done, drain, mem, cpu := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	clientCPU := map[key][]float64{} // the attached client's share of cpu
	for r := 0; r < b.runs; r++ {
		for _, n := range ns {
			order := slices.Clone(b.paths)
			k := (r + n) % len(order)
			order = append(order[k:], order[:k]...)
			for _, p := range order {
				t := &trial{b: b, n: n, dir: filepath.Join(b.tmp, fmt.Sprintf("r%d-n%d-%s", r, n, p))}
				if err := os.MkdirAll(t.dir, 0o755); err != nil {
					return err
				}
				start := map[string]func() (int, func(), error){"raw": t.raw, "tmux": t.tmux, "headless": t.hivemindHeadless, "ui": t.hivemindTUI, "attached": t.hivemindAttached,
					"server": t.hivemindServed, "web": t.hivemindWeb, "webstall": t.hivemindWebStalled}[p]
				if p == "raw" || p == "tmux" {
					for i := 1; i <= n; i++ {
						t.ids = append(t.ids, fmt.Sprintf("a%d", i))
					}
				} else {
					t.ids, _ = hivemindIDs(n)
				}
				recs, err := t.run(start)
				if err != nil {
					return fmt.Errorf("run %d, %d agents, %s: %w", r+1, n, p, err)
				}
				var dn, dr []float64
				for _, a := range recs {
					dn, dr = append(dn, a.doneRate()), append(dr, a.drainRate())
				}
				kk := key{n, p}
				done[kk] = append(done[kk], median(dn))
				drain[kk] = append(drain[kk], median(dr))
				if t.rss0 > 0 && t.rss1 > 0 {
					mem[kk] = append(mem[kk], float64(t.rss1-t.rss0)/1024/float64(n))
				}
				if t.cpu >= 0 {
					cpu[kk] = append(cpu[kk], float64(t.cpu)/clockTicks/(float64(n*len(data))/1e6))
					clientCPU[kk] = append(clientCPU[kk], float64(t.clientCPU)/clockTicks/(float64(n*len(data))/1e6))
				}
				_ = os.RemoveAll(t.dir)
				fmt.Printf("   run %d  N=%d  %-8s  %7.1f MB/s per agent until shown, %7.1f MB/s written", r+1, n, p, median(dn), median(dr))
				if t.cpu >= 0 {
					fmt.Printf(", %.2f ms CPU per MB (%.0f%% system)", 1e3*cpu[kk][len(cpu[kk])-1], 100*float64(t.sys)/float64(max(t.cpu, 1)))
					if t.client > 0 {
						fmt.Printf(", of which the client %.2f ms", 1e3*clientCPU[kk][len(clientCPU[kk])-1])
					}
				}
				fmt.Println()
			}
		}
	}
	if web := slices.ContainsFunc(b.paths, func(p string) bool { return slices.Contains(webPaths, p) }); web || !b.measured(pathNames) {
		// Per-path medians (the ratio tables below need every other path),
		// against tmux when measured.
		fmt.Println()
		if web {
			fmt.Println("   (server, web, webstall: the CPU is the server's; the browser's is not counted)")
		}
		for _, n := range ns {
			tm := median(done[key{n, "tmux"}])
			for _, p := range b.paths {
				k := key{n, p}
				fmt.Printf("   N=%d  %-8s  %7.1f MB/s per agent until shown", n, p, median(done[k]))
				if tm > 0 {
					fmt.Printf(" (%5.2f× tmux)", median(done[k])/tm)
				}
				fmt.Printf(", %7.1f MB/s written, %7.2f ms CPU per MB\n", median(drain[k]), 1e3*median(cpu[k]))
			}
			if st, sv := median(done[key{n, "webstall"}]), median(done[key{n, "server"}]); st > 0 && sv > 0 {
				fmt.Printf("   N=%d  a WebSocket that never reads: %.2f× the server's throughput with no client\n", n, st/sv)
			}
		}
		if !b.measured(pathNames) {
			fmt.Println()
			return nil
		}
	}
	table := func(title string, m map[key][]float64) {
		fmt.Println()
		fmt.Println(title)
		fmt.Printf("   %3s  %9s  %9s  %9s  %9s  %9s   %13s  %7s  %13s  %12s  %6s  %12s\n", "N", "raw PTY", "tmux", "headless", "ui", "attached",
			"headless/tmux", "ui/tmux", "attached/tmux", "headless/raw", "ui/raw", "attached/raw")
		for _, n := range ns {
			raw, tm, hl, ui, at := median(m[key{n, "raw"}]), median(m[key{n, "tmux"}]), median(m[key{n, "headless"}]), median(m[key{n, "ui"}]), median(m[key{n, "attached"}])
			fmt.Printf("   %3d  %9.1f  %9.1f  %9.1f  %9.1f  %9.1f   %12.2f×  %6.2f×  %12.2f×  %11.2f×  %5.2f×  %11.2f×\n", n, raw, tm, hl, ui, at,
				hl/tm, ui/tm, at/tm, hl/raw, ui/raw, at/raw)
		}
	}
	table("MB/s per agent until the terminal had processed every byte (the agent's CSI 6n answered):", done)
	table("MB/s per agent as the agent's own writes completed (how long the agent was held up):", drain)
	nmax := slices.Max(ns)
	fmt.Printf("\nmemory per agent after the workload, N=%d, %d lines of scrollback (RSS after − RSS before, / N, median run):\n", nmax, b.scrollback)
	for _, p := range []string{"tmux", "headless", "ui", "attached"} {
		fmt.Printf("   %-9s %6.2f MiB\n", p, median(mem[key{nmax, p}]))
	}
	fmt.Printf("\nCPU of the consumer per MB of agent output, from the start until every agent was answered (ms, median run;\n")
	fmt.Printf("   attached: the server plus its attached client, the client's share after the slash):\n")
	fmt.Printf("   %3s  %9s  %9s  %9s  %15s\n", "N", "tmux", "headless", "ui", "attached/client")
	for _, n := range ns {
		fmt.Printf("   %3d  %9.2f  %9.2f  %9.2f  %8.2f / %4.2f\n", n, 1e3*median(cpu[key{n, "tmux"}]), 1e3*median(cpu[key{n, "headless"}]), 1e3*median(cpu[key{n, "ui"}]),
			1e3*median(cpu[key{n, "attached"}]), 1e3*median(clientCPU[key{n, "attached"}]))
	}
	fmt.Println()
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func printMachine(b *bench) {
	fmt.Println("== machine")
	fmt.Printf("date:   %s\n", time.Now().UTC().Format("2006-01-02T15:04Z"))
	var u syscall.Utsname
	_ = syscall.Uname(&u)
	fmt.Printf("kernel: %s %s, %d CPUs, %s\n", utsString(u.Sysname[:]), utsString(u.Release[:]), runtime.NumCPU(), cpuModel())
	if bs, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(bs)); len(f) >= 3 {
			fmt.Printf("load:   %s\n", strings.Join(f[:3], " "))
		}
	}
	fmt.Printf("go:     %s\n", runtime.Version())
	if out, err := exec.Command("tmux", "-V").Output(); err == nil {
		fmt.Printf("tmux:   %s", out)
	}
	fmt.Printf("binary: %s\n\n", b.hivemind)
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cpuModel() string {
	bs, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(bs), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// measured reports whether every path of ps is measured.
func (b *bench) measured(ps []string) bool {
	return !slices.ContainsFunc(ps, func(p string) bool { return !slices.Contains(b.paths, p) })
}
