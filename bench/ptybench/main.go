// Command ptybench measures, in one run and on the same bytes, how fast a
// terminal workload goes through a PTY when (1) it is only read (the
// physical limit), (2) Hivemind's emulator (screen.New) consumes it, (3)
// the x/vt reference consumes it (optional) and (4) tmux, in a detached
// 120x40 pane, consumes it. It prints MB/s per path and the ratios
// Hivemind/tmux and Hivemind/raw.
//
// The child is always `cat FILE` on a raw-mode tty. tmux is timed until it
// has processed the whole stream: after cat the child sends a cursor
// position query, which tmux answers only once every byte before it has
// been parsed, and the answer releases a `tmux wait-for` channel.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/xvt"
)

func main() {
	size := flag.Int("mb", 20, "workload size in MiB")
	seed := flag.Uint64("seed", 1, "workload seed")
	runs := flag.Int("runs", 3, "runs per path (median reported)")
	cols := flag.Int("cols", 120, "pane width")
	rows := flag.Int("rows", 40, "pane height")
	withVT := flag.Bool("xvt", false, "also measure the x/vt reference emulator (slow)")
	noTmux := flag.Bool("no-tmux", false, "skip tmux")
	flag.Parse()
	if err := run(*size<<20, *seed, *runs, *cols, *rows, *withVT, *noTmux); err != nil {
		fmt.Fprintln(os.Stderr, "ptybench:", err)
		os.Exit(1)
	}
}

// result is one timed run: wall time until the stream was consumed and
// the CPU time the consumer spent (this process for raw and the
// emulators, the tmux server for tmux), which load on a shared machine
// does not inflate.
type result struct {
	wall, cpu time.Duration
}

type path struct {
	name string
	fn   func(file string, cols, rows int) (result, error)
}

func run(size int, seed uint64, runs, cols, rows int, withVT, noTmux bool) error {
	dir, err := os.MkdirTemp("", "hivemind-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	data, _ := workload.Generate(workload.Options{Seed: seed, Size: size, Cols: cols, Rows: rows})
	file := filepath.Join(dir, "workload.bin")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	fmt.Printf("workload: %.1f MB (seed %d, %dx%d), %d runs per path, GOMAXPROCS=%d\n",
		float64(len(data))/1e6, seed, cols, rows, runs, runtime.GOMAXPROCS(0))

	paths := []path{
		{"raw PTY read", rawRead},
		{"hivemind (screen.New)", emuRead(screen.New)},
	}
	if withVT {
		paths = append(paths, path{"x/vt (xvt.New)", emuRead(xvt.New)})
	}
	if !noTmux {
		if _, err := exec.LookPath("tmux"); err != nil {
			fmt.Println("tmux not installed: tmux path skipped")
			noTmux = true
		} else {
			paths = append(paths, path{"tmux " + tmuxVersion(), tmuxRead})
		}
	}
	times := make([][]time.Duration, len(paths))
	cpus := make([][]time.Duration, len(paths))
	// Interleave the paths so that load from other processes on the
	// machine spreads over all of them.
	for range runs {
		for i, p := range paths {
			r, err := p.fn(file, cols, rows)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			times[i] = append(times[i], r.wall)
			cpus[i] = append(cpus[i], r.cpu)
		}
	}
	mbps := make([]float64, len(paths))
	cpuMBps := make([]float64, len(paths))
	fmt.Printf("%-26s %9s %8s %9s %10s  %s\n", "path", "median", "MB/s", "CPU", "MB/CPU-s", "runs (s)")
	for i, p := range paths {
		slices.Sort(times[i])
		slices.Sort(cpus[i])
		med := times[i][len(times[i])/2]
		cpu := cpus[i][len(cpus[i])/2]
		mbps[i] = float64(len(data)) / 1e6 / med.Seconds()
		cpuMBps[i] = float64(len(data)) / 1e6 / max(cpu.Seconds(), 1e-3)
		var rs []string
		for _, d := range times[i] {
			rs = append(rs, fmt.Sprintf("%.3f", d.Seconds()))
		}
		fmt.Printf("%-26s %8.3fs %8.1f %8.3fs %10.1f  %s\n", p.name, med.Seconds(), mbps[i], cpu.Seconds(), cpuMBps[i], strings.Join(rs, " "))
	}
	fmt.Printf("ratio hivemind/raw:  %.2f (wall)\n", mbps[1]/mbps[0])
	if !noTmux {
		last := len(paths) - 1
		fmt.Printf("ratio hivemind/tmux: %.2f (wall), %.2f (CPU)\n", mbps[1]/mbps[last], cpuMBps[1]/cpuMBps[last])
	}
	return nil
}

// startCat starts `cat file` on a raw-mode PTY of the given size.
func startCat(file string, cols, rows int) (*os.File, *exec.Cmd, error) {
	cmd := exec.Command("sh", "-c", `stty raw -echo; exec cat "$1"`, "sh", file)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, nil, err
	}
	return f, cmd, nil
}

// drain reads the PTY until the child has exited (EIO), passing each read
// to sink.
func drain(f *os.File, sink func([]byte)) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			sink(buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
				return nil
			}
			return err
		}
	}
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rawRead(file string, cols, rows int) (result, error) {
	start, cpu0 := time.Now(), selfCPU()
	f, cmd, err := startCat(file, cols, rows)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = f.Close() }()
	var total int
	err = drain(f, func(p []byte) { total += len(p) })
	r := result{wall: time.Since(start), cpu: selfCPU() - cpu0}
	_ = cmd.Wait()
	return r, err
}

func emuRead(mk func(screen.Options) screen.Screen) func(string, int, int) (result, error) {
	return func(file string, cols, rows int) (result, error) {
		runtime.GC()
		start, cpu0 := time.Now(), selfCPU()
		f, cmd, err := startCat(file, cols, rows)
		if err != nil {
			return result{}, err
		}
		defer func() { _ = f.Close() }()
		s := mk(screen.Options{Cols: cols, Rows: rows, Scrollback: 10000, Reply: io.Discard})
		err = drain(f, func(p []byte) { _, _ = s.Write(p) })
		r := result{wall: time.Since(start), cpu: selfCPU() - cpu0}
		_ = s.Close()
		_ = cmd.Wait()
		return r, err
	}
}

func tmuxVersion() string {
	out, err := exec.Command("tmux", "-V").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "tmux ")
}

// procCPU is the CPU time of process pid from /proc/pid/stat.
func procCPU(pid string) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command: state is field 3, utime 14,
	// stime 15 (clock ticks, 100 per second on Linux).
	rest := string(b)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%s/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad /proc/%s/stat", pid)
	}
	return time.Duration(ut+st) * (time.Second / 100), nil
}

func tmuxRead(file string, cols, rows int) (result, error) {
	dir, err := os.MkdirTemp("", "hivemind-tmux-")
	if err != nil {
		return result{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	sock := filepath.Join(dir, "s")
	tmux := func(args ...string) *exec.Cmd {
		c := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		c.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		return c
	}
	// The DSR answer comes back only after tmux parsed everything before
	// the query; reading it then releases the wait-for channel.
	script := fmt.Sprintf(`stty raw -echo; cat %q; printf '\033[6n'; IFS= read -r -s -d R _; tmux -S %q wait-for -S hivemind-done; exec sleep 600`,
		file, sock)
	start := time.Now()
	if out, err := tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "bash", "-c", script).CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("new-session: %v: %s", err, out)
	}
	defer func() { _ = tmux("kill-server").Run() }()
	waitDone := make(chan error, 1)
	go func() { waitDone <- tmux("wait-for", "hivemind-done").Run() }()
	select {
	case err := <-waitDone:
		if err != nil {
			return result{}, fmt.Errorf("wait-for: %w", err)
		}
	case <-time.After(5 * time.Minute):
		return result{}, errors.New("tmux did not finish within 5 minutes")
	}
	r := result{wall: time.Since(start)}
	out, err := tmux("display", "-p", "#{pid}").Output()
	if err != nil {
		return result{}, fmt.Errorf("tmux server pid: %w", err)
	}
	if r.cpu, err = procCPU(strings.TrimSpace(string(out))); err != nil {
		return result{}, err
	}
	return r, nil
}
